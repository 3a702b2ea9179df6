"""jax.scipy.interpolate: ``RegularGridInterpolator`` (linear and nearest-neighbour).

For a query point, each axis contributes the index ``i`` of the grid cell holding the
coordinate (``grid[i] <= x < grid[i + 1]``, clipped to the first/last cell so that points
outside extrapolate from the edge cell) and the fraction ``t = (x - grid[i]) / (grid[i+1] -
grid[i])`` across it. Linear interpolation sums the ``2**ndim`` cell corners weighted by the
products of ``t`` and ``1 - t``; nearest takes the corner ``i + (t > 1/2)`` on every axis.
Points outside the grid get ``fill_value`` (``None`` extrapolates instead).

The class is a pytree (grid, values and fill_value are its leaves), so it can be passed
through ``jit`` and ``vmap`` and differentiated with respect to ``values``.
"""
from __future__ import annotations

import itertools

import numpy as np

from jaxlite._src.numpy import namespace as jnp
from jaxlite._src.core import dtypes
from jaxlite._src.tree_util import register_pytree_node_class

__all__ = ["RegularGridInterpolator"]

_METHODS = ("linear", "nearest")


def _float_dtype(values):
    dt = values.dtype
    if dtypes.issubdtype(dt, np.inexact):
        return dt
    return dtypes.canonicalize_dtype(np.float64)


@register_pytree_node_class
class RegularGridInterpolator:
    """Interpolate points on a regular rectangular grid (``jax.scipy.interpolate.
    RegularGridInterpolator``).

    Args:
      points: length-N sequence of 1-D arrays, the strictly increasing grid coordinates.
      values: N-dimensional array of grid values (trailing dimensions beyond N are carried
        along: the result has shape ``xi.shape[:-1] + values.shape[N:]``).
      method: ``"linear"`` or ``"nearest"``.
      bounds_error: must be False (raising for out-of-bounds points cannot work under jit).
      fill_value: value for points outside the grid (default NaN); ``None`` extrapolates.

    Calling the interpolator with query points ``xi`` of shape ``(..., N)`` (or a tuple of N
    broadcastable coordinate arrays) returns the interpolated values.
    """

    def __init__(self, points, values, method="linear", bounds_error=False,
                 fill_value=np.nan):
        if method not in _METHODS:
            raise ValueError(f"method {method!r} is not defined")
        self.method = method
        self.bounds_error = bounds_error
        if self.bounds_error:
            raise NotImplementedError("`bounds_error` takes no effect under JIT")
        values = jnp.asarray(values)
        if len(points) > values.ndim:
            raise ValueError(f"there are {len(points)} point arrays, but values has "
                             f"{values.ndim} dimensions")
        if not dtypes.issubdtype(values.dtype, np.inexact):
            values = values.astype(_float_dtype(values))
        self.fill_value = fill_value
        if fill_value is not None:
            fdt = jnp.asarray(fill_value).dtype
            if (dtypes.issubdtype(fdt, np.complexfloating)
                    and not dtypes.issubdtype(values.dtype, np.complexfloating)):
                raise ValueError("fill_value must be either 'None' or of a type compatible "
                                 "with values")
            self.fill_value = jnp.asarray(fill_value) if not isinstance(
                fill_value, (int, float, complex)) else jnp.asarray(fill_value)
        self.grid = tuple(jnp.asarray(p) for p in points)
        self.values = values

    # -- pytree protocol
    def tree_flatten(self):
        return (self.grid, self.values, self.fill_value), (self.method, self.bounds_error)

    @classmethod
    def tree_unflatten(cls, aux, children):
        obj = object.__new__(cls)
        obj.grid, obj.values, obj.fill_value = children
        obj.method, obj.bounds_error = aux
        return obj

    def __call__(self, xi, method=None):
        """Interpolated values at ``xi`` (shape ``(..., ndim)``); ``method`` overrides the
        method given at construction."""
        method = self.method if method is None else method
        if method not in _METHODS:
            raise ValueError(f"method {method!r} is not defined")
        ndim = len(self.grid)
        xi = self._coords(xi, ndim)
        if xi.shape[-1] != ndim:
            raise ValueError(f"the requested sample points xi have dimension "
                             f"{xi.shape[-1]}, but this RegularGridInterpolator has "
                             f"dimension {ndim}")
        lead = xi.shape[:-1]
        pts = xi.reshape(-1, ndim)
        idx, frac, outside = self._locate(pts)
        if method == "linear":
            out = self._linear(idx, frac)
        else:
            out = self._nearest(idx, frac)
        if self.fill_value is not None:
            mask = outside.reshape(outside.shape + (1,) * (out.ndim - 1))
            out = jnp.where(mask, jnp.asarray(self.fill_value, out.dtype), out)
        return out.reshape(lead + self.values.shape[ndim:])

    @staticmethod
    def _coords(xi, ndim):
        if isinstance(xi, (tuple, list)):
            parts = jnp.broadcast_arrays(*[jnp.asarray(p) for p in xi])
            return jnp.stack(parts, axis=-1)
        xi = jnp.asarray(xi)
        if ndim == 1 and (xi.ndim == 0 or xi.shape[-1] != 1):
            xi = xi[..., None]
        elif xi.ndim == 1:
            xi = xi[None]        # one point: a batch of one, as JAX (result shape (1,))
        return xi

    def _locate(self, pts):
        """Per axis: the lower corner index of the cell, the fraction across it, and
        whether the point lies outside the grid on any axis."""
        idx, frac = [], []
        outside = jnp.zeros(pts.shape[:1], bool)
        for ax, g in enumerate(self.grid):
            x = pts[:, ax]
            n = g.shape[0]
            i = jnp.clip(jnp.searchsorted(g, x, side="right") - 1, 0, max(n - 2, 0))
            lo = g[i]
            hi = g[jnp.minimum(i + 1, n - 1)]
            width = hi - lo
            t = jnp.where(width == 0, 0, (x - lo) / jnp.where(width == 0, 1, width))
            idx.append(i)
            frac.append(t)
            outside = outside | (x < g[0]) | (x > g[n - 1])
        return idx, frac, outside

    def _linear(self, idx, frac):
        ndim = len(idx)
        vdt = self.values.dtype
        fdt = frac[0].dtype
        out = None
        trail = self.values.ndim - ndim
        for corner in itertools.product((0, 1), repeat=ndim):
            w = None
            where = []
            for c, i, t, g in zip(corner, idx, frac, self.grid):
                where.append(jnp.minimum(i + c, g.shape[0] - 1))
                wc = t if c else 1 - t
                w = wc if w is None else w * wc
            term = self.values[tuple(where)] * w.astype(
                jnp.result_type(vdt, fdt)).reshape(w.shape + (1,) * trail)
            out = term if out is None else out + term
        return out

    def _nearest(self, idx, frac):
        where = [jnp.minimum(jnp.where(t <= 0.5, i, i + 1), g.shape[0] - 1)
                 for i, t, g in zip(idx, frac, self.grid)]
        return self.values[tuple(where)]
