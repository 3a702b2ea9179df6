"""Convolutions and windowed reductions: lax.conv_general_dilated & wrappers, lax.reduce_window,
jnp.convolve/correlate and the stax conv/pooling layers. Values vs direct NumPy loops (and
JAX), gradients (check_grads fwd/rev, orders 1-2), vmap vs a Python loop, jit vs eager,
jaxprs vs JAX, and a small stax CNN vs JAX (same init, outputs and gradients)."""
import itertools

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import lax
from jaxlite.example_libraries import stax
from jaxlite.test_util import check_grads

RNG = np.random.RandomState(0)


def _rand(*shape, dtype=np.float32):
    return RNG.randn(*shape).astype(dtype)


# ----------------------------------------------------------------------------- references

def _dilate(x, axes, dil):
    for ax, d in zip(axes, dil):
        if d > 1 and x.shape[ax]:
            shape = list(x.shape)
            shape[ax] = (shape[ax] - 1) * d + 1
            y = np.zeros(shape, x.dtype)
            idx = [slice(None)] * x.ndim
            idx[ax] = slice(None, None, d)
            y[tuple(idx)] = x
            x = y
    return x


def _pad(x, axes, pads, fill=0):
    for ax, (lo, hi) in zip(axes, pads):
        widths = [(0, 0)] * x.ndim
        widths[ax] = (max(lo, 0), max(hi, 0))
        x = np.pad(x, widths, constant_values=fill)
        idx = [slice(None)] * x.ndim
        idx[ax] = slice(max(-lo, 0), x.shape[ax] - max(-hi, 0))
        x = x[tuple(idx)]
    return x


