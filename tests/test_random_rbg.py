"""lax.rng_bit_generator and the 'rbg' / 'unsafe_rbg' PRNG implementations.

Without JAX: Random123's known-answer vectors for Philox-4x32-10 and Threefry-2x32-20, a
scalar pure-Python model of the output layout (counter, carries, pair axis, dtypes) that the
vectorised primitive must reproduce, stream continuation, the vmap rule, jit/eager agreement,
the definitions of the rbg key operations, sanity of samples, and gamma draws that use each
element's key on its own. With JAX: bits, keys, samplers (the gamma-based ones eagerly, under
jit and vmap, in float32, float16 and bfloat16), jaxprs and printing compared exactly with JAX
0.10.2 on CPU.
"""
import math
import warnings

import numpy as np
import pytest

import jaxlite
import jaxlite.numpy as jnp
from jaxlite import lax
from jaxlite import random as R
from jaxlite._src.config import config
from jaxlite._src.random.rng_bit_generator import philox_4x32

A = np.asarray
ALGS = list(lax.RandomAlgorithm)
M32 = 0xFFFFFFFF
IMPLS = ("rbg", "unsafe_rbg")


def _jax():
    return pytest.importorskip("jax")


# ------------------------------------------------------------ scalar reference model

def _philox_ref(k0, k1, c):
    c = list(c)
    for _ in range(10):
        p0, p1 = 0xD2511F53 * c[0], 0xCD9E8D57 * c[2]
        c = [(p1 >> 32) ^ c[1] ^ k0, p1 & M32, (p0 >> 32) ^ c[3] ^ k1, p0 & M32]
        k0, k1 = (k0 + 0x9E3779B9) & M32, (k1 + 0xBB67AE85) & M32
    return c


def _rotl(x, r):
    return ((x << r) | (x >> (32 - r))) & M32


def _threefry_ref(k0, k1, x0, x1):
    ks = [k0, k1, k0 ^ k1 ^ 0x1BD11BDA]
    rot = [(13, 15, 26, 6), (17, 29, 16, 24)]
    x0, x1 = (x0 + k0) & M32, (x1 + k1) & M32
    for i in range(5):
        for r in rot[i % 2]:
            x0 = (x0 + x1) & M32
            x1 = _rotl(x1, r) ^ x0
        x0 = (x0 + ks[(i + 1) % 3]) & M32
        x1 = (x1 + ks[(i + 2) % 3] + i + 1) & M32
    return x0, x1


