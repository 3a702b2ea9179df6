"""jax.image: resize / scale_and_translate / ResizeMethod vs direct NumPy evaluations of the
resampling definitions, jit/vmap/grad, dtypes, errors, and real JAX where installed."""
import numpy as np
import pytest

import jaxlite
import jaxlite.image as image
import jaxlite.numpy as jnp
from jaxlite.image import ResizeMethod

METHODS = ["linear", "cubic", "cubic-pytorch", "lanczos3", "lanczos5", "area"]


def _kernel(name, x):
    x = np.abs(x)
    if name == "linear":
        return np.maximum(0, 1 - x)
    if name in ("cubic", "cubic-pytorch"):
        a = -0.5 if name == "cubic" else -0.75
        return np.where(x <= 1, (a + 2) * x ** 3 - (a + 3) * x ** 2 + 1,
                        np.where(x < 2, a * x ** 3 - 5 * a * x ** 2 + 8 * a * x - 4 * a, 0))
    r = 3 if name == "lanczos3" else 5
    return np.where(x < r, np.sinc(x) * np.sinc(x / r), 0)


def _reference_1d(x, n_out, scale, trans, name, antialias):
    """Direct loop over output pixels: normalised kernel weights at the sample point."""
    n_in = len(x)
    out = np.zeros(n_out)
    for j in range(n_out):
        s = (j + 0.5 - trans) / scale
        if not 0 <= s <= n_in:
            continue
        centres = np.arange(n_in) + 0.5
        if name == "area":
            lo = np.maximum(centres - 0.5, s - 0.5 / scale)
            hi = np.minimum(centres + 0.5, s + 0.5 / scale)
            w = np.maximum(hi - lo, 0)
        else:
            width = max(1 / scale, 1) if antialias else 1.0
            k = "cubic" if (name == "cubic-pytorch" and antialias) else name
            w = _kernel(k, (centres - s) / width)
        out[j] = w @ x / w.sum() if abs(w.sum()) > 1e-12 else 0.0
    return out


@pytest.mark.parametrize("name", METHODS)
@pytest.mark.parametrize("antialias", [True, False])
def test_scale_and_translate_vs_definition(x64, name, antialias):
    if name == "cubic-pytorch" and not antialias:
        pytest.skip("edge-padded variant: test_cubic_pytorch_no_antialias")
    rng = np.random.RandomState(0)
    for n_in, n_out, s, t in [(7, 5, 0.7, 0.3), (5, 9, 1.7, -0.6), (6, 6, 1.0, 2.5),
                              (8, 4, 0.4, 1.2), (4, 10, 3.0, -4.0), (9, 3, 1 / 3, 0.0)]:
        x = rng.randn(n_in)
        got = image.scale_and_translate(jnp.asarray(x), (n_out,), (0,), jnp.array([s]),
                                        jnp.array([t]), name, antialias=antialias)
        np.testing.assert_allclose(got, _reference_1d(x, n_out, s, t, name, antialias),
                                   atol=1e-12)


def test_cubic_pytorch_no_antialias(x64):
    """PyTorch's bicubic (align_corners=False): 4 taps around (j + 0.5) / s - 0.5 with
    clamped indices and Keys weights (a = -0.75)."""
    rng = np.random.RandomState(1)
    for n_in, n_out in [(5, 11), (8, 3), (4, 4), (6, 13)]:
        x = rng.randn(n_in)
        ref = np.zeros(n_out)
        for j in range(n_out):
            pos = (j + 0.5) * n_in / n_out - 0.5
            base = np.floor(pos)
            for off in (-1, 0, 1, 2):
                i = int(np.clip(base + off, 0, n_in - 1))
                ref[j] += _kernel("cubic-pytorch", pos - base - off) * x[i]
        got = image.resize(jnp.asarray(x), (n_out,), "bicubic-pytorch", antialias=False)
        np.testing.assert_allclose(got, ref, atol=1e-12)


