"""reduce_sum of float32/float64 adds in XLA:CPU's order (jaxlib 0.10.2's
TreeReductionRewriter: windows of 32 along each summed axis longer than 32, zero padding
split "SAME" (the smaller half first), each window and the last reduce adding one element
after another in row-major order from 0), eagerly, in tier 1 and in tier 2; operands of
4096 elements or more in the order of XLA:CPU's YNNPACK reduce (checked against stored
jaxlib 0.10.2 results and, when jax is installed, against jax directly)."""
import hashlib

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
    ((64, 1), (0,)), ((1, 50, 1), (0, 1, 2)), ((3, 1, 700), (1, 2)),
    # whole-operand sums over two or more axes that LLVM leaves sequential (odd row
    # counts under 16, or a last axis of 12 or more)
    ((3, 5), (0, 1)), ((5, 7), (0, 1)), ((15, 9), (0, 1)), ((3, 5, 4), (0, 1, 2)),
    ((8, 16), (0, 1)), ((32, 12), (0, 1)), ((9, 2), (0, 1))]


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


# --- operands of 4096 elements or more: YNNPACK's order (jaxlite/_src/prims/ynn_sum.py) ---

def _ydata(shape, dtype, seed):
    """Order-sensitive data made exactly (integer mantissas scaled by powers of two) from
    an integer hash, so every machine has the same bits."""
    n = int(np.prod(shape))
    i = np.arange(n, dtype=np.uint64) + np.uint64(seed * 7919)
    h = (i * np.uint64(2654435761) + np.uint64(12345)) % np.uint64(2**32)
    m = (h % np.uint64(2**21)).astype(np.int64) - 2**20
    spread = 25 if np.dtype(dtype).itemsize == 4 else 70
    e = ((h >> np.uint64(21)) % np.uint64(spread)).astype(np.int64) - 32
    return np.ldexp(m.astype(np.float64), e).astype(dtype).reshape(shape)


def _digest(a):
    return hashlib.sha256(np.ascontiguousarray(a).tobytes()).hexdigest()[:16]


YNN_SHAPES = [((10000,), (0,)), ((100000,), (0,)), ((512, 256), (0,)), ((512, 256), (1,)),
              ((512, 256), (0, 1)), ((40, 3000), (0,)), ((3000, 40), (0,)),
              ((100, 50, 30), (0, 2)), ((100, 50, 30), (1,)), ((7, 9, 11, 13), (1, 3)),
              ((4096,), (0,)), ((64, 64), (0, 1)), ((8, 64, 16), (0, 1)), ((1, 5000), (1,)),
              ((300, 1000), (0,))]
# sha256[:16] of jax.jit(lambda x: x.sum(axis=axes))(_ydata(shape, dtype, k)) with jaxlib
# 0.10.2 (x86-64), k the case's index in YNN_SHAPES
YNN_DIGESTS = {
    "float32": ["f5cb34f498e519dc", "80b1f7fc656da953", "dfe7fde47418b39a", "9f2e963beec08320",
                "e98ada3c86fceecc", "7e19edaf67cd25e6", "16ae244c5b7a5a98", "de060d36d2a057dd",
                "df6e22a78679d471", "b0169f8204f1554c", "3123e05474b672f0", "71bd3edd94107e74",
                "a2a5977dfb4f64b6", "2b5db4e5d2469e1d", "59e58c68b5b1d40d"],
    "float64": ["8911771e73eac476", "c8b8eee6d98427e3", "f1a6b566134e08b5", "5f5d79d20a18baa3",
                "d254ebf69892f75b", "26a4a601cf4236c1", "7bfa127e73be4dc1", "4fe8e28cc989b11a",
                "cee678c87f90c2d9", "954d66137410f12c", "0236a2fa3196ffc2", "47e56ea1487bdd98",
                "58c4a1fbb753b283", "b614154336f0f4bc", "9cc95fd3ec6a7fd2"]}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", range(len(YNN_SHAPES)))
