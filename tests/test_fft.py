"""jnp.fft / lax.fft: values and dtypes vs NumPy (and JAX), jit vs eager, gradients
(check_grads fwd/rev, orders 1-2), vmap vs a loop, jaxprs vs JAX."""
import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import lax
from jaxlite.test_util import check_grads

RNG = np.random.RandomState(0)
XR = RNG.randn(3, 4, 6).astype(np.float32)
XC = (RNG.randn(3, 4, 6) + 1j * RNG.randn(3, 4, 6)).astype(np.complex64)
X5 = RNG.randn(2, 3, 2, 3, 2).astype(np.float32)

CASES = [
    ("fft", XC, {}), ("fft", XR, {"n": 8, "axis": 0}), ("fft", XR, {"n": 3, "norm": "ortho"}),
    ("ifft", XC, {"axis": 1}), ("ifft", XC, {"norm": "forward"}),
    ("rfft", XR, {}), ("rfft", XR, {"n": 7, "axis": 1, "norm": "ortho"}),
    ("irfft", XC, {}), ("irfft", XC, {"n": 9, "axis": 0}), ("irfft", XC, {"norm": "forward"}),
    ("hfft", XC, {}), ("ihfft", XR, {"n": 5}),
    ("fft2", XC, {}), ("fft2", XR, {"s": (5, 3), "axes": (0, 2)}), ("ifft2", XC, {}),
    ("rfft2", XR, {}), ("irfft2", XC, {"s": (4, 10)}),
    ("fftn", XC, {}), ("fftn", X5, {}), ("ifftn", X5, {"axes": (0, 1, 2, 4)}),
    ("rfftn", XR, {"axes": (2, 0)}), ("rfftn", X5, {}), ("irfftn", X5, {}),
    ("irfftn", XC, {"s": (3, 4, 8), "norm": "ortho"}),
    ("fftshift", XR, {}), ("fftshift", XR, {"axes": 1}), ("ifftshift", XR, {"axes": (0, 2)}),
]


@pytest.mark.parametrize("name,x,kw", CASES, ids=[f"{c[0]}{i}" for i, c in enumerate(CASES)])
def test_values_vs_numpy(name, x, kw):
    got = getattr(jnp.fft, name)(x, **kw)
    want = getattr(np.fft, name)(x, **kw)
    assert got.shape == want.shape
    if name.endswith("shift"):
        assert got.dtype == x.dtype
    else:
        assert got.dtype == (np.float32 if np.isrealobj(want) else np.complex64)
    np.testing.assert_allclose(np.asarray(got), want, rtol=2e-4, atol=2e-4 * np.abs(want).max())
    jitted = jax.jit(lambda a: getattr(jnp.fft, name)(a, **kw))(x)
    np.testing.assert_allclose(np.asarray(jitted), np.asarray(got), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("name,x,kw", CASES, ids=[f"{c[0]}{i}" for i, c in enumerate(CASES)])
def test_vs_jax(name, x, kw):
    rjax = pytest.importorskip("jax")
    got = getattr(jnp.fft, name)(x, **kw)
    want = getattr(rjax.numpy.fft, name)(x, **kw)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=2e-4,
                               atol=2e-4 * (np.abs(np.asarray(want)).max() + 1))


def test_x64_dtypes(x64):
    x = RNG.randn(8)
    assert jnp.fft.fft(x).dtype == np.complex128
    assert jnp.fft.rfft(x).dtype == np.complex128
    assert jnp.fft.irfft(jnp.fft.rfft(x)).dtype == np.float64
    assert jnp.fft.fft(x.astype(np.float32)).dtype == np.complex64
    assert jnp.fft.fft(np.arange(4)).dtype == np.complex128
    np.testing.assert_allclose(np.asarray(jnp.fft.fft(x)), np.fft.fft(x), rtol=1e-12,
                               atol=1e-12)
    assert jnp.fft.fftfreq(4).dtype == np.float64


