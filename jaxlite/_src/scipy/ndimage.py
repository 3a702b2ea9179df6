"""jax.scipy.ndimage: map_coordinates (nearest and linear interpolation), written with jnp
gathers so that jit, vmap and grad (with respect to the image and the coordinates) work.

Each output value is a weighted sum over the 1 (order 0) or 2**ndim (order 1) grid points
around its coordinate. Out-of-range grid indices are mapped by ``mode`` (JAX's semantics,
which treat the input as samples on a grid: 'constant' interpolates towards ``cval``,
'wrap' is periodic with period ``n``, 'mirror' reflects about the edge samples, 'reflect'
about the edges of the grid, 'nearest' repeats the edge sample). Order 0 rounds coordinates
half away from zero; integer images are rounded the same way after interpolation
(boolean ones are True where the interpolated value is nonzero).
"""
from __future__ import annotations

import itertools
from functools import partial

import numpy as np

from jaxlite._src.lax import namespace as lax
from jaxlite._src.numpy import namespace as jnp
from jaxlite._src.api.jit import jit
from jaxlite._src.core import dtypes

__all__ = ["map_coordinates"]

_MODES = ("constant", "nearest", "wrap", "mirror", "reflect")


def _map_index(i, n, mode):
    """Grid index ``i`` (int array) mapped into ``[0, n)`` by ``mode``; with a validity mask
    for 'constant' (None otherwise)."""
    if mode == "constant":
        return jnp.clip(i, 0, n - 1), (i >= 0) & (i < n)
    if mode == "nearest":
        return jnp.clip(i, 0, n - 1), None
    if mode == "wrap":
        return jnp.mod(i, n), None
    if mode == "mirror":
        if n == 1:
            return jnp.zeros_like(i), None
        period = 2 * n - 2
        j = jnp.mod(i, period)
        return jnp.where(j >= n, period - j, j), None
    j = jnp.mod(i, 2 * n)                                    # reflect
    return jnp.where(j >= n, 2 * n - 1 - j, j), None


def _corners(coord, n, order, mode):
    """The (index, weight, valid) triples one coordinate array contributes along an axis."""
    if order == 0:
        if not np.issubdtype(coord.dtype, np.integer):
            coord = lax.round(coord)
        idx, valid = _map_index(coord.astype(np.int32), n, mode)
        return [(idx, None, valid)]
    low = jnp.floor(coord)
    frac = coord - low
    low = low.astype(np.int32)
    out = []
    for i, w in ((low, 1 - frac), (low + 1, frac)):
        idx, valid = _map_index(i, n, mode)
        out.append((idx, w, valid))
    return out


@partial(jit, static_argnums=(2, 3, 4))
def _map_coordinates(image, coordinates, order, mode, cval):
    shape = np.broadcast_shapes(*[c.shape for c in coordinates])
    coordinates = [jnp.broadcast_to(c, shape) for c in coordinates]
    per_axis = [_corners(c, n, order, mode) for c, n in zip(coordinates, image.shape)]
    # one flat take per corner (all indices are in range after the mode mapping)
    flat = image.reshape(-1)
    strides = np.cumprod((image.shape[1:] + (1,))[::-1])[::-1]
    total = None
    for combo in itertools.product(*per_axis):
        offset = None
        for (idx, _, _), stride in zip(combo, strides):
            term = idx * int(stride) if stride != 1 else idx
            offset = term if offset is None else offset + term
        value = jnp.take(flat, offset, mode="clip")
        masks = [v for _, _, v in combo if v is not None]
        if masks:
            valid = masks[0]
            for m in masks[1:]:
                valid = valid & m
            value = jnp.where(valid, value, cval)
        weights = [w for _, w, _ in combo if w is not None]
        if weights:
            weight = weights[0]
            for w in weights[1:]:
                weight = weight * w
            value = weight * value
        total = value if total is None else total + value
    if np.issubdtype(image.dtype, np.integer) and np.issubdtype(total.dtype, np.inexact):
        total = lax.round(total)                # (bool images: any nonzero value is True)
    return lax.convert_element_type(total, image.dtype)


def map_coordinates(input, coordinates, order, mode="constant", cval=0.0):
    """Values of the array ``input`` at the fractional ``coordinates`` (one array per input
    dimension, broadcast together) by nearest (``order=0``) or linear (``order=1``)
    interpolation (``scipy.ndimage.map_coordinates``; higher orders are not supported, as
    in JAX). ``mode`` handles points outside the grid: 'constant' (towards the static value
    ``cval``), 'nearest', 'wrap', 'mirror' or 'reflect'. The result has the broadcast shape
    of the coordinates and the dtype of ``input``."""
    image = jnp.asarray(input)
    coordinates = [jnp.asarray(c) for c in coordinates]
    if len(coordinates) != image.ndim:
        raise ValueError("coordinates must be a sequence of length input.ndim, but "
                         f"{len(coordinates)} != {image.ndim}")
    if order not in (0, 1):
        raise NotImplementedError(
            "jax.scipy.ndimage.map_coordinates currently requires order<=1")
    order = int(order)
    if mode not in _MODES:
        raise NotImplementedError(
            f"jax.scipy.ndimage.map_coordinates does not yet support mode {mode}. Currently "
            f"supported modes are {set(_MODES)}.")
    if image.ndim == 0:
        raise TypeError("map_coordinates needs an input with at least one dimension (got a "
                        "scalar); index a 0-d array directly instead.")
    if image.size == 0:
        raise TypeError(f"map_coordinates cannot interpolate an empty input (shape "
                        f"{tuple(image.shape)}).")
    for c in coordinates:
        if np.issubdtype(c.dtype, np.complexfloating):
            raise TypeError(f"floor does not accept dtype {c.dtype}. Accepted dtypes are "
                            "subtypes of floating. (map_coordinates needs real "
                            "coordinates.)")
    try:
        np.broadcast_shapes(*[c.shape for c in coordinates])
    except ValueError:
        raise TypeError("map_coordinates: the coordinate arrays have incompatible shapes "
                        f"for broadcasting: {[tuple(c.shape) for c in coordinates]}.") from None
    coordinates = [c if not (np.issubdtype(c.dtype, np.integer) or c.dtype == np.bool_)
                   or order == 0 else c.astype(dtypes.to_inexact_dtype(c.dtype))
                   for c in coordinates]
    return _map_coordinates(image, coordinates, order, mode, cval)
