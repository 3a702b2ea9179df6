"""lax.conv_general_dilated_patches / conv_general_dilated_local (issue 20) against NumPy
patch extraction and a per-position loop, gradients by finite differences, JAX's jaxpr."""
import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import lax

rng = np.random.default_rng(0)
X = rng.standard_normal((2, 3, 5, 6)).astype(np.float32)   # NCHW


def np_patches(x, fh, fw, sh, sw):
    """VALID patches of NCHW ``x``: [N, C*fh*fw, OH, OW], channel-major then (h, w)."""
    n, c, h, w = x.shape
    oh, ow = (h - fh) // sh + 1, (w - fw) // sw + 1
    out = np.zeros((n, c * fh * fw, oh, ow), x.dtype)
    for i in range(oh):
        for j in range(ow):
            win = x[:, :, i * sh:i * sh + fh, j * sw:j * sw + fw]
            out[:, :, i, j] = win.reshape(n, -1)
    return out


def test_patches_valid_and_same():
    got = np.asarray(lax.conv_general_dilated_patches(X, (2, 3), (1, 2), "VALID"))
    np.testing.assert_array_equal(got, np_patches(X, 2, 3, 1, 2))
    same = np.asarray(lax.conv_general_dilated_patches(X, (2, 3), (1, 1), "SAME"))
    pad = np.pad(X, ((0, 0), (0, 0), (0, 1), (1, 1)))
    np.testing.assert_array_equal(same, np_patches(pad, 2, 3, 1, 1))
    nhwc = np.asarray(lax.conv_general_dilated_patches(
        X.transpose(0, 2, 3, 1), (2, 3), (1, 2), "VALID",
        dimension_numbers=("NHWC", "HWIO", "NHWC")))
    np.testing.assert_array_equal(nhwc.transpose(0, 3, 1, 2), np_patches(X, 2, 3, 1, 2))


def test_local_conv_matches_loop_and_gradient():
    w = rng.standard_normal((4, 3 * 2 * 3, 4, 2)).astype(np.float32)   # O, I, OH, OW
    out = np.asarray(lax.conv_general_dilated_local(X, w, (1, 2), "VALID", (2, 3)))
    p = np_patches(X, 2, 3, 1, 2)
    want = np.einsum("nipq,oipq->nopq", p.astype(np.float64), w)
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-5)

    def f(x):
        return jnp.sum(jnp.sin(lax.conv_general_dilated_local(x, w, (1, 2), "VALID", (2, 3))))
    g = np.asarray(jax.grad(f)(X))
    e = np.zeros_like(X)
    e[1, 2, 3, 4] = 1e-2
    fd = (float(f(X + e)) - float(f(X - e))) / 2e-2
    assert abs(g[1, 2, 3, 4] - fd) < 2e-2 * max(1.0, abs(fd))
    with pytest.raises(ValueError, match="Unsupported precision"):
        lax.conv_general_dilated_local(X, w, (1, 2), "VALID", (2, 3),
                                       precision=lax.DotAlgorithmPreset.F32_F32_F32)


def test_vs_jax():
    jr = pytest.importorskip("jax")
    for mod_a, mod_b in ((jax, jr),):
        a = mod_a.make_jaxpr(lambda x: mod_a.lax.conv_general_dilated_patches(
            x, (2,), (1,), "VALID"))(np.ones((1, 2, 3), np.float32))
        b = mod_b.make_jaxpr(lambda x: mod_b.lax.conv_general_dilated_patches(
            x, (2,), (1,), "VALID"))(np.ones((1, 2, 3), np.float32))
        assert str(a) == str(b)
    w = rng.standard_normal((4, 18, 5, 3)).astype(np.float32)
    np.testing.assert_allclose(
        lax.conv_general_dilated_local(X, w, (1, 2), "SAME", (2, 3)),
        jr.lax.conv_general_dilated_local(X, w, (1, 2), "SAME", (2, 3)), rtol=1e-5, atol=1e-5)
