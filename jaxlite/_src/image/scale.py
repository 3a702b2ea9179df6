"""jax.image: ``resize``, ``scale_and_translate`` and ``ResizeMethod``.

Separable resampling with the pixel-centre convention (input pixel ``i`` sits at ``i + 0.5``):
along each spatial dimension, output pixel ``j`` samples the input at ``x_j = (j + 0.5 -
translation) / scale``, and its value is ``sum_i w_ij * in_i`` with ``w_ij = k((i + 0.5 -
x_j) / s)``, normalised so the weights of each output pixel sum to one. ``k`` is the method's
kernel and ``s = max(1 / scale, 1)`` when antialiasing (the kernel is widened by the
downsampling factor, so it low-pass filters), ``1`` otherwise. Output pixels whose sample
point falls outside the input get zero. Each dimension is one matrix product with the
``(in, out)`` weight matrix, so the whole thing is linear in the image: differentiable,
batchable and jittable (``scale`` and ``translation`` may be traced).

Kernels: triangle (linear), Keys cubic with ``a = -0.5`` (cubic) or ``a = -0.75`` (PyTorch's
bicubic, which without antialiasing also replicates edge pixels instead of renormalising),
Lanczos of radius 3 and 5 (``sinc(x) sinc(x / r)``), and for ``area`` the overlap of the
output pixel's footprint with each input pixel. ``nearest`` (``resize`` only) picks input
pixel ``floor((j + 0.5) * in / out)``.
"""
from __future__ import annotations

import enum
from typing import Sequence

import numpy as np

from jaxlite._src.lax import namespace as lax
from jaxlite._src.numpy import namespace as jnp
from jaxlite._src.core import dtypes

__all__ = ["ResizeMethod", "resize", "scale_and_translate"]


class ResizeMethod(enum.Enum):
    """Image resize method.

    Possible values are:

    NEAREST:
      Nearest-neighbor interpolation.

    LINEAR:
      Linear interpolation.

    LANCZOS3:
      Lanczos resampling, using a kernel of radius 3.

    LANCZOS5:
      Lanczos resampling, using a kernel of radius 5.

    CUBIC:
      Cubic interpolation, using the Keys cubic kernel.

    CUBIC_PYTORCH:
      Cubic interpolation matching PyTorch's bicubic resizing.

    AREA:
      Area resampling: the average of the input pixels under each output pixel.
    """
    NEAREST = 0
    LINEAR = 1
    LANCZOS3 = 2
    LANCZOS5 = 3
    CUBIC = 4
    CUBIC_PYTORCH = 5
    AREA = 6

    @staticmethod
    def from_string(s: str):
        """The method named ``s`` (``"linear"``, ``"bilinear"``, ``"cubic"``, ...)."""
        try:
            return _NAMES[s]
        except KeyError:
            raise ValueError(f'Unknown resize method "{s}"') from None


_NAMES = {
    "nearest": ResizeMethod.NEAREST,
    "linear": ResizeMethod.LINEAR, "bilinear": ResizeMethod.LINEAR,
    "trilinear": ResizeMethod.LINEAR, "triangle": ResizeMethod.LINEAR,
    "lanczos3": ResizeMethod.LANCZOS3, "lanczos5": ResizeMethod.LANCZOS5,
    "cubic": ResizeMethod.CUBIC, "bicubic": ResizeMethod.CUBIC,
    "tricubic": ResizeMethod.CUBIC,
    "cubic-pytorch": ResizeMethod.CUBIC_PYTORCH, "bicubic-pytorch": ResizeMethod.CUBIC_PYTORCH,
    "area": ResizeMethod.AREA,
}


def _method(method):
    return method if isinstance(method, ResizeMethod) else ResizeMethod.from_string(method)


# ----------------------------------------------------------------------------- kernels
def _triangle(x):
    return jnp.maximum(0, 1 - jnp.abs(x))


def _keys_cubic(a):
    def k(x):
        x = jnp.abs(x)
        near = ((a + 2) * x - (a + 3)) * x * x + 1
        far = ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
        return jnp.where(x <= 1, near, jnp.where(x < 2, far, 0))
    return k


def _lanczos(radius):
    def k(x):
        # sinc(x) * sinc(x / r) = r sin(pi x) sin(pi x / r) / (pi x)^2, 1 at x = 0
        px = np.pi * x
        safe = jnp.where(x == 0, 1, px)
        val = radius * jnp.sin(px) * jnp.sin(px / radius) / (safe * safe)
        return jnp.where(jnp.abs(x) >= radius, 0, jnp.where(x == 0, 1, val))
    return k