def _model(key, shape, dtype, alg):
    """(new key, bits) of rng_bit_generator, element by element in pure Python."""
    w = [int(v) for v in key]
    s0, s1 = w[0] | w[1] << 32, w[2] | w[3] << 32
    dtype = np.dtype(dtype)
    n = math.prod(shape)
    if alg == lax.RandomAlgorithm.RNG_THREE_FRY:
        def block(i):
            c = (s1 + i) % 2 ** 64
            return _threefry_ref(w[0], w[1], c & M32, c >> 32)
        if dtype == np.uint64:
            vals = [b[0] | b[1] << 32 for b in map(block, range(n))]
            used = n
        else:
            even = [d for d, m in enumerate(shape) if m % 2 == 0]
            if not shape:
                vals, used = [block(0)[0]], 1
            else:
                ax = even[0] if even else shape.index(max(shape))
                bshape = shape[:ax] + ((shape[ax] + 1) // 2,) + shape[ax + 1:]
                vals = []
                for idx in np.ndindex(*shape):
                    b = list(idx)
                    b[ax] //= 2
                    bi = int(np.ravel_multi_index(b, bshape))
                    vals.append(block(bi)[idx[ax] % 2])
                used = math.prod(bshape)
    else:
        words_needed = n * (2 if dtype == np.uint64 else 1)
        used = -(-words_needed // 4)
        words = []
        for i in range(used):
            c = s1 + i + (s0 << 64)
            c %= 2 ** 128
            words += _philox_ref(w[0], w[1], [(c >> s) & M32 for s in (0, 32, 64, 96)])
        vals = ([words[2 * j] | words[2 * j + 1] << 32 for j in range(n)]
                if dtype == np.uint64 else words[:n])
    mask = (1 << (8 * dtype.itemsize)) - 1
    bits = np.array([v & mask for v in vals], dtype).reshape(shape)
    s1n = (s1 + used) % 2 ** 64
    return np.array([w[0], w[1], s1n & M32, s1n >> 32], np.uint32), bits


KEYS = [np.array(k, np.uint32) for k in (
    [0, 0, 0, 0], [0x11111111, 0x22222222, 0x33333333, 0x44444444],
    [1, 2, 0xFFFFFFFE, 0xFFFFFFFF],          # counter wraps, carry into the Philox high half
    [0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF],
    [7, 8, 0xFFFFFFFF, 5])]
SHAPES = [(), (0,), (3, 0), (1,), (2,), (3,), (5,), (8,), (13,), (2, 3), (3, 4), (4, 3),
          (3, 5), (2, 2, 3), (3, 2, 5), (3, 5, 3), (1, 7, 1), (5, 4, 6)]


# ------------------------------------------------------------------- tests without JAX

def test_philox_known_answers():
    # Random123 kat_vectors for philox4x32_10
    cases = [((0, 0), (0, 0, 0, 0), (0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8)),
             ((M32, M32), (M32,) * 4, (0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd)),
             ((0xa4093822, 0x299f31d0), (0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344),
              (0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1))]
    for (k0, k1), ctr, want in cases:
        got = philox_4x32(k0, k1, *[np.uint32(c) for c in ctr])
        assert [int(g) for g in got] == list(want)
        assert _philox_ref(k0, k1, ctr) == list(want)


def test_threefry_reference_known_answers():
    # Random123 kat_vectors for threefry2x32_20 (checks the scalar model used below)
    assert _threefry_ref(0, 0, 0, 0) == (0x6b200159, 0x99ba4efe)
    assert _threefry_ref(M32, M32, M32, M32) == (0x1cb996fc, 0xbb002be7)
    assert _threefry_ref(0x13198a2e, 0x03707344, 0x243f6a88, 0x85a308d3) == (0xc4923a9c,
                                                                              0x483df7a0)


@pytest.mark.parametrize("alg", ALGS, ids=str)
@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.uint32])
def test_matches_scalar_model(alg, dtype):
    for key in KEYS:
        for shape in SHAPES:
            new_key, bits = lax.rng_bit_generator(key, shape, dtype, alg)
            want_key, want_bits = _model(key, shape, dtype, alg)
            assert A(bits).dtype == np.dtype(dtype) and A(bits).shape == shape
            np.testing.assert_array_equal(A(bits), want_bits, err_msg=f"{key} {shape}")
            np.testing.assert_array_equal(A(new_key), want_key, err_msg=f"{key} {shape}")


@pytest.mark.parametrize("alg", ALGS, ids=str)
def test_uint64_matches_scalar_model(x64, alg):
    for key in KEYS:
        for shape in [(), (1,), (5,), (2, 3), (3, 5, 3)]:
            new_key, bits = lax.rng_bit_generator(key, shape, np.uint64, alg)
            want_key, want_bits = _model(key, shape, np.uint64, alg)
            assert A(bits).dtype == np.uint64
            np.testing.assert_array_equal(A(bits), want_bits)
            np.testing.assert_array_equal(A(new_key), want_key)


def test_uint64_state_key(x64):
    # a uint64[2] key is the same state as the uint32[4] key of its little-endian words
    k32 = np.array([5, 1, 7, 3], np.uint32)
    k64 = np.array([5 | 1 << 32, 7 | 3 << 32], np.uint64)
    for alg in ALGS:
        n32, b32 = lax.rng_bit_generator(k32, (9,), algorithm=alg)
        n64, b64 = lax.rng_bit_generator(k64, (9,), algorithm=alg)
        np.testing.assert_array_equal(A(b32), A(b64))
        assert A(n64).dtype == np.uint64
        np.testing.assert_array_equal(A(n32).view(np.uint64), A(n64))


def test_uint64_request_without_x64_warns_and_truncates():
    with pytest.warns(UserWarning, match="rng_bit_generator"):
        _, bits = lax.rng_bit_generator(KEYS[1], (4,), np.uint64)
    assert A(bits).dtype == np.uint32


@pytest.mark.parametrize("alg", ALGS, ids=str)
def test_stream_continues_from_new_key(alg):
    # (not across a wrap of the 64-bit counter: the new key does not keep Philox's carry)
    key = KEYS[4]
    per = 2 if alg == lax.RandomAlgorithm.RNG_THREE_FRY else 4
    k1, first = lax.rng_bit_generator(key, (3 * per,), algorithm=alg)
    _, second = lax.rng_bit_generator(k1, (5 * per,), algorithm=alg)
    _, both = lax.rng_bit_generator(key, (8 * per,), algorithm=alg)
    np.testing.assert_array_equal(np.concatenate([A(first), A(second)]), A(both))