def test_int_input_and_freqs():
    assert jnp.fft.fft(np.arange(4)).dtype == np.complex64
    assert jnp.fft.rfft(np.arange(4, dtype=np.int32)).dtype == np.complex64
    for n, d in [(5, 1.0), (6, 0.5), (1, 2.0)]:
        np.testing.assert_allclose(np.asarray(jnp.fft.fftfreq(n, d)), np.fft.fftfreq(n, d),
                                   rtol=1e-6)
        np.testing.assert_allclose(np.asarray(jnp.fft.rfftfreq(n, d)), np.fft.rfftfreq(n, d),
                                   rtol=1e-6)
    assert jnp.fft.fftfreq(4).dtype == np.float32
    assert jnp.fft.fftfreq(4, dtype=np.int32).dtype == np.int32


def test_errors():
    with pytest.raises(ValueError, match="multiple axes"):
        jnp.fft.fft(XC, axis=(0, 1))
    with pytest.raises(ValueError, match="only supports 2 axes"):
        jnp.fft.fft2(XC, axes=(0,))
    with pytest.raises(ValueError, match="repeated axes"):
        jnp.fft.fftn(XC, axes=(0, 0))
    with pytest.raises(ValueError, match="Shape should be positive"):
        jnp.fft.fft(XC, n=0)
    with pytest.raises(ValueError, match="Invalid norm"):
        jnp.fft.fft(XC, norm="bad")
    with pytest.raises(ValueError, match="only real valued"):
        lax.fft(XC, "rfft", (6,))
    with pytest.raises(ValueError, match="Unknown FFT type"):
        lax.fft(XC, "dct", (6,))
    with pytest.raises(TypeError, match="requires ndarray"):
        jnp.fft.fft([1.0, 2.0])
    with pytest.raises(ValueError, match="only takes an int"):
        jnp.fft.fftfreq([4])


def test_lax_fft_types():
    assert lax.FftType.RFFT == 2
    out = lax.fft(XR, lax.FftType.RFFT, (4, 6))
    np.testing.assert_allclose(np.asarray(out), np.fft.rfft2(XR), rtol=1e-4, atol=1e-4)
    assert lax.fft(XR, "FFT", ()).dtype == np.complex64
    assert lax.fft_p.name == "fft"


GRAD_CASES = [
    ("fft", lambda x: jnp.fft.fft(x), XC[0]),
    ("ifft", lambda x: jnp.fft.ifft(x, axis=0), XC[0]),
    ("fft2", lambda x: jnp.fft.fft2(x), XC[0]),
    ("rfft_even", lambda x: jnp.fft.rfft(x), XR[0]),
    ("rfft_odd", lambda x: jnp.fft.rfft(x, n=5), XR[0]),
    ("rfft2", lambda x: jnp.fft.rfft2(x), XR[0]),
    ("irfft_even", lambda x: jnp.fft.irfft(x), XC[0]),
    ("irfft_odd", lambda x: jnp.fft.irfft(x, n=7), XC[0]),
    ("irfft2", lambda x: jnp.fft.irfft2(x), XC[0]),
    ("rfftn3", lambda x: jnp.fft.rfftn(x), XR),
    ("hfft", lambda x: jnp.fft.hfft(x), XC[0]),
]


@pytest.mark.parametrize("name,f,x", GRAD_CASES, ids=[c[0] for c in GRAD_CASES])
def test_check_grads(name, f, x):
    x64 = x.astype(np.complex128 if np.iscomplexobj(x) else np.float64)
    from jaxlite._src.config import config
    with config.override("jax_enable_x64", True):
        check_grads(f, (x64,), order=2, modes=("fwd", "rev"))