def test_large_sum_matches_stored_jax(case, dtype):
    shape, axes = YNN_SHAPES[case]
    x = _ydata(shape, dtype, case)
    want = YNN_DIGESTS[dtype][case]
    with jaxlite.enable_x64(dtype == "float64"):
        assert _digest(jnp.sum(x, axis=axes)) == want
        assert _digest(jaxlite.jit(lambda v: jnp.sum(v, axis=axes))(x)) == want
        # a sum of a fused elementwise value (tier 2 cluster) keeps the order
        f = jaxlite.jit(lambda v: jnp.sum(v + 0, axis=axes))
        assert _digest(f(x)) == want


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", range(len(YNN_SHAPES)))
def test_large_sum_in_tier2_matches_stored_jax(case, dtype):
    """Tier 2 calls the compiled YNNPACK kernels from its own numba code (the tiling
    planned once) where the tiles cut no reduced axis of a partial sum, and tier 1's
    ``ynn_sum`` elsewhere: jaxlib 0.10.2's bits either way."""
    from jaxlite._src.compiler import fusion
    from jaxlite._src.prims import ynn_sum as Y
    shape, axes = YNN_SHAPES[case]
    x = _ydata(shape, dtype, case)
    want = YNN_DIGESTS[dtype][case]
    dt = np.dtype(dtype)
    splits = Y._splits(shape, Y.TILE_BYTES // dt.itemsize)
    cut = [a for a in axes if splits[a] < shape[a]]
    compiled = fusion.numba_module() is not None and \
        (not cut or (len(axes) == len(shape) and cut == [0]))
    with jaxlite.enable_x64(dtype == "float64"), jaxlite.config.override("jaxlite_tier", 2):
        for f in (jaxlite.jit(lambda v: jnp.sum(v, axis=axes)),
                  jaxlite.jit(lambda v: jnp.sum(v * 1, axis=axes) * 1)):
            assert _digest(f(x)) == want
            text = f.lower(x).compile().as_text()
            assert any(k in text for k in ("k1_rows(", "kn_rows(", "whole_sum(")) == \
                compiled, text


def test_large_sum_order_differs_from_numpy():
    """The stored results are not NumPy's pairwise sums (the tests above can fail)."""
    diff = 0
    for case, (shape, axes) in enumerate(YNN_SHAPES):
        x = _ydata(shape, "float32", case)
        diff += _digest(np.sum(x, axis=axes)) != YNN_DIGESTS["float32"][case]
    assert diff >= 10


LARGE_JAX = [((10000,), (0,)), ((33000,), (0,)), ((300000,), (0,)), ((512, 256), (0,)),
             ((512, 256), (1,)), ((512, 256), (0, 1)), ((2048, 100), (0,)), ((17, 300), (0,)),
             ((5000, 3), (0,)), ((5000, 3), (1,)), ((8, 513), (0, 1)), ((16, 32, 32), (0, 2)),
             ((20, 20, 20, 20), (1, 2)), ((7, 9, 11, 13), (0, 1, 2, 3)), ((4096, 1), (0,)),
             ((64, 128, 64), (0, 2)), ((1000, 1, 7), (0, 1))]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape,axes", LARGE_JAX)
def test_large_sum_matches_jax(shape, axes, dtype):
    jax = pytest.importorskip("jax")
    rng = np.random.default_rng(hash((shape, axes, 2)) % 2**32)
    x = (rng.standard_normal(shape) * np.exp(rng.uniform(-8, 8, shape))).astype(dtype)
    with jax.enable_x64(dtype == np.float64), \
            jaxlite.enable_x64(dtype == np.float64):
        want = np.asarray(jax.jit(lambda v: jax.numpy.sum(v, axis=axes))(x))
        np.testing.assert_array_equal(_bits(jnp.sum(x, axis=axes)), _bits(want))
        np.testing.assert_array_equal(
            _bits(jaxlite.jit(lambda v: jnp.sum(v, axis=axes))(x)), _bits(want))


def test_large_sum_special_values_match_jax():
    """inf and nan in a compensated (Kahan) sum: the error term is dropped as YNNPACK does."""
    jax = pytest.importorskip("jax")
    rng = np.random.default_rng(3)
    for special in (np.inf, -np.inf, np.nan):
        x = rng.standard_normal((300, 200)).astype(np.float32)
        x[rng.integers(300, size=5), rng.integers(200, size=5)] = special
        x[7, :] = -0.0
        for axes in ((0,), (1,), (0, 1)):
            want = np.asarray(jax.jit(lambda v, a=axes: jax.numpy.sum(v, axis=a))(x))
            np.testing.assert_array_equal(_bits(jnp.sum(x, axis=axes)), _bits(want))


YNN_TWIN_CASES = [((4096,), (0,)), ((4097,), (0,)), ((10000,), (0,)), ((70001,), (0,)),
                  ((3, 4095), (1,)), ((5, 1023), (1,)), ((2, 65553), (1,)),
                  ((512, 256), (0,)), ((512, 256), (1,)), ((512, 256), (0, 1)),
                  ((1030, 33), (0,)), ((4, 2049), (0,)), ((3, 1500), (0,)),
                  ((17, 13, 31), (0, 2)), ((17, 13, 31), (1,)), ((9, 700, 3), (0, 1)),
                  ((6, 5, 4, 70), (1, 3)), ((300, 2, 200), (0, 2)), ((40000, 2), (0,)),
                  ((257, 129), (0,)), ((257, 129), (1,)), ((2, 3, 2048), (0, 1, 2)),
                  ((1001, 50), (0, 1)), ((3, 1000, 50), (0, 1, 2)), ((131073,), (0,))]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_ynn_sum_compiled_twin_matches_numpy_kernels(dtype):
    """The numba twins of ynn_sum's kernels (ynn_sum_nb) give the NumPy kernels' bits on
    many shapes, axes and odd tails, with -0.0, inf and nan among the values."""
    pytest.importorskip("numba")
    from jaxlite._src.prims import ynn_sum as Y
    if Y._compiled(1 << 62) is None:
        pytest.skip("numba turned off (JAXLITE_NUMBA=0)")
    dt = np.dtype(dtype)
    rng = np.random.default_rng(11)
    for i, (shape, axes) in enumerate(YNN_TWIN_CASES):
        x = (rng.standard_normal(shape) * np.exp(rng.uniform(-12, 12, shape))).astype(dt)
        flat = x.reshape(-1)
        if i % 3 == 1:
            flat[::37] = -0.0
        if i % 4 == 2:
            flat[rng.integers(flat.size, size=3)] = rng.choice([np.inf, -np.inf, np.nan])
        if i % 5 == 3:
            flat[:] = -0.0
        want = Y.ynn_sum(x, axes, compiled=False)
        got = Y.ynn_sum(x, axes, compiled=True)
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(_bits(got), _bits(want), err_msg=f"{shape} {axes}")
    # a non-contiguous operand
    x = rng.standard_normal((600, 80)).astype(dt)[::2, 1::3].T
    np.testing.assert_array_equal(_bits(Y.ynn_sum(x, (0,), compiled=True)),
                                  _bits(Y.ynn_sum(x, (0,), compiled=False)))
    # the compiled kernels give jaxlib 0.10.2's stored results
    for case, (shape, axes) in enumerate(YNN_SHAPES):
        assert _digest(Y.ynn_sum(_ydata(shape, dtype, case), axes, compiled=True)) == \
            YNN_DIGESTS[dtype][case], (shape, axes)


def test_large_mean_var_softmax_match_jax():
    """mean, var and softmax of arrays of 4096+ elements: their sums in YNNPACK's order."""
    jax = pytest.importorskip("jax")
    rng = np.random.default_rng(4)
    x = rng.standard_normal((512, 256)).astype(np.float32) * 3
    for name, args in [("mean", {"axis": 1}), ("var", {"axis": 0}), ("std", {})]:
        fn = getattr(jax.numpy, name)
        want = np.asarray(jax.jit(lambda v, f=fn, k=args: f(v, **k))(x))
        np.testing.assert_array_equal(_bits(getattr(jnp, name)(x, **args)), _bits(want))
    for axis in (0, 1):
        want = np.asarray(jax.nn.softmax(x, axis=axis))
        np.testing.assert_array_equal(_bits(jaxlite.nn.softmax(x, axis=axis)), _bits(want))


# --- products: XLA's tree of windows at every size (YNNPACK has no product) ---

def _reference_prod_1d(v):
    """XLA's order of a product of a vector written plainly: windows of 32 (padded with
    ones, the smaller half before), each multiplied one element after another from 1."""
    dt = v.dtype
    while v.size > 32:
        m = -(-v.size // 32)
        lo = (m * 32 - v.size) // 2
        p = np.ones(m * 32, dt)
        p[lo:lo + v.size] = v
        out = []
        for i in range(m):
            s = dt.type(1)
            for t in p[i * 32:(i + 1) * 32]:
                s = dt.type(s * t)
            out.append(s)
        v = np.array(out, dt)
    s = dt.type(1)
    for t in v:
        s = dt.type(s * t)
    return s


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape,axis", [((100,), 0), ((1057,), 0), ((5000,), 0),
                                        ((40, 70), 0), ((70, 40), 1), ((3, 300, 2), 1)])
