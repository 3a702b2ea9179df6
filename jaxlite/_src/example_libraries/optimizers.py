"""jax.example_libraries.optimizers: ``(init_fun, update_fun, get_params)`` triples that work
on pytrees of parameters, the classic first-order optimizers, and step-size schedules."""
from __future__ import annotations

import functools
from collections import namedtuple
from typing import Callable, NamedTuple

import numpy as np

from jaxlite._src import tree_util

__all__ = ["OptimizerState", "Optimizer", "optimizer", "sgd", "momentum", "nesterov",
           "adagrad", "rmsprop", "rmsprop_momentum", "adam", "adamax", "sm3", "constant",
           "exponential_decay", "inverse_time_decay", "polynomial_decay",
           "piecewise_constant", "make_schedule", "l2_norm", "clip_grads", "JoinPoint",
           "unpack_optimizer_state", "pack_optimizer_state"]


def _jnp():
    from jaxlite._src.numpy import namespace as jnp
    return jnp


# Optimizer state: the per-leaf states flattened, with the parameter tree and the per-leaf
# state trees as static data (a pytree whose only child is the flat state list).
OptimizerState = namedtuple("OptimizerState", ["packed_state", "tree_def", "subtree_defs"])
tree_util.register_pytree_node(
    OptimizerState,
    lambda s: ((s.packed_state,), (s.tree_def, s.subtree_defs)),
    lambda aux, children: OptimizerState(children[0], aux[0], aux[1]))


class Optimizer(NamedTuple):
    """The (init_fn, update_fn, params_fn) triple an optimizer constructor returns."""
    init_fn: Callable
    update_fn: Callable
    params_fn: Callable


def optimizer(opt_maker):
    """Decorator lifting an optimizer written for single arrays to pytrees of them."""
    @functools.wraps(opt_maker)
    def tree_opt_maker(*args, **kwargs):
        init, update, get_params = opt_maker(*args, **kwargs)

        @functools.wraps(init)
        def tree_init(x0_tree):
            leaves, tree = tree_util.tree_flatten(x0_tree)
            flat = [tree_util.tree_flatten(init(x0)) for x0 in leaves]
            # tuples, as JAX's unzip2 builds them
            return OptimizerState(tuple(f for f, _ in flat), tree, tuple(t for _, t in flat))

        @functools.wraps(update)
        def tree_update(i, grad_tree, opt_state):
            states_flat, tree, subtrees = opt_state
            grads, tree2 = tree_util.tree_flatten(grad_tree)
            if tree2 != tree:
                raise TypeError("optimizer update function was passed a gradient tree that "
                                "did not match the parameter tree structure with which it "
                                f"was initialized: parameter tree {tree} and grad tree "
                                f"{tree2}.")
            states = [tree_util.tree_unflatten(t, s) for t, s in zip(subtrees, states_flat)]
            new = [tree_util.tree_flatten(update(i, g, s)) for g, s in zip(grads, states)]
            for (_, t2), t in zip(new, subtrees):
                if t2 != t:
                    raise TypeError("optimizer update function produced an output structure "
                                    "that did not match its input structure: input "
                                    f"{t} and output {t2}.")
            return OptimizerState(tuple(f for f, _ in new), tree, subtrees)

        @functools.wraps(get_params)
        def tree_get_params(opt_state):
            states_flat, tree, subtrees = opt_state
            states = [tree_util.tree_unflatten(t, s) for t, s in zip(subtrees, states_flat)]
            return tree_util.tree_unflatten(tree, [get_params(s) for s in states])

        return Optimizer(tree_init, tree_update, tree_get_params)
    return tree_opt_maker


# ----------------------------------------------------------------------------- optimizers

def _init_with_zeros(n):
    """An optimizer ``init`` returning ``(x0, zeros, ...)`` with ``n`` zero buffers like x0."""
    def init(x0):
        zeros_like = _jnp().zeros_like
        return (x0,) + tuple(zeros_like(x0) for _ in range(n))
    return init


def _first(state):
    return state[0]


@optimizer
def sgd(step_size):
    """Stochastic gradient descent: ``x - step_size(i) * g``."""
    step_size = make_schedule(step_size)
    return (lambda x0: x0, lambda i, g, x: x - step_size(i) * g, lambda x: x)