def conv_reference(lhs, rhs, strides, padding, lhs_dil, rhs_dil, dn, fgc=1, bgc=1):
    """conv_general_dilated by direct loops over output positions and groups."""
    lspec, rspec, ospec = dn
    x = np.transpose(lhs, lspec).astype(np.float64)
    w = np.transpose(rhs, rspec).astype(np.float64)
    nsp = x.ndim - 2
    sp = tuple(range(2, 2 + nsp))
    x = _pad(_dilate(x, sp, lhs_dil), sp, padding)
    w = _dilate(w, sp, rhs_dil)
    N, C = x.shape[:2]
    O, I = w.shape[:2]
    K = w.shape[2:]
    out_sp = [(n - k) // s + 1 if n >= k else 0 for n, k, s in zip(x.shape[2:], K, strides)]
    G = fgc * bgc
    Nb, Og = N // bgc, O // G
    out = np.zeros([Nb, O] + out_sp)
    for g in range(G):
        ws = w[g * Og:(g + 1) * Og]                               # (Og, I, K...)
        for pos in itertools.product(*[range(o) for o in out_sp]):
            win = (slice(None), slice(None)) + tuple(
                slice(p * s, p * s + k) for p, s, k in zip(pos, strides, K))
            if bgc > 1:
                xs = x[g * Nb:(g + 1) * Nb][win]                  # (Nb, C, K...)
            else:
                xs = x[:, g * I:(g + 1) * I][win]                 # (N, I, K...)
            val = np.tensordot(xs, ws, axes=(list(range(1, 2 + nsp)),
                                             list(range(1, 2 + nsp))))
            out[(slice(None), slice(g * Og, (g + 1) * Og)) + pos] = val
    return np.transpose(out, np.argsort(ospec))


def reduce_window_reference(x, op, init, wd, ws, pad, bd, wdil):
    """reduce_window by a loop over output positions."""
    axes = tuple(range(x.ndim))
    xp = _pad(_dilate_fill(x, bd, init), axes, pad, init)
    eff = [(k - 1) * d + 1 for k, d in zip(wd, wdil)]
    out_shape = [(n - e) // s + 1 if n >= e else 0 for n, e, s in zip(xp.shape, eff, ws)]
    out = np.full(out_shape, init, x.dtype)
    for pos in itertools.product(*[range(o) for o in out_shape]):
        idx = tuple(slice(p * s, p * s + e, d) for p, s, e, d in zip(pos, ws, eff, wdil))
        out[pos] = op.reduce(xp[idx].ravel(), initial=init)
    return out


def _dilate_fill(x, dil, fill):
    for ax, d in enumerate(dil):
        if d > 1 and x.shape[ax]:
            shape = list(x.shape)
            shape[ax] = (shape[ax] - 1) * d + 1
            y = np.full(shape, fill, x.dtype)
            idx = [slice(None)] * x.ndim
            idx[ax] = slice(None, None, d)
            y[tuple(idx)] = x
            x = y
    return x


# ----------------------------------------------------------------------------- conv values

# (lhs shape, rhs shape, strides, padding, lhs_dilation, rhs_dilation, dimension_numbers,
#  feature_group_count, batch_group_count)
CONV_CASES = [
    ((2, 3, 9, 8), (4, 3, 3, 2), (1, 1), "SAME", None, None, None, 1, 1),
    ((2, 3, 9, 8), (4, 3, 3, 2), (2, 3), "VALID", None, None, None, 1, 1),
    ((2, 3, 9, 8), (4, 3, 3, 2), (2, 1), ((1, 2), (0, -1)), (1, 2), (2, 1), None, 1, 1),
    ((2, 6, 9, 8), (4, 3, 3, 2), (1, 2), "SAME", None, (2, 2), None, 2, 1),
    ((2, 6, 7, 8), (6, 1, 3, 2), (1, 1), "SAME_LOWER", None, None, None, 6, 1),
    ((4, 3, 9, 8), (6, 3, 3, 2), (1, 1), "VALID", None, None, None, 1, 2),
    ((2, 9, 8, 3), (3, 2, 3, 4), (1, 2), "SAME", None, None, ("NHWC", "HWIO", "NHWC"), 1, 1),
    ((2, 9, 8, 6), (3, 2, 3, 4), (2, 2), "SAME", None, (1, 2), ("NHWC", "HWIO", "NCHW"), 2, 1),
    ((9, 2, 8, 3), (4, 3, 2, 3), (1, 1), ((2, 2), (1, 1)), (2, 1), None,
     ("HNWC", "OHWI", "WNCH"), 1, 1),
    ((2, 3, 10), (4, 3, 3), (2,), "VALID", None, None, None, 1, 1),
    ((2, 4, 5), (4, 4, 3), (1,), [(-1, 3)], (3,), None, None, 1, 1),
    ((2, 3, 5, 6, 4), (4, 3, 2, 3, 2), (1, 2, 1), "SAME", None, None, None, 1, 1),
    ((1, 2, 3, 3), (2, 2, 5, 5), (1, 1), "VALID", None, None, None, 1, 1),   # empty output
]
IDS = [f"conv{i}" for i in range(len(CONV_CASES))]


def _conv_fn(case, mod=lax):
    _, _, strides, pad, ld, rd, dn, fgc, bgc = case
    return lambda x, w: mod.conv_general_dilated(x, w, strides, pad, ld, rd, dn, fgc, bgc)


def _resolved(case):
    """(pads, lhs_dilation, rhs_dilation, ConvDimensionNumbers) of a case."""
    xs, ws, strides, pad, ld, rd, dn, fgc, bgc = case
    nsp = len(xs) - 2
    dnums = lax.conv_dimension_numbers(xs, ws, dn)
    ld = ld or (1,) * nsp
    rd = rd or (1,) * nsp
    if isinstance(pad, str):
        k = np.take(ws, dnums.rhs_spec)[2:]
        eff = [(kk - 1) * d + 1 for kk, d in zip(k, rd)]
        pad = lax.padtype_to_pads(np.take(xs, dnums.lhs_spec)[2:], eff, strides, pad)
    return [tuple(p) for p in pad], ld, rd, dnums


@pytest.mark.parametrize("case", CONV_CASES, ids=IDS)
def test_conv_vs_numpy_loop(case):
    xs, ws, strides, _, _, _, _, fgc, bgc = case
    x, w = _rand(*xs), _rand(*ws)
    pads, ld, rd, dnums = _resolved(case)
    want = conv_reference(x, w, strides, pads, ld, rd, dnums, fgc, bgc)
    got = _conv_fn(case)(x, w)
    assert got.shape == want.shape and got.dtype == np.float32
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-4, atol=1e-4)
    jitted = jax.jit(_conv_fn(case))(x, w)
    np.testing.assert_allclose(np.asarray(jitted), np.asarray(got), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("case", CONV_CASES, ids=IDS)
def test_conv_vs_jax(case):
    rjax = pytest.importorskip("jax")
    x, w = _rand(*case[0]), _rand(*case[1])
    got = _conv_fn(case)(x, w)
    want = _conv_fn(case, rjax.lax)(x, w)
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-4, atol=1e-4)
    loss = lambda f: lambda x, w: (f(x, w) ** 2).sum()  # noqa: E731
    g = jax.grad(loss(_conv_fn(case)), (0, 1))(x, w)
    rg = rjax.grad(loss(_conv_fn(case, rjax.lax)), (0, 1))(x, w)
    for a, b in zip(g, rg):
        assert a.shape == b.shape
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=2e-4,
                                   atol=2e-4 * (1 + np.abs(np.asarray(b)).max()))


@pytest.mark.parametrize("case", [c for c in CONV_CASES if np.prod(c[0]) < 300][:4] +
                         [CONV_CASES[3], CONV_CASES[5], CONV_CASES[8]], ids=str)