def test_default_is_philox_on_cpu():
    a = lax.rng_bit_generator(KEYS[1], (3, 7))
    b = lax.rng_bit_generator(KEYS[1], (3, 7), algorithm=lax.RandomAlgorithm.RNG_PHILOX)
    for x, y in zip(a, b):
        np.testing.assert_array_equal(A(x), A(y))


@pytest.mark.parametrize("alg", ALGS, ids=str)
def test_jit_matches_eager(alg):
    f = lambda k: lax.rng_bit_generator(k, (3, 5), np.uint16, alg)  # noqa: E731
    for x, y in zip(jaxlite.jit(f)(KEYS[4]), f(KEYS[4])):
        np.testing.assert_array_equal(A(x), A(y))


@pytest.mark.parametrize("in_axis", [0, 1])
def test_vmap_uses_the_first_key(in_axis):
    keys = np.arange(12, dtype=np.uint32).reshape(3, 4)
    f = lambda k: lax.rng_bit_generator(k, (2, 3))  # noqa: E731
    new_keys, bits = jaxlite.vmap(f, in_axes=in_axis, out_axes=0)(
        keys if in_axis == 0 else keys.T)
    _, b0 = f(keys[0])
    k_all, want = lax.rng_bit_generator(keys[0], (3, 2, 3))
    np.testing.assert_array_equal(A(bits), A(want))
    np.testing.assert_array_equal(A(bits)[0], A(b0))
    np.testing.assert_array_equal(A(new_keys)[0], A(k_all))
    np.testing.assert_array_equal(A(new_keys)[1:], keys[1:])


def test_vmap_unbatched_key():
    out = jaxlite.vmap(lambda x, k: lax.rng_bit_generator(k, (2,))[1] + x,
                       in_axes=(0, None))(np.arange(3, dtype=np.uint32), KEYS[1])
    _, b = lax.rng_bit_generator(KEYS[1], (2,))
    np.testing.assert_array_equal(A(out), A(b)[None] + np.arange(3, dtype=np.uint32)[:, None])


def test_jaxpr_text():
    text = str(jaxlite.make_jaxpr(lambda k: lax.rng_bit_generator(k, (3, 5), jnp.uint8))(
        KEYS[0]))
    assert "b:u32[4] c:u8[3,5] = rng_bit_generator[" in text
    assert "algorithm=RNG_DEFAULT" in text and "shape=(3, 5)" in text
    assert "dtype=uint8" in text and "out_sharding=None" in text


def test_not_differentiable_but_grad_through_others():
    def f(x):
        _, b = lax.rng_bit_generator(KEYS[1], (2,))
        return x * b.astype(jnp.float32).sum()
    g = jaxlite.grad(f)(1.0)
    _, b = lax.rng_bit_generator(KEYS[1], (2,))
    assert float(g) == pytest.approx(float(A(b).astype(np.float32).sum()))


def test_errors():
    with pytest.raises(TypeError, match="uint32\\[4\\]"):
        lax.rng_bit_generator(np.zeros(2, np.uint32), (3,))
    with pytest.raises(TypeError, match="uint32\\[4\\]"):
        lax.rng_bit_generator(np.zeros(4, np.int32), (3,))
    with pytest.raises(TypeError, match="uint32\\[4\\]"):
        jaxlite.jit(lambda k: lax.rng_bit_generator(k, (3,)))(np.zeros((2, 4), np.uint32))
    with pytest.raises(TypeError, match="unsupported dtype int32"):
        lax.rng_bit_generator(KEYS[0], (3,), np.int32)
    with pytest.raises(TypeError, match="unsupported dtype float32"):
        lax.rng_bit_generator(KEYS[0], (3,), np.float32)
    with pytest.raises(TypeError, match="Shapes must be 1D sequences"):
        lax.rng_bit_generator(KEYS[0], (2.0,))
    with pytest.raises(ValueError, match="non-negative"):
        lax.rng_bit_generator(KEYS[0], (-1,))
    with pytest.raises(ValueError, match="unknown algorithm"):
        lax.rng_bit_generator(KEYS[0], (2,), algorithm=7)


def test_shape_and_algorithm_forms():
    a = lax.rng_bit_generator(KEYS[1], 3, algorithm=1)[1]
    b = lax.rng_bit_generator(KEYS[1], [3], algorithm=lax.RandomAlgorithm.RNG_THREE_FRY)[1]
    np.testing.assert_array_equal(A(a), A(b))
    assert str(lax.RandomAlgorithm.RNG_PHILOX) == "RNG_PHILOX"
    assert int(lax.RandomAlgorithm.RNG_PHILOX) == 2


