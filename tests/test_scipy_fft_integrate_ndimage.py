"""jax.scipy.fft (dct, idct, dctn, idctn), jax.scipy.integrate.trapezoid and
jax.scipy.ndimage.map_coordinates.

Every case of CASES runs on jaxlite and, where it is installed, on JAX 0.10.2: same output
shapes, dtypes, weak types and values (or the same exception class). Without JAX: values vs
scipy.fft / scipy.integrate / scipy.ndimage (its grid-* modes are JAX's 'constant' and
'wrap'), gradients vs finite differences, jit vs eager, vmap vs a Python loop."""
import numpy as np
import pytest
import scipy.fft as sfft
import scipy.integrate as sint
import scipy.ndimage as snd

import jaxlite
import jaxlite.numpy as jnp
import jaxlite.scipy.fft as F
import jaxlite.scipy.integrate as I
import jaxlite.scipy.ndimage as N
from jaxlite._src.config import config
from jaxlite.test_util import check_grads
from jax_case_compare import close, compare, run_expr, same_public_api, under_x64

RS = np.random.RandomState(0)
V6 = RS.randn(6).astype(np.float32)
V7 = RS.randn(7).astype(np.float32)
M34 = RS.randn(3, 4).astype(np.float32)
T345 = RS.randn(3, 4, 5).astype(np.float32)
C45 = (RS.randn(4, 5) + 1j * RS.randn(4, 5)).astype(np.complex64)
I6 = np.arange(6, dtype=np.int32)
XS = np.cumsum(RS.rand(6)).astype(np.float32)
IMG = RS.randn(5, 6).astype(np.float32)
IMGI = (RS.rand(5, 6) * 100).astype(np.int32)
CR = RS.uniform(-2.5, 7.5, 12).astype(np.float32)
CC = RS.uniform(-2.5, 8.5, 12).astype(np.float32)
LINE = np.arange(1.0, 6.0, dtype=np.float32)
HALF = np.array([-0.5, 4.5, 0.5, 1.5, 2.5, -1.5, 5.5, -0.49, 4.49, -7.3, 13.1, 10.0],
                np.float32)
NAMES = {k: v for k, v in globals().items() if isinstance(v, np.ndarray)}