def test_conv_check_grads(case, x64):
    x, w = RNG.randn(*case[0]), RNG.randn(*case[1])
    check_grads(_conv_fn(case), (x, w), order=2, modes=("fwd", "rev"))


def test_conv_check_grads_f32():
    case = CONV_CASES[0]
    x, w = 0.3 * _rand(*case[0]), 0.3 * _rand(*case[1])
    check_grads(_conv_fn(case), (x, w), order=2, modes=("fwd", "rev"), atol=5e-2, rtol=5e-2)


def test_conv_check_grads_x64(x64):
    case = CONV_CASES[2]
    x, w = RNG.randn(*case[0]), RNG.randn(*case[1])
    check_grads(_conv_fn(case), (x, w), order=2, modes=("fwd", "rev"))
    case = CONV_CASES[5]
    x, w = RNG.randn(*case[0]), RNG.randn(*case[1])
    check_grads(_conv_fn(case), (x, w), order=1, modes=("fwd", "rev"))


@pytest.mark.parametrize("case", [CONV_CASES[i] for i in (0, 2, 3, 5, 7)], ids=str)
@pytest.mark.parametrize("in_axes", [(0, None), (None, 0), (0, 0), (2, 1)])
def test_conv_vmap_vs_loop(case, in_axes):
    xs, ws = case[0], case[1]
    B = 3
    f = _conv_fn(case)
    xb = _rand(*xs) if in_axes[0] is None else np.moveaxis(_rand(B, *xs), 0, in_axes[0])
    wb = _rand(*ws) if in_axes[1] is None else np.moveaxis(_rand(B, *ws), 0, in_axes[1])
    got = jax.vmap(f, in_axes)(xb, wb)
    want = np.stack([np.asarray(f(xb if in_axes[0] is None else np.take(xb, i, in_axes[0]),
                                  wb if in_axes[1] is None else np.take(wb, i, in_axes[1])))
                     for i in range(B)])
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-5)


def test_conv_grad_of_vmap_and_jit():
    case = CONV_CASES[3]
    x, w = _rand(3, *case[0]), _rand(*case[1])
    f = _conv_fn(case)
    loss = lambda x, w: (jax.vmap(f, (0, None))(x, w) ** 2).sum()  # noqa: E731
    g = jax.jit(jax.grad(loss, (0, 1)))(x, w)
    g2 = jax.grad(lambda x, w: sum((f(x[i], w) ** 2).sum() for i in range(3)), (0, 1))(x, w)
    for a, b in zip(g, g2):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-4, atol=1e-4)


def test_conv_wrappers_vs_jax():
    rjax = pytest.importorskip("jax")
    x, w = _rand(2, 3, 8, 7), _rand(4, 3, 3, 2)
    for f in [lambda L: L.conv(x, w, (1, 2), "SAME"),
              lambda L: L.conv(x, w, (2, 1), "VALID"),
              lambda L: L.conv_with_general_padding(x, w, (1, 1), ((1, 0), (2, 2)), (2, 1),
                                                    (1, 2))]:
        np.testing.assert_allclose(np.asarray(f(lax)), np.asarray(f(rjax.lax)), rtol=1e-4,
                                   atol=1e-4)
    xh, wh = _rand(2, 5, 6, 3), _rand(3, 3, 3, 4)
    for kw in [dict(strides=(2, 2), padding="SAME"), dict(strides=(2, 1), padding="VALID"),
               dict(strides=(1, 2), padding=((1, 2), (0, 1))),
               dict(strides=(2, 2), padding="SAME", transpose_kernel=True),
               dict(strides=(2, 2), padding=((1, 1), (0, 0)), use_consistent_padding=True),
               dict(strides=(2, 1), padding="VALID", rhs_dilation=(2, 1))]:
        k = wh.transpose(0, 1, 3, 2) if kw.get("transpose_kernel") else wh
        a = lax.conv_transpose(xh, k, **kw)
        b = rjax.lax.conv_transpose(xh, k, **kw)
        assert a.shape == b.shape, kw
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-4, atol=1e-4)
    for args in [((4, 9, 9, 3), (3, 3, 3, 8), (2, 2), "SAME", ("NHWC", "HWIO", "NHWC")),
                 ((4, 3, 9, 9), (8, 3, 2, 2), (1, 3), "VALID", ("NCHW", "OIHW", "NCHW"))]:
        assert lax.conv_general_shape_tuple(*args) == \
            tuple(rjax.lax.conv_general_shape_tuple(*args))
        assert lax.conv_transpose_shape_tuple(*args) == \
            tuple(rjax.lax.conv_transpose_shape_tuple(*args))
    for pt in ["SAME", "SAME_LOWER", "VALID"]:
        assert lax.padtype_to_pads((7, 8), (3, 4), (2, 3), pt) == \
            [tuple(p) for p in rjax.lax.padtype_to_pads((7, 8), (3, 4), (2, 3), pt)]
    assert lax.conv_dimension_numbers((1, 2, 3, 4), (1, 2, 3, 4),
                                      ("NHWC", "HWIO", "NCHW")) == \
        tuple(rjax.lax.conv_dimension_numbers((1, 2, 3, 4), (1, 2, 3, 4),
                                              ("NHWC", "HWIO", "NCHW")))