@optimizer
def momentum(step_size, mass):
    """Gradient descent with momentum ``mass``."""
    step_size = make_schedule(step_size)

    init = _init_with_zeros(1)

    def update(i, g, state):
        x, v = state
        v = mass * v + g
        return x - step_size(i) * v, v
    return init, update, _first


@optimizer
def nesterov(step_size, mass):
    """Nesterov's accelerated gradient."""
    step_size = make_schedule(step_size)

    init = _init_with_zeros(1)

    def update(i, g, state):
        x, v = state
        v = mass * v + g
        return x - step_size(i) * (mass * v + g), v
    return init, update, _first


@optimizer
def adagrad(step_size, momentum=0.9):
    """Adagrad with momentum on the normalized gradient."""
    step_size = make_schedule(step_size)

    init = _init_with_zeros(2)

    def update(i, g, state):
        jnp = _jnp()
        x, g_sq, m = state
        g_sq = g_sq + jnp.square(g)
        inv = jnp.where(g_sq > 0, 1.0 / jnp.sqrt(g_sq), 0.0)
        m = (1.0 - momentum) * (g * inv) + momentum * m
        return x - step_size(i) * m, g_sq, m
    return init, update, _first


@optimizer
def rmsprop(step_size, gamma=0.9, eps=1e-8):
    """RMSProp: gradients scaled by a running root-mean-square."""
    step_size = make_schedule(step_size)

    init = _init_with_zeros(1)

    def update(i, g, state):
        jnp = _jnp()
        x, avg = state
        avg = avg * gamma + jnp.square(g) * (1.0 - gamma)
        return x - step_size(i) * g / jnp.sqrt(avg + eps), avg
    return init, update, _first


@optimizer
def rmsprop_momentum(step_size, gamma=0.9, eps=1e-8, momentum=0.9):
    """RMSProp with momentum."""
    step_size = make_schedule(step_size)

    init = _init_with_zeros(2)

    def update(i, g, state):
        jnp = _jnp()
        x, avg, mom = state
        avg = avg * gamma + jnp.square(g) * (1.0 - gamma)
        mom = momentum * mom + step_size(i) * g / jnp.sqrt(avg + eps)
        return x - mom, avg, mom
    return init, update, _first


@optimizer
def adam(step_size, b1=0.9, b2=0.999, eps=1e-8):
    """Adam with bias-corrected first and second moment estimates."""
    step_size = make_schedule(step_size)

    init = _init_with_zeros(2)

    def update(i, g, state):
        jnp = _jnp()
        x, m, v = state
        m = (1 - b1) * g + b1 * m
        v = (1 - b2) * jnp.square(g) + b2 * v
        mhat = m / (1 - jnp.asarray(b1, m.dtype) ** (i + 1))
        vhat = v / (1 - jnp.asarray(b2, m.dtype) ** (i + 1))
        return x - step_size(i) * mhat / (jnp.sqrt(vhat) + eps), m, v
    return init, update, _first


@optimizer
def adamax(step_size, b1=0.9, b2=0.999, eps=1e-8):
    """AdaMax (Adam with the infinity norm)."""
    step_size = make_schedule(step_size)

    init = _init_with_zeros(2)

    def update(i, g, state):
        jnp = _jnp()
        x, m, u = state
        m = (1 - b1) * g + b1 * m
        u = jnp.maximum(b2 * u, jnp.abs(g))
        x = x - (step_size(i) / (1 - jnp.asarray(b1, m.dtype) ** (i + 1))) * m / (u + eps)
        return x, m, u
    return init, update, _first


@optimizer
def sm3(step_size, momentum=0.9):
    """SM3: memory-efficient adaptive rates from per-axis maxima of the accumulator."""
    step_size = make_schedule(step_size)

    def along(ndim, v, axis):
        idx = [None] * ndim
        idx[axis] = slice(None)
        return v[tuple(idx)]

    def init(x0):
        jnp = _jnp()
        shape = np.shape(x0)
        x0 = jnp.atleast_1d(x0)
        return x0, jnp.zeros_like(x0), [jnp.zeros(n, x0.dtype) for n in x0.shape], shape

    def update(i, g, state):
        jnp = _jnp()
        x, m, vs, shape = state
        g = jnp.reshape(g, x.shape)
        vs = [along(g.ndim, v, k) for k, v in enumerate(vs)]
        accum = functools.reduce(jnp.minimum, vs) + jnp.square(g)
        inv = jnp.where(accum > 0, 1.0 / jnp.sqrt(accum), 0)
        m = (1.0 - momentum) * (g * inv) + momentum * m
        x = x - step_size(i) * m
        vs = [accum.max(tuple(a for a in range(x.ndim) if a != k)) for k in range(x.ndim)]
        return x, m, vs, shape
    return init, update, lambda state: _jnp().reshape(state[0], state[3])