def test_resize_special_cases(x64):
    rng = np.random.RandomState(2)
    x = rng.randn(6, 8)
    # area downsampling by 2 is the 2x2 block mean
    np.testing.assert_allclose(image.resize(jnp.asarray(x), (3, 4), "area"),
                               x.reshape(3, 2, 4, 2).mean((1, 3)), atol=1e-12)
    # linear upsampling without antialias is half-pixel np.interp (edges clamped)
    y = image.resize(jnp.asarray(x[0]), (19,), "linear", antialias=False)
    pos = (np.arange(19) + 0.5) * 8 / 19 - 0.5
    np.testing.assert_allclose(y, np.interp(pos, np.arange(8), x[0]), atol=1e-12)
    # nearest picks floor((j + 0.5) * in / out) and keeps the dtype
    xi = np.arange(35, dtype=np.int32).reshape(5, 7)
    got = image.resize(jnp.asarray(xi), (3, 10), ResizeMethod.NEAREST)
    r = np.floor((np.arange(3) + 0.5) * 5 / 3).astype(int)
    c = np.floor((np.arange(10) + 0.5) * 7 / 10).astype(int)
    np.testing.assert_array_equal(got, xi[r][:, c])
    assert got.dtype == np.int32
    # same shape: a no-op in a float dtype
    assert image.resize(jnp.asarray(xi), (5, 7), "linear").dtype == np.float64
    # constant images stay constant whatever the method
    for m in METHODS:
        np.testing.assert_allclose(image.resize(jnp.ones((5, 4)), (3, 11), m), 1, rtol=1e-6)


def test_resize_method_enum():
    assert [m.name for m in ResizeMethod] == ["NEAREST", "LINEAR", "LANCZOS3", "LANCZOS5",
                                              "CUBIC", "CUBIC_PYTORCH", "AREA"]
    assert [m.value for m in ResizeMethod] == list(range(7))
    assert ResizeMethod.from_string("trilinear") is ResizeMethod.LINEAR
    assert ResizeMethod.from_string("bicubic-pytorch") is ResizeMethod.CUBIC_PYTORCH
    with pytest.raises(ValueError, match='Unknown resize method "Linear"'):
        ResizeMethod.from_string("Linear")


def test_errors():
    x = jnp.ones((3, 4))
    with pytest.raises(ValueError, match="shape must have length equal"):
        image.resize(x, (2,), "linear")
    with pytest.raises(ValueError, match="Unknown resize method"):
        image.resize(x, (2, 3), "foo")
    with pytest.raises(ValueError, match="Nearest neighbor resampling is not"):
        image.scale_and_translate(x, (2, 3), (0, 1), jnp.ones(2), jnp.zeros(2), "nearest")
    with pytest.raises(AssertionError):
        image.scale_and_translate(x, (2, 3), (0,), jnp.ones(2), jnp.zeros(2), "linear")