def test_conv_dtypes():
    x, w = _rand(1, 2, 5, 5), _rand(3, 2, 3, 3)
    assert lax.conv(x.astype(np.int32), w.astype(np.int32), (1, 1), "SAME").dtype == np.int32
    y = lax.conv(x.astype(np.float16), w.astype(np.float16), (1, 1), "SAME",
                 preferred_element_type=np.float32)
    assert y.dtype == np.float32
    np.testing.assert_allclose(np.asarray(y), np.asarray(lax.conv(
        x.astype(np.float16).astype(np.float32), w.astype(np.float16).astype(np.float32),
        (1, 1), "SAME")), rtol=1e-5, atol=1e-5)
    xi = RNG.randint(-3, 3, (1, 2, 5, 5)).astype(np.int8)
    wi = RNG.randint(-3, 3, (3, 2, 3, 3)).astype(np.int8)
    yi = lax.conv(xi, wi, (1, 1), "VALID", preferred_element_type=np.int32)
    assert yi.dtype == np.int32
    np.testing.assert_array_equal(np.asarray(yi), conv_reference(
        xi, wi, (1, 1), [(0, 0)] * 2, (1, 1), (1, 1), lax.ConvDimensionNumbers(
            (0, 1, 2, 3), (0, 1, 2, 3), (0, 1, 2, 3))).astype(np.int32))


def test_conv_complex_vs_jax():
    rjax = pytest.importorskip("jax")
    x = (RNG.randn(2, 3, 6, 5) + 1j * RNG.randn(2, 3, 6, 5)).astype(np.complex64)
    w = (RNG.randn(4, 3, 3, 2) + 1j * RNG.randn(4, 3, 3, 2)).astype(np.complex64)
    f = lambda L: lambda x, w: L.conv(x, w, (2, 1), "SAME")  # noqa: E731
    a, b = f(lax)(x, w), f(rjax.lax)(x, w)
    assert a.dtype == np.complex64
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-4, atol=1e-4)
    va = jax.vjp(f(lax), x, w)[1](a)
    vb = rjax.vjp(f(rjax.lax), x, w)[1](b)
    for p, q in zip(va, vb):
        np.testing.assert_allclose(np.asarray(p), np.asarray(q), rtol=1e-4, atol=1e-3)


def test_conv_speed_smoke():
    """A batch of 64 28x28x1 images through a 3x3x32 conv takes milliseconds (loose bound:
    shared CI machines are noisy)."""
    import time
    x, w = _rand(64, 28, 28, 1), _rand(3, 3, 1, 32)
    dn = ("NHWC", "HWIO", "NHWC")
    lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=dn)
    best = np.inf
    for _ in range(5):
        t = time.perf_counter()
        lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=dn)
        best = min(best, time.perf_counter() - t)
    assert best < 0.25