# ----------------------------------------------------------------------------- schedules

def constant(step_size):
    """The schedule ``i -> step_size``."""
    return lambda i: step_size


def exponential_decay(step_size, decay_steps, decay_rate):
    """``step_size * decay_rate ** (i / decay_steps)``."""
    return lambda i: step_size * decay_rate ** (i / decay_steps)


def inverse_time_decay(step_size, decay_steps, decay_rate, staircase=False):
    """``step_size / (1 + decay_rate * i / decay_steps)`` (floored with ``staircase``)."""
    jnp = _jnp()
    if staircase:
        return lambda i: step_size / (1 + decay_rate * jnp.floor(i / decay_steps))
    return lambda i: step_size / (1 + decay_rate * i / decay_steps)


def polynomial_decay(step_size, decay_steps, final_step_size, power=1.0):
    """Polynomial decay from ``step_size`` to ``final_step_size`` over ``decay_steps``."""
    def schedule(step_num):
        jnp = _jnp()
        step_num = jnp.minimum(step_num, decay_steps)
        mult = (1 - step_num / decay_steps) ** power
        return mult * (step_size - final_step_size) + final_step_size
    return schedule


def piecewise_constant(boundaries, values):
    """``values[k]`` for steps between ``boundaries[k-1]`` and ``boundaries[k]``."""
    jnp = _jnp()
    boundaries = jnp.array(boundaries)
    values = jnp.array(values)
    if not boundaries.ndim == values.ndim == 1:
        raise ValueError("boundaries and values must be sequences")
    if not boundaries.shape[0] == values.shape[0] - 1:
        raise ValueError("boundaries length must be one shorter than values length")
    return lambda i: values[jnp.sum(i > boundaries)]


def make_schedule(scalar_or_schedule):
    """A schedule from a callable (returned as is) or a scalar (a constant schedule)."""
    if callable(scalar_or_schedule):
        return scalar_or_schedule
    if np.ndim(scalar_or_schedule) == 0:
        return constant(scalar_or_schedule)
    raise TypeError(type(scalar_or_schedule))


# ----------------------------------------------------------------------------- utilities

def l2_norm(tree):
    """The L2 norm of all the leaves of ``tree`` together."""
    jnp = _jnp()
    leaves = tree_util.tree_leaves(tree)
    return jnp.sqrt(sum(jnp.vdot(x, x) for x in leaves))


def clip_grads(grad_tree, max_norm):
    """``grad_tree`` rescaled so that its L2 norm is at most ``max_norm``."""
    jnp = _jnp()
    norm = l2_norm(grad_tree)
    return tree_util.tree_map(lambda g: jnp.where(norm < max_norm, g, g * (max_norm / norm)),
                              grad_tree)


class JoinPoint:
    """Marks where the parameter tree joins the per-parameter state trees."""

    def __init__(self, subtree):
        self.subtree = subtree

    def __iter__(self):
        yield self.subtree


def unpack_optimizer_state(opt_state):
    """An OptimizerState as a pytree of JoinPoints holding each parameter's state (for
    serialization)."""
    states_flat, tree_def, subtree_defs = opt_state
    subtrees = [tree_util.tree_unflatten(t, s) for t, s in zip(subtree_defs, states_flat)]
    return tree_util.tree_unflatten(tree_def, [JoinPoint(s) for s in subtrees])


def pack_optimizer_state(marked_pytree):
    """The inverse of ``unpack_optimizer_state``."""
    joins, tree_def = tree_util.tree_flatten(marked_pytree,
                                             is_leaf=lambda x: isinstance(x, JoinPoint))
    if not all(isinstance(j, JoinPoint) for j in joins):
        raise TypeError("pack_optimizer_state expects a pytree of JoinPoints")
    flat = [tree_util.tree_flatten(j.subtree) for j in joins]
    # tuples, as JAX's unzip2 builds them
    return OptimizerState(tuple(f for f, _ in flat), tree_def, tuple(t for _, t in flat))