# ------------------------------------------------------------- rbg impls without JAX

def test_rbg_keys_are_two_threefry_keys():
    for seed in (0, 5, 2 ** 31 + 3):
        tk = A(R.key_data(R.key(seed)))
        rk = A(R.key_data(R.key(seed, impl="rbg")))
        np.testing.assert_array_equal(rk, np.concatenate([tk, tk]))
        np.testing.assert_array_equal(A(R.PRNGKey(seed, impl="unsafe_rbg")), rk)
    raw = np.array([1, 2, 3, 4], np.uint32)
    k = R.wrap_key_data(raw, impl="rbg")
    t1, t2 = R.wrap_key_data(raw[:2]), R.wrap_key_data(raw[2:])
    np.testing.assert_array_equal(
        A(R.key_data(R.split(k, (2, 3)))),
        np.concatenate([A(R.key_data(R.split(t1, (2, 3)))),
                        A(R.key_data(R.split(t2, (2, 3))))], -1))
    np.testing.assert_array_equal(
        A(R.key_data(R.fold_in(k, 99))),
        np.concatenate([A(R.key_data(R.fold_in(t1, 99))), A(R.key_data(R.fold_in(t2, 99)))]))


def test_unsafe_rbg_key_operations():
    raw = np.array([9, 8, 7, 6], np.uint32)
    k = R.wrap_key_data(raw, impl="unsafe_rbg")
    _, rows = lax.rng_bit_generator(raw, (60, 4))
    np.testing.assert_array_equal(A(R.key_data(R.split(k, (2, 3)))),
                                  A(rows)[::10].reshape(2, 3, 4))
    _, rows = lax.rng_bit_generator(np.array([0, 33, 0, 33], np.uint32), (10, 4))
    np.testing.assert_array_equal(A(R.key_data(R.fold_in(k, 33))), raw ^ A(rows)[9])


@pytest.mark.parametrize("impl", IMPLS)
def test_bits_come_from_rng_bit_generator(impl):
    raw = np.array([3, 1, 4, 1], np.uint32)
    k = R.wrap_key_data(raw, impl=impl)
    for dt in (np.uint8, np.uint16, np.uint32):
        np.testing.assert_array_equal(A(R.bits(k, (3, 5), dt)),
                                      A(lax.rng_bit_generator(raw, (3, 5), dt)[1]))


@pytest.mark.parametrize("impl", IMPLS)
def test_key_metadata_and_printing(impl):
    tag = {"rbg": "rbg", "unsafe_rbg": "urbg"}[impl]
    k = R.key(0, impl=impl)
    assert R.key_impl(k) == impl
    assert str(k.dtype) == f"key<{tag}>" and k.shape == ()
    assert repr(k) == f"Array((), dtype=key<{tag}>) overlaying:\n[0 0 0 0]"
    assert A(R.PRNGKey(3, impl=impl)).shape == (4,)
    ks = R.split(k, 3)
    assert ks.shape == (3,) and A(R.key_data(ks)).shape == (3, 4)
    assert str(R.key_dtype(impl)) == f"key<{tag}>"
    with pytest.raises(TypeError, match="shape to end with \\(4,\\)"):
        R.wrap_key_data(np.zeros(2, np.uint32), impl=impl)


@pytest.mark.parametrize("impl", IMPLS)
def test_default_impl_config(impl):
    with config.override("jax_default_prng_impl", impl):
        k = R.PRNGKey(11)
        assert A(k).shape == (4,)
        u = R.uniform(k, (5,))
        np.testing.assert_array_equal(A(u), A(R.uniform(R.key(11, impl=impl), (5,))))
        assert R.key_impl(R.key(1)) == impl


@pytest.mark.parametrize("impl", IMPLS)
def test_samples_are_sane_and_jit_agrees(impl):
    k = R.key(123, impl=impl)
    u = A(R.uniform(k, (20000,)))
    assert u.min() >= 0 and u.max() < 1 and abs(u.mean() - 0.5) < 0.01
    z = A(R.normal(k, (20000,)))
    assert abs(z.mean()) < 0.03 and abs(z.std() - 1) < 0.03
    r = A(R.randint(k, (20000,), 0, 10))
    assert set(np.unique(r)) == set(range(10))
    p = A(R.permutation(k, 50))
    assert sorted(p) == list(range(50))
    for fn in (lambda k: R.uniform(k, (7,)), lambda k: R.normal(k, (2, 3)),
               lambda k: R.key_data(R.split(k, 4)), lambda k: R.key_data(R.fold_in(k, 5))):
        np.testing.assert_array_equal(A(jaxlite.jit(fn)(k)), A(fn(k)))


