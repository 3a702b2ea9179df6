"""``jnp.linspace``'s samples are JAX's bits: XLA:CPU computes ``start * (1 - t) + stop * t``
with ``t = iota * r`` (``r`` the rounded reciprocal of the divisor), reassociates
``stop * t`` to ``iota * (stop * r)`` and contracts that product with the add into one
fused multiply-add."""
import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp

CASES = [(0, 1, 50), (-3.3, 7.1, 101), (0.1, 0.9, 11), (1e-3, 5, 1000), (-1, 1, 64),
         (-7.7, 123.4, 333), (1e6, 1e6 + 3, 40), (5, 15, 6)]


def xla_linspace_f32(a, b, n, endpoint=True):
    """The float32 samples by XLA's formula; the fused multiply-add through float64 (exact
    product, one rounding of the sum there, then float32)."""
    f32 = np.float32
    div = n - 1 if endpoint else n
    a, b = f32(a), f32(b)
    r = f32(f32(1) / f32(div))
    io = np.arange(div, dtype=f32)
    lo_t = (a * (f32(1) - io * r)).astype(f32)
    out = (io.astype(np.float64) * np.float64(f32(b * r)) + lo_t).astype(f32)
    return np.concatenate([out, [b]]) if endpoint else out


@pytest.mark.parametrize("a,b,n", CASES)
@pytest.mark.parametrize("endpoint", [True, False])
def test_linspace_float32_is_xlas_formula(a, b, n, endpoint):
    want = xla_linspace_f32(a, b, n, endpoint)
    got = np.asarray(jnp.linspace(a, b, n, endpoint=endpoint))
    assert got.dtype == np.float32 and got.tobytes() == want.tobytes()
    traced = jax.jit(lambda a, b: jnp.linspace(a, b, n, endpoint=endpoint))
    assert np.asarray(traced(np.float32(a), np.float32(b))).tobytes() == want.tobytes()


def test_linspace_grad_and_retstep_unchanged():
    g = jax.grad(lambda a, b: jnp.linspace(a, b, 9).sum(), argnums=(0, 1))(1.0, 3.0)
    np.testing.assert_allclose([float(g[0]), float(g[1])], [4.5, 4.5], rtol=1e-6)
    out, step = jnp.linspace(0.0, 2.0, 5, retstep=True)
    assert float(step) == 0.5 and np.asarray(out).tolist() == [0, 0.5, 1, 1.5, 2]


@pytest.mark.parametrize("dtype", [None, "float16", "bfloat16"])
def test_linspace_matches_jax_bits(dtype):
    pytest.importorskip("jax")
    import jax.numpy as rjnp
    for a, b, n in CASES:
        for endpoint in (True, False):
            want = np.asarray(rjnp.linspace(a, b, n, endpoint=endpoint, dtype=dtype))
            got = np.asarray(jnp.linspace(a, b, n, endpoint=endpoint, dtype=dtype))
            if dtype == "float16":   # (XLA's float16 products: a few last-bit cases)
                assert (got != want).sum() <= 2, (a, b, n)
            else:
                assert got.tobytes() == want.tobytes(), (a, b, n, endpoint)