@pytest.mark.parametrize("fn,exc,msg", [
    (lambda: lax.conv(_rand(1, 2, 5, 5), _rand(3, 2, 3, 3).astype(np.int32), (1, 1), "SAME"),
     TypeError, "requires arguments to have the same dtypes, got float32, int32"),
    (lambda: lax.conv(_rand(1, 2, 5, 5), _rand(3, 4, 3, 3), (1, 1), "SAME"), ValueError,
     "must equal the rhs input feature dimension size, but 2 // 1 != 4"),
    (lambda: lax.conv(_rand(1, 2, 5, 5), _rand(3, 2, 3), (1, 1), "SAME"), TypeError,
     "convolution requires lhs and rhs ndim to be equal, got 4 and 3"),
    (lambda: lax.conv(_rand(1, 2, 5, 5), _rand(3, 2, 3, 3), (1,), "SAME"), ValueError,
     "window and window_strides must have the same number of dimensions"),
    (lambda: lax.conv(_rand(1, 2, 5, 5), _rand(3, 2, 3, 3), (1, 1), "FOO"), RuntimeError,
     "Unrecognized padding type"),
    (lambda: lax.conv_general_dilated(_rand(1, 2, 5, 5), _rand(3, 2, 3, 3), (1, 1),
                                      [(1, 1)]), TypeError,
     "Wrong number of explicit pads for convolution: expected 2, got 1"),
    (lambda: lax.conv_general_dilated(_rand(1, 2, 5, 5), _rand(3, 2, 3, 3), (1, 1),
                                      [(-9, 1), (0, 0)]), ValueError,
     "Negative padding is larger than the size of the corresponding dimension"),
    (lambda: lax.conv_general_dilated(_rand(1, 4, 5, 5), _rand(3, 2, 3, 3), (1, 1), "SAME",
                                      feature_group_count=2), ValueError,
     "must be a multiple of feature_group_count"),
    (lambda: lax.conv_general_dilated(_rand(3, 2, 5, 5), _rand(4, 2, 3, 3), (1, 1), "SAME",
                                      batch_group_count=2), ValueError,
     "batch_group_count must divide lhs batch dimension size"),
    (lambda: lax.conv_general_dilated(_rand(1, 2, 5, 5), _rand(3, 2, 3, 3), (1, 1), "SAME",
                                      (2, 2)), ValueError,
     "String padding is not implemented for transposed convolution"),
    (lambda: lax.conv_general_dilated(_rand(1, 2, 5, 5), _rand(3, 2, 3, 3), (1, 1), "SAME",
                                      dimension_numbers=("NCHW", "OIHW")), TypeError,
     "must be length 3"),
    (lambda: lax.conv(_rand(1, 2, 5, 5), _rand(3, 2, 3, 3), (1, 1), "SAME",
                      preferred_element_type=np.float16), TypeError,
     "must not be narrower than the original type"),
    (lambda: jnp.convolve(np.ones((2, 2)), np.ones(2)), ValueError,
     "only support 1-dimensional inputs"),
    (lambda: jnp.correlate(np.ones(3), np.ones(2), mode="foo"), ValueError,
     "mode must be one of"),
])
def test_conv_errors(fn, exc, msg):
    with pytest.raises(exc, match=msg.replace("(", r"\(").replace(")", r"\)")):
        fn()


# ----------------------------------------------------------------------------- jaxprs

def _jaxpr_cases():
    x, w = np.ones((2, 3, 8, 8), np.float32), np.ones((4, 3, 3, 3), np.float32)
    xh, wh = np.ones((2, 8, 8, 6), np.float32), np.ones((3, 3, 3, 4), np.float32)
    dn = ("NHWC", "HWIO", "NHWC")
    return {
        "conv": (lambda J, N, L: lambda x, w: L.conv(x, w, (1, 1), "SAME"), (x, w)),
        "conv_grad": (lambda J, N, L: J.grad(
            lambda x, w: L.conv(x, w, (2, 1), "SAME").sum(), (0, 1)), (x, w)),
        "grouped_grad": (lambda J, N, L: J.grad(
            lambda x, w: L.conv_general_dilated(x, w, (2, 1), "SAME", None, (1, 2), dn,
                                                feature_group_count=2).sum(), (0, 1)),
            (xh, wh)),
        "batch_group_grad": (lambda J, N, L: J.grad(
            lambda x, w: (L.conv_general_dilated(x, w, (1, 1), "VALID",
                                                 batch_group_count=2) ** 2).sum(), (0, 1)),
            (np.ones((4, 3, 6, 6), np.float32), np.ones((4, 3, 3, 3), np.float32))),
        "conv_transpose": (lambda J, N, L: lambda x, w: L.conv_transpose(
            x, w, (2, 2), "SAME", transpose_kernel=True), (xh, np.ones((3, 3, 4, 6),
                                                                       np.float32))),
        "vmap_both": (lambda J, N, L: J.vmap(lambda x, w: L.conv(x, w, (1, 1), "SAME")),
                      (np.ones((5, 2, 3, 8, 8), np.float32),
                       np.ones((5, 4, 3, 3, 3), np.float32))),
        "vmap_lhs": (lambda J, N, L: J.vmap(lambda x, w: L.conv(x, w, (1, 1), "SAME"),
                                            (1, None)), (np.ones((2, 5, 3, 8, 8),
                                                                 np.float32), w)),
        "vmap_rhs_groups": (lambda J, N, L: J.vmap(
            lambda x, w: L.conv_general_dilated(x, w, (1, 1), "SAME",
                                                feature_group_count=3), (None, 2)),
            (np.ones((2, 6, 8, 8), np.float32), np.ones((6, 2, 5, 3, 3), np.float32))),
        "maxpool_grad": (lambda J, N, L: J.grad(lambda x: L.reduce_window(
            x, -N.inf, L.max, (1, 1, 2, 2), (1, 1, 2, 2), "VALID").sum()), (x,)),
        "minpool_jvp": (lambda J, N, L: lambda x: J.jvp(lambda x: L.reduce_window(
            x, N.inf, L.min, (1, 1, 3, 3), (1, 1, 2, 2), "SAME"), (x,), (x,)), (x,)),
        "sumpool_grad": (lambda J, N, L: J.grad(lambda x: L.reduce_window(
            x, 0., L.add, (1, 1, 3, 2), (1, 1, 2, 2), "SAME").sum()), (x,)),
        "pool_vmap": (lambda J, N, L: J.vmap(lambda x: L.reduce_window(
            x, -N.inf, L.max, (1, 2, 2), (1, 2, 2), "VALID"), 1), (x,)),
        "convolve": (lambda J, N, L: lambda a, b: N.convolve(a, b, "same"),
                     (np.ones(7, np.float32), np.ones(3, np.float32))),
        "correlate": (lambda J, N, L: lambda a, b: N.correlate(a, b, "full"),
                      (np.ones(4, np.float32), np.ones(6, np.float32))),
    }


