"""Equation parameters are plain Python values: no NumPy integer scalars.

Transformation rules that compute axes with NumPy (np.where, np.add, np.arange, np.delete)
leak ``np.int64`` into parameters, and NumPy 2 prints them as ``np.int64(2)`` inside a
jaxpr (``broadcast_dimensions=(0, np.int64(2))``). JAX 0.10 on NumPy 2 shows that leak in
a few batching rules; jaxlite prints plain ints, as JAX does on NumPy 1 (and as seed 000's
pairwise-distance jaxpr reads). These checks walk every parameter of every equation,
including those of inner jaxprs, for a spread of vmap/grad compositions.
"""
import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import lax


def _numpy_scalars(value, path):
    if isinstance(value, np.generic) and not isinstance(value, np.dtype):
        yield path, value
    elif isinstance(value, (tuple, list)):
        for i, v in enumerate(value):
            yield from _numpy_scalars(v, f"{path}[{i}]")
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from _numpy_scalars(v, f"{path}[{k!r}]")
    elif hasattr(value, "jaxpr") and hasattr(value.jaxpr, "eqns"):
        yield from _jaxpr_numpy_scalars(value.jaxpr, path)
    elif hasattr(value, "eqns"):
        yield from _jaxpr_numpy_scalars(value, path)
    elif hasattr(value, "_fields"):
        for f in value._fields:
            yield from _numpy_scalars(getattr(value, f), f"{path}.{f}")


def _jaxpr_numpy_scalars(jaxpr, path=""):
    for eqn in jaxpr.eqns:
        for k, v in eqn.params.items():
            yield from _numpy_scalars(v, f"{path}/{eqn.primitive.name}.{k}")


def l1_distance(x, y):
    return jnp.sum(jnp.abs(x - y))


def pairwise(xs, ys):
    return jax.vmap(jax.vmap(l1_distance, (0, None)), (None, 0))(xs, ys)


X = jnp.arange(12.0).reshape(4, 3)
Y = jnp.ones((4, 3))

CASES = {
    "pairwise_l1": (pairwise, (X, Y)),
    "vmap_l1_axis1": (jax.vmap(l1_distance, in_axes=(1, 1)), (X, Y)),
    "vmap_mixed_rank_add": (jax.vmap(lambda a, b: a + b, in_axes=(0, None)),
                            (X, jnp.ones(3))),
    "vmap_rank_broadcast": (jax.vmap(lambda a, b: a * b, in_axes=(None, 1)),
                            (jnp.ones(()), X)),
    "vmap_broadcast_to": (jax.vmap(lambda a: jnp.broadcast_to(a, (2, 3))), (X,)),
    "vmap_reductions": (jax.vmap(lambda a: (jnp.max(a), jnp.argmin(a), jnp.cumsum(a)),
                                 in_axes=1), (X,)),
    "vmap_indexing": (jax.vmap(lambda a, i: a[i], in_axes=(0, 0)),
                      (X, jnp.array([0, 1, 2, 0]))),
    "vmap_fancy_index": (jax.vmap(lambda a: a[jnp.array([2, 0])], in_axes=1), (X,)),
    "vmap_at_set": (jax.vmap(lambda a: a.at[1].set(7.0)), (X,)),
    "vmap_dot": (jax.vmap(jnp.dot, in_axes=(1, None)), (X, jnp.ones(4))),
    "vmap_transpose_concat": (jax.vmap(lambda a: jnp.concatenate([a[None], a[None].T.T])),
                              (X,)),
    "grad_slice": (jax.grad(lambda a: jnp.sum(a[1:3, ::2] ** 2)), (X,)),
    "grad_of_vmap": (jax.grad(lambda a: jnp.sum(jax.vmap(jnp.sum, in_axes=1)(a) ** 2)),
                     (X,)),
    "vmap_of_grad": (jax.vmap(jax.grad(lambda r: jnp.sum(jnp.sin(r) * r))), (X,)),
    "vmap_cond": (jax.vmap(lambda a: lax.cond(a[0] > 1, jnp.sin, jnp.cos, a)), (X,)),
    "vmap_scan": (jax.vmap(lambda a: lax.scan(lambda c, x: (c + x, c * x), 0.0, a)), (X,)),
    "vmap_jit_vdot": (jax.jit(jax.vmap(jnp.vdot)), (X, Y)),
    "pad": (lambda a: jnp.pad(a, 1), (X,)),
    "pad_pairs_reflect": (lambda a: jnp.pad(a, np.array([[1, 0], [2, 1]]), mode="reflect"),
                          (X,)),
    "split": (lambda a: jnp.split(a, 3, axis=1), (X,)),
    "array_split_indices": (lambda a: jnp.array_split(a, np.array([1, 3])), (X,)),
    "grad_sumpool": (jax.grad(lambda a: jnp.sum(lax.reduce_window(
        a, 0.0, lax.add, (2, 2), (2, 1), "SAME") ** 2)), (X,)),
    "grad_conv": (jax.grad(lambda a: jnp.sum(lax.conv_general_dilated(
        a[None, None], jnp.ones((1, 1, 2, 2)), (2, 1), "SAME") ** 2)), (X,)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_params_hold_no_numpy_scalars(name):
    fun, args = CASES[name]
    closed = jax.make_jaxpr(fun)(*args)
    found = list(_jaxpr_numpy_scalars(closed.jaxpr))
    assert found == [], f"NumPy scalars in params: {found}\n{closed}"
    assert "np.int" not in str(closed)


def test_pairwise_distances_jaxpr_prints_plain_ints():
    xs = jnp.ones((20, 3))
    text = str(jax.make_jaxpr(pairwise)(xs, xs))
    assert text == (
        "{ lambda ; a:f32[20,3] b:f32[20,3]. let\n"
        "    c:f32[20,1,3] = broadcast_in_dim[broadcast_dimensions=(0, 2)] b\n"
        "    d:f32[1,20,3] = broadcast_in_dim[broadcast_dimensions=(1, 2)] a\n"
        "    e:f32[20,20,3] = sub d c\n"
        "    f:f32[20,20,3] = abs e\n"
        "    g:f32[20,20] = reduce_sum[axes=(2,) out_sharding=None] f\n"
        "  in (g,) }")


def test_the_scan_finds_numpy_scalars():
    class FakeEqn:
        class primitive:
            name = "p"
        params = {"axes": (0, np.int64(2)), "inner": {"k": [np.int32(1)]}}

    class FakeJaxpr:
        eqns = [FakeEqn()]

    found = list(_jaxpr_numpy_scalars(FakeJaxpr()))
    assert [p for p, _ in found] == ["/p.axes[1]", "/p.inner['k'][0]"]