CASES = [
    # dct family
    "F.dct(V6)", "F.dct(V7)", "F.dct(V6, norm='ortho')", "F.dct(V6, norm='backward')",
    "F.dct(V7, norm='ortho')", "F.idct(V6)", "F.idct(V7)", "F.idct(V7, norm='ortho')",
    "F.dct(V6, norm='forward')", "F.dct(V6, norm='bad')", "F.idct(V6, norm='forward')",
    "F.dct(V6, type=1)", "F.dct(V6, type=3)", "F.idct(V6, type=4)", "F.dct(V6, type=5)",
    "F.dct(V6, type=3, norm='forward')", "F.dct(V6, n=4)", "F.dct(V6, n=9)", "F.idct(V6, n=9)",
    "F.dct(V6, n=0)", "F.dct(V6, n=-1)", "F.dct(V6, axis=1)", "F.dct(V6, axis=-2)",
    "F.dct(M34, axis=0)", "F.idct(M34, axis=0, norm='ortho')", "F.dct(T345, axis=1, n=3)",
    "F.dct(I6)", "F.dct(I6 > 2)", "F.dct(V6.astype(np.float16))", "F.idct(V6.astype(np.float16))",
    "F.dct(V6.astype(jnp.bfloat16))", "F.dct(C45)", "F.idct(C45, norm='ortho')",
    "F.dct(jnp.arange(6) * 1.0)", "F.dct([1.0, 2.0])", "F.dct(2.0)", "F.dct(jnp.asarray(2.0))",
    "F.dct(np.ones(0, np.float32))", "F.dct(np.ones(1, np.float32))",
    "F.idct(np.ones(1, np.float32))", "F.dct(np.ones((2, 1), np.float32), norm='ortho')",
    "F.dct(np.ones(2, np.float32))", "F.dctn(M34)", "F.dctn(M34, s=(2, 5))", "F.dctn(M34, s=(2,))",
    "F.dctn(M34, axes=(0,))", "F.dctn(M34, s=(2, 5), axes=(0,))", "F.dctn(M34, s=(2,), axes=(1,))",
    "F.dctn(M34, s=(2,), axes=(0, 1))", "F.dctn(M34, type=1)", "F.idctn(M34, type=3)",
    "F.dctn(M34, norm='forward')", "F.idctn(M34, norm='forward')", "F.dctn(M34, axes=(0, 0))",
    "F.dctn(M34, axes=(2,))", "F.dctn(M34, s=2)", "F.dctn(M34, axes=1)", "F.dctn(M34, axes=())",
    "F.dctn(2.0)", "F.dctn(2)", "F.dctn(np.float32(2))", "F.dctn(jnp.asarray(1.0))",
    "F.dctn(T345, axes=(2, 0))", "F.idctn(T345, axes=(2, 0), norm='ortho')",
    "F.idctn(T345, s=(3, 6))", "F.dctn(C45, norm='ortho')",
    "F.dctn(V6.astype(np.float16), axes=())", "F.dctn(I6, axes=())", "F.dctn(I6 > 2)",
    "F.idctn(M34, s=(5, 2), axes=(1, 0))", "F.dctn([[1.0, 2.0]])", "F.dctn(M34, type=2, s=(0, 3))",
    # trapezoid
    "I.trapezoid(V6)", "I.trapezoid(I6)", "I.trapezoid([1, 2, 3])", "I.trapezoid(3.0)",
    "I.trapezoid(jnp.asarray(3.0))", "I.trapezoid(jnp.arange(5) * 1.0)", "I.trapezoid(I6, dx=0.5)",
    "I.trapezoid(I6, dx=jnp.float32(0.5))", "I.trapezoid(V6, dx=jnp.arange(5.0))",
    "I.trapezoid(V6, x=XS)", "I.trapezoid(V6, x=np.arange(6) ** 2)",
    "I.trapezoid(V6, x=[1, 2, 3, 4, 5, 6])", "I.trapezoid(V6, x=XS[:5])",
    "I.trapezoid(M34, x=XS[:4])", "I.trapezoid(M34, x=XS[:3], axis=0)",
    "I.trapezoid(M34, x=np.cumsum(M34 ** 2, 0), axis=0)", "I.trapezoid(M34, axis=0)",
    "I.trapezoid(M34, axis=2)", "I.trapezoid(M34, axis=-3)",
    "I.trapezoid(np.ones((3, 0), np.float32))", "I.trapezoid(np.ones((3, 1), np.float32))",
    "I.trapezoid(M34.astype(np.float16))", "I.trapezoid(M34.astype(np.int8))",
    "I.trapezoid(M34.astype(np.int8), dx=2)", "I.trapezoid(C45)", "I.trapezoid(M34 > 0)",
    "I.trapezoid(M34.astype(np.float16), x=I6[:4])",
    "I.trapezoid(M34.astype(np.float16), x=XS[:4])",
    "I.trapezoid(M34.astype(np.float16), dx=jnp.float32(1))",
    "I.trapezoid(M34, x=np.ones((2, 4), np.float32))",
    "I.trapezoid(M34, x=np.ones((1, 4), np.float32))",
    "I.trapezoid(M34, x=np.ones((3, 1, 4), np.float32))",
    "I.trapezoid(M34, x=np.ones((4, 3, 4), np.float32))", "I.trapezoid(T345, x=XS[:4], axis=1)",
    "I.trapezoid(T345, x=np.cumsum(T345 ** 2, 1), axis=-2)",
    # map_coordinates
    "N.map_coordinates(IMG, [CR, CC], order=0)", "N.map_coordinates(IMG, [CR, CC], order=1)",
    "N.map_coordinates(IMG, [CR, CC], 1, mode='nearest')",
    "N.map_coordinates(IMG, [CR, CC], 0, mode='nearest')",
    "N.map_coordinates(IMG, [CR, CC], 1, mode='wrap')",
    "N.map_coordinates(IMG, [CR, CC], 0, mode='wrap')",
    "N.map_coordinates(IMG, [CR, CC], 1, mode='mirror')",
    "N.map_coordinates(IMG, [CR, CC], 0, mode='mirror')",
    "N.map_coordinates(IMG, [CR, CC], 1, mode='reflect')",
    "N.map_coordinates(IMG, [CR, CC], 0, mode='reflect')",
    "N.map_coordinates(IMG, [CR, CC], 1, mode='grid-wrap')",
    "N.map_coordinates(IMG, [CR, CC], 1, mode='bad')", "N.map_coordinates(IMG, [CR, CC], 2)",
    "N.map_coordinates(IMG, [CR, CC], 3, mode='bad')", "N.map_coordinates(IMG, [CR, CC], -1)",
    "N.map_coordinates(IMG, [CR, CC], 1.0)", "N.map_coordinates(IMG, [CR, CC], True)",
    "N.map_coordinates(IMG, [CR, CC], 1, cval=5.0)",
    "N.map_coordinates(IMG, [CR, CC], 1, 'constant', 2)",
    "N.map_coordinates(IMG, [CR, CC], 1, cval=np.nan)",
    "N.map_coordinates(IMG, [CR, CC], 1, cval=jnp.float32(5.0))",
    "N.map_coordinates(IMG, [CR], 1)", "N.map_coordinates(IMG, [CR, CC, CC], 1)",
    "N.map_coordinates(IMG, np.stack([CR, CC]), 1)", "N.map_coordinates(IMG, (CR, CC), 1)",
    "N.map_coordinates(IMG, [CR, CC[:5]], 1)", "N.map_coordinates(IMG, [CR, 1.0], 1)",
    "N.map_coordinates(IMG, [CR.reshape(3, 4), CC.reshape(3, 4)], 1)",
    "N.map_coordinates(IMG, [CR.reshape(3, 4), CC[:4]], 1)",
    "N.map_coordinates(IMG, [0.5, 1.0], 1)",
    "N.map_coordinates(IMG, [jnp.asarray(0.5), jnp.asarray(1.5)], 1)",
    "N.map_coordinates(IMGI, [CR, CC], 1)", "N.map_coordinates(IMGI, [CR, CC], 0)",
    "N.map_coordinates(IMGI, [CR, CC], 1, mode='reflect', cval=3.7)",
    "N.map_coordinates(IMGI.astype(np.int8), [CR, CC], 1)",
    "N.map_coordinates(-IMGI, [CR, CC], 1, mode='wrap')",
    "N.map_coordinates(IMGI.astype(np.uint8), [CR, CC], 1)",
    "N.map_coordinates(IMG.astype(np.float16), [CR, CC], 1)",
    "N.map_coordinates(IMG.astype(np.complex64), [CR, CC], 1)",
    "N.map_coordinates(IMG > 0, [CR, CC], 1)", "N.map_coordinates(IMG > 0, [CR, CC], 0)",
    "N.map_coordinates(jnp.arange(12.0).reshape(3, 4) * 1.0, [CR, CC], 1)",
    "N.map_coordinates(IMG, [CR.astype(np.float16), CC], 1)",
    "N.map_coordinates(IMG, [I6, I6[::-1]], 1)", "N.map_coordinates(IMG, [I6, I6[::-1]], 0)",
    "N.map_coordinates(IMG, [CR * 1j, CC], 1)", "N.map_coordinates(IMG.tolist(), [CR, CC], 1)",
    "N.map_coordinates(jnp.asarray(3.0), [], 1)", "N.map_coordinates(LINE, [HALF], 0)",
    "N.map_coordinates(LINE, [HALF], 1)", "N.map_coordinates(LINE, [HALF], 0, mode='nearest')",
    "N.map_coordinates(LINE, [HALF], 0, mode='wrap')",
    "N.map_coordinates(LINE, [HALF], 1, mode='wrap')",
    "N.map_coordinates(LINE, [HALF], 0, mode='mirror')",
    "N.map_coordinates(LINE, [HALF], 1, mode='mirror')",
    "N.map_coordinates(LINE, [HALF], 0, mode='reflect')",
    "N.map_coordinates(LINE, [HALF], 1, mode='reflect')",
    "N.map_coordinates(LINE[:1], [HALF], 1, mode='mirror')",
    "N.map_coordinates(LINE[:1], [HALF], 1, mode='reflect')",
    "N.map_coordinates(LINE[:1], [HALF], 0, mode='wrap')",
    "N.map_coordinates(T345, [CR[:4], CC[:4], CR[4:8]], 1, mode='reflect')",
    "N.map_coordinates(T345, [CR[:4], CC[:4], CR[4:8]], 0, mode='wrap')",
    "N.map_coordinates(IMG, [CR, CC], order=1, mode='constant', cval=-1)",
]

