"""jax.scipy.linalg special matrices: block_diag, toeplitz, hankel, circulant, leslie,
companion, fiedler, fiedler_companion, convolution_matrix, hilbert, invhilbert, pascal,
invpascal, helmert, hadamard and dft, written with jnp/lax (the vector-input ones
broadcast over leading batch dimensions, as in JAX)."""
from __future__ import annotations

import math
import operator
from functools import partial

import numpy as np

from jaxlite._src.lax import namespace as lax
from jaxlite._src.numpy import namespace as jnp
from jaxlite._src.api.jit import jit
from jaxlite._src.core import dtypes
from jaxlite._src.numpy.util import (check_arraylike, promote_args_inexact,
                                     promote_dtypes)

__all__ = ["block_diag", "circulant", "companion", "convolution_matrix", "dft", "fiedler",
           "fiedler_companion", "hadamard", "hankel", "helmert", "hilbert", "invhilbert",
           "invpascal", "leslie", "pascal", "toeplitz"]


def _default_float():
    return dtypes.canonicalize_dtype(np.float64)


@jit
def block_diag(*arrs):
    """Block-diagonal matrix with the given (at most 2-D) arrays on its diagonal."""
    if len(arrs) == 0:
        arrs = (jnp.zeros((1, 0)),)
    arrs = tuple(promote_dtypes(*arrs))
    bad = [i for i, a in enumerate(arrs) if np.ndim(a) > 2]
    if bad:
        raise ValueError("Arguments to jax.scipy.linalg.block_diag must have at most 2 "
                         f"dimensions, got {arrs[bad[0]]} at argument {bad[0]}.")
    arrs = [jnp.atleast_2d(a) for a in arrs]
    dt = arrs[0].dtype
    total = sum(a.shape[1] for a in arrs)
    padded, col = [], 0
    for a in arrs:
        cols = a.shape[1]
        padded.append(lax.pad(a, np.array(0, dt), ((0, 0, 0), (col, total - cols - col, 0))))
        col += cols
    return jnp.concatenate(padded, axis=0)


def _toeplitz(c, r):
    m, n = c.shape[0], r.shape[0]
    if m == 0 or n == 0:
        return jnp.empty((m, n), dtype=jnp.promote_types(c.dtype, r.dtype))
    elems = jnp.concatenate((c[::-1], r[1:]))
    idx = (m - 1) - np.arange(m)[:, None] + np.arange(n)[None, :]
    return elems[idx]


def toeplitz(c, r=None):
    """Toeplitz matrix with first column ``c`` and first row ``r`` (default ``conj(c)``;
    ``r[0]`` is ignored). Batched over leading dimensions of ``c`` and ``r``."""
    if r is None:
        check_arraylike("toeplitz", c)
        r = jnp.conjugate(jnp.asarray(c))
    else:
        check_arraylike("toeplitz", c, r)
    c, r = promote_dtypes(jnp.atleast_1d(jnp.asarray(c)), jnp.atleast_1d(jnp.asarray(r)))
    return jnp.vectorize(_toeplitz, signature="(m),(n)->(m,n)")(c, r)


def _hankel(c, r):
    m, n = c.shape[0], r.shape[0]
    if m == 0 or n == 0:
        return jnp.empty((m, n), dtype=jnp.result_type(c, r))
    v = jnp.concatenate((c, r[1:]))
    return v[np.arange(m)[:, None] + np.arange(n)[None, :]]


def hankel(c, r=None):
    """Hankel matrix with first column ``c`` and last row ``r`` (default zeros; ``r[0]``
    is ignored). Batched over leading dimensions."""
    if r is None:
        check_arraylike("hankel", c)
        c = jnp.asarray(c)
        r = jnp.zeros_like(c)
    else:
        check_arraylike("hankel", c, r)
        c, r = jnp.asarray(c), jnp.asarray(r)
    if c.ndim == 0:
        raise ValueError("hankel: c must be at least 1-dimensional, got a scalar.")
    if r.ndim == 0:
        raise ValueError("hankel: r must be at least 1-dimensional, got a scalar.")
    c, r = promote_dtypes(c, r)
    return jnp.vectorize(_hankel, signature="(m),(n)->(m,n)")(c, r)


def circulant(c):
    """Circulant matrix whose first column is ``c`` (batched over leading dimensions)."""
    check_arraylike("circulant", c)
    c = jnp.atleast_1d(jnp.asarray(c))
    n = c.shape[-1]
    return c[..., (np.arange(n)[:, None] - np.arange(n)[None, :]) % n]


