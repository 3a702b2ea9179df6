"""reduce_sum of float32/float64 adds in XLA:CPU's order (jaxlib 0.10.2's
TreeReductionRewriter: windows of 32 along each summed axis longer than 32, zero padding
split "SAME" (the smaller half first), each window and the last reduce adding one element
after another in row-major order from 0), eagerly, in tier 1 and in tier 2."""
import numpy as np
import pytest

import jaxlite
import jaxlite.numpy as jnp


def _seq(v, dtype):
    s = dtype.type(0)
    for t in np.ravel(v):
        s = dtype.type(s + t)
    return s


def reference_sum(x, axes):
    """XLA's order written plainly: one Python add at a time."""
    dt = x.dtype
    axes = tuple(sorted(a % x.ndim for a in axes))
    kept = [d for d in range(x.ndim) if d not in axes]
    y = np.transpose(x, kept + list(axes))
    y = y.reshape((int(np.prod([x.shape[d] for d in kept])),) + tuple(x.shape[a] for a in axes))
    out = []
    for row in y:
        while any(s > 32 for s in row.shape):
            m = [-(-s // 32) if s > 32 else 1 for s in row.shape]
            w = [min(s, 32) for s in row.shape]
            pads = []
            for s, mm, ww in zip(row.shape, m, w):
                tot = mm * ww - s
                pads.append((tot // 2, tot - tot // 2))
            p = np.pad(row, pads)
            nxt = np.zeros(m, dt)
            for idx in np.ndindex(*m):
                sl = tuple(slice(i * ww, (i + 1) * ww) for i, ww in zip(idx, w))
                nxt[idx] = _seq(p[sl], dt)
            row = nxt
        out.append(_seq(row, dt))
    return np.array(out, dt).reshape([x.shape[d] for d in kept])


def _data(rng, shape, dtype):
    return (rng.standard_normal(shape) * np.exp(2 * rng.standard_normal(shape))).astype(dtype)


SIZES = [7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 129, 1000, 1023, 1025,
         1057, 4095]
CASES = [((n,), (0,)) for n in SIZES] + [
    ((3, 40), (1,)), ((40, 3), (0,)), ((100, 40), (0,)), ((100, 40), (1,)),
    ((7, 500), (1,)), ((500, 7), (0,)), ((7, 500), (0, 1)), ((33, 33), (0,)),
    ((5, 7, 40), (0, 2)), ((9, 40, 9), (1,)), ((9, 40, 9), (0, 1)), ((2, 3, 4, 40), (1, 3)),
    ((64, 1), (0,)), ((1, 50, 1), (0, 1, 2)), ((3, 1, 700), (1, 2))]


def _bits(a):
    a = np.asarray(a)
    return a.view(np.int64 if a.dtype.itemsize == 8 else np.int32)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape,axes", CASES)
def test_sum_in_xla_order(shape, axes, dtype):
    if dtype == np.float64:
        with jaxlite.enable_x64():
            return _check_order(shape, axes, dtype)
    return _check_order(shape, axes, dtype)


def _check_order(shape, axes, dtype):
    rng = np.random.default_rng(hash((shape, axes)) % 2**32)
    x = _data(rng, shape, dtype)
    ref = reference_sum(x, axes)
    np.testing.assert_array_equal(_bits(jnp.sum(x, axis=axes)), _bits(ref))
    np.testing.assert_array_equal(
        _bits(jaxlite.jit(lambda v: jnp.sum(v, axis=axes))(x)), _bits(ref))
    # a sum of a fused elementwise value (tier 2 cluster) keeps the order
    f = jaxlite.jit(lambda v: jnp.sum(v * 2 + 1, axis=axes))
    ref2 = reference_sum(x * dtype(2) + dtype(1), axes)
    for _ in range(3):
        np.testing.assert_array_equal(_bits(f(x)), _bits(ref2))


def test_order_differs_from_numpy_pairwise():
    """The test can fail: NumPy's pairwise sum gives other bits for some of these."""
    rng = np.random.default_rng(0)
    diff = 0
    for _ in range(20):
        x = _data(rng, (1000,), np.float32)
        diff += np.sum(x) != reference_sum(x, (0,))
    assert diff > 0


def test_negative_zero_sums_to_zero():
    x = -np.zeros(40, np.float32)
    assert not np.signbit(jnp.sum(x))


@pytest.mark.parametrize("shape,axes", CASES)
def test_sum_matches_jax(shape, axes):
    jax = pytest.importorskip("jax")
    rng = np.random.default_rng(hash((shape, axes, 1)) % 2**32)
    x = _data(rng, shape, np.float32)
    want = np.asarray(jax.jit(lambda v: jax.numpy.sum(v, axis=axes))(x))
    np.testing.assert_array_equal(_bits(jnp.sum(x, axis=axes)), _bits(want))
    np.testing.assert_array_equal(
        _bits(jaxlite.jit(lambda v: jnp.sum(v, axis=axes))(x)), _bits(want))
