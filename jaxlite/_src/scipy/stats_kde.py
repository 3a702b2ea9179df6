"""``jax.scipy.stats.gaussian_kde``: a Gaussian kernel density estimator that is a pytree
(so it can be passed through jit, vmap and grad like any array container).

Written for jaxlite from the estimator's definition (SciPy's conventions): the kernel
covariance is the weighted data covariance times ``factor**2``, with Scott's factor
``neff**(-1/(d+4))``, Silverman's ``(neff (d+2) / 4)**(-1/(d+4))``, a given scalar or a
callable of the estimator. Densities are evaluated in whitened coordinates: with
``inv_cov = L L^T`` (Cholesky), ``(x - x_i)^T inv_cov (x - x_i) = |L^T x - L^T x_i|^2``,
accumulated one dimension at a time so no (d, n, m) array is formed; ``logpdf`` sums the
kernels with a weighted log-sum-exp. Integrals against Gaussians and between two
estimators are Gaussian convolutions (the covariances add)."""
from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from jaxlite._src.numpy.util import check_arraylike, promote_dtypes_inexact

__all__ = ["gaussian_kde"]


def _np():
    from jaxlite._src.numpy import namespace as jnp
    return jnp


def _pairwise_sq_dist(a, b):
    """``|a_i - b_j|^2`` for columns of ``a`` (d, n) and ``b`` (d, m): an (n, m) array."""
    total = None
    for k in range(a.shape[0]):
        diff = a[k][:, None] - b[k][None, :]
        total = diff * diff if total is None else total + diff * diff
    return total


def _log_gauss_norm(log_det_half, d, dtype):
    """Log of a Gaussian's normalising factor ``det(P)^(1/2) / (2 pi)^(d/2)`` from
    ``log_det_half = log det(P) / 2`` (P the precision matrix)."""
    return log_det_half - np.asarray(0.5 * d * np.log(2 * np.pi), dtype)


def _half_log_det(chol):
    """``log det(A) / 2`` from the Cholesky factor of A."""
    jnp = _np()
    return jnp.sum(jnp.log(jnp.diagonal(chol)))


def _is_scalar(v):
    if isinstance(v, (bool, int, float, np.number)):
        return True
    return hasattr(v, "ndim") and hasattr(v, "dtype") and v.ndim == 0


def _register(cls):
    from jaxlite._src.tree_util import register_pytree_node_class
    return register_pytree_node_class(cls)