def leslie(f, s):
    """Leslie matrix: fecundity coefficients ``f`` in the first row, survival
    coefficients ``s`` (one shorter) on the subdiagonal."""
    check_arraylike("leslie", f, s)
    f, s = jnp.atleast_1d(f), jnp.atleast_1d(s)
    if f.shape[-1] < 2:
        raise ValueError("The length of f along the last axis must be at least 2; got "
                         f"shape {f.shape}.")
    if s.shape[-1] != f.shape[-1] - 1:
        raise ValueError("Incorrect lengths for f and s. The length of s along the last "
                         "axis must be one less than the length of f; got f shape "
                         f"{f.shape} and s shape {s.shape}.")
    f, s = promote_dtypes(f, s)

    def one(f, s):
        n = f.shape[0]
        sub = jnp.where(jnp.eye(n - 1, dtype=bool), s[:, None], jnp.zeros((), s.dtype))
        sub = jnp.pad(sub, ((1, 0), (0, 1)))
        return sub.at[0].set(f)
    return jnp.vectorize(one, signature="(n),(m)->(n,n)")(f, s)


def companion(a):
    """Companion matrix of the polynomial with coefficients ``a`` (highest degree
    first): first row ``-a[1:] / a[0]``, ones on the subdiagonal."""
    (a,) = promote_args_inexact("companion", a)
    a = jnp.atleast_1d(a)
    if a.shape[-1] < 2:
        raise ValueError("The length of `a` along the last axis must be at least 2; got "
                         f"shape {a.shape}.")

    def one(a):
        first = -a[1:] / a[0]
        m = a.shape[0] - 1
        return jnp.eye(m, m, k=-1, dtype=first.dtype).at[0].set(first)
    return jnp.vectorize(one, signature="(n)->(m,m)")(a)


def fiedler(a):
    """Fiedler matrix ``|a[i] - a[j]|`` (batched over leading dimensions)."""
    check_arraylike("fiedler", a)
    a = jnp.atleast_1d(a)
    return jnp.abs(a[..., :, None] - a[..., None, :])


def _fiedler_companion(a):
    n = a.shape[0] - 1
    if n == 0:
        return jnp.zeros((0, 0), a.dtype)
    a = a / a[0]
    if n == 1:
        return -a[1:].reshape(1, 1)
    i = np.arange(n)[:, None]
    j = np.arange(n)[None, :]
    super_val = -a[np.minimum(i + 2, n)]
    sub_val = -a[np.minimum(i + 1, n)]
    even, odd = i % 2 == 0, i % 2 == 1
    one, zero = jnp.array(1, dtype=a.dtype), jnp.array(0, dtype=a.dtype)
    conds = [(i == 0) & (j == 0), (i == 1) & (j == 0), (j == i + 1) & even,
             (j == i + 2) & even, (j == i - 1) & even & (i >= 2), (j == i - 2) & odd & (i >= 3)]
    choices = [-a[1], one, super_val, one, sub_val, one]
    return jnp.select([jnp.asarray(c) for c in conds], choices, default=zero)


def fiedler_companion(a):
    """Fiedler companion matrix (a pentadiagonal matrix with the same characteristic
    polynomial as :func:`companion`) of the coefficients ``a``."""
    (a,) = promote_args_inexact("fiedler_companion", a)
    a = jnp.atleast_1d(a)
    if a.shape[-1] == 0:
        raise ValueError("fiedler_companion requires the last axis of 'a' to have nonzero "
                         f"length, but got an array of shape {a.shape}.")
    return jnp.vectorize(_fiedler_companion, signature="(n)->(m,m)")(a)


@partial(jit, static_argnames=("n", "mode"))
def convolution_matrix(a, n, mode="full"):
    """Matrix ``A`` with ``A @ v == jnp.convolve(a, v, mode)`` for vectors ``v`` of
    length ``n``; ``mode`` is 'full', 'valid' or 'same'."""
    n = operator.index(n)
    if n <= 0:
        raise ValueError(f"n must be a positive integer; got {n}.")
    check_arraylike("convolution_matrix", a)
    a = jnp.asarray(a)
    if a.ndim == 0:
        raise ValueError("convolution_matrix: a must be at least 1-dimensional, got a "
                         "scalar.")
    m = a.shape[-1]
    if m < 1:
        raise ValueError(f"len(a) must be at least 1; got shape {a.shape}.")
    if mode not in ("full", "valid", "same"):
        raise ValueError(f"mode must be one of 'full', 'valid', 'same'; got {mode!r}.")
    pad = [(0, 0)] * (a.ndim - 1) + [(0, n - 1)]
    az = jnp.pad(a, pad)
    raz = jnp.pad(jnp.flip(a, axis=-1), pad)
    total = m + n - 1
    if mode == "same":
        trim = min(n, m) - 1
        tb, te = trim // 2, trim - trim // 2
    elif mode == "valid":
        tb = te = min(n, m) - 1
    else:
        tb = te = 0
    return toeplitz(az[..., tb:total - te], raz[..., total - n - tb:total - tb])