@pytest.mark.parametrize("name", sorted(_jaxpr_cases()))
def test_jaxpr_vs_jax(name):
    rjax = pytest.importorskip("jax")
    build, args = _jaxpr_cases()[name]
    ours = str(jax.make_jaxpr(build(jax, jnp, lax))(*args))
    theirs = str(rjax.make_jaxpr(build(rjax, rjax.numpy, rjax.lax))(*args))
    assert ours == theirs


# ----------------------------------------------------------------------------- reduce_window

WINDOW_CASES = [
    ((2, 3, 8, 7), (1, 1, 2, 2), (1, 1, 2, 2), "VALID", None, None),
    ((2, 3, 8, 7), (1, 1, 3, 3), (1, 1, 2, 1), "SAME", None, None),
    ((2, 3, 8, 7), (1, 2, 3, 2), (1, 1, 1, 2), ((0, 0), (1, 0), (2, 1), (0, 1)),
     (1, 1, 2, 1), (1, 1, 1, 2)),
    ((9,), (4,), (2,), "SAME_LOWER", None, None),
    ((5, 6), (2, 3), (1, 1), ((-1, 2), (1, -1)), (2, 1), None),
    ((5, 6), (2, 3), (1, 2), ((-1, 1), (1, -1)), (2, 1), None),   # no all-padding window
]
OPS = {"add": (lax.add, np.add, 0.), "max": (lax.max, np.maximum, -np.inf),
       "min": (lax.min, np.minimum, np.inf), "mul": (lax.mul, np.multiply, 1.)}


def _rw(op, case, mod=lax, dtype=np.float32):
    _, wd, ws, pad, bd, wdil = case
    comp = getattr(mod, op)
    init = dtype(OPS[op][2])
    return lambda x: mod.reduce_window(x, init, comp, wd, ws, pad, bd, wdil)


@pytest.mark.parametrize("op", sorted(OPS))
@pytest.mark.parametrize("case", WINDOW_CASES, ids=[f"w{i}" for i in range(len(WINDOW_CASES))])
def test_reduce_window_vs_numpy_loop(op, case):
    shape, wd, ws, pad, bd, wdil = case
    x = _rand(*shape)
    n = len(shape)
    if isinstance(pad, str):
        eff = [(k - 1) * d + 1 for k, d in zip(wd, wdil or (1,) * n)]
        pad = lax.padtype_to_pads(shape, eff, ws, pad)
    want = reduce_window_reference(x, OPS[op][1], np.float32(OPS[op][2]), wd, ws, pad,
                                   bd or (1,) * n, wdil or (1,) * n)
    got = _rw(op, case)(x)
    assert got.shape == want.shape and got.dtype == np.float32
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(np.asarray(jax.jit(_rw(op, case))(x)), np.asarray(got),
                               rtol=1e-6)


