"""jax.nn.initializers: ``init(key, shape, dtype) -> array`` factories with JAX's fan
computations (variance scaling and its glorot/lecun/he/kaiming/xavier presets, orthogonal,
delta_orthogonal, constant, normal, uniform, truncated_normal, zeros, ones)."""
from __future__ import annotations

import functools
import math
from typing import Protocol

import numpy as np

from jaxlite._src.core import dtypes

__all__ = ["Initializer", "zeros", "ones", "constant", "uniform", "normal",
           "truncated_normal", "variance_scaling", "glorot_uniform", "glorot_normal",
           "xavier_uniform", "xavier_normal", "lecun_uniform", "lecun_normal", "he_uniform",
           "he_normal", "kaiming_uniform", "kaiming_normal", "orthogonal", "delta_orthogonal"]


class Initializer(Protocol):
    """The signature of an initializer: ``(key, shape, dtype) -> Array``."""

    def __call__(self, key, shape, dtype=None):
        ...


def _random():
    from jaxlite._src.random import samplers
    return samplers


def _jnp():
    from jaxlite._src.numpy import namespace as jnp
    return jnp


def _shape(shape):
    return tuple(int(d) for d in (shape if isinstance(shape, (tuple, list)) else (shape,)))


def _dtype(dtype):
    return dtypes.canonicalize_dtype(dtype if dtype is not None else
                                     dtypes.default_float_dtype())


def zeros(key, shape, dtype=None, out_sharding=None):
    """All zeros (``key`` is unused)."""
    return _jnp().zeros(_shape(shape), _dtype(dtype))


def ones(key, shape, dtype=None, out_sharding=None):
    """All ones (``key`` is unused)."""
    return _jnp().ones(_shape(shape), _dtype(dtype))


def constant(value, dtype=None):
    """An initializer filling with ``value``."""
    def init(key, shape, dtype=dtype, out_sharding=None):
        return _jnp().full(_shape(shape), value, dtype=_dtype(dtype))
    return init


def uniform(scale=1e-2, dtype=None):
    """Uniform on ``[0, scale)``."""
    def init(key, shape, dtype=dtype, out_sharding=None):
        dt = _dtype(dtype)
        return _random().uniform(key, _shape(shape), dt) * _jnp().array(scale, dt)
    return init


def normal(stddev=1e-2, dtype=None):
    """Normal with standard deviation ``stddev``."""
    def init(key, shape, dtype=dtype, out_sharding=None):
        dt = _dtype(dtype)
        return _random().normal(key, _shape(shape), dt) * _jnp().array(stddev, dt)
    return init


def truncated_normal(stddev=1e-2, dtype=None, lower=-2.0, upper=2.0):
    """Normal truncated to ``[lower, upper]`` standard deviations, scaled by ``stddev``."""
    def init(key, shape, dtype=dtype, out_sharding=None):
        dt = _dtype(dtype)
        return _random().truncated_normal(key, lower, upper, _shape(shape), dt) * \
            _jnp().array(stddev, dt)
    return init


def _compute_fans(shape, in_axis=-2, out_axis=-1, batch_axis=()):
    """(fan_in, fan_out) of a weight of ``shape``: the sizes of the ``in_axis`` and
    ``out_axis`` dimensions (an int or a sequence of axes each), each times the receptive
    field (the product of the dimensions that are none of in, out or batch axes). As in JAX,
    the axes are read as given even when they coincide (``nnx.Embed`` uses in_axis=-2,
    out_axis=0 on a 2-D table)."""
    if isinstance(in_axis, int) and in_axis == -2 and len(shape) <= 1:
        raise ValueError(f"Can't compute input and output sizes of a {len(shape)}-"
                         "dimensional weights tensor with default in_axis. Must be at least "
                         "2D or specify in_axis explicitly.")

    def size(axes):
        axes = (axes,) if isinstance(axes, int) else tuple(axes)
        return math.prod(shape[a] for a in axes)

    in_size, out_size, batch = size(in_axis), size(out_axis), size(batch_axis)
    receptive = math.prod(shape) / in_size / out_size / batch
    return in_size * receptive, out_size * receptive


def _complex_uniform(key, shape, dtype):
    """Samples uniform on the unit-variance disk of the complex plane (JAX's sampler)."""
    from jaxlite._src.random.keys import split
    jnp, random = _jnp(), _random()
    key_r, key_theta = split(key)
    real = np.array(0, dtype).real.dtype
    dtype = dtypes.to_complex_dtype(real)
    r = jnp.sqrt(2 * random.uniform(key_r, shape, real)).astype(dtype)
    theta = 2 * np.pi * random.uniform(key_theta, shape, real).astype(dtype)
    return r * jnp.exp(1j * theta)


def _complex_truncated_normal(key, upper, shape, dtype):
    """Samples of the unit-variance complex normal whose modulus is truncated to ``upper``
    (JAX's sampler)."""
    from jaxlite._src.random.keys import split
    jnp, random = _jnp(), _random()
    key_r, key_theta = split(key)
    real = np.array(0, dtype).real.dtype
    dtype = dtypes.to_complex_dtype(real)
    t = ((1 - jnp.exp(jnp.array(-(upper ** 2), dtype)))
         * random.uniform(key_r, shape, real).astype(dtype))
    r = jnp.sqrt(-jnp.log(1 - t))
    theta = 2 * np.pi * random.uniform(key_theta, shape, real).astype(dtype)
    return r * jnp.exp(1j * theta)