@pytest.mark.parametrize("impl", IMPLS)
def test_vmap_over_keys_draws_from_the_first_key(impl):
    # as in JAX: rng_bit_generator's batching rule serves a whole batch from its first key
    ks = R.split(R.key(4, impl=impl), 3)
    got = A(jaxlite.vmap(lambda k: R.bits(k, (5,)))(ks))
    np.testing.assert_array_equal(got, A(R.bits(ks[0], (15,))).reshape(3, 5))


def test_poisson_needs_threefry():
    with pytest.raises(NotImplementedError, match="threefry2x32"):
        R.poisson(R.key(0, impl="rbg"), 3.0, (2,))


def _gamma_reference(key, a):
    """One Gamma(a) draw from one key, written out per key with scalar draws (the sampler
    must consume every element's key exactly like this, whatever the key implementation)."""
    loop, boost = R.split(key)
    shape_used = a if a >= 1 else a + 1
    d = shape_used - 1 / 3
    c = 1 / 3 / math.sqrt(d)
    while True:
        loop, nkey, ukey = R.split(loop, 3)
        while True:
            nkey, sub = R.split(nkey)
            x = float(A(R.normal(sub, (), np.float32)))
            v = 1 + c * x
            if v > 0:
                break
        v3 = v ** 3
        u = float(A(R.uniform(ukey, (), np.float32)))
        if u < 1 - 0.0331 * x ** 4 or math.log(u) < x * x / 2 + d * (1 - v3 + math.log(v3)):
            break
    out = d * v3
    if a < 1:
        out *= (1 - float(A(R.uniform(boost, (), np.float32)))) ** (1 / a)
    return out


@pytest.mark.parametrize("impl", IMPLS)
def test_gamma_draws_each_element_from_its_own_key(impl):
    alphas = np.array([0.4, 1.0, 2.5, 7.0, 0.9], np.float32)
    key = R.key(17, impl=impl)
    got = A(R.gamma(key, alphas))
    want = [_gamma_reference(k, float(a)) for k, a in zip(R.split(key, alphas.size), alphas)]
    np.testing.assert_allclose(got, want, rtol=2e-5)
    # log space: the same draws (up to rounding)
    np.testing.assert_allclose(np.exp(A(R.loggamma(key, alphas))), got, rtol=2e-5)
    np.testing.assert_array_equal(A(jaxlite.jit(lambda k: R.gamma(k, alphas))(key)), got)


def test_gamma_vmap_over_rbg_keys_is_per_key():
    # rbg splits each key on its own (threefry halves), so a vmapped gamma is a loop over
    # keys; unsafe_rbg's split draws from the batch's first key under vmap (as in JAX)
    keys = R.split(R.key(5, impl="rbg"), 3)
    batched = A(jaxlite.vmap(lambda k: R.beta(k, 0.5, 2.0, (4,)))(keys))
    for i in range(3):
        np.testing.assert_array_equal(batched[i], A(R.beta(keys[i], 0.5, 2.0, (4,))))


# ------------------------------------------------------------------- tests against JAX

def _rand_keys(n, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.integers(0, 2 ** 32, 4, dtype=np.uint32) for _ in range(n)] + KEYS


@pytest.mark.parametrize("alg", ALGS, ids=str)
def test_rng_bit_generator_vs_jax(alg):
    jax = _jax()
    jalg = jax.lax.RandomAlgorithm(int(alg))
    # (the layout over many more shapes is checked against the scalar model above)
    shapes = [(), (0,), (5,), (13,), (2, 3), (4, 3), (3, 5), (3, 2, 5), (3, 5, 3), (1, 7, 1),
              (17, 33), (128, 129), (6, 4, 8), (9, 7, 5)]
    combos = [(shape, dt) for j, shape in enumerate(shapes)
              for dt in (np.uint8, np.uint16, np.uint32) if dt == np.uint32 or j % 4 == 0]
    # one JAX compilation for every combination (XLA emits the same bits under jit)
    draw_all = jax.jit(lambda k: [jax.lax.rng_bit_generator(k, s, d, jalg) for s, d in combos])
    for key in _rand_keys(3):
        for (shape, dt), ja in zip(combos, draw_all(key)):
            jl = lax.rng_bit_generator(key, shape, dt, alg)
            for x, y in zip(ja, jl):
                assert A(x).dtype == A(y).dtype and A(x).shape == A(y).shape
                np.testing.assert_array_equal(A(x), A(y), err_msg=f"{key} {shape} {dt}")


