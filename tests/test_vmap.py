"""vmap: batching rules against Python loops, in_axes/out_axes resolution, collectives by axis
name, composition with jit and grad, errors, and jaxprs against JAX when installed."""
import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import lax

RNG = np.random.RandomState(0)


def _loop(f, in_axes, args, out_axis=0):
    """Reference: apply ``f`` to slices along ``in_axes`` and stack along ``out_axis``."""
    size = next(np.shape(a)[ax] for a, ax in zip(args, in_axes) if ax is not None)
    outs = []
    for i in range(size):
        sl = [a if ax is None else np.take(a, i, axis=ax) for a, ax in zip(args, in_axes)]
        outs.append(np.asarray(f(*[jnp.asarray(v) for v in sl])))
    return np.stack(outs, axis=out_axis)


FUNS = [
    ("sin_mul", lambda x, y: jnp.sin(x) * y, (3, 4), (3, 4)),
    ("add_bcast", lambda x, y: x + y, (3, 4), (3, 4)),
    ("sum_axis", lambda x, y: jnp.sum(x * y, axis=0), (3, 4), (3, 4)),
    ("max_keep", lambda x, y: jnp.max(x, axis=-1, keepdims=True) - y, (3, 4), (3, 1)),
    ("matmul", lambda x, y: x @ y.T, (3, 4), (2, 4)),
    ("vdot", lambda x, y: jnp.vdot(x, y), (4,), (4,)),
    ("reshape_T", lambda x, y: x.reshape(2, 6).T + y.reshape(6, 2), (3, 4), (2, 6)),
    ("slice_rev", lambda x, y: x[1:, ::-1] * y[0], (3, 4), (2, 4)),
    ("concat", lambda x, y: jnp.concatenate([x, y], axis=1), (3, 4), (3, 2)),
    ("where", lambda x, y: jnp.where(x > 0, x, y), (3, 4), (3, 4)),
    ("cumsum", lambda x, y: jnp.cumsum(x, axis=1) + y, (3, 4), (3, 4)),
    ("argmax", lambda x, y: jnp.argmax(x, axis=1) + y.shape[0], (3, 4), (2,)),
    ("pad", lambda x, y: jnp.pad(x, ((1, 0), (0, 2))) * 2, (3, 4), (1,)),
    ("expand_squeeze", lambda x, y: jnp.squeeze(x[None]) * jnp.mean(y), (3, 4), (2,)),
    ("index", lambda x, y: x[jnp.array([2, 0])] + y[1], (3, 4), (3, 4)),
    ("at_add", lambda x, y: x.at[1].add(y[0]), (3, 4), (3, 4)),
    ("clip_abs", lambda x, y: jnp.clip(jnp.abs(x), 0.2, 0.8) * y, (3, 4), (3, 4)),
    ("dyn_slice", lambda x, y: lax.dynamic_slice(x, (1, 1), (2, 2)).sum() + y, (3, 4), (2,)),
    ("convert", lambda x, y: x.astype(jnp.int32) + y.astype(jnp.int32), (3, 4), (3, 4)),
    ("gather_idx", lambda x, y: x[jnp.argsort(y[0]) % 3], (3, 4), (3, 4)),
    ("take_along", lambda x, y: jnp.take_along_axis(x, jnp.argsort(y, axis=1), axis=1),
     (3, 4), (3, 4)),
    ("take_flat", lambda x, y: jnp.take(x, jnp.argsort(y[0]) * 2), (3, 4), (3, 4)),
    ("scatter_add_idx", lambda x, y: x.at[jnp.argsort(y[:, 0])].add(y), (3, 4), (3, 4)),
    ("scatter_set_col", lambda x, y: x.at[:, jnp.argmax(y[0])].set(y[1, 0]), (3, 4), (3, 4)),
    ("scatter_mul_max", lambda x, y: x.at[jnp.argmin(y[0]) % 3].multiply(2.0).at[0].max(y[0]),
     (3, 4), (3, 4)),
    ("sort", lambda x, y: jnp.sort(x, axis=0) + jnp.sort(y, axis=1), (3, 4), (3, 4)),
    ("sort_multi", lambda x, y: lax.sort((x, y), dimension=1, num_keys=1)[1], (3, 4), (3, 4)),
    ("top_k", lambda x, y: lax.top_k(x, 2)[0] * y[:, :2], (3, 4), (3, 4)),
]


