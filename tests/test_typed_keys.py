"""Typed PRNG keys (``jax.random.key``) as JAX has them: pytree leaves with a key dtype that
jit, vmap, grad, scan, cond and while carry as one value (aval ``key<fry>[...]``), with the
key primitives (random_seed/wrap/unwrap/split/fold_in/bits) in jaxprs.

Values are checked against the raw-key (uint32) computation, which is bit-exact with JAX
(tests/test_random*.py), so these tests mean something without JAX; where JAX is installed
the printed jaxprs, error classes and results are compared with it too.
"""
from __future__ import annotations

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import lax, random

K = random.key(0)
KS = random.split(K, 4)


def data(k):
    return np.asarray(random.key_data(k))


def _jax():
    return pytest.importorskip("jax")


# ------------------------------------------------------------------- pytree leaves

def test_keys_are_pytree_leaves():
    assert jax.tree_util.tree_leaves(K) == [K]
    leaves, tree = jax.tree_util.tree_flatten({"a": K, "b": [1.0, KS]})
    assert leaves[0] is K and leaves[2] is KS
    assert str(tree) == "PyTreeDef({'a': *, 'b': [*, *]})"
    out = jax.tree_util.tree_map(lambda k: random.split(k)[0] if k.ndim == 0 else k,
                                 {"a": K, "b": KS})
    assert out["a"].shape == () and str(out["a"].dtype) == "key<fry>"
    assert out["b"] is KS
    assert jax.tree_util.tree_structure(K).num_leaves == 1


def test_state_holding_a_key_has_the_structure_of_its_zeros():
    # optax compares the structure of states holding keys with that of their updates
    state = {"count": jnp.zeros(()), "rng": K}
    new = jax.jit(lambda s: {"count": s["count"] + 1, "rng": random.split(s["rng"])[0]})(
        state)
    assert jax.tree_util.tree_structure(new) == jax.tree_util.tree_structure(state)
    np.testing.assert_array_equal(data(new["rng"]), data(random.split(K)[0]))


# ------------------------------------------------------------------- transformations

def test_jit_takes_and_returns_keys():
    f = jax.jit(lambda k: random.split(k))
    np.testing.assert_array_equal(data(f(K)), data(random.split(K)))
    g = jax.jit(lambda k, x: (k, x + random.uniform(k, x.shape)))
    k2, y = g(K, jnp.zeros(3))
    assert k2.shape == () and str(k2.dtype) == "key<fry>"
    np.testing.assert_array_equal(np.asarray(y), np.asarray(random.uniform(K, (3,))))
    np.testing.assert_array_equal(
        np.asarray(jax.jit(lambda k: random.normal(k, (5,)))(K)),
        np.asarray(random.normal(random.PRNGKey(0), (5,))))


def test_jit_cache_distinguishes_key_impls_and_shapes():
    f = jax.jit(lambda k: random.key_data(k))
    assert f(K).shape == (2,)
    assert f(KS).shape == (4, 2)
    assert f(random.key(0, impl="rbg")).shape == (4,)


def test_vmap_over_keys():
    out = jax.vmap(lambda k: random.normal(k, (2,)))(KS)
    ref = np.stack([np.asarray(random.normal(k, (2,))) for k in KS])
    np.testing.assert_array_equal(np.asarray(out), ref)
    grid = random.split(K, (2, 3))
    for axis in (0, 1, -1):   # -1 is the keys' last axis, not the key data's
        got = jax.vmap(lambda k: random.key_data(k), in_axes=axis)(grid)
        np.testing.assert_array_equal(np.asarray(got), np.moveaxis(data(grid), axis % 2, 0))
    moved = jax.vmap(lambda k: k, out_axes=1)(grid)
    assert moved.shape == (3, 2)
    np.testing.assert_array_equal(data(moved), np.swapaxes(data(grid), 0, 1))
    split = jax.vmap(lambda k: random.split(k, 3))(KS)
    assert split.shape == (4, 3)
    np.testing.assert_array_equal(data(split[2]), data(random.split(KS[2], 3)))


def test_grad_with_a_key_argument():
    def loss(w, k):
        return jnp.sum(w * random.normal(k, w.shape))
    g = jax.grad(loss)(jnp.ones(3), K)
    np.testing.assert_array_equal(np.asarray(g), np.asarray(random.normal(K, (3,))))
    np.testing.assert_array_equal(np.asarray(jax.jit(jax.grad(loss))(jnp.ones(3), K)),
                                  np.asarray(g))
    with pytest.raises(TypeError, match="got key<fry>"):   # as JAX: keys are not inputs
        jax.grad(lambda x, k: x * random.uniform(k), argnums=(0, 1))(1.0, K)