@pytest.mark.parametrize("alg", ALGS, ids=str)
def test_rng_bit_generator_uint64_vs_jax(alg):
    jax = _jax()
    jalg = jax.lax.RandomAlgorithm(int(alg))
    with jax.enable_x64(True), config.override("jax_enable_x64", True):
        for key in _rand_keys(2, 1):
            for shape in [(), (5,), (2, 3), (3, 5, 3)]:
                ja = jax.lax.rng_bit_generator(key, shape, np.uint64, jalg)
                jl = lax.rng_bit_generator(key, shape, np.uint64, alg)
                for x, y in zip(ja, jl):
                    assert A(x).dtype == A(y).dtype
                    np.testing.assert_array_equal(A(x), A(y))
        k64 = np.array([2 ** 63 + 5, 2 ** 64 - 3], np.uint64)
        for x, y in zip(jax.lax.rng_bit_generator(k64, (7,), algorithm=jalg),
                        lax.rng_bit_generator(k64, (7,), algorithm=alg)):
            np.testing.assert_array_equal(A(x), A(y))


def test_rng_bit_generator_vmap_and_jaxpr_vs_jax():
    jax = _jax()
    keys = np.arange(12, dtype=np.uint32).reshape(3, 4)
    fj = lambda k: jax.lax.rng_bit_generator(k, (2, 3))  # noqa: E731
    fl = lambda k: lax.rng_bit_generator(k, (2, 3))  # noqa: E731
    for x, y in zip(jax.vmap(fj)(keys), jaxlite.vmap(fl)(keys)):
        np.testing.assert_array_equal(A(x), A(y))
    for x, y in zip(jax.vmap(fj, 1, 1)(keys.T), jaxlite.vmap(fl, 1, 1)(keys.T)):
        np.testing.assert_array_equal(A(x), A(y))
    gj = lambda k: jax.lax.rng_bit_generator(k, (3, 5), np.uint8)  # noqa: E731
    gl = lambda k: lax.rng_bit_generator(k, (3, 5), np.uint8)  # noqa: E731
    assert str(jaxlite.make_jaxpr(gl)(keys[0])) == str(jax.make_jaxpr(gj)(keys[0]))


def _same(x, y):
    x, y = A(x), A(y)
    assert x.dtype == y.dtype and x.shape == y.shape
    np.testing.assert_array_equal(x, y)


# (name, fn(random module, key)) whose outputs are bits, integers or exactly rounded floats
SAMPLERS = [
    ("bits", lambda r, k: r.bits(k, (5, 3))),
    ("bits_u8", lambda r, k: r.bits(k, (7,), np.uint8)),
    ("bits_u16", lambda r, k: r.bits(k, (3, 3), np.uint16)),
    ("uniform", lambda r, k: r.uniform(k, (4, 5))),
    ("uniform_range", lambda r, k: r.uniform(k, (3, 5, 3), minval=-2.0, maxval=3.0)),
    ("normal", lambda r, k: r.normal(k, (17,))),
    ("randint", lambda r, k: r.randint(k, (9,), 0, 100)),
    ("randint_wide", lambda r, k: r.randint(k, (2, 3), -2 ** 31, 2 ** 31 - 1)),
    ("truncated_normal", lambda r, k: r.truncated_normal(k, -1.0, 2.0, (5,))),
    ("bernoulli", lambda r, k: r.bernoulli(k, 0.3, (11,))),
    ("permutation", lambda r, k: r.permutation(k, 10)),
    ("choice", lambda r, k: r.choice(k, 10, (3,), replace=False)),
    ("categorical", lambda r, k: r.categorical(k, np.log(np.array([.1, .2, .7], np.float32)),
                                               shape=(6,))),
    ("rademacher", lambda r, k: r.rademacher(k, (4,))),
    ("binomial", lambda r, k: r.binomial(k, 10.0, 0.3, (4,))),
    ("multinomial", lambda r, k: r.multinomial(k, 10.0, np.array([.2, .3, .5], np.float32))),
    ("split", lambda r, k: r.key_data(r.split(k, 3))),
    ("split_shape", lambda r, k: r.key_data(r.split(k, (2, 3)))),
    ("fold_in", lambda r, k: r.key_data(r.fold_in(k, 12345))),
]


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("name,fn", SAMPLERS, ids=[c[0] for c in SAMPLERS])
def test_samplers_vs_jax(impl, name, fn):
    jax = _jax()
    draw = jax.jit(lambda k: fn(jax.random, k))   # compiled once for the three seeds
    for seed in (0, 42, 2 ** 31 + 5):
        want = draw(jax.random.key(seed, impl=impl))
        _same(want, fn(R, R.key(seed, impl=impl)))
        _same(want, jaxlite.jit(lambda k: fn(R, k))(R.key(seed, impl=impl)))