_KERNELS = {
    ResizeMethod.LINEAR: _triangle,
    ResizeMethod.CUBIC: _keys_cubic(-0.5),
    ResizeMethod.CUBIC_PYTORCH: _keys_cubic(-0.75),
    ResizeMethod.LANCZOS3: _lanczos(3.0),
    ResizeMethod.LANCZOS5: _lanczos(5.0),
}


# ----------------------------------------------------------------------------- weights
def _weights(in_size, out_size, scale, translation, method, antialias, dtype):
    """The ``(in_size, out_size)`` matrix resampling one dimension."""
    scale = jnp.asarray(scale, dtype)
    translation = jnp.asarray(translation, dtype)
    inv = 1 / scale
    sample = (jnp.arange(out_size, dtype=dtype) + 0.5 - translation) * inv
    centres = jnp.arange(in_size, dtype=dtype) + 0.5
    if method is ResizeMethod.AREA:
        w = _area_weights(centres, sample, inv)
    elif method is ResizeMethod.CUBIC_PYTORCH and not antialias:
        return _edge_padded(in_size, sample, _KERNELS[method], dtype)
    else:
        width = jnp.maximum(inv, 1) if antialias else jnp.ones((), dtype)
        # with antialiasing PyTorch's cubic is the Keys cubic of CUBIC
        kernel = _KERNELS[ResizeMethod.CUBIC if method is ResizeMethod.CUBIC_PYTORCH
                          else method]
        w = kernel((centres[:, None] - sample[None, :]) / width)
    total = jnp.sum(w, axis=0, keepdims=True)
    eps = jnp.finfo(dtype).eps
    w = jnp.where(jnp.abs(total) > 1000 * eps, w / jnp.where(total == 0, 1, total), 0)
    inside = (sample >= 0) & (sample <= in_size)
    return jnp.where(inside[None, :], w, 0).astype(dtype)


def _area_weights(centres, sample, inv):
    """Overlap of the output pixel's footprint ``[x - inv/2, x + inv/2]`` with each input
    pixel (upsampling: a box filter; downsampling: the average under the footprint)."""
    half = inv / 2
    lo = jnp.maximum(centres[:, None] - 0.5, sample[None, :] - half)
    hi = jnp.minimum(centres[:, None] + 0.5, sample[None, :] + half)
    return jnp.maximum(hi - lo, 0)


def _edge_padded(in_size, sample, kernel, dtype):
    """PyTorch-style edge handling: the input is extended by two copies of its edge pixels
    on each side, the kernel weights over the extended input are normalised, and the rows
    of the copies are folded back onto the edge pixels. Samples whose taps all miss the
    extended input (more than ~3.5 pixels out) get zero."""
    pad = 2
    centres = jnp.arange(-pad, in_size + pad, dtype=dtype) + 0.5
    w = kernel(centres[:, None] - sample[None, :])
    total = jnp.sum(w, axis=0, keepdims=True)
    eps = jnp.finfo(dtype).eps
    w = jnp.where(jnp.abs(total) > 1000 * eps, w / jnp.where(total == 0, 1, total), 0)
    first = jnp.sum(w[:pad + 1], axis=0, keepdims=True)
    last = jnp.sum(w[in_size + pad - 1:], axis=0, keepdims=True)
    if in_size == 1:
        return (first + last - w[pad:pad + 1]).astype(dtype)
    return jnp.concatenate([first, w[pad + 1:in_size + pad - 1], last], axis=0).astype(dtype)


# ----------------------------------------------------------------------------- API
def _compute_dtype(image):
    dt = image.dtype
    if dtypes.issubdtype(dt, np.inexact):
        return dt
    return dtypes.canonicalize_dtype(np.float64)


def _apply(image, dim, w, precision):
    moved = jnp.moveaxis(image, dim, -1)
    wc = w.astype(image.dtype)
    if image.dtype in (jnp.bfloat16, jnp.float16):
        out = jnp.matmul(moved.astype(np.float32), wc.astype(np.float32),
                         precision=precision).astype(image.dtype)
    else:
        out = jnp.matmul(moved, wc, precision=precision)
    return jnp.moveaxis(out, -1, dim)


