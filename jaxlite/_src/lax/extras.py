"""Smaller ``jax.lax`` functions: mulhi, empty, broadcast_like, pbroadcast,
platform_dependent."""
from __future__ import annotations

import numpy as np

from jaxlite._src import tree_util
from jaxlite._src.core import dtypes
from jaxlite._src.lax.parallel import axis_index, psum
from jaxlite._src.lax.shape import broadcast_in_dim
from jaxlite._src.prims.conversion import select_n_p
from jaxlite._src.prims.elementwise import eq_p
from jaxlite._src.prims.misc_ops import empty_p, mulhi_p
from jaxlite._src.prims.operands import asarray_value

__all__ = ["mulhi", "empty", "broadcast_like", "pbroadcast", "platform_dependent",
           "reduce_precision"]


def mulhi(x, y, /):
    """Elementwise multiply-high: the upper N bits of the 2N-bit product of N-bit integers
    (signed or unsigned, as ``x`` and ``y``'s common dtype)."""
    return mulhi_p.bind(x, y)


def empty(shape, dtype, *, out_sharding=None):
    """An array of ``shape`` and ``dtype`` whose values are unspecified (backend dependent;
    zeros on jaxlite's CPU). Use it for buffers that are fully overwritten."""
    if isinstance(shape, (int, np.integer)):
        shape = (int(shape),)
    shape = tuple(int(d) for d in shape)
    if any(d < 0 for d in shape):
        raise TypeError(f"empty: shape must have every element be nonnegative, got {shape}.")
    return empty_p.bind(shape=shape, dtype=dtypes.canonicalize_dtype(dtype),
                        out_sharding=out_sharding)


def broadcast_like(arr, like_arr):
    """``arr`` broadcast (NumPy rules, trailing dimensions aligned) to the shape of
    ``like_arr``."""
    arr = asarray_value(arr)
    shape = tuple(np.shape(like_arr))
    nd = len(shape)
    if np.ndim(arr) > nd:
        raise ValueError(f"broadcast_like: cannot broadcast an array of shape "
                         f"{np.shape(arr)} to the shape {shape} of a lower rank.")
    lead = nd - np.ndim(arr)
    for k, d in enumerate(np.shape(arr)):
        if d not in (1, shape[lead + k]):
            raise ValueError(f"broadcast_like: incompatible shapes for broadcasting: "
                             f"{np.shape(arr)} and requested shape {shape}")
    if np.shape(arr) == shape:
        return arr
    return broadcast_in_dim(arr, shape, tuple(range(lead, nd)))


def pbroadcast(x, axis_name, source):
    """Collective broadcast over the mapped axis ``axis_name``: every member gets the value
    of member ``source`` (each leaf of pytree ``x``). Equivalent to a psum of ``x`` masked
    to ``source``."""
    if not isinstance(source, (int, np.integer)):
        raise TypeError(f"pbroadcast: source must be an int, got {source!r}")

    def one(v):
        v = asarray_value(v)
        me = eq_p.bind(axis_index(axis_name), np.int32(source))
        zeros = broadcast_in_dim(np.zeros((), v.dtype), np.shape(v), ())
        mask = broadcast_in_dim(me, np.shape(v), ())
        return psum(select_n_p.bind(mask, zeros, v), axis_name)
    return tree_util.tree_map(one, x)


def platform_dependent(*args, default=None, **per_platform):
    """Call the branch for the platform the computation runs on: ``cpu=`` on jaxlite (whose
    only platform is the CPU), else ``default``. Branches take ``*args``. Platform names are
    JAX's ('cpu', 'cuda', 'rocm', 'gpu', 'tpu')."""
    known = {"cpu", "cuda", "rocm", "gpu", "tpu"}
    for p in per_platform:
        if p not in known:
            raise ValueError(f"Unsupported platform {p!r} in platform_dependent: expected "
                             f"one of {sorted(known)} (or default=).")
    branch = per_platform.get("cpu", default)
    if branch is None:
        raise NotImplementedError(
            f"platform_dependent: no branch for platform cpu (given: "
            f"{', '.join(sorted(per_platform)) or 'none'}). Pass cpu= or default=.")
    return branch(*args)


def reduce_precision(operand, exponent_bits, mantissa_bits):
    """``operand`` rounded to the float format with ``exponent_bits`` exponent and
    ``mantissa_bits`` mantissa bits (e.g. 8, 7 for bfloat16; 5, 10 for float16), kept in its
    own dtype: round to nearest even, overflow to inf, values below the format's smallest
    normal number to zero. Differentiates as the identity rounded the same way."""
    from jaxlite._src.prims.misc_ops import reduce_precision_p
    eb, mb = int(exponent_bits), int(mantissa_bits)
    if eb != exponent_bits or mb != mantissa_bits:
        raise TypeError("reduce_precision: exponent_bits and mantissa_bits must be ints, got "
                        f"{exponent_bits!r}, {mantissa_bits!r}")
    return reduce_precision_p.bind(asarray_value(operand), exponent_bits=eb, mantissa_bits=mb)