@_register
@dataclasses.dataclass(frozen=True, init=False)
class gaussian_kde:
    """Gaussian kernel density estimate of ``dataset`` (``scipy.stats.gaussian_kde``).

    ``dataset``: real array of shape (n,) or (d, n). ``bw_method``: 'scott' (default),
    'silverman', a scalar factor, or a callable taking the estimator (with ``dataset``,
    ``weights``, ``neff``, ``d``, ``n`` set) and returning the factor. ``weights``: optional
    (n,) non-negative weights (normalised to sum to 1).

    Attributes ``dataset`` (d, n), ``weights`` (n,), ``neff`` (effective sample size
    ``1/sum(w^2)``), ``covariance`` and ``inv_cov`` (kernel covariance and its inverse),
    ``d`` and ``n``. The estimator is an immutable pytree whose leaves are
    ``(neff, dataset, weights, covariance, inv_cov)``."""

    neff: Any
    dataset: Any
    weights: Any
    covariance: Any
    inv_cov: Any

    def __init__(self, dataset, bw_method=None, weights=None):
        jnp = _np()
        check_arraylike("gaussian_kde", dataset)
        data = jnp.atleast_2d(dataset)
        if jnp.issubdtype(data.dtype, jnp.complexfloating):
            raise NotImplementedError("gaussian_kde does not support complex data")
        if not data.size > 1:
            raise ValueError("`dataset` input should have multiple elements.")
        if data.ndim != 2:
            raise ValueError("gaussian_kde: `dataset` must have shape (n,) or (d, n), got "
                             f"shape {data.shape}.")
        d, n = data.shape
        (data,) = promote_dtypes_inexact(data)
        if weights is not None:
            check_arraylike("gaussian_kde", weights)
            w = jnp.atleast_1d(weights).astype(data.dtype)
            w = w / jnp.sum(w)
            if w.ndim != 1:
                raise ValueError("`weights` input should be one-dimensional.")
            if w.shape[0] != n:
                raise ValueError(f"`weights` input should be of length n (= {n}), got "
                                 f"{w.shape[0]}.")
        else:
            w = jnp.full((n,), 1.0 / n, dtype=data.dtype)
        neff = 1 / jnp.sum(w * w)
        self._set(neff=neff, dataset=data, weights=w)

        if bw_method is None or (isinstance(bw_method, str) and bw_method == "scott"):
            factor = jnp.power(neff, -1.0 / (d + 4))
        elif isinstance(bw_method, str) and bw_method == "silverman":
            factor = jnp.power(neff * (d + 2) / 4.0, -1.0 / (d + 4))
        elif not isinstance(bw_method, str) and _is_scalar(bw_method):
            factor = bw_method
        elif callable(bw_method):
            factor = bw_method(self)
        else:
            raise ValueError("`bw_method` should be 'scott', 'silverman', a scalar, or a "
                             "callable.")
        data_cov = jnp.atleast_2d(jnp.cov(data, rowvar=1, bias=False, aweights=w))
        data_inv = jnp.linalg.inv(data_cov)
        f2 = jnp.square(jnp.asarray(factor, dtype=data.dtype))
        self._set(covariance=data_cov * f2, inv_cov=data_inv / f2)

    def _set(self, **fields):
        for name, value in fields.items():
            object.__setattr__(self, name, value)

    # ------------------------------------------------------------------ pytree protocol

    def tree_flatten(self):
        """Children ``(neff, dataset, weights, covariance, inv_cov)`` and no aux data."""
        return (self.neff, self.dataset, self.weights, self.covariance, self.inv_cov), None

    @classmethod
    def tree_unflatten(cls, aux_data, children):
        """Rebuild an estimator from its five leaves (no recomputation)."""
        obj = object.__new__(cls)
        names = ("neff", "dataset", "weights", "covariance", "inv_cov")
        obj._set(**dict(zip(names, children)))
        return obj

    # ------------------------------------------------------------------------- shape

    @property
    def d(self):
        """Number of dimensions of the data."""
        return self.dataset.shape[0]

    @property
    def n(self):
        """Number of data points."""
        return self.dataset.shape[1]

    def _reshape_points(self, points):
        """Points as a (d, m) array of the dataset's dtype; a length-d vector is one
        point."""
        jnp = _np()
        pts = jnp.atleast_2d(points)
        if pts.ndim != 2:
            raise ValueError(f"points must have shape (d, m) or (d,), got shape "
                             f"{pts.shape}.")
        pd, m = pts.shape
        if pd != self.d:
            if pd == 1 and m == self.d:
                pts = jnp.reshape(pts, (self.d, 1))
            else:
                raise ValueError(f"points have dimension {pd}, dataset has dimension "
                                 f"{self.d}; pass points of shape (d, m) or a single "
                                 "point of length d.")
        return pts.astype(jnp.result_type(pts.dtype, self.dataset.dtype))

    def _whitened(self, pts):
        """``(L^T pts, L^T dataset, log normaliser)`` with ``inv_cov = L L^T``."""
        jnp = _np()
        chol = jnp.linalg.cholesky(self.inv_cov)
        lt = jnp.swapaxes(chol, -1, -2)
        dt = jnp.result_type(pts.dtype, self.dataset.dtype)
        return lt @ pts, lt @ self.dataset, _log_gauss_norm(_half_log_det(chol), self.d, dt)

    # ---------------------------------------------------------------------- densities

    def evaluate(self, points):
        """The estimated density at ``points`` ((d, m), or one point): an (m,) array."""
        jnp = _np()
        check_arraylike("evaluate", points)
        pts = self._reshape_points(points)
        y, z, log_norm = self._whitened(pts)
        kernels = jnp.exp(-0.5 * _pairwise_sq_dist(z, y))      # (n, m)
        return jnp.exp(log_norm) * jnp.sum(self.weights[:, None] * kernels, axis=0)

    __call__ = evaluate

    def pdf(self, x):
        """The estimated density at ``x`` (same as :meth:`evaluate`)."""
        check_arraylike("evaluate", x)
        return self.evaluate(x)

    def logpdf(self, x):
        """Log of the estimated density at ``x``, summed stably (log-sum-exp), so far
        from the data it stays finite where the density underflows."""
        from jaxlite._src.scipy.special import logsumexp
        check_arraylike("logpdf", x)
        pts = self._reshape_points(x)
        y, z, log_norm = self._whitened(pts)
        energy = -0.5 * _pairwise_sq_dist(z, y)
        return logsumexp(energy, axis=0, b=self.weights[:, None]) + log_norm

    # ---------------------------------------------------------------------- integrals

    def integrate_gaussian(self, mean, cov):
        """Integral of the density times the Gaussian ``N(mean, cov)``."""
        from jaxlite._src.scipy.linalg import solve_triangular
        jnp = _np()
        check_arraylike("integrate_gaussian", mean, cov)
        mean = jnp.atleast_1d(jnp.squeeze(mean))
        cov = jnp.atleast_2d(cov)
        if mean.shape != (self.d,):
            raise ValueError(f"mean does not have dimension {self.d}")
        if cov.shape != (self.d, self.d):
            raise ValueError(f"covariance does not have dimension {self.d}")
        chol = jnp.linalg.cholesky(self.covariance + cov)
        diff = mean[:, None] - self.dataset
        white = solve_triangular(chol, diff, lower=True)
        energy = 0.5 * jnp.sum(white * white, axis=0)
        log_norm = _log_gauss_norm(-_half_log_det(chol), self.d, diff.dtype)
        return jnp.sum(self.weights * jnp.exp(-energy)) * jnp.exp(log_norm)

    def integrate_box_1d(self, low, high):
        """Integral of a one-dimensional density between ``low`` and ``high``."""
        from jaxlite._src.scipy.special import ndtr
        jnp = _np()
        if self.d != 1:
            raise ValueError("integrate_box_1d() only handles 1D pdfs")
        sigma = jnp.sqrt(self.covariance[0, 0])
        x = self.dataset[0]
        lo = (low - x) / sigma
        hi = (high - x) / sigma
        # for points above the data use the upper tail (no cancellation near 1)
        upper = lo > 0
        mass = jnp.where(upper, ndtr(-lo) - ndtr(-hi), ndtr(hi) - ndtr(lo))
        return jnp.sum(self.weights * mass)

    def integrate_kde(self, other):
        """Integral of the product of this density and ``other``'s (same ``d``)."""
        from jaxlite._src.scipy.linalg import solve_triangular
        jnp = _np()
        if other.d != self.d:
            raise ValueError("KDEs are not the same dimensionality")
        chol = jnp.linalg.cholesky(self.covariance + other.covariance)
        a = solve_triangular(chol, self.dataset, lower=True)
        b = solve_triangular(chol, other.dataset, lower=True)
        kernels = jnp.exp(-0.5 * _pairwise_sq_dist(a, b))       # (n, m)
        total = jnp.sum(self.weights[:, None] * other.weights[None, :] * kernels)
        log_norm = _log_gauss_norm(-_half_log_det(chol), self.d, a.dtype)
        return total * jnp.exp(log_norm)

    def integrate_box(self, low_bounds, high_bounds, maxpts=None):
        """Not supported (as in JAX): only one-dimensional boxes, see
        :meth:`integrate_box_1d`."""
        raise NotImplementedError("only 1D box integrations are supported; use "
                                  "`integrate_box_1d`")

    # ----------------------------------------------------------------------- sampling

    def resample(self, key, shape=()):
        """Draw samples of shape ``shape`` from the estimate: a (d, *shape) array. A data
        point is chosen by weight (``random.choice`` with the first half of
        ``random.split(key)``), then kernel noise ``N(0, covariance)`` is added
        (``random.multivariate_normal`` with the second half) -- JAX's draws for the same
        key."""
        from jaxlite._src.random import keys as jk
        from jaxlite._src.random import samplers as jr
        from jaxlite._src.random.multivariate import multivariate_normal
        jnp = _np()
        choice_key, noise_key = jk.split(key)
        ind = jr.choice(choice_key, self.n, shape=shape, p=self.weights)
        mean = jnp.zeros(self.d, dtype=self.dataset.dtype)
        noise = multivariate_normal(noise_key, mean, self.covariance, shape=shape,
                                    dtype=self.dataset.dtype)
        return self.dataset[:, ind] + jnp.moveaxis(noise, -1, 0)

    def set_bandwidth(self, bw_method=None):
        """Not supported (the estimator is immutable): build a new ``gaussian_kde`` with
        the wanted ``bw_method`` instead."""
        raise NotImplementedError("dynamically changing the bandwidth method is not "
                                  "supported; create a new gaussian_kde with the new "
                                  "bw_method instead.")