def test_prod_in_xla_order(shape, axis, dtype):
    rng = np.random.default_rng(hash((shape, axis)) % 2**32)
    x = (1 + rng.standard_normal(shape) * 1e-2).astype(dtype)
    ref = np.apply_along_axis(_reference_prod_1d, axis, x)
    with jaxlite.enable_x64(dtype == np.float64):
        np.testing.assert_array_equal(_bits(jnp.prod(x, axis=axis)), _bits(ref))
        np.testing.assert_array_equal(
            _bits(jaxlite.jit(lambda v: jnp.prod(v, axis=axis))(x)), _bits(ref))
    if x.ndim == 1:
        assert _bits(np.prod(x)) != _bits(ref) or shape[0] <= 32


@pytest.mark.parametrize("shape,axes", [((100,), (0,)), ((5000,), (0,)), ((512, 256), (0,)),
                                        ((512, 256), (1,)), ((9, 40, 9), (1,)),
                                        ((7, 500), (0, 1))])
def test_prod_matches_jax(shape, axes):
    jax = pytest.importorskip("jax")
    rng = np.random.default_rng(hash((shape, axes, 5)) % 2**32)
    x = (1 + rng.standard_normal(shape) * 1e-2).astype(np.float32)
    want = np.asarray(jax.jit(lambda v: jax.numpy.prod(v, axis=axes))(x))
    np.testing.assert_array_equal(_bits(jnp.prod(x, axis=axes)), _bits(want))