TRANSFORM_CASES = [
    "jax.grad(lambda a: (F.dct(a, norm='ortho') ** 2).sum())(V7)",
    "jax.grad(lambda a: (F.idct(a) * V6).sum())(V6)", "jax.grad(lambda a: F.idctn(a).sum())(M34)",
    "jax.grad(lambda a: jnp.abs(F.dctn(a, s=(2, 6))).sum())(C45)", "jax.vmap(F.dct)(M34)",
    "jax.vmap(F.idctn, in_axes=2)(T345)", "jax.jit(F.dctn)(T345)",
    "jax.grad(lambda y, x: I.trapezoid(y, x), argnums=(0, 1))(V6, XS)",
    "jax.grad(lambda y: I.trapezoid(y, axis=0).sum())(M34)", "jax.vmap(I.trapezoid)(M34)",
    "jax.jit(I.trapezoid)(M34, XS[:4])",
    "jax.grad(lambda a: N.map_coordinates(a, [CR, CC], 1).sum())(IMG)",
    "jax.grad(lambda a: N.map_coordinates(a, [CR, CC], 0, mode='mirror').sum())(IMG)",
    "jax.grad(lambda r: N.map_coordinates(IMG, [r, CC], 1, mode='wrap').sum())(CR)",
    "jax.grad(lambda r: N.map_coordinates(IMG, [r, CC], 1, cval=2.0).sum())(CR)",
    "jax.vmap(lambda r: N.map_coordinates(IMG, [r, CC[:3]], 1))(CR.reshape(4, 3))",
    "jax.vmap(lambda a: N.map_coordinates(a, [CR, CC], 1, mode='reflect'))(np.stack([IMG, -IMG]))",
    "jax.jit(N.map_coordinates, static_argnums=(2, 3))(IMG, [CR, CC], 1, 'reflect')",
]

