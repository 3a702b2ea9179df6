"""Audit of vmap and structured control flow against JAX (issue 4): JAX's vmap error
messages, collectives by axis name (psum_scatter, pshuffle, all_gather's transpose), cond
with a batched index as JAX 0.10 batches it, fori_loop bounds, weak-typed loop carries,
lax.map/jnp.vectorize equations. JAX-free checks first; differential ones skip without JAX."""
import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import lax


def _rjax():
    return pytest.importorskip("jax")


def _err(call):
    try:
        call()
    except Exception as e:  # noqa: BLE001
        return type(e).__name__, str(e)
    return None


# ----------------------------------------------------------------------------- vmap errors
ERRORS = {
    "inconsistent": lambda J: J.vmap(lambda a, b: a + b)(np.ones(3), np.ones(4)),
    "most_axes": lambda J: J.vmap(lambda a, b, c: a + b, in_axes=(0, 1, 0))(
        np.ones(3), np.ones((2, 4)), np.ones(3)),
    "tree_paths": lambda J: J.vmap(lambda d: d["a"])({"a": np.ones(3), "b": np.ones(4)}),
    "axis_size": lambda J: J.vmap(lambda a: a, axis_size=5)(np.ones(3)),
    "out_none": lambda J: J.vmap(lambda a: a, out_axes=None)(np.ones(3)),
    "out_none_path": lambda J: J.vmap(lambda a: {"k": (a,)}, out_axes={"k": (None,)})(
        np.ones(3)),
    "in_axes_dict": lambda J: J.vmap(lambda a: a, in_axes={"a": 0})(np.ones(3)),
    "out_of_range_out": lambda J: J.vmap(lambda a: a, out_axes=2)(np.ones((3, 2))),
    "out_of_range_in": lambda J: J.vmap(lambda a: a, in_axes=-3)(np.ones((3, 2))),
    "no_args": lambda J: J.vmap(lambda: 1.0)(),
    "all_none": lambda J: J.vmap(lambda a: a, in_axes=None)(np.ones(3)),
}


def test_vmap_errors():
    cls, msg = _err(lambda: ERRORS["most_axes"](jax))
    assert cls == "ValueError" and msg == (
        "vmap got inconsistent sizes for array axes to be mapped:\n"
        "  * most axes (2 of them) had size 3, e.g. axis 0 of argument a of type float32[3];\n"
        "  * one axis had size 4: axis 1 of argument b of type float32[2,4]")
    assert "argument d['b'] of type float32[4]" in _err(lambda: ERRORS["tree_paths"](jax))[1]
    assert "the `axis_size` argument was 5" in _err(lambda: ERRORS["axis_size"](jax))[1]
    assert _err(lambda: ERRORS["out_none_path"](jax)) == (
        "ValueError", "at vmap out_axes['k'][0], got axis spec None but output was batched "
        "on axis 0")
    assert _err(lambda: ERRORS["in_axes_dict"](jax))[0] == "TypeError"
    # the right cases still work
    np.testing.assert_allclose(jax.vmap(lambda a: 2.0, out_axes=None)(np.ones(3)), 2.0)
    np.testing.assert_allclose(jax.vmap(lambda a: a, in_axes=None, axis_size=2)(np.ones(3)),
                               np.ones((2, 3)))


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_vmap_errors_match_jax(name):
    rjax = _rjax()
    assert _err(lambda: ERRORS[name](jax)) == _err(lambda: ERRORS[name](rjax))


# ----------------------------------------------------------------------------- collectives
def test_psum_scatter_pshuffle_and_all_gather_transpose():
    x = np.arange(12.0, dtype=np.float32).reshape(3, 4)
    got = jax.vmap(lambda a: lax.psum_scatter(a[:3], "i"), axis_name="i")(x)
    np.testing.assert_allclose(got, x[:, :3].sum(0))            # member i keeps sum[i]
    got = jax.vmap(lambda a: lax.psum_scatter(a[:3], "i", tiled=True), axis_name="i")(x)
    np.testing.assert_allclose(got, x[:, :3].sum(0)[:, None])
    got = jax.vmap(lambda a: lax.psum_scatter(jnp.outer(a[:3], a[:2]), "i",
                                              scatter_dimension=0), axis_name="i")(x)
    want = sum(np.outer(x[k, :3], x[k, :2]) for k in range(3))
    np.testing.assert_allclose(got, want)
    np.testing.assert_allclose(
        jax.vmap(lambda a: lax.pshuffle(a, "i", [2, 0, 1]), axis_name="i")(x), x[[2, 0, 1]])
    with pytest.raises(ValueError, match="permutation"):
        jax.vmap(lambda a: lax.pshuffle(a, "i", [0, 0, 1]), axis_name="i")(x)
    # all_gather is linear: its transpose is psum_scatter; check against a Python loop
    v = np.arange(3.0, dtype=np.float32)
    g = jax.vmap(jax.grad(lambda a: (lax.all_gather(a, "i") ** 2).sum()), axis_name="i")(v)
    # each member's loss is sum(v**2), so d/dv_k of the total seen by member k is 3 * 2 v_k
    np.testing.assert_allclose(g, 3 * 2 * v)
    g = jax.vmap(jax.grad(lambda a: lax.psum_scatter(jnp.stack([a, 2 * a, 3 * a]), "i")
                          * (lax.axis_index("i") + 1.0)), axis_name="i")(v)
    # member j's output is c_j * sum_k v_k with c = (1, 4, 9); d/dv_k summed over j's = 14
    np.testing.assert_allclose(g, [14.0, 14.0, 14.0])


