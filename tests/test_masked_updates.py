"""A selection between a buffer and its update (what vmap makes of a batched while loop's
``x.at[i].set(v)``: ``select_n(broadcast(pred), x, scatter(x, i, v))``) becomes one scatter
whose index vectors point out of bounds where the update does not apply (``masked_updates``,
as XLA's simplifier rewrites it): same values, and a loop's carried buffer is then updated
in place instead of selected whole each step."""
import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import lax
from jaxlite._src.compiler.passes import masked_updates, optimize


def _prims(fn, *args):
    """The primitives of ``fn``'s optimized program, a select over a whole buffer (of the
    first argument's shape) named ``select_n (buffer)``."""
    closed = optimize(jax.make_jaxpr(fn)(*args))
    shape = np.shape(args[0])
    return [e.primitive.name + (" (buffer)" if e.primitive.name == "select_n" and
                                e.outvars[0].aval.shape == shape else "")
            for e in closed.jaxpr.eqns]


def batched_set(x, i, v, keep):
    # the body vmap makes of `x.at[i].set(v) if keep else x` per row
    return jax.vmap(lambda x, i, v, k: lax.select(k, x.at[i].set(v), x))(x, i, v, keep)


@pytest.mark.parametrize("order", ["update_where_true", "update_where_false"])
def test_select_of_scatter_becomes_a_masked_scatter(order):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((5, 7)).astype(np.float32)
    i = np.array([0, 6, 3, 7, -1], np.int32)          # 7: out of bounds, dropped
    v = rng.standard_normal(5).astype(np.float32)
    keep = np.array([True, False, True, True, False])

    def f(x, i, v, keep):
        if order == "update_where_true":
            return batched_set(x, i, v, keep)
        return jax.vmap(lambda x, i, v, k: lax.select(k, x, x.at[i].set(v)))(x, i, v, keep)
    names = _prims(f, x, i, v, keep)
    assert "scatter" in names and "select_n (buffer)" not in names
    want = x.copy()
    for r in range(5):
        applies = keep[r] if order == "update_where_true" else not keep[r]
        if applies and -7 <= i[r] < 7:
            want[r, i[r] % 7] = v[r]
    for g in (f, jax.jit(f)):
        assert np.asarray(g(x, i, v, keep)).tobytes() == want.tobytes()


def test_rewrite_needs_the_predicate_constant_along_the_written_dims():
    # a predicate varying along the scattered dimension: the select stays
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    p = (np.arange(12).reshape(3, 4) % 2 == 0)

    def f(x, p):
        return lax.select(p, x.at[:, 1].set(-1.0), x)
    assert "select_n (buffer)" in _prims(f, x, p)
    want = np.where(p, np.asarray(jnp.asarray(x).at[:, 1].set(-1.0)), x)
    assert np.array_equal(np.asarray(jax.jit(f)(x, p)), want)


@pytest.mark.parametrize("keep", [True, False])
def test_clip_mode_scatters_are_clamped_then_masked(keep):
    # CLIP clamps an index into bounds (never drops it): the rewrite clamps the indices
    # first, so the masked scatter writes exactly where the selected CLIP scatter did
    x = np.arange(4, dtype=np.float32)

    def f(x, k):
        return lax.select(k, x.at[9].set(-1.0, mode="clip"), x)
    closed = jax.make_jaxpr(f)(x, keep)
    rewritten = masked_updates(closed)
    assert rewritten is not closed
    assert "select_n (buffer)" not in _prims(f, x, keep)
    want = x.copy()
    if keep:
        want[3] = -1.0
    for tier in (1, 2):
        with jax.config.override("jaxlite_tier", tier):
            assert np.asarray(jax.jit(f)(x, keep)).tobytes() == want.tobytes()


def test_vmapped_dynamic_update_slice_in_a_while_loop_updates_in_place():
    # vmap makes `dynamic_update_slice` at a batched start one CLIP scatter (JAX's rule);
    # the while loop's select of it becomes a masked scatter, so the carried buffer is
    # updated in place, in both tiers, with the values of a per-row NumPy loop
    def f(step, xs):
        def body(c):
            s, xs = c
            return s + 1, lax.dynamic_update_index_in_dim(xs, xs[s - 1] + 1.0, s, 0)
        return lax.while_loop(lambda c: c[0] < c[1].size, body, (step, xs))
    steps = np.array([1, 3, 5], np.int32)
    xs = np.zeros((3, 40), np.float32)
    closed = optimize(jax.make_jaxpr(jax.vmap(f))(steps, xs))
    body = next(e for e in closed.jaxpr.eqns if e.primitive.name == "while") \
        .params["body_jaxpr"]
    scatters = [e for e in body.jaxpr.eqns if e.primitive.name == "scatter"]
    assert len(scatters) == 1 and str(scatters[0].params["mode"]).endswith("CLIP")
    assert "dynamic_update_slice" not in [e.primitive.name for e in body.jaxpr.eqns]
    assert not any(e.primitive.name == "select_n" and e.outvars[0].aval.shape == (3, 40)
                   for e in masked_updates(body).jaxpr.eqns)
    want = np.zeros((3, 40), np.float32)
    for r, s0 in enumerate(steps):
        for s in range(s0, 40):
            want[r, s] = want[r, s - 1] + 1.0
    for tier in (1, 2):
        with jax.config.override("jaxlite_tier", tier):
            out = jax.jit(jax.vmap(f))(steps, xs)
        assert np.array_equal(np.asarray(out[1]), want) and out[0].tolist() == [40] * 3


def test_vmapped_while_loop_updates_its_buffer_in_place_in_both_tiers():
    def f(step, xs):
        def body(c):
            s, xs = c
            return s + 1, xs.at[s].set(xs[s - 1] + 1.0)
        return lax.while_loop(lambda c: c[0] < c[1].size, body, (step, xs))
    steps = np.array([1, 3, 5], np.int32)
    xs = np.zeros((3, 40), np.float32)
    want = np.zeros((3, 40), np.float32)
    for r, s0 in enumerate(steps):
        for s in range(s0, 40):
            want[r, s] = want[r, s - 1] + 1.0
    for tier in (1, 2):
        with jax.config.override("jaxlite_tier", tier):
            out = jax.jit(jax.vmap(f))(steps, xs)
        assert np.array_equal(np.asarray(out[1]), want) and out[0].tolist() == [40] * 3