X64_CASES = [
    "F.dct(V6.astype(np.float64))", "F.dct(I6)", "F.dct(I6.astype(np.int64))", "F.idct(I6)",
    "F.dctn(I6.astype(np.int64))", "F.dctn(2.0)", "F.dctn(2)", "F.dct(V6.astype(np.float16))",
    "F.idctn(C45.astype(np.complex128), norm='ortho')", "I.trapezoid(I6)",
    "I.trapezoid(I6.astype(np.int64))", "I.trapezoid(V6, x=XS.astype(np.float64))",
    "I.trapezoid(I6, x=XS)", "I.trapezoid(V6.astype(np.float64), dx=jnp.float32(2))",
    "N.map_coordinates(IMG.astype(np.float64), [CR, CC], 1)",
    "N.map_coordinates(IMG, [CR.astype(np.float64), CC], 1)",
    "N.map_coordinates(IMGI.astype(np.int64), [CR, CC], 1)",
    "N.map_coordinates(IMGI, [CR, CC.astype(np.float64)], 0)",
]


def _env(f, i, n, mod_jnp):
    env = dict(NAMES)
    env.update(F=f, I=i, N=n, jnp=mod_jnp, np=np,
               jax=__import__("jax" if f.__name__.startswith("jax.") else "jaxlite"))
    return env


def _check_case(expr):
    pytest.importorskip("jax")
    import jax.numpy as rjnp
    import jax.scipy.fft as rf
    import jax.scipy.integrate as ri
    import jax.scipy.ndimage as rn
    want, _ = run_expr(expr, _env(rf, ri, rn, rjnp))
    got, _ = run_expr(expr, _env(F, I, N, jnp))
    compare(got, want, expr)


@pytest.mark.parametrize("expr", CASES)
def test_vs_jax(expr):
    _check_case(expr)


@pytest.mark.parametrize("expr", TRANSFORM_CASES)
def test_transforms_vs_jax(expr):
    _check_case(expr)


def test_names_and_signatures_vs_jax():
    pytest.importorskip("jax")
    import jax.scipy.fft as rf
    import jax.scipy.integrate as ri
    import jax.scipy.ndimage as rn
    for ours_mod, theirs_mod in ((F, rf), (I, ri), (N, rn)):
        same_public_api(ours_mod, theirs_mod)


@pytest.mark.parametrize("expr", X64_CASES)
def test_vs_jax_x64(expr):
    under_x64(_check_case, expr)