def test_collectives_match_jax():
    rjax = _rjax()
    x = np.arange(12.0, dtype=np.float32).reshape(3, 4)
    v = np.arange(3.0, dtype=np.float32)
    for mk in [lambda J: J.vmap(lambda a: J.lax.psum_scatter(a[:3], "i"), axis_name="i")(x),
               lambda J: J.vmap(lambda a: J.lax.psum_scatter(a[:3], "i", tiled=True),
                                axis_name="i")(x),
               lambda J: J.vmap(lambda a: J.lax.pshuffle(a, "i", [2, 0, 1]), axis_name="i")(x),
               lambda J: J.vmap(J.grad(lambda a: (J.lax.all_gather(a, "i") ** 2).sum()),
                                axis_name="i")(v),
               lambda J: J.vmap(lambda a: J.lax.all_gather(a, "i", axis=0, tiled=True),
                                axis_name="i")(x),
               lambda J: J.vmap(lambda a: J.lax.pmin(a, "i"), axis_name="i")(x)]:
        np.testing.assert_allclose(mk(jax), mk(rjax))


# ----------------------------------------------------------------------------- control flow
def test_batched_cond_becomes_selects():
    xs = np.array([-1.0, 0.5, 2.0, 3.0], np.float32)
    text = str(jax.make_jaxpr(jax.vmap(lambda x: lax.cond(x > 0, jnp.sin, jnp.cos, x)))(xs))
    assert "cond[" not in text and text.count("select_n") == 3
    assert text.count("stop_gradient") == 2
    f = jax.vmap(lambda i, x: lax.switch(i, [jnp.sin, jnp.cos, jnp.exp], x))
    idx = np.array([0, 1, 2, 5])
    np.testing.assert_allclose(f(idx, xs), [np.sin(xs[0]), np.cos(xs[1]), np.exp(xs[2]),
                                            np.exp(xs[3])], rtol=1e-6)
    # reverse mode through a batched cond: untaken branches do not poison the gradient
    g = jax.grad(lambda v: jax.vmap(lambda x: lax.cond(x > 0, jnp.sqrt, lambda y: y * 0.0,
                                                       x))(v).sum())(xs)
    np.testing.assert_allclose(g, np.where(xs > 0, 0.5 / np.sqrt(np.abs(xs)), 0.0), rtol=1e-6)
    # a numeric predicate is compared with zero (JAX)
    assert float(lax.cond(2.0, lambda: 1.0, lambda: 0.0)) == 1.0
    assert float(lax.cond(0, lambda: 1.0, lambda: 0.0)) == 0.0
    with pytest.raises(TypeError, match="Index type must be an integer"):
        lax.switch(1.0, [jnp.sin, jnp.cos], 1.0)


def test_loops_promote_weak_carries_and_keep_bound_types():
    c, _ = lax.scan(lambda c, a: (c + a, None), 0, jnp.arange(1.0, 4.0))
    assert c.dtype == jnp.float32 and float(c) == 6.0
    assert float(lax.while_loop(lambda c: c < 3, lambda c: c + 1.0, 0)) == 3.0
    out = lax.fori_loop(3, 1, lambda i, c: c + i, 0)
    assert int(out) == 0 and out.weak_type
    out = lax.fori_loop(0, 4, lambda i, c: c + i, 0)
    assert int(out) == 6 and out.weak_type
    assert lax.fori_loop(jnp.int8(0), 3, lambda i, c: c + i, jnp.int8(0)).dtype == jnp.int8
    with pytest.raises(TypeError, match="must have equal types"):
        lax.fori_loop(jnp.int8(0), jnp.int16(3), lambda i, c: c, 0)
    text = str(jax.make_jaxpr(lambda x, n: lax.fori_loop(0, n, lambda i, c: c * 2.0, x))(
        1.0, 3))
    assert "convert_element_type" not in text and "while[" in text
    assert "scan[" in str(jax.make_jaxpr(lambda x: lax.fori_loop(0, 3, lambda i, c: c * 2.0,
                                                                  x))(1.0))