@pytest.mark.parametrize("name,f,x", GRAD_CASES[:9], ids=[c[0] for c in GRAD_CASES[:9]])
def test_grad_vs_jax(name, f, x):
    rjax = pytest.importorskip("jax")
    import jax.numpy as rjnp
    import types

    def loss(m, ad):
        return lambda a: (m.abs(f_of(m)(a)) ** 2).sum() + f_of(m)(a).real.sum()
    # rebuild the same function on JAX by swapping the module
    src = {"fft": "fft", "ifft": "ifft"}
    del src, types, loss

    def f_of(m):
        return lambda a: eval(_SRC[name], {"m": m, "a": a})
    ours = jax.grad(lambda a: (jnp.abs(f_of(jnp)(a)) ** 2).sum() + f_of(jnp)(a).real.sum())(x)
    theirs = rjax.grad(lambda a: (rjnp.abs(f_of(rjnp)(a)) ** 2).sum() +
                       f_of(rjnp)(a).real.sum())(x)
    assert ours.dtype == theirs.dtype
    np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=1e-4, atol=1e-3)


_SRC = {"fft": "m.fft.fft(a)", "ifft": "m.fft.ifft(a, axis=0)", "fft2": "m.fft.fft2(a)",
        "rfft_even": "m.fft.rfft(a)", "rfft_odd": "m.fft.rfft(a, n=5)",
        "rfft2": "m.fft.rfft2(a)", "irfft_even": "m.fft.irfft(a)",
        "irfft_odd": "m.fft.irfft(a, n=7)", "irfft2": "m.fft.irfft2(a)"}


@pytest.mark.parametrize("name", ["fft", "rfft", "irfft", "fft2", "irfftn"])
def test_vmap_vs_loop(name):
    x = XR if name.startswith("rfft") else XC
    f = getattr(jnp.fft, name)
    for axis in (0, 1, 2):
        got = jax.vmap(f, in_axes=axis)(x)
        want = np.stack([np.asarray(f(np.take(x, i, axis=axis)))
                         for i in range(x.shape[axis])])
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-5)


def test_vmap_lax_fft_batch_dim_moved():
    f = lambda a: lax.fft(a, "fft", (3,))  # noqa: E731
    got = jax.vmap(f, in_axes=2, out_axes=1)(XC[:, :3, :])
    want = np.stack([np.fft.fft(XC[:, :3, i]) for i in range(6)], 1)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-5)


JAXPR_CASES = {
    "rfft": (lambda m: m.fft.rfft, XR[0, 0]),
    "fft2": (lambda m: m.fft.fft2, XR[0]),
    "irfft": (lambda m: m.fft.irfft, XC[0, 0]),
    "fftn5": (lambda m: m.fft.fftn, X5),
    "fft_n_axis": (lambda m: (lambda a: m.fft.fft(a, n=8, axis=0)), XC),
    "grad_rfft": (lambda m: None, XR[0, 0]),
    "grad_irfft": (lambda m: None, XC[0, 0]),
    "vmap_fft": (lambda m: None, XC),
}


@pytest.mark.parametrize("name", list(JAXPR_CASES))
def test_jaxpr_vs_jax(name):
    rjax = pytest.importorskip("jax")
    import jax.numpy as rjnp
    mk, x = JAXPR_CASES[name]

    def build(j, m):
        if name == "grad_rfft":
            return j.grad(lambda a: m.fft.rfft(a).real.sum())
        if name == "grad_irfft":
            return j.grad(lambda a: m.fft.irfft(a).sum())
        if name == "vmap_fft":
            return j.vmap(m.fft.fft, in_axes=1)
        return mk(m)
    if name == "grad_irfft":
        pytest.skip("needs grad w.r.t. complex input with real output (holomorphic=False)")
    ours = str(jax.make_jaxpr(build(jax, jnp))(x))
    theirs = str(rjax.make_jaxpr(build(rjax, rjnp))(x))
    if name == "grad_rfft":  # JAX folds the zero imaginary part of the seed into a literal;
        # compare the transpose rule's program
        ours = _rename(ours[ours.index("name=_rfft_transpose"):])
        theirs = _rename(theirs[theirs.index("name=_rfft_transpose"):])
    assert ours == theirs


def _rename(text):
    import re
    names = {}
    order = iter("abcdefghijklmnopqrstuvwxyz")

    def sub(m):
        v = m.group(0)
        if v not in names:
            names[v] = next(order)
        return names[v]
    return re.sub(r"\b[a-z]\b(?=[:\s\],)]|$)", sub, text)