# ----------------------------------------------------------------------------- no JAX needed


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 8, 13])
@pytest.mark.parametrize("norm", [None, "backward", "ortho"])
def test_dct_vs_scipy(n, norm):
    with config.override("jax_enable_x64", True):
        x = RS.randn(3, n)
        close(F.dct(x, norm=norm), sfft.dct(x, norm=norm), 1e-12)
        close(F.idct(x, norm=norm), sfft.idct(x, norm=norm), 1e-12)
        close(F.idct(F.dct(x, norm=norm), norm=norm), x, 1e-12)
        close(F.dct(x.T, axis=0, n=n + 2, norm=norm), sfft.dct(x.T, axis=0, n=n + 2, norm=norm),
               1e-12)
        z = x + 1j * RS.randn(3, n)
        close(F.dct(z, norm=norm), sfft.dct(z, norm=norm), 1e-12)
        close(F.idct(z, norm=norm), sfft.idct(z, norm=norm), 1e-12)
    assert F.dct(x.astype(np.float32)).dtype == np.float32
    assert F.dct(np.arange(n)).dtype == np.float32


def test_dctn_vs_scipy():
    with config.override("jax_enable_x64", True):
        x = RS.randn(3, 4, 5)
        for kw in [{}, {"axes": (0, 2)}, {"s": (2, 6)}, {"s": (4, 3, 7), "norm": "ortho"},
                   {"axes": (1,), "norm": "ortho"}, {"axes": (-1, 0), "s": (6, 2)}]:
            close(F.dctn(x, **kw), sfft.dctn(x, **kw), 1e-12)
            close(F.idctn(x, **kw), sfft.idctn(x, **kw), 1e-12)
    with pytest.raises(NotImplementedError, match="Only DCT type 2"):
        F.dctn(x, type=1)
    with pytest.raises(ValueError, match="norm='forward' is not implemented"):
        F.idct(x, norm="forward")
    with pytest.raises(ValueError, match="repeated axis"):
        F.dctn(x, axes=(1, 1))
    with pytest.raises(TypeError, match="ndarray or scalar"):
        F.dct([1.0, 2.0])


def test_dct_grad_jit_vmap():
    with config.override("jax_enable_x64", True):
        x = RS.randn(7)
        for norm in (None, "ortho"):
            check_grads(lambda v: F.dct(v, norm=norm), (x,), order=2, modes=("fwd", "rev"))
            check_grads(lambda v: F.idct(v, norm=norm), (x,), order=2, modes=("fwd", "rev"))
        check_grads(lambda v: F.dctn(v, s=(3, 5)), (RS.randn(4, 4),), order=1,
                    modes=("fwd", "rev"))
    batch = RS.randn(4, 6).astype(np.float32)
    close(jaxlite.vmap(F.dct)(batch), np.stack([np.asarray(F.dct(r)) for r in batch]))
    close(jaxlite.vmap(F.idct, in_axes=1, out_axes=1)(batch), F.idct(batch, axis=0))
    close(jaxlite.jit(F.dctn)(batch), F.dctn(batch))


def test_trapezoid_vs_scipy():
    with config.override("jax_enable_x64", True):
        y = RS.randn(3, 6)
        x = np.cumsum(RS.rand(6))
        close(I.trapezoid(y), sint.trapezoid(y), 1e-12)
        close(I.trapezoid(y, x), sint.trapezoid(y, x), 1e-12)
        close(I.trapezoid(y, dx=0.25, axis=0), sint.trapezoid(y, dx=0.25, axis=0), 1e-12)
        x2 = np.cumsum(RS.rand(3, 6), axis=0)
        close(I.trapezoid(y, x2, axis=0), sint.trapezoid(y, x2, axis=0), 1e-12)
        check_grads(lambda a, b: I.trapezoid(a, b), (y, x), order=2, modes=("fwd", "rev"))
    assert I.trapezoid(np.arange(5)).dtype == np.float32
    assert not I.trapezoid(jnp.arange(5) * 1.0).weak_type
    close(I.trapezoid(np.ones((3, 1))), np.zeros(3))
    with pytest.raises(IndexError):
        I.trapezoid(np.ones((3, 0)))
    with pytest.raises(ValueError):
        I.trapezoid(np.ones(3), axis=1)
    batch = RS.randn(4, 6).astype(np.float32)
    close(jaxlite.vmap(lambda r: I.trapezoid(r, XS))(batch), I.trapezoid(batch, XS))
    close(jaxlite.jit(I.trapezoid)(batch), I.trapezoid(batch))