def test_scan_carries_and_maps_keys():
    def body(c, _):
        c, sub = random.split(c)
        return c, random.uniform(sub)
    k_out, ys = lax.scan(body, K, None, length=3)
    kj, ysj = jax.jit(lambda k: lax.scan(body, k, None, length=3))(K)
    np.testing.assert_array_equal(data(k_out), data(kj))
    np.testing.assert_array_equal(np.asarray(ys), np.asarray(ysj))
    ref_k, ref = K, []
    for _ in range(3):
        ref_k, sub = random.split(ref_k)
        ref.append(float(random.uniform(sub)))
    np.testing.assert_array_equal(np.asarray(ys), np.asarray(ref, np.float32))
    # keys as xs and as ys
    total, _ = lax.scan(lambda c, k: (c + random.normal(k), None), 0.0, KS)
    np.testing.assert_allclose(float(total), sum(float(random.normal(k)) for k in KS),
                               rtol=1e-6)
    _, keys = lax.scan(lambda c, _: (random.split(c)[0], c), K, None, length=2)
    assert keys.shape == (2,) and str(keys.dtype) == "key<fry>"


def test_cond_while_fori_with_keys():
    split0 = random.split(K)[0]
    pick = lambda p, k: lax.cond(p, lambda k: random.split(k)[0], lambda k: k, k)  # noqa
    np.testing.assert_array_equal(data(pick(True, K)), data(split0))
    np.testing.assert_array_equal(data(jax.jit(pick)(False, K)), data(K))
    mask = jnp.array([True, False, True, False])
    out = jax.vmap(pick)(mask, KS)
    for i in range(4):
        np.testing.assert_array_equal(data(out[i]), data(pick(bool(mask[i]), KS[i])))
    loop = lax.fori_loop(0, 3, lambda i, k: random.fold_in(k, i), K)
    ref = K
    for i in range(3):
        ref = random.fold_in(ref, i)
    np.testing.assert_array_equal(data(loop), data(ref))
    np.testing.assert_array_equal(
        data(jax.jit(lambda k: lax.fori_loop(0, 3, lambda i, k: random.fold_in(k, i), k))(K)),
        data(ref))
    n, k = jax.vmap(lambda n, k: lax.while_loop(
        lambda c: c[0] < n, lambda c: (c[0] + 1, random.split(c[1])[0]), (0, k)))(
        jnp.arange(3), KS[:3])
    np.testing.assert_array_equal(np.asarray(n), [0, 1, 2])
    np.testing.assert_array_equal(data(k[2]), data(random.split(random.split(KS[2])[0])[0]))


def test_key_methods_under_jit():
    np.testing.assert_array_equal(data(jax.jit(lambda k: k.reshape(2, 2))(KS)),
                                  data(KS).reshape(2, 2, 2))
    np.testing.assert_array_equal(data(jax.jit(lambda k: k[::2])(KS)), data(KS)[::2])
    np.testing.assert_array_equal(data(jax.jit(lambda k: k[1])(KS)), data(KS)[1])
    np.testing.assert_array_equal(data(jax.jit(lambda k: jnp.stack([k, k]))(K)),
                                  np.stack([data(K)] * 2))
    np.testing.assert_array_equal(data(jax.jit(lambda k: jnp.where(False, k, KS[1]))(K)),
                                  data(KS[1]))
    np.testing.assert_array_equal(
        data(jax.jit(lambda d: random.wrap_key_data(d))(data(KS))), data(KS))


def test_key_arrays_reject_arithmetic():
    for f in (lambda k: k + 1, lambda k: -k, lambda k: jnp.sin(k), lambda k: jnp.sum(k)):
        with pytest.raises(TypeError, match="does not accept dtype"):
            jax.jit(f)(K)
        with pytest.raises(TypeError, match="does not accept dtype"):
            f(K)


def test_eval_shape_and_device_put():
    s = jax.eval_shape(lambda k: random.split(k), K)
    assert s.shape == (2,) and str(s.dtype) == "key<fry>"
    k = jax.device_put(K)
    assert str(k.dtype) == "key<fry>"
    np.testing.assert_array_equal(data(k), data(K))


# ------------------------------------------------------------------------- vs JAX

def test_make_jaxpr_prints_key_types_as_jax():
    jax_ = _jax()
    for f in (lambda k: random.split(k), lambda k: random.fold_in(k, 3),
              lambda k: random.key_data(k), lambda k: random.bits(k, (2,))):
        ours = str(jax.make_jaxpr(f)(K))
        theirs = str(jax_.make_jaxpr(_to_jax(f, jax_))(jax_.random.key(0)))
        assert ours == theirs, (ours, theirs)
    ours = str(jax.make_jaxpr(lambda k: random.split(k))(random.PRNGKey(0)))
    theirs = str(jax_.make_jaxpr(lambda k: jax_.random.split(k))(jax_.random.PRNGKey(0)))
    assert ours == theirs
    assert "a:key<fry>[4]" in str(jax.make_jaxpr(jax.vmap(lambda k: random.split(k)))(KS))


def _to_jax(f, jax_):
    import types
    g = types.FunctionType(f.__code__, {"random": jax_.random, "jnp": jax_.numpy})
    return g