def test_dtypes_jit_vmap_grad():
    x = jnp.asarray(np.random.RandomState(3).randn(2, 5, 6, 3).astype(np.float32))
    assert image.resize(x.astype(jnp.int32), (2, 3, 9, 3), "linear").dtype == np.float32
    assert image.resize(x.astype(jnp.bfloat16), (2, 3, 9, 3), "cubic").dtype == jnp.bfloat16
    f = jaxlite.jit(lambda x, s, t: image.scale_and_translate(x, (2, 4, 7, 3), (1, 2), s, t,
                                                              "lanczos3"))
    s, t = jnp.array([0.8, 1.2]), jnp.array([0.3, -0.4])
    np.testing.assert_allclose(
        f(x, s, t), image.scale_and_translate(x, (2, 4, 7, 3), (1, 2), s, t, "lanczos3"),
        rtol=1e-5, atol=1e-6)
    v = jaxlite.vmap(lambda im: image.resize(im, (3, 8, 3), "linear"))(x)
    np.testing.assert_allclose(v, image.resize(x, (2, 3, 8, 3), "linear"), atol=1e-6)
    # the map is linear: its gradient is the transposed resampling of the cotangent
    ct = jnp.asarray(np.random.RandomState(4).randn(2, 3, 9, 3).astype(np.float32))
    g = jaxlite.grad(lambda im: jnp.sum(image.resize(im, (2, 3, 9, 3), "cubic") * ct))(x)
    probe = jnp.asarray(np.random.RandomState(5).randn(*x.shape).astype(np.float32))
    lhs = jnp.sum(image.resize(probe, (2, 3, 9, 3), "cubic") * ct)
    np.testing.assert_allclose(jnp.sum(g * probe), lhs, rtol=1e-4)
    # derivative with respect to the scale, against a central difference
    with jaxlite.enable_x64():
        x64_ = x.astype(jnp.float64)

        def h(sc):
            return jnp.sum(image.scale_and_translate(x64_, (2, 4, 7, 3), (1, 2), sc,
                                                     jnp.array([0.3, -0.4]), "cubic") ** 2)
        sc = jnp.array([0.8, 1.2])
        gs = jaxlite.grad(h)(sc)
        eps = 1e-6
        fd = [(h(sc.at[i].add(eps)) - h(sc.at[i].add(-eps))) / (2 * eps) for i in range(2)]
        np.testing.assert_allclose(gs, fd, rtol=1e-6)


def test_image_vs_jax():
    jax = pytest.importorskip("jax")
    import jax.image as jim
    rng = np.random.RandomState(6)
    x = rng.randn(2, 7, 5, 3).astype(np.float32)
    for m in METHODS + ["nearest"]:
        for aa in (True, False):
            # rows downsampled 7 -> 3, columns upsampled 5 -> 11
            a = jim.resize(x, (2, 3, 11, 3), m, antialias=aa)
            b = image.resize(x, (2, 3, 11, 3), m, antialias=aa)
            assert a.dtype == b.dtype and a.shape == b.shape
            np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-5, err_msg=m)
        if m == "nearest":
            continue
        a = jim.scale_and_translate(x, (2, 6, 6, 3), (1, 2), np.array([0.7, 1.6]),
                                    np.array([-0.4, 0.9]), m)
        b = image.scale_and_translate(x, (2, 6, 6, 3), (1, 2), jnp.array([0.7, 1.6]),
                                      jnp.array([-0.4, 0.9]), m)
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-5, err_msg=m)
    for dt in (np.int32, np.uint8, jax.numpy.bfloat16, np.float16):
        xd = (x * 10).astype(dt)
        for m in ("nearest", "linear"):
            a, b = jim.resize(xd, (2, 3, 9, 3), m), image.resize(xd, (2, 3, 9, 3), m)
            assert a.dtype == b.dtype
            np.testing.assert_allclose(np.asarray(b, np.float32), np.asarray(a, np.float32),
                                       rtol=1e-2, atol=1e-2)
    # out-of-range samples of the edge-padded PyTorch cubic
    xs = np.arange(1.0, 7.0, dtype=np.float32)
    for t in (-8.9, -9.0, 3.9, 4.0, 2.5):
        a = jim.scale_and_translate(xs, (3,), (0,), np.array([1.0]), np.array([t]),
                                    "cubic-pytorch", antialias=False)
        b = image.scale_and_translate(xs, (3,), (0,), jnp.array([1.0]), jnp.array([t]),
                                      "cubic-pytorch", antialias=False)
        np.testing.assert_allclose(b, a, rtol=1e-6, atol=1e-6)


def test_public_names_vs_jax():
    pytest.importorskip("jax")
    import jax.image as jim
    assert ({n for n in dir(jim) if not n.startswith("_")}
            == {n for n in dir(image) if not n.startswith("_")})
    assert [m.name for m in jim.ResizeMethod] == [m.name for m in ResizeMethod]
    assert [m.value for m in jim.ResizeMethod] == [m.value for m in ResizeMethod]