# SciPy's names for JAX's modes, and (order 0) where the two round ties differently
_SCIPY_MODE = {"constant": "grid-constant", "nearest": "nearest", "wrap": "grid-wrap",
               "mirror": "mirror", "reflect": "reflect"}


@pytest.mark.parametrize("mode", list(_SCIPY_MODE))
@pytest.mark.parametrize("order", [0, 1])
def test_map_coordinates_vs_scipy(mode, order):
    rs = np.random.RandomState(3)
    img = rs.randn(5, 6, 4)
    coords = [rs.uniform(-6, 11, 40) for _ in range(3)]
    if order == 0:  # keep away from .5 ties, which SciPy rounds differently
        coords = [np.where(np.abs(c - np.round(c)) > 0.49, c + 0.1, c) for c in coords]
    with config.override("jax_enable_x64", True):
        got = N.map_coordinates(img, coords, order, mode=mode, cval=0.75)
    want = snd.map_coordinates(img, np.stack(coords), order=order, mode=_SCIPY_MODE[mode],
                               cval=0.75)
    close(got, want, 1e-12)


def test_map_coordinates_rounding_dtypes_errors():
    line = np.arange(1.0, 6.0, dtype=np.float32)
    # order 0 rounds half away from zero; out-of-range points give cval in 'constant' mode
    close(N.map_coordinates(line, [np.array([-0.5, 0.5, 1.5, 2.5, 4.49, 4.5])], 0),
           [0.0, 2.0, 3.0, 4.0, 5.0, 0.0])
    ints = np.arange(5, dtype=np.int32) * 10
    got = N.map_coordinates(ints, [np.array([0.05, 0.15, 0.25, 1.95])], 1)
    assert got.dtype == np.int32
    np.testing.assert_array_equal(np.asarray(got), [1, 2, 3, 20])    # 0.5 -> 1, 2.5 -> 3
    assert N.map_coordinates(line > 2, [np.array([2.4])], 1).dtype == np.bool_
    assert N.map_coordinates(line.astype(np.float16), [np.array([2.4])], 1).dtype == np.float16
    with pytest.raises(NotImplementedError, match="order<=1"):
        N.map_coordinates(line, [line], 3)
    with pytest.raises(NotImplementedError, match="does not yet support mode grid-wrap"):
        N.map_coordinates(line, [line], 1, mode="grid-wrap")
    with pytest.raises(ValueError, match="sequence of length input.ndim"):
        N.map_coordinates(line, [line, line], 1)
    with pytest.raises(ValueError, match="Non-hashable static arguments"):
        N.map_coordinates(line, [line], 1, cval=jnp.float32(1))
    with pytest.raises(TypeError):
        N.map_coordinates(line, [line * 1j], 1)


def test_map_coordinates_grad_jit_vmap():
    with config.override("jax_enable_x64", True):
        img = RS.randn(4, 5)
        # keep the coordinates away from grid lines, where linear interpolation has kinks
        coords = [RS.uniform(-1.4, 4.4, 9) for _ in range(2)]
        coords = [np.floor(c) + 0.2 + 0.6 * (c - np.floor(c)) for c in coords]
        for mode in _SCIPY_MODE:
            check_grads(lambda a, r, c: N.map_coordinates(a, [r, c], 1, mode=mode),
                        (img, coords[0], coords[1]), order=1, modes=("fwd", "rev"), eps=1e-4)
    img32 = RS.randn(3, 4, 5).astype(np.float32)
    pts = [CR[:6] * 0.5, CC[:6] * 0.6]
    got = jaxlite.vmap(lambda a: N.map_coordinates(a, pts, 1, mode="wrap"))(img32)
    close(got, np.stack([np.asarray(N.map_coordinates(a, pts, 1, mode="wrap")) for a in img32]))
    rows = np.stack([pts[0]] * 2)
    got = jaxlite.vmap(lambda r: N.map_coordinates(img32[0], [r, pts[1]], 1))(rows)
    close(got, np.stack([np.asarray(N.map_coordinates(img32[0], pts, 1))] * 2))
    jitted = jaxlite.jit(lambda a, r, c: N.map_coordinates(a, [r, c], 0, mode="mirror"))
    close(jitted(img32[0], *pts), N.map_coordinates(img32[0], pts, 0, mode="mirror"))