@pytest.mark.parametrize("op", ["add", "max", "min"])
@pytest.mark.parametrize("case", WINDOW_CASES[:2] + WINDOW_CASES[3:], ids=str)
def test_reduce_window_vs_jax(op, case):
    rjax = pytest.importorskip("jax")
    x = _rand(*case[0])
    np.testing.assert_allclose(np.asarray(_rw(op, case)(x)),
                               np.asarray(_rw(op, case, rjax.lax)(x)), rtol=1e-5, atol=1e-5)
    if op != "add" and not isinstance(case[3], str) and min(min(p) for p in case[3]) < 0:
        return   # JAX's CPU select_and_scatter_add cannot slice negative padding
    g = jax.grad(lambda x: (_rw(op, case)(x) ** 2).sum())(x)
    rg = rjax.grad(lambda x: (_rw(op, case, rjax.lax)(x) ** 2).sum())(x)
    np.testing.assert_allclose(np.asarray(g), np.asarray(rg), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("op", sorted(OPS))
@pytest.mark.parametrize("case", [WINDOW_CASES[i] for i in (1, 3, 5)], ids=str)
def test_reduce_window_check_grads(op, case, x64):
    # distinct values keep max/min away from ties
    x = RNG.permutation(int(np.prod(case[0]))).reshape(case[0]) * 0.1 + 0.5
    check_grads(_rw(op, case, dtype=np.float64), (x,), order=2, modes=("fwd", "rev"))


def test_reduce_window_dilated_grads(x64):
    case = WINDOW_CASES[2]
    x = RNG.permutation(2 * 3 * 8 * 7).reshape(case[0]) * 0.1
    f = lambda op, c: _rw(op, c, dtype=np.float64)  # noqa: E731
    check_grads(f("add", case), (x,), order=2, modes=("fwd", "rev"))
    check_grads(f("max", case), (x,), order=1, modes=("fwd",))
    with pytest.raises(NotImplementedError, match="window dilation"):
        jax.grad(lambda x: f("max", case)(x).sum())(x)
    base_only = (case[0], case[1], case[2], case[3], case[4], None)
    check_grads(f("max", base_only), (x,), order=2, modes=("fwd", "rev"))
    check_grads(f("min", base_only), (x,), order=1, modes=("fwd", "rev"))


@pytest.mark.parametrize("op", sorted(OPS))
def test_reduce_window_vmap_vs_loop(op):
    case = ((3, 8, 7), (1, 3, 2), (1, 2, 2), "SAME", None, None)
    xb = _rand(4, 3, 8, 7)
    f = _rw(op, case)
    for ax in (0, 2):
        xa = np.moveaxis(xb, 0, ax)
        got = jax.vmap(f, ax)(xa)
        want = np.stack([np.asarray(f(np.take(xa, i, ax))) for i in range(4)])
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6)
    if op in ("max", "min"):
        g = jax.vmap(jax.grad(lambda x: (f(x) ** 2).sum()))(xb)
        want = np.stack([np.asarray(jax.grad(lambda x: (f(x) ** 2).sum())(xb[i]))
                         for i in range(4)])
        np.testing.assert_allclose(np.asarray(g), want, rtol=1e-6)


def test_reduce_window_misc():
    x = np.arange(10, dtype=np.float32)
    np.testing.assert_allclose(np.asarray(lax.reduce_window(x, np.float32(1), lax.mul, (2,))),
                               x[:-1] * x[1:])
    xi = np.arange(12, dtype=np.int32).reshape(3, 4)
    r = lax.reduce_window(xi, 0, lax.add, (2, 2), (1, 1), "SAME")
    assert r.dtype == np.int32 and r.shape == (3, 4)
    b = lax.reduce_window(xi > 5, False, lax.max, (2, 2), (1, 1), "VALID")
    assert b.dtype == np.bool_
    np.testing.assert_array_equal(np.asarray(b), [[False, True, True], [True, True, True]])
    # pytree operands: a windowed argmax by a pair reduction
    vals, idx = lax.reduce_window(
        (x, np.arange(10, dtype=np.int32)), (np.float32(-np.inf), np.int32(0)),
        lambda a, b: (lax.max(a[0], b[0]), lax.select(a[0] >= b[0], a[1], b[1])), (3,), (3,))
    np.testing.assert_array_equal(np.asarray(vals), [2, 5, 8])
    np.testing.assert_array_equal(np.asarray(idx), [2, 5, 8])
    with pytest.raises(TypeError, match="wrong number of window_dimensions"):
        lax.reduce_window(np.ones((4, 4)), 0., lax.add, (2,), (1,), "VALID")
    with pytest.raises(TypeError, match="strictly positive"):
        lax.reduce_window(np.ones((4, 4)), 0., lax.add, (0, 2), (1, 1), "VALID")
    with pytest.raises(TypeError, match="must have a number dtype, got bool"):
        lax.reduce_window(np.ones((4, 4), bool), False, lax.add, (2, 2), (1, 1), "VALID")
    with pytest.raises(TypeError, match="inconsistent dtypes for operands and init_values"):
        lax.reduce_window(np.ones((4, 4), np.float32), 1, lax.add, (2, 2), (1, 1), "VALID")


# ----------------------------------------------------------------------------- jnp

@pytest.mark.parametrize("name", ["convolve", "correlate"])
@pytest.mark.parametrize("mode", ["full", "same", "valid"])
def test_convolve_correlate(name, mode):
    for a, v in [(RNG.randn(7), RNG.randn(3)), (RNG.randn(3), RNG.randn(6)),
                 (np.arange(5), np.arange(3)),
                 (RNG.randn(5) + 1j * RNG.randn(5), RNG.randn(4) + 1j * RNG.randn(4))]:
        got = getattr(jnp, name)(a, v, mode)
        want = getattr(np, name)(a, v, mode)
        assert got.shape == want.shape
        assert got.dtype == (np.complex64 if np.iscomplexobj(want) else np.float32)
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-4, atol=1e-4)
    check_grads(lambda a, v: getattr(jnp, name)(a, v, mode),
                (RNG.randn(6).astype(np.float32), RNG.randn(3).astype(np.float32)), order=2,
                modes=("fwd", "rev"), atol=5e-2, rtol=5e-2)