@pytest.mark.parametrize("name,f,sx,sy", FUNS, ids=[f[0] for f in FUNS])
@pytest.mark.parametrize("in_axes", [(0, 0), (1, 0), (0, None), (None, 1), (-1, -1)])
def test_vmap_matches_loop(name, f, sx, sy, in_axes):
    b = 5
    args = []
    for shape, ax in zip((sx, sy), in_axes):
        if ax is None:
            args.append(RNG.randn(*shape).astype(np.float32))
        else:
            shp = list(shape)
            shp.insert(ax % (len(shape) + 1), b)
            args.append(RNG.randn(*shp).astype(np.float32))
    axes = [None if a is None else a % np.ndim(x) for a, x in zip(in_axes, args)]
    want = _loop(f, axes, args)

    args = [jnp.asarray(a) for a in args]
    got = jax.vmap(f, in_axes=in_axes)(*args)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-5)
    got_jit = jax.jit(jax.vmap(f, in_axes=in_axes))(*args)
    np.testing.assert_allclose(np.asarray(got_jit), want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("out_axes", [0, 1, -1])
def test_out_axes(out_axes):
    x = RNG.randn(5, 3).astype(np.float32)
    got = jax.vmap(lambda v: v * 2, out_axes=out_axes)(x)
    want = np.moveaxis(x * 2, 0, out_axes)
    np.testing.assert_allclose(np.asarray(got), want)


def test_pytrees_kwargs_and_unbatched_outputs():
    x = {"a": RNG.randn(4, 2).astype(np.float32), "b": RNG.randn(3).astype(np.float32)}
    f = jax.vmap(lambda d, c: (d["a"] * c, d["b"].sum()), in_axes=({"a": 0, "b": None}, None),
                 out_axes=(0, None))
    a, s = f(x, 2.0)
    np.testing.assert_allclose(a, x["a"] * 2)
    np.testing.assert_allclose(s, x["b"].sum(), rtol=1e-6)
    g = jax.vmap(lambda v, *, k: v + k)(np.ones((2, 3)), k=np.arange(2.0)[:, None] * np.ones(3))
    np.testing.assert_allclose(g, np.ones((2, 3)) + np.arange(2.0)[:, None])
    h = jax.vmap(lambda v: 1.0)(np.ones(4))
    np.testing.assert_allclose(h, np.ones(4))


def test_nested_vmap_l1_distance():
    def l1_distance(x, y):
        return jnp.sum(jnp.abs(x - y))
    x, y = RNG.randn(3, 4).astype(np.float32), RNG.randn(5, 4).astype(np.float32)
    got = jax.vmap(jax.vmap(l1_distance, (0, None)), (None, 0))(x, y)
    want = np.abs(x[None, :, :] - y[:, None, :]).sum(-1)
    np.testing.assert_allclose(got, want, rtol=1e-5)


def test_per_example_gradients():
    def loss(params, x, y):
        W, b = params
        return jnp.sum((jnp.tanh(x @ W + b) - y) ** 2)
    params = (RNG.randn(4, 3).astype(np.float32), RNG.randn(3).astype(np.float32))
    xs, ys = RNG.randn(6, 4).astype(np.float32), RNG.randn(6, 3).astype(np.float32)
    per = jax.jit(jax.vmap(jax.grad(loss), in_axes=(None, 0, 0)))(params, xs, ys)
    for i in range(6):
        gW, gb = jax.grad(loss)(params, xs[i], ys[i])
        np.testing.assert_allclose(per[0][i], gW, rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(per[1][i], gb, rtol=1e-4, atol=1e-5)
    # grad of vmap
    g = jax.grad(lambda p: jnp.sum(jax.vmap(loss, (None, 0, 0))(p, xs, ys)))(params)
    np.testing.assert_allclose(g[0], np.sum(per[0], 0), rtol=1e-4, atol=1e-4)


def test_collectives():
    x = jnp.arange(6.0).reshape(3, 2)
    np.testing.assert_allclose(jax.vmap(lambda v: lax.psum(v, "i"), axis_name="i")(x),
                               np.tile([6.0, 9.0], (3, 1)))
    np.testing.assert_allclose(jax.vmap(lambda v: lax.pmean(v, "i"), axis_name="i")(x),
                               np.tile([2.0, 3.0], (3, 1)))
    np.testing.assert_allclose(jax.vmap(lambda v: lax.pmax(v, "i"), axis_name="i")(x),
                               np.tile([4.0, 5.0], (3, 1)))
    np.testing.assert_array_equal(jax.vmap(lambda v: lax.axis_index("i"), axis_name="i")(x),
                                  [0, 1, 2])
    v = jnp.arange(3.0)
    np.testing.assert_allclose(jax.vmap(lambda a: lax.all_gather(a, "i"), axis_name="i")(v),
                               np.tile([0.0, 1.0, 2.0], (3, 1)))
    np.testing.assert_allclose(
        jax.vmap(lambda a: lax.ppermute(a, "i", [(0, 1), (1, 2), (2, 0)]), axis_name="i")(v),
        [2.0, 0.0, 1.0])
    np.testing.assert_allclose(
        jax.vmap(jax.jit(lambda a: a / lax.psum(a, "i")), axis_name="i")(v + 1),
        (v + 1) / 6.0, rtol=1e-6)
    f = lambda a: a * lax.psum(a, "i")  # noqa: E731
    np.testing.assert_allclose(jax.vmap(jax.grad(f), axis_name="i")(v), [6.0, 6.0, 6.0])
    with pytest.raises(NameError, match="unbound axis name"):
        lax.psum(1.0, "i")


def test_vectorize():
    f = jnp.vectorize(lambda a, b: jnp.dot(a, b), signature="(n),(n)->()")
    a, b = RNG.randn(3, 4).astype(np.float32), RNG.randn(4).astype(np.float32)
    np.testing.assert_allclose(f(a, b), a @ b, rtol=1e-5)
    g = jnp.vectorize(lambda x, y: x * y + 1)
    np.testing.assert_allclose(g(np.ones((2, 1)), np.arange(3.0)), np.ones((2, 1)) *
                               np.arange(3.0) + 1)
    with pytest.raises(ValueError, match="signature"):
        jnp.vectorize(lambda x: x, signature="(n->)")(a)


def test_errors():
    with pytest.raises(ValueError, match="inconsistent sizes"):
        jax.vmap(lambda a, b: a + b)(np.ones(3), np.ones(4))
    with pytest.raises(ValueError, match="at least one non-None"):
        jax.vmap(lambda a: a, in_axes=None)(np.ones(3))
    with pytest.raises(ValueError, match="axis 2"):
        jax.vmap(lambda a: a, in_axes=2)(np.ones((3, 4)))
    with pytest.raises(ValueError, match="got axis spec None but output was batched on axis 0"):
        jax.vmap(lambda a: a, out_axes=None)(np.ones(3))
    with pytest.raises(ValueError, match="in_axes"):
        jax.vmap(lambda a, b: a, in_axes=(0,))(np.ones(3), np.ones(3))


JAXPRS = {
    "add_unbatched": (lambda m: (lambda x, y: x + y), (0, None), [(3, 4), (4,)]),
    "transpose_mul": (lambda m: (lambda x, y: m.sin(x) * y), (1, 0), [(3, 4), (4, 3)]),
    "sum": (lambda m: m.sum, 0, [(3, 4)]),
    "vdot": (lambda m: m.vdot, 0, [(3, 4), (3, 4)]),
    "where": (lambda m: (lambda a: m.where(a > 0, a, 0.0)), 0, [(3, 4)]),
}


@pytest.mark.parametrize("name", sorted(JAXPRS))
def test_vmap_jaxpr_matches_jax(name):
    rjax = pytest.importorskip("jax")
    import jax.numpy as rjnp
    mk, in_axes, shapes = JAXPRS[name]
    args = [np.ones(s, np.float32) for s in shapes]
    ours = str(jax.make_jaxpr(jax.vmap(mk(jnp), in_axes))(*args))
    theirs = str(rjax.make_jaxpr(rjax.vmap(mk(rjnp), in_axes))(*args))
    assert ours == theirs


IDX_JAXPRS = {
    "gather_both": (lambda m: (lambda a, b: a[b]), (0, 0)),
    "gather_operand": (lambda m: (lambda a, b: a[b]), (0, None)),
    "gather_indices": (lambda m: (lambda a, b: a[b]), (None, 1)),
    "scatter_both": (lambda m: (lambda a, b: a.at[b].add(1.0)), (0, 0)),
    "scatter_operand": (lambda m: (lambda a, b: a.at[b].set(5.0)), (1, None)),
    "scatter_indices": (lambda m: (lambda a, b: a.at[b].mul(2.0)), (None, 0)),
    "sort_axis1": (lambda m: (lambda a, b: m.sort(a) + b[0, 0]), (1, None)),
    "sort_multi_unbatched": (lambda m: (lambda a, b: m.lexsort((a, m.arange(4.0)))), (1, None)),
    "sort_grad": (lambda m: (lambda a, b: m.sum(m.sort(a)[:2] ** 2) * b[0]), (0, 0)),
}


@pytest.mark.parametrize("name", sorted(IDX_JAXPRS))
def test_vmap_indexing_sorting_jaxpr_matches_jax(name):
    rjax = pytest.importorskip("jax")
    import jax.numpy as rjnp
    mk, in_axes = IDX_JAXPRS[name]
    a = np.arange(24.0, dtype=np.float32).reshape(4, 6)
    b = np.array([[0, 2], [1, 1], [5, 0], [3, 3]], np.int32)
    if name == "sort_grad":
        f = lambda m, jx: jx.grad(mk(m))  # noqa: E731
        b = b.astype(np.float32)
    else:
        f = lambda m, jx: mk(m)  # noqa: E731
    ja, jb, ra, rb = jnp.asarray(a), jnp.asarray(b), rjnp.asarray(a), rjnp.asarray(b)
    ours = jax.make_jaxpr(jax.vmap(f(jnp, jax), in_axes))(ja, jb)
    theirs = rjax.make_jaxpr(rjax.vmap(f(rjnp, rjax), in_axes))(ra, rb)
    assert str(ours) == str(theirs)
    np.testing.assert_allclose(jax.vmap(f(jnp, jax), in_axes)(ja, jb),
                               rjax.vmap(f(rjnp, rjax), in_axes)(ra, rb), rtol=1e-6)


def test_gather_scatter_sort_batch_without_loops():
    x = jnp.asarray(RNG.randn(5, 3, 4).astype(np.float32))
    i = jnp.asarray(RNG.randint(0, 3, (5, 2)).astype(np.int32))
    text = str(jax.make_jaxpr(jax.vmap(lambda a, b: jnp.sort(a.at[b].add(1.0)[b], axis=0)))(x, i))
    assert text.count("gather[") == 1 and text.count("scatter-add[") == 1
    assert text.count("sort[") == 1 and "concatenate" not in text


def test_nested_l1_jaxpr_matches_jax():
    rjax = pytest.importorskip("jax")
    import jax.numpy as rjnp

    def mk(m):
        def l1_distance(x, y):
            return m.sum(m.abs(x - y))
        return l1_distance
    x = np.ones((3, 4), np.float32)
    ours = str(jax.make_jaxpr(jax.vmap(jax.vmap(mk(jnp), (0, None)), (None, 0)))(x, x))
    theirs = str(rjax.make_jaxpr(rjax.vmap(rjax.vmap(mk(rjnp), (0, None)), (None, 0)))(x, x))
    assert ours == theirs


def test_vmap_custom_rules():
    @jax.custom_jvp
    def f(x):
        return jnp.sin(x)

    @f.defjvp
    def f_jvp(p, t):
        return f(p[0]), 2 * t[0] * p[0]
    xs = jnp.arange(3.0)
    np.testing.assert_allclose(jax.vmap(f)(xs), np.sin(np.arange(3.0)), rtol=1e-6)
    np.testing.assert_allclose(jax.vmap(jax.grad(f))(xs), [0.0, 2.0, 4.0])
    np.testing.assert_allclose(jax.grad(lambda x: jnp.sum(jax.vmap(f)(x)))(xs), [0, 2, 4])
    assert "custom_jvp_call" in str(jax.make_jaxpr(jax.vmap(f))(xs))

    @jax.custom_vjp
    def g(x, w):
        return jnp.sin(x) * w
    g.defvjp(lambda x, w: (g(x, w), (jnp.cos(x), w)),
             lambda r, ct: (3 * ct * r[0] * r[1], ct))
    np.testing.assert_allclose(
        jax.grad(lambda x: jnp.sum(jax.vmap(g, (0, None))(x, 2.0)))(xs),
        6 * np.cos(np.arange(3.0)), rtol=1e-6)
    assert float(jax.grad(lambda w: jnp.sum(jax.vmap(g, (0, None))(xs, w)))(2.0)) == 3.0


def test_collectives_over_an_outer_axis_inside_inner_vmap():
    x = np.arange(6.0, dtype=np.float32).reshape(2, 3)

    def outer(f):
        return jax.vmap(lambda r: jax.vmap(f, axis_name="j")(r), axis_name="i")(x)
    np.testing.assert_allclose(outer(lambda y: lax.psum(y, "i")), np.broadcast_to(x.sum(0), x.shape))
    np.testing.assert_allclose(outer(lambda y: lax.pmax(y, "i")), np.broadcast_to(x.max(0), x.shape))
    np.testing.assert_allclose(outer(lambda y: lax.all_gather(y, "i")),
                               np.broadcast_to(x.T, (2, 3, 2)))
    np.testing.assert_allclose(outer(lambda y: lax.ppermute(y, "i", [(0, 1), (1, 0)])), x[::-1])
    text = str(jax.make_jaxpr(lambda v: jax.vmap(
        lambda r: jax.vmap(lambda y: lax.psum(y, "i"), axis_name="j")(r), axis_name="i")(v))(x))
    assert "concatenate" not in text    # a batching rule, not a loop


def test_betainc_derivative_in_x_and_errors():
    from jaxlite.test_util import check_grads
    check_grads(lambda v: lax.betainc(2.0, 3.0, v), (jnp.array([0.2, 0.5, 0.7]),), order=2,
                modes=["fwd", "rev"])
    with pytest.raises(ValueError, match="Betainc gradient with respect to a and b"):
        jax.grad(lambda a: lax.betainc(a, 3.0, 0.5))(2.0)
    with pytest.raises(NotImplementedError, match="zeta"):
        jax.grad(lambda a: lax.zeta(a, 2.0))(3.0)


def _forwarding_cases(api):
    """Functions whose output is their input, through the call primitives JAX evaluates in
    Python eagerly (custom_jvp, custom_vjp, checkpoint) and through jit (which copies)."""
    cj = api.custom_jvp(lambda x: (x, x * 2))
    cj.defjvp(lambda p, t: (cj(p[0]), (t[0], t[0] * 2)))
    cv = api.custom_vjp(lambda x: x)
    cv.defvjp(lambda x: (x, None), lambda r, g: (g,))
    return {"custom_jvp": lambda x: cj(x)[0], "custom_vjp": cv,
            "checkpoint": lambda x: api.checkpoint(lambda x: (x, x * 2))(x)[0],
            "jit": api.jit(lambda x: x)}


@pytest.mark.parametrize("name", ["custom_jvp", "custom_vjp", "checkpoint", "jit"])
def test_vmap_forwards_inputs_as_jax(name):
    """Under vmap, an identity body of custom_jvp/custom_vjp/checkpoint returns the input
    array object itself, as JAX's eager evaluation of those bodies does (lineax relies on
    ``vmap(custom_jvp(asarray))(y) is y``); jit returns a new array in both."""
    real = pytest.importorskip("jax")
    y_real = real.numpy.array([1.0, 2.0])
    want = real.vmap(_forwarding_cases(real)[name])(y_real) is y_real
    y = jnp.array([1.0, 2.0])
    out = jax.vmap(_forwarding_cases(jax)[name])(y)
    assert (out is y) == want
    np.testing.assert_array_equal(out, [1.0, 2.0])


DUS_CASES = {   # in_axes of (operand, update, start0, start1)
    "all_batched": (0, 0, 0, 0),
    "operand_unbatched": (None, 1, 0, None),
    "update_unbatched": (0, None, None, 0),
    "one_start": (1, None, 0, None),
}


@pytest.mark.parametrize("name", sorted(DUS_CASES))
def test_vmap_dynamic_update_slice_at_batched_starts_is_jaxs_scatter(name):
    # JAX batches a dynamic_update_slice at batched starts as one CLIP-mode scatter (the
    # batch as operand/indices batching dimensions): same equations, same values, starts
    # out of bounds or negative clamped as the update clamps them
    rjax = pytest.importorskip("jax")
    in_axes = DUS_CASES[name]
    x = np.arange(3 * 4 * 5, dtype=np.float32).reshape(3, 4, 5)
    upd = -np.arange(3 * 2 * 2, dtype=np.float32).reshape(3, 2, 2) - 1
    s0 = np.array([0, 3, -1], np.int32)
    s1 = np.array([7, 1, -9], np.int32)
    args = [np.moveaxis(a, 0, ax) if ax is not None else a[0]
            for a, ax in zip((x, upd, s0, s1), in_axes)]

    def f(m):
        return lambda x, u, i, j: m.lax.dynamic_update_slice(x, u, (i, j))
    ours = jax.make_jaxpr(jax.vmap(f(jax), in_axes))(*args)
    theirs = rjax.make_jaxpr(rjax.vmap(f(rjax), in_axes))(*args)
    assert [e.primitive.name for e in ours.jaxpr.eqns] == \
        [e.primitive.name for e in theirs.jaxpr.eqns]
    (sc,) = [e for e in ours.jaxpr.eqns if e.primitive.name == "scatter"]
    (tsc,) = [e for e in theirs.jaxpr.eqns if e.primitive.name == "scatter"]
    assert str(sc.params["mode"]) == str(tsc.params["mode"])
    assert [tuple(map(int, d)) for d in sc.params["dimension_numbers"]] == \
        [tuple(map(int, d)) for d in tsc.params["dimension_numbers"]]
    want = np.asarray(rjax.vmap(f(rjax), in_axes)(*args))
    for g in (jax.vmap(f(jax), in_axes), jax.jit(jax.vmap(f(jax), in_axes))):
        assert np.asarray(g(*args)).tobytes() == want.tobytes()
    # and its derivatives are JAX's (the scatter's JVP and transpose)
    gx = jax.grad(lambda x, u: jnp.sum(jax.vmap(f(jax), in_axes)(x, u, *args[2:]) ** 2),
                  (0, 1))(*args[:2])
    tx = rjax.grad(lambda x, u: rjax.numpy.sum(
        rjax.vmap(f(rjax), in_axes)(x, u, *args[2:]) ** 2), (0, 1))(*args[:2])
    for a, b in zip(gx, tx):
        assert np.asarray(a).tobytes() == np.asarray(b).tobytes()


DS_CASES = {   # in_axes of (operand, start0, start1)
    "both_batched": (0, 0, None),
    "operand_unbatched": (None, 0, 0),
    "operand_axis1": (1, None, 0),
}


@pytest.mark.parametrize("name", sorted(DS_CASES))
def test_vmap_dynamic_slice_at_batched_starts_is_jaxs_gather(name):
    # JAX batches a dynamic_slice at batched starts as a CLIP-mode gather (gather's own
    # batching rule then decides the dimension numbers): same equations and values
    rjax = pytest.importorskip("jax")
    in_axes = DS_CASES[name]
    x = np.arange(3 * 4 * 5, dtype=np.float32).reshape(3, 4, 5)
    s0 = np.array([7, 1, -9], np.int32)
    s1 = np.array([1, 4, -2], np.int32)
    args = [np.moveaxis(a, 0, ax) if ax is not None else a[0]
            for a, ax in zip((x, s0, s1), in_axes)]

    def f(m):
        return lambda x, i, j: m.lax.dynamic_slice(x, (i, j), (2, 2))
    ours = jax.make_jaxpr(jax.vmap(f(jax), in_axes))(*args)
    theirs = rjax.make_jaxpr(rjax.vmap(f(rjax), in_axes))(*args)
    assert [e.primitive.name for e in ours.jaxpr.eqns] == \
        [e.primitive.name for e in theirs.jaxpr.eqns]
    (g,) = [e for e in ours.jaxpr.eqns if e.primitive.name == "gather"]
    (tg,) = [e for e in theirs.jaxpr.eqns if e.primitive.name == "gather"]
    for k in ("mode", "indices_are_sorted", "unique_indices"):
        assert str(g.params[k]) == str(tg.params[k])
    assert [tuple(map(int, d)) for d in g.params["dimension_numbers"]] == \
        [tuple(map(int, d)) for d in tg.params["dimension_numbers"]]
    want = np.asarray(rjax.vmap(f(rjax), in_axes)(*args))
    for h in (jax.vmap(f(jax), in_axes), jax.jit(jax.vmap(f(jax), in_axes))):
        assert np.asarray(h(*args)).tobytes() == want.tobytes()
    gx = jax.grad(lambda x: jnp.sum(jax.vmap(f(jax), in_axes)(x, *args[1:]) ** 2))(args[0])
    tx = rjax.grad(lambda x: rjax.numpy.sum(
        rjax.vmap(f(rjax), in_axes)(x, *args[1:]) ** 2))(args[0])
    assert np.asarray(gx).tobytes() == np.asarray(tx).tobytes()