@pytest.mark.parametrize("impl", IMPLS)
def test_vmap_over_keys_vs_jax(impl):
    jax = _jax()
    cases = [lambda r, k: r.uniform(k, (3,)), lambda r, k: r.normal(k, (2, 2)),
             lambda r, k: r.key_data(r.split(k, 3)), lambda r, k: r.key_data(r.fold_in(k, 7)),
             lambda r, k: r.randint(k, (3,), 0, 10), lambda r, k: r.permutation(k, 6),
             lambda r, k: r.bernoulli(k, 0.5, (5,))]
    for fn in cases:
        draw = jax.jit(jax.vmap(lambda k: fn(jax.random, k)))
        for seed in (0, 3):
            kj = jax.random.split(jax.random.key(seed, impl=impl), 5)
            kl = R.split(R.key(seed, impl=impl), 5)
            _same(draw(kj), jaxlite.vmap(lambda k: fn(R, k))(kl))
    for seed in (0, 3):
        kjd = jax.random.key(seed, impl=impl)
        kld = R.key(seed, impl=impl)
        data = np.arange(4, dtype=np.uint32)
        _same(jax.random.key_data(jax.vmap(lambda d: jax.random.fold_in(kjd, d))(data)),
              R.key_data(jaxlite.vmap(lambda d: R.fold_in(kld, d))(data)))


@pytest.mark.parametrize("impl", IMPLS)
def test_keys_and_printing_vs_jax(impl):
    jax = _jax()
    for seed in (0, 5, -3, 2 ** 40 + 7):
        _same(jax.random.PRNGKey(seed, impl=impl), R.PRNGKey(seed, impl=impl))
    kj, kl = jax.random.key(0, impl=impl), R.key(0, impl=impl)
    assert repr(kl) == repr(kj) and str(kl) == str(kj)
    assert repr(R.split(kl, 2)) == repr(jax.random.split(kj, 2))
    assert str(kl.dtype) == str(kj.dtype)
    assert R.key_impl(kl) == jax.random.key_impl(kj)
    raw = np.array([1, 2, 3, 4], np.uint32)
    _same(jax.random.uniform(jax.random.wrap_key_data(raw, impl=impl), (5,)),
          R.uniform(R.wrap_key_data(raw, impl=impl), (5,)))


@pytest.mark.parametrize("impl", IMPLS)
def test_config_x64_and_partitionable_vs_jax(impl):
    jax = _jax()
    old = jax.config.jax_default_prng_impl
    try:
        jax.config.update("jax_default_prng_impl", impl)
        with config.override("jax_default_prng_impl", impl):
            _same(jax.random.PRNGKey(3), R.PRNGKey(3))
            _same(jax.random.uniform(jax.random.PRNGKey(3), (4,)),
                  R.uniform(R.PRNGKey(3), (4,)))
            _same(jax.random.split(jax.random.PRNGKey(3)), R.split(R.PRNGKey(3)))
    finally:
        jax.config.update("jax_default_prng_impl", old)
    with jax.enable_x64(True), config.override("jax_enable_x64", True), \
            warnings.catch_warnings():
        warnings.simplefilter("ignore")
        kj, kl = jax.random.key(3, impl=impl), R.key(3, impl=impl)
        _same(jax.random.bits(kj, (5,), np.uint64), R.bits(kl, (5,), np.uint64))
        _same(jax.random.uniform(kj, (4,), np.float64), R.uniform(kl, (4,), np.float64))
        _same(jax.random.randint(kj, (4,), 0, 2 ** 40), R.randint(kl, (4,), 0, 2 ** 40))
    old = jax.config.jax_threefry_partitionable
    try:
        jax.config.update("jax_threefry_partitionable", False)
        with config.override("jax_threefry_partitionable", False):
            kj, kl = jax.random.key(3, impl=impl), R.key(3, impl=impl)
            _same(jax.random.key_data(jax.random.split(kj, 3)), R.key_data(R.split(kl, 3)))
            _same(jax.random.key_data(jax.random.fold_in(kj, 5)),
                  R.key_data(R.fold_in(kl, 5)))
    finally:
        jax.config.update("jax_threefry_partitionable", old)


