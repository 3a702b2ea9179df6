"""The matrix-valued samplers of ``jax.random``: multivariate_normal (mean plus a factor of
the covariance times a standard normal draw) and orthogonal (Haar-distributed, from the QR
decomposition of a Gaussian matrix), on the normal draws of ``samplers.py``."""
from __future__ import annotations

import numpy as np

from jaxlite._src.api.sharding_types import with_out_sharding
from jaxlite._src.config import numpy_rank_promotion
from jaxlite._src.core import dtypes
from jaxlite._src.numpy import namespace as jnp
from jaxlite._src.random.keys import check_prng_key
from jaxlite._src.random.samplers import (_float_dtype_check, canonicalize_shape, check_shape,
                                          normal_typed, user_dtype)

__all__ = ["multivariate_normal", "orthogonal"]


def _check_mvn_args(mean, cov):
    if mean.ndim < 1:
        raise ValueError("multivariate_normal requires mean.ndim >= 1, got mean.ndim == "
                         f"{mean.ndim}")
    if cov.ndim < 2:
        raise ValueError("multivariate_normal requires cov.ndim >= 2, got cov.ndim == "
                         f"{cov.ndim}")
    n = mean.shape[-1]
    if tuple(cov.shape[-2:]) != (n, n):
        raise ValueError(f"multivariate_normal requires cov.shape == (..., n, n) for n={n}, "
                         f"but got cov.shape == {tuple(cov.shape)}.")


def _cov_factor(cov, method):
    """A matrix A with A A^T = cov (Cholesky, or the square-root-scaled eigen/singular
    vectors)."""
    if method == "cholesky":
        return jnp.linalg.cholesky(cov)
    if method == "svd":
        vecs, vals, _ = jnp.linalg.svd(cov)
    else:
        vals, vecs = jnp.linalg.eigh(cov)
    return vecs * jnp.sqrt(vals[..., None, :])


@with_out_sharding
def multivariate_normal(key, mean, cov, shape=None, dtype=None, method="cholesky", *,
                        out_sharding=None):
    """Multivariate normal samples with ``mean`` (..., n) and ``cov`` (..., n, n):
    mean + A z for a factor A of cov and a standard normal z."""
    key, _ = check_prng_key("multivariate_normal", key)
    mean, cov = jnp.asarray(mean), jnp.asarray(cov)
    work = jnp.result_type(mean, cov)
    if not dtypes.issubdtype(work, np.inexact):
        work = dtypes.default_float_dtype()
    mean, cov = mean.astype(work), cov.astype(work)
    if method not in {"svd", "eigh", "cholesky"}:
        raise ValueError("method must be one of {'svd', 'eigh', 'cholesky'}")
    dtype = mean.dtype if dtype is None else user_dtype(dtype, float)
    _float_dtype_check("multivariate_normal", dtype)
    if shape is not None:
        shape = canonicalize_shape(shape)
    _check_mvn_args(mean, cov)
    if shape is None:
        shape = tuple(np.broadcast_shapes(mean.shape[:-1], cov.shape[:-2]))
    else:
        check_shape("normal", shape, mean.shape[:-1], cov.shape[:-2])
    factor = _cov_factor(cov, method)
    z = normal_typed(key, shape + mean.shape[-1:], dtype)
    # (the samples' batch shape may have more dimensions than mean: JAX adds them with
    # rank promotion allowed, whatever jax_numpy_rank_promotion says)
    with numpy_rank_promotion("allow"):
        return mean + jnp.einsum("...ij,...j->...i", factor, z)


@with_out_sharding
def orthogonal(key, n, shape=(), dtype=None, m=None, *, out_sharding=None):
    """Haar-distributed (semi-)orthogonal matrices of shape (*shape, n, m): the Q of a
    Gaussian matrix's QR decomposition with R's diagonal made positive."""
    key, _ = check_prng_key("orthogonal", key)
    dtype = user_dtype(dtype, float)
    shape = canonicalize_shape(shape)
    rows, cols = int(n), int(n if m is None else m)
    tall, short = max(rows, cols), min(rows, cols)
    q, r = jnp.linalg.qr(normal_typed(key, (*shape, tall, short), dtype))
    signs = jnp.sign(jnp.diagonal(r, axis1=-2, axis2=-1))
    haar = q * jnp.expand_dims(signs, -2)
    return jnp.swapaxes(haar, -1, -2) if rows < cols else haar