# --- cumulative sums/products: XLA's reduce-window rewritten into blocks of 16 ---

def _reference_cumsum_1d(v):
    """XLA's order of a forward cumulative sum written plainly: blocks of 16 (the last
    padded), running sums inside each block from 0, each block's elements plus the
    (recursively computed, same order) running total of the blocks before it."""
    dt, n = v.dtype, v.size
    if n <= 16:
        out, s = [], dt.type(0)
        for t in v:
            s = dt.type(s + t)
            out.append(s)
        return np.array(out, dt)
    m = -(-n // 16)
    p = np.zeros(m * 16, dt)
    p[:n] = v
    blocks = [_reference_cumsum_1d(p[i * 16:(i + 1) * 16]) for i in range(m)]
    totals = _reference_cumsum_1d(np.array([b[-1] for b in blocks], dt))
    out = [blocks[0] + dt.type(0)] + [blocks[i] + totals[i - 1] for i in range(1, m)]
    return np.concatenate(out)[:n]


@pytest.mark.parametrize("n", [5, 16, 17, 100, 257, 1000, 5000])
def test_cumsum_in_xla_order(n):
    rng = np.random.default_rng(n)
    x = _data(rng, (n,), np.float32)
    ref = _reference_cumsum_1d(x)
    np.testing.assert_array_equal(_bits(jnp.cumsum(x)), _bits(ref))
    np.testing.assert_array_equal(_bits(jaxlite.jit(jnp.cumsum)(x)), _bits(ref))
    if n >= 100:        # (the test can fail: NumPy's running sum differs)
        assert np.any(_bits(np.cumsum(x)) != _bits(ref))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape,axis", [((100,), 0), ((3000,), 0), ((50, 300), 1),
                                        ((50, 300), 0), ((7, 3, 40), 2), ((17,), 0)])
@pytest.mark.parametrize("name", ["cumsum", "cumprod"])
@pytest.mark.parametrize("reverse", [False, True])
def test_cumulative_matches_jax(shape, axis, dtype, name, reverse):
    jax = pytest.importorskip("jax")
    rng = np.random.default_rng(hash((shape, axis, name)) % 2**32)
    if name == "cumsum":
        x = (rng.standard_normal(shape) * np.exp(rng.uniform(-6, 6, shape))).astype(dtype)
    else:
        x = (1 + rng.standard_normal(shape) * 1e-2).astype(dtype)
    with jax.enable_x64(dtype == np.float64), jaxlite.enable_x64(dtype == np.float64):
        want = np.asarray(jax.jit(
            lambda v: getattr(jax.lax, name)(v, axis=axis, reverse=reverse))(x))
        got = getattr(jaxlite.lax, name)(x, axis=axis, reverse=reverse)
        np.testing.assert_array_equal(_bits(got), _bits(want))
        got = jaxlite.jit(lambda v: getattr(jaxlite.lax, name)(v, axis=axis,
                                                               reverse=reverse))(x)
        np.testing.assert_array_equal(_bits(got), _bits(want))