# ----------------------------------------------------------------------------- stax

def _cnn(S):
    return S.serial(S.Conv(8, (3, 3), padding="SAME"), S.Relu, S.MaxPool((2, 2), (2, 2)),
                    S.Conv(16, (3, 3), strides=(2, 2)), S.Relu, S.AvgPool((2, 2)),
                    S.SumPool((2, 2), padding="SAME"), S.Flatten, S.Dense(10),
                    S.LogSoftmax)


def test_stax_cnn_vs_jax():
    rjax = pytest.importorskip("jax")
    from jax.example_libraries import stax as rstax
    init, apply = _cnn(stax)
    rinit, rapply = _cnn(rstax)
    shape = (4, 16, 16, 3)
    out, params = init(jax.random.PRNGKey(0), shape)
    rout, rparams = rinit(rjax.random.PRNGKey(0), shape)
    assert tuple(out) == tuple(int(d) for d in rout)
    leaves = jax.tree_util.tree_leaves(params)
    rleaves = rjax.tree_util.tree_leaves(rparams)
    assert [p.shape for p in leaves] == [p.shape for p in rleaves]
    for a, b in zip(leaves, rleaves):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-5, atol=1e-6)
    x = _rand(*shape)
    y = np.eye(10, dtype=np.float32)[[1, 2, 3, 4]]
    np.testing.assert_allclose(np.asarray(apply(params, x)), np.asarray(rapply(rparams, x)),
                               rtol=1e-4, atol=1e-5)
    g = jax.jit(jax.grad(lambda p, x: -(apply(p, x) * y).sum()))(params, x)
    rg = rjax.grad(lambda p, x: -(rapply(p, x) * y).sum())(rparams, x)
    for a, b in zip(jax.tree_util.tree_leaves(g), rjax.tree_util.tree_leaves(rg)):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-4, atol=1e-5)
    # per-example gradients through vmap agree with a loop
    pe = jax.vmap(jax.grad(lambda p, x: -(apply(p, x[None]) * y[:1]).sum()), (None, 0))(
        params, x)
    w0 = np.stack([np.asarray(jax.grad(lambda p: -(apply(p, x[i:i + 1]) * y[:1]).sum())(
        params)[0][0]) for i in range(4)])
    np.testing.assert_allclose(np.asarray(pe[0][0]), w0, rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("layer,shape", [
    (lambda S: S.ConvTranspose(4, (3, 3), strides=(2, 2), padding="SAME"), (2, 6, 7, 3)),
    (lambda S: S.ConvTranspose(4, (2, 3), strides=(1, 2), padding="VALID"), (2, 6, 7, 3)),
    (lambda S: S.Conv1DTranspose(4, (3,), strides=(2,), padding="VALID"), (2, 7, 3)),
    (lambda S: S.GeneralConv(("NCHW", "OIHW", "NCHW"), 5, (2, 2), (1, 2), "SAME"),
     (2, 3, 6, 7)),
    (lambda S: S.Conv(5, (3, 2), (2, 1), "VALID"), (2, 6, 7, 3)),
    (lambda S: S.MaxPool((3, 3), (1, 2), "SAME"), (2, 6, 7, 3)),
    (lambda S: S.AvgPool((2, 2), (2, 2), "SAME", spec="NCHW"), (2, 3, 5, 7)),
    (lambda S: S.AvgPool((3, 2), (1, 1), "SAME"), (2, 5, 7, 3)),
    (lambda S: S.SumPool((3,), (2,)), (2, 9, 3)),
], ids=["convT_same", "convT_valid", "conv1dT", "general_nchw", "conv", "maxpool",
        "avgpool_nchw", "avgpool", "sumpool1d"])
def test_stax_layers_vs_jax(layer, shape):
    rjax = pytest.importorskip("jax")
    from jax.example_libraries import stax as rstax
    init, apply = layer(stax)
    rinit, rapply = layer(rstax)
    out, params = init(jax.random.PRNGKey(1), shape)
    rout, rparams = rinit(rjax.random.PRNGKey(1), shape)
    assert tuple(out) == tuple(int(d) for d in rout)
    x = _rand(*shape)
    a, b = apply(params, x), rapply(rparams, x)
    assert a.shape == b.shape == tuple(out)
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-4, atol=1e-5)