@partial(jit, static_argnames=("n",))
def hilbert(n):
    """The n x n Hilbert matrix ``1 / (i + j + 1)`` (default float dtype)."""
    a = lax.broadcasted_iota(_default_float(), (n, 1), 0)
    return 1 / (a + a.T + 1)


def _comb(n, k):
    ok = (k <= n) & (n >= 0) & (k >= 0)
    sn, sk = jnp.where(ok, n, 0.0), jnp.where(ok, k, 0.0)
    out = lax.exp(lax.lgamma(sn + 1) - lax.lgamma(sk + 1) - lax.lgamma(sn + 1 - sk))
    return jnp.where(ok, out, 0.0)


@partial(jit, static_argnames=("n",))
def invhilbert(n):
    """Inverse of the n x n Hilbert matrix (computed in floating point)."""
    a = jnp.arange(n, dtype=_default_float())
    i, j = a[:, None], a[None, :]
    s = i + j
    return ((-1.0) ** s * (s + 1.0) * _comb(n + i, n - j - 1) * _comb(n + j, n - i - 1)
            * _comb(s, i) ** 2)


def _binom(n, k):
    return lax.exp(lax.lgamma(n + 1.0) - lax.lgamma(n - k + 1.0) - lax.lgamma(k + 1.0))


def _check_kind(kind):
    kind = "symmetric" if kind is None else kind
    valid = ["symmetric", "lower", "upper"]
    if kind not in valid:
        raise ValueError(f"Expected kind to be one of: {valid}; got {kind}")
    return kind


@partial(jit, static_argnames=("n", "kind"))
def pascal(n, kind=None):
    """The n x n Pascal matrix: 'symmetric' (default), 'lower' or 'upper' triangular
    (float32, as JAX)."""
    kind = _check_kind(kind)
    a = jnp.arange(n, dtype=np.float32)
    low = _binom(a[:, None], a[None, :])
    if kind == "lower":
        return low
    if kind == "upper":
        return low.T
    return jnp.dot(low, low.T)


@partial(jit, static_argnames=("n", "kind"))
def invpascal(n, kind=None):
    """Inverse of :func:`pascal` (default float dtype)."""
    kind = _check_kind(kind)
    a = jnp.arange(n, dtype=_default_float())
    i, j = a[:, None], a[None, :]
    low_inv = (-1.0) ** (i - j) * _binom(i, j)
    if kind == "lower":
        return low_inv
    if kind == "upper":
        return low_inv.T
    return jnp.dot(low_inv.T, low_inv)


@partial(jit, static_argnames=("n", "full"))
def helmert(n, full=False):
    """Helmert matrix: (n-1) x n rows orthonormal to the constant vector, plus the first
    row ``1/sqrt(n)`` when ``full``."""
    if n < 1:
        raise ValueError(f"n must be a positive integer; got {n}.")
    i = np.arange(n - 1)[:, None]
    j = np.arange(n)[None, :]
    k = jnp.asarray(i + 1).astype(_default_float())
    denom = jnp.sqrt(k * (k + 1))
    h = jnp.where(j <= i, 1.0 / denom, jnp.where(j == i + 1, -k / denom,
                                                 jnp.zeros_like(denom)))
    if full:
        first = jnp.full((1, n), 1.0 / math.sqrt(n), dtype=h.dtype)
        h = jnp.concatenate([first, h], axis=0)
    return h


@partial(jit, static_argnames=("n", "dtype"))
def hadamard(n, dtype=int):
    """The n x n Sylvester-Hadamard matrix (``n`` a power of two) of ``dtype``."""
    if n < 1 or not math.log2(n).is_integer():
        raise ValueError(f"n must be a positive power of 2; got {n}.")
    h = jnp.ones((1, 1), dtype=dtype)
    for _ in range(int(math.log2(n))):
        h = jnp.block([[h, h], [h, -h]])
    return h


@partial(jit, static_argnames=("n", "scale", "dtype"))
def dft(n, scale=None, *, dtype=None):
    """The n x n discrete Fourier transform matrix ``exp(-2 pi i j k / n)``, scaled by
    ``1/sqrt(n)`` ('sqrtn') or ``1/n`` ('n')."""
    if scale is not None and scale not in ("sqrtn", "n"):
        raise ValueError(f"scale must be None, 'sqrtn', or 'n'; got {scale!r}.")
    if dtype is None:
        dtype = dtypes.canonicalize_dtype(np.complex128)
    else:
        dtype = dtypes.canonicalize_dtype(np.dtype(dtype))
        if not np.issubdtype(dtype, np.complexfloating):
            raise ValueError(f"dtype must be a complex floating-point type; got {dtype}.")
    a = jnp.arange(n, dtype=dtype)
    w = jnp.exp(-2j * np.pi * a[:, None] * a[None, :] / n)
    if scale == "sqrtn":
        w = w / jnp.sqrt(n)
    elif scale == "n":
        w = w / n
    return w