def variance_scaling(scale, mode, distribution, in_axis=-2, out_axis=-1, batch_axis=(),
                     dtype=None):
    """Samples with variance ``scale / n`` from a truncated normal, normal or uniform
    ``distribution``; ``n`` is, by ``mode``, fan_in, fan_out, their mean (fan_avg) or
    geometric mean (fan_geo_avg). A complex ``dtype`` samples a truncated complex normal or
    a uniform disk, as JAX. The mode and distribution are checked when sampling, as JAX."""
    def init(key, shape, dtype=dtype, out_sharding=None):
        jnp, random = _jnp(), _random()
        shape = _shape(shape)
        dt = _dtype(dtype)
        fan_in, fan_out = _compute_fans(shape, in_axis, out_axis, batch_axis)
        if mode == "fan_in":
            denom = fan_in
        elif mode == "fan_out":
            denom = fan_out
        elif mode == "fan_avg":
            denom = (fan_in + fan_out) / 2
        elif mode == "fan_geo_avg":
            denom = (fan_in * fan_out) ** 0.5
        else:
            raise ValueError(f"invalid mode for variance scaling initializer: {mode}")
        variance = jnp.array(scale / denom, dtype=dt)
        real = dtypes.issubdtype(dt, np.floating)
        if distribution == "truncated_normal":
            if real:
                # the standard deviation of a unit normal truncated to (-2, 2)
                stddev = jnp.sqrt(variance) / jnp.array(0.87962566103423978, dt)
                return random.truncated_normal(key, -2, 2, shape, dt) * stddev
            # that of a unit complex normal whose modulus is truncated to 2
            stddev = jnp.sqrt(variance) / jnp.array(0.95311164380491208, dt)
            return _complex_truncated_normal(key, 2, shape, dt) * stddev
        if distribution == "normal":
            return random.normal(key, shape, dt) * jnp.sqrt(variance)
        if distribution == "uniform":
            if real:
                return random.uniform(key, shape, dt, -1) * jnp.sqrt(3 * variance)
            return _complex_uniform(key, shape, dt) * jnp.sqrt(variance)
        raise ValueError("invalid distribution for variance scaling initializer: "
                         f"{distribution}")
    return init


glorot_uniform = xavier_uniform = functools.partial(variance_scaling, 1.0, "fan_avg",
                                                    "uniform")
glorot_normal = xavier_normal = functools.partial(variance_scaling, 1.0, "fan_avg",
                                                  "truncated_normal")
lecun_uniform = functools.partial(variance_scaling, 1.0, "fan_in", "uniform")
lecun_normal = functools.partial(variance_scaling, 1.0, "fan_in", "truncated_normal")
he_uniform = kaiming_uniform = functools.partial(variance_scaling, 2.0, "fan_in", "uniform")
he_normal = kaiming_normal = functools.partial(variance_scaling, 2.0, "fan_in",
                                               "truncated_normal")


def orthogonal(scale=1.0, column_axis=-1, dtype=None):
    """A (semi-)orthogonal matrix, from the QR decomposition of a normal sample."""
    def init(key, shape, dtype=dtype, out_sharding=None):
        jnp, random = _jnp(), _random()
        shape = _shape(shape)
        dt = _dtype(dtype)
        if len(shape) < 2:
            raise ValueError("orthogonal initializer requires at least a 2D shape")
        n_cols = shape[column_axis]
        n_rows = math.prod(shape) // n_cols
        mshape = (n_cols, n_rows) if n_rows < n_cols else (n_rows, n_cols)
        q, r = jnp.linalg.qr(random.normal(key, mshape, dt))
        q = q * jnp.sign(jnp.diag(r))
        if n_rows < n_cols:
            q = q.T
        q = jnp.reshape(q, tuple(np.delete(shape, column_axis)) + (n_cols,))
        return jnp.moveaxis(q, -1, column_axis) * scale
    return init


def delta_orthogonal(scale=1.0, column_axis=-1, dtype=None):
    """A convolution kernel that is orthogonal at the spatial centre and zero elsewhere."""
    def init(key, shape, dtype=dtype, out_sharding=None):
        jnp = _jnp()
        shape = _shape(shape)
        dt = _dtype(dtype)
        if len(shape) not in (3, 4, 5):
            raise ValueError("Delta orthogonal initializer requires a 3D, 4D or 5D shape.")
        if shape[-1] < shape[-2]:
            raise ValueError("`fan_in` must be less or equal than `fan_out`. ")
        ortho = orthogonal(scale=scale, column_axis=column_axis, dtype=dt)(key, shape[-2:])
        centre = tuple((k - 1) // 2 for k in shape[:-2])
        return jnp.zeros(shape, dt).at[centre + (Ellipsis,)].set(ortho)
    return init