def test_results_match_jax():
    jax_ = _jax()
    kj = jax_.random.key(0)
    progs = [
        lambda jx, k: jx.random.key_data(jx.jit(lambda k: jx.random.split(k, 3))(k)),
        lambda jx, k: jx.vmap(lambda k: jx.random.normal(k, (2,)))(jx.random.split(k, 3)),
        lambda jx, k: jx.lax.scan(lambda c, _: (jx.random.split(c)[0], jx.random.uniform(c)),
                                  k, None, length=4)[1],
        lambda jx, k: jx.random.key_data(jx.jit(lambda k: jx.random.fold_in(k, 7))(k)),
        lambda jx, k: jx.grad(lambda w, k: (w * jx.random.normal(k, (3,))).sum())(
            jx.numpy.ones(3), k),
    ]
    for p in progs:
        np.testing.assert_array_equal(np.asarray(p(jax, K)), np.asarray(p(jax_, kj)))


def test_error_classes_match_jax():
    jax_ = _jax()
    for f in (lambda jx, k: jx.jit(lambda k: k + 1)(k), lambda jx, k: k * 2,
              lambda jx, k: jx.jit(lambda k: -k)(k)):
        with pytest.raises(Exception) as theirs:
            f(jax_, jax_.random.key(0))
        with pytest.raises(Exception) as ours:
            f(jax, K)
        assert type(ours.value) is type(theirs.value)


def test_more_transformations_with_keys():
    # pmap and shard_map's eager path, custom_vjp with a key residual, switch, lax.map
    ks = random.split(K, 1)
    np.testing.assert_array_equal(
        np.asarray(jax.pmap(lambda k: random.normal(k, (2,)))(ks))[0],
        np.asarray(random.normal(ks[0], (2,))))
    assert jax.pmap(lambda k: random.split(k))(ks).shape == (1, 2)

    @jax.custom_vjp
    def f(x, k):
        return x * random.uniform(k)
    f.defvjp(lambda x, k: (f(x, k), k), lambda k, g: (g * random.uniform(k), None))
    np.testing.assert_allclose(float(jax.grad(f)(2.0, K)), float(random.uniform(K)))
    out = lax.switch(1, [lambda k: k, lambda k: random.split(k)[1]], K)
    np.testing.assert_array_equal(data(out), data(random.split(K)[1]))
    u = lax.map(lambda k: random.uniform(k), KS)
    np.testing.assert_array_equal(np.asarray(u), [float(random.uniform(k)) for k in KS])
    h = jax.hessian(lambda x, k: jnp.sum(x ** 2 * random.uniform(k, (2,))))(jnp.ones(2), K)
    np.testing.assert_allclose(np.asarray(h), np.diag(2 * np.asarray(random.uniform(K, (2,)))),
                               rtol=1e-6)


def test_key_equality():
    assert bool(K == K) and not bool(K != K)
    np.testing.assert_array_equal(np.asarray(KS == KS[1]), [False, True, False, False])
    np.testing.assert_array_equal(np.asarray(jax.jit(lambda a, b: a != b)(KS, KS[2])),
                                  [True, True, False, True])
    np.testing.assert_array_equal(np.asarray(jax.vmap(lambda a: a == K)(KS)),
                                  [bool(k == K) for k in KS])
    assert "b:bool[] = eq a a" in str(jax.make_jaxpr(lambda k: k == k)(K))
    with pytest.raises(TypeError, match="does not accept"):
        K == 1   # noqa: B015


def test_astype_to_the_key_dtype_is_a_no_op():
    # optax's MultiSteps casts every leaf of its inner state (keys included) to its dtype
    st = {"rng": K, "n": jnp.zeros(())}
    out = jax.jit(lambda s: jax.tree_util.tree_map(
        lambda x: jnp.astype(jnp.where(True, x, x), x.dtype), s))(st)
    np.testing.assert_array_equal(data(out["rng"]), data(K))
    assert K.astype(K.dtype) is K
    assert jnp.astype(K, K.dtype) is K
    with pytest.raises(ValueError, match="Cannot convert_element_type from key<fry>"):
        jax.jit(lambda k: jnp.astype(k, jnp.float32))(K)


def test_aot_with_key_types():
    s = jax.ShapeDtypeStruct((3,), K.dtype)
    lowered = jax.jit(lambda k: (k[1:], random.key_data(k))).lower(s)
    assert lowered.as_text().startswith("{ lambda ; a:key<fry>[3]. let")
    keys, raw = lowered.compile()(random.split(K, 3))
    assert keys.shape == (2,) and str(keys.dtype) == "key<fry>"
    np.testing.assert_array_equal(data(keys), np.asarray(raw)[1:])
    out = jax.eval_shape(lambda k: random.bits(k), jax.ShapeDtypeStruct((), K.dtype))
    assert out.shape == () and out.dtype == np.uint32


def test_eager_control_flow_making_keys_from_closed_over_keys():
    # no key operand: the branches close over keys (optax's stability tests do this)
    new = random.split(K)[0]
    out = lax.cond(False, lambda: K, lambda: new)
    assert str(out.dtype) == "key<fry>"
    np.testing.assert_array_equal(data(out), data(new))
    n, k = lax.while_loop(lambda c: c[0] < 2, lambda c: (c[0] + 1, random.split(K)[0]),
                          (0, K))
    np.testing.assert_array_equal(data(k), data(new))