def _scale_and_translate(image, shape, spatial_dims, scale, translation, method, antialias,
                         precision):
    in_dtype = image.dtype
    dt = _compute_dtype(image)
    image = image.astype(dt)
    # weights in at least float32 (bfloat16/float16 images are resampled with float32
    # weights, then cast back, as JAX)
    wdt = jnp.promote_types(dt, np.float32) if dt != np.float64 else dt
    if dtypes.issubdtype(wdt, np.complexfloating):
        wdt = jnp.real(jnp.zeros((), wdt)).dtype
    scale = jnp.asarray(scale)
    translation = jnp.asarray(translation)
    for n, d in enumerate(spatial_dims):
        w = _weights(image.shape[d], shape[d], scale[n], translation[n], method, antialias,
                     wdt)
        # each pass is a product in the image's own dtype (weights rounded to it, sums
        # accumulated in float32), as JAX
        image = _apply(image, d, w, precision)
    out_dt = in_dtype if dtypes.issubdtype(in_dtype, np.inexact) else dt
    return image.astype(out_dt)


def scale_and_translate(image, shape: Sequence[int], spatial_dims: Sequence[int], scale,
                        translation, method, antialias: bool = True,
                        precision=lax.Precision.HIGHEST):
    """Apply a scale and translation to an image (``jax.image.scale_and_translate``).

    Output pixel ``j`` of each spatial dimension samples the input at
    ``(j + 0.5 - translation) / scale - 0.5`` (pixel centres at half-integers); samples
    outside the input give 0. ``method``: LINEAR, LANCZOS3, LANCZOS5, CUBIC, CUBIC_PYTORCH
    or AREA (a ResizeMethod or its name); ``antialias`` widens the kernel when downsampling.

    Args:
      image: a JAX array.
      shape: the output shape, one entry per dimension of ``image``.
      spatial_dims: the K dimensions that ``scale`` and ``translation`` apply to.
      scale: K scales. translation: K translations (in output pixels).
    """
    image = jnp.asarray(image)
    shape = tuple(int(s) for s in shape)
    if len(shape) != image.ndim:
        raise ValueError(f"shape must have length equal to the number of dimensions of "
                         f"x;  {shape} vs {image.shape}")
    spatial_dims = tuple(int(d) for d in spatial_dims)
    assert len(spatial_dims) == np.shape(scale)[0] == np.shape(translation)[0], (
        "scale and translation need one entry per spatial dimension")
    m = _method(method)
    if m is ResizeMethod.NEAREST:
        raise ValueError("Nearest neighbor resampling is not currently supported for "
                         "scale_and_translate.")
    return _scale_and_translate(image, shape, spatial_dims, scale, translation, m,
                                antialias, precision)


def _resize_nearest(image, shape):
    for d, (n_in, n_out) in enumerate(zip(image.shape, shape)):
        if n_in == n_out:
            continue
        idx = np.floor((np.arange(n_out, dtype=np.float64) + 0.5) * (n_in / n_out))
        idx = np.minimum(idx.astype(np.int64), n_in - 1).astype(np.int32)
        image = jnp.take(image, jnp.asarray(idx), axis=d)
    return image


def resize(image, shape: Sequence[int], method, antialias: bool = True,
           precision=lax.Precision.HIGHEST):
    """Image resize (``jax.image.resize``).

    ``shape`` has one entry per dimension of ``image`` (batch and channel dimensions are
    simply left unchanged). ``method``: NEAREST (same dtype as the input), LINEAR, CUBIC,
    CUBIC_PYTORCH, LANCZOS3, LANCZOS5 or AREA (results in a floating dtype); ``antialias``
    low-pass filters when downsampling.
    """
    image = jnp.asarray(image)
    shape = tuple(int(s) for s in shape)
    if len(shape) != image.ndim:
        raise ValueError(f"shape must have length equal to the number of dimensions of "
                         f"x;  {shape} vs {image.shape}")
    m = _method(method)
    if m is ResizeMethod.NEAREST:
        return _resize_nearest(image, shape)
    dims = tuple(d for d in range(image.ndim) if image.shape[d] != shape[d])
    if not dims:
        dt = _compute_dtype(image)
        return image.astype(dt if not dtypes.issubdtype(image.dtype, np.inexact)
                            else image.dtype)
    scale = [shape[d] / image.shape[d] for d in dims]
    return _scale_and_translate(image, shape, dims, np.asarray(scale),
                                np.zeros(len(dims)), m, antialias, precision)