# gamma-based samplers: JAX draws them per key with lax.map for these implementations
GAMMA_SAMPLERS = [
    ("gamma", lambda r, k: r.gamma(k, np.array([0.3, 1., 4.5], np.float32), (4, 3))),
    ("loggamma", lambda r, k: r.loggamma(k, np.array([0.2, 2.5], np.float32), (3, 2))),
    ("beta", lambda r, k: r.beta(k, 2., 3., (5,))),
    ("dirichlet", lambda r, k: r.dirichlet(k, np.array([1., 2., 3.], np.float32), (2,))),
    ("chisquare", lambda r, k: r.chisquare(k, 3., (5,))),
    ("f", lambda r, k: r.f(k, 3., 5., (5,))),
    ("t", lambda r, k: r.t(k, 4., (5,))),
    ("generalized_normal", lambda r, k: r.generalized_normal(k, 1.5, (5,))),
    ("ball", lambda r, k: r.ball(k, 3, 2, (3,))),
    ("gamma_f16", lambda r, k: r.gamma(k, np.array([0.5, 3.], np.float16), (2, 2),
                                       np.float16)),
    ("loggamma_bf16", lambda r, k: r.loggamma(k, 1.5, (4,), jnp.bfloat16)),
]


GAMMA_FNS = dict(GAMMA_SAMPLERS)
# (impl, mode, sampler): every sampler once per mode, spread over the two implementations
# (they differ only in how keys are derived); each case costs JAX one ~1.5 s compilation
GAMMA_CASES = [
    ("rbg", "eager", "gamma"), ("rbg", "eager", "beta"), ("rbg", "eager", "ball"),
    ("rbg", "eager", "gamma_f16"), ("rbg", "jit", "f"), ("rbg", "jit", "generalized_normal"),
    ("rbg", "jit", "loggamma_bf16"), ("rbg", "vmap", "beta"), ("rbg", "original", "gamma"),
    ("unsafe_rbg", "eager", "loggamma"), ("unsafe_rbg", "eager", "dirichlet"),
    ("unsafe_rbg", "eager", "f"), ("unsafe_rbg", "eager", "t"),
    ("unsafe_rbg", "jit", "gamma"), ("unsafe_rbg", "jit", "chisquare"),
    ("unsafe_rbg", "jit", "ball"), ("unsafe_rbg", "vmap", "gamma"),
    ("unsafe_rbg", "original", "chisquare"),
]


@pytest.mark.parametrize("impl,mode,name", GAMMA_CASES, ids=["-".join(c) for c in GAMMA_CASES])
def test_gamma_samplers_vs_jax(impl, mode, name):
    """Bit-exact with JAX: eagerly (shape parameters are runtime arguments of JAX's
    program), under jit (compile-time constants), under vmap over keys, and with the
    original threefry layout (which rbg's key splitting follows)."""
    jax = _jax()
    fn = GAMMA_FNS[name]
    if mode == "vmap":
        kj = jax.random.split(jax.random.key(3, impl=impl), 3)
        kl = R.split(R.key(3, impl=impl), 3)
        _same(jax.vmap(lambda k: fn(jax.random, k))(kj), jaxlite.vmap(lambda k: fn(R, k))(kl))
        return
    if mode == "original":
        old = jax.config.jax_threefry_partitionable
        try:
            jax.config.update("jax_threefry_partitionable", False)
            with config.override("jax_threefry_partitionable", False):
                for seed in (1, 2):
                    _same(fn(jax.random, jax.random.key(seed, impl=impl)),
                          fn(R, R.key(seed, impl=impl)))
        finally:
            jax.config.update("jax_threefry_partitionable", old)
        return
    theirs = jax.jit(lambda k: fn(jax.random, k)) if mode == "jit" else \
        (lambda k: fn(jax.random, k))
    ours = jaxlite.jit(lambda k: fn(R, k)) if mode == "jit" else (lambda k: fn(R, k))
    for seed in (0, 2 ** 31 + 5):
        _same(theirs(jax.random.key(seed, impl=impl)), ours(R.key(seed, impl=impl)))