def test_map_batch_size_and_vectorize():
    xs = np.arange(7.0, dtype=np.float32)
    for bs in (1, 2, 3, 7, 10):
        np.testing.assert_allclose(lax.map(lambda v: v ** 2, xs, batch_size=bs), xs ** 2)
    got = lax.map(lambda d: d["a"] * d["b"], {"a": xs, "b": xs + 1}, batch_size=3)
    np.testing.assert_allclose(got, xs * (xs + 1))
    f = jnp.vectorize(lambda a, b: jnp.dot(a, b), signature="(n),(n)->()")
    a, b = np.ones((3, 4), np.float32), np.arange(4.0, dtype=np.float32)
    np.testing.assert_allclose(f(a, b), a @ b)
    text = str(jax.make_jaxpr(f)(a, b))
    assert "broadcast_in_dim" not in text and text.count("dot_general") == 1
    g = jnp.vectorize(lambda x, y: x * y + 1)
    got = g(np.ones((2, 1)), np.arange(3.0))
    np.testing.assert_allclose(got, np.ones((2, 1)) * np.arange(3.0) + 1)
    h = jnp.vectorize(lambda v: (v.sum(), v * 2), signature="(n)->(),(n)")
    s, d = h(np.ones((1, 2, 3), np.float32))
    assert s.shape == (1, 2) and d.shape == (1, 2, 3)


CF_JAXPRS = {
    "cond_batched": (lambda J: J.vmap(lambda x: J.lax.cond(x > 0, J.numpy.sin, J.numpy.cos, x)),
                     (np.arange(1.0, 5.0, dtype=np.float32),)),
    "switch_batched": (lambda J: J.vmap(lambda i, x: J.lax.switch(
        i, [J.numpy.sin, J.numpy.cos, J.numpy.exp], x)),
        (np.array([0, 1, 2, 1], np.int32), np.arange(1.0, 5.0, dtype=np.float32))),
    "fori_dynamic": (lambda J: (lambda x, n: J.lax.fori_loop(0, n, lambda i, c: c * 2.0 + i,
                                                             x)), (1.0, 3)),
    "fori_static_grad": (lambda J: J.grad(lambda x: J.lax.fori_loop(
        0, 3, lambda i, c: J.numpy.sin(c) * i, x)), (1.0,)),
    "map_batch_rem": (lambda J: (lambda x: J.lax.map(J.numpy.sin, x, batch_size=3)),
                      (np.arange(4.0, dtype=np.float32),)),
    "vectorize_sig": (lambda J: J.numpy.vectorize(lambda a, b: J.numpy.dot(a, b),
                                                  signature="(n),(n)->()"),
                      (np.ones((3, 4), np.float32), np.ones(4, np.float32))),
    "vdot": (lambda J: J.vmap(J.numpy.vdot), (np.ones((5, 3), np.float32),
                                              np.ones((5, 3), np.float32))),
    "scan_reverse_unroll": (lambda J: (lambda c, x: J.lax.scan(
        lambda c, a: (c + a, c * a), c, x, reverse=True, unroll=2)),
        (1.0, np.arange(4.0, dtype=np.float32))),
    "vmap_scan": (lambda J: J.vmap(lambda x: J.lax.scan(lambda c, a: (c + a, c * a), 0.0, x)),
                  (np.ones((2, 4), np.float32),)),
}


@pytest.mark.parametrize("name", sorted(CF_JAXPRS))
def test_control_flow_jaxprs_match_jax(name):
    rjax = _rjax()
    mk, args = CF_JAXPRS[name]
    assert str(jax.make_jaxpr(mk(jax))(*args)) == str(rjax.make_jaxpr(mk(rjax))(*args))
    for a, b in zip(jax.tree_util.tree_leaves(mk(jax)(*args)),
                    rjax.tree_util.tree_leaves(mk(rjax)(*args))):
        np.testing.assert_allclose(a, b, rtol=1e-6)


def test_loop_weak_carries_match_jax():
    rjax = _rjax()
    for mk in [lambda J: J.lax.scan(lambda c, a: (c + a, None), 0,
                                    np.arange(1.0, 4.0, dtype=np.float32))[0],
               lambda J: J.lax.while_loop(lambda c: c < 3, lambda c: c + 1.0, 0),
               lambda J: J.lax.fori_loop(3, 1, lambda i, c: c + i, 0),
               lambda J: J.vmap(lambda n: J.lax.fori_loop(0, n, lambda i, c: c + i, 0))(
                   np.array([1, 3, 5])),
               lambda J: J.lax.cond(2.0, lambda: 1.0, lambda: 0.0)]:
        a, b = mk(jax), mk(rjax)
        assert a.dtype == b.dtype and a.weak_type == b.weak_type
        np.testing.assert_allclose(a, b)
