"""Per-key NumPy key operations for the gamma sampler.

JAX draws every element of a gamma sample with its own key, running the same small program
per key (under ``vmap`` for threefry keys, under ``lax.map`` for the others, so that the
``rbg`` implementations' ``rng_bit_generator`` sees one key at a time). The sampler in
``gamma.py`` advances all elements at once instead, so it needs each key operation
*vectorised over independent keys*: split every key into ``n`` keys, and draw one scalar of
random bits, one uniform or one standard normal from every key, each exactly as the key's
PRNG implementation does for a single key:

* threefry2x32, partitionable layout (JAX's default): element ``i`` of a key's stream is
  ``threefry2x32(key, (0, i))``; the fused kernels of ``fused.py`` serve it.
* threefry2x32, original layout: the counts ``0 .. 2n-1`` are hashed as two halves
  ``(i, n + i)``; split keys are the concatenated outputs read in pairs, and a scalar draw
  is the first output word of ``(0, 0)`` (both words for 64 bits).
* rbg: each half of the key (words 0-1 and 2-3) is split as a threefry key; bits come from
  ``rng_bit_generator`` (Philox-4x32-10 on CPU): a scalar draw is the first word of the
  first block (the first two words for 64 bits).
* unsafe_rbg: bits as rbg; ``split`` keeps the blocks 0, 10, 20, ... of the key's Philox
  stream (rows of a ``(10 n, 4)`` draw).
"""
from __future__ import annotations

import numpy as np

from jaxlite._src.core import dtypes
from jaxlite._src.random.rng_bit_generator import philox_4x32
from jaxlite._src.random import special
from jaxlite._src.random.fused import sample_impl
from jaxlite._src.random.threefry import threefry2x32_impl

__all__ = ["key_ops", "KEY_WORDS"]

_U32 = np.dtype(np.uint32)
_U64 = np.dtype(np.uint64)
_F32 = np.dtype(np.float32)
_FUSED_UNIFORM = (np.dtype(np.float16), _F32, np.dtype(np.float64))
_UNSAFE_STRIDE = 10
KEY_WORDS = {"fry": 2, "rbg": 4, "urbg": 4}


def _unit_from_bits(draw_bits, dtype):
    """Uniform [0, 1) floats of ``dtype`` from per-key bits (``draw_bits(width)``): the top
    mantissa bits of a random word under an exponent of one, minus one."""
    info = dtypes.finfo(dtype)
    width, nmant = info.bits, info.nmant
    word_bits = width if nmant >= 8 else 8
    udt = np.dtype(f"uint{width}")
    words = draw_bits(word_bits).astype(udt)
    mant = words >> udt.type(word_bits - nmant)
    one = np.array(1.0, dtype).view(udt)
    return (mant | one).view(dtype) - dtype.type(1)


def _normal_from_unit(u):
    """sqrt(2) erf_inv(v) for v uniform in (-1, 1) built from ``u`` in [0, 1), with the
    rounding of JAX's ``normal`` (one fused multiply-add in float32)."""
    dtype = u.dtype
    lo = np.nextafter(dtype.type(-1), dtype.type(0))
    width = dtype.type(1) - lo
    if dtype == _F32:
        from jaxlite._src.random import xla_math as X
        v = X.fma_f32(u, width, lo)
    else:
        v = u * width + lo
    v = np.maximum(lo, v)
    return dtype.type(np.sqrt(2)) * special.erf_inv_impl(v)


class _KeyOps:
    """Key operations over a batch of raw keys ``keys`` (m, words)."""

    def split(self, keys, n):
        """(m, n, words): ``n`` new keys from each key."""
        raise NotImplementedError

    def bits(self, keys, width):
        """(m,) unsigned words of ``width`` bits: one scalar draw from each key."""
        raise NotImplementedError

    def unit(self, keys, dtype):
        """(m,) uniforms in [0, 1): one scalar ``uniform`` draw from each key."""
        return _unit_from_bits(lambda w: self.bits(keys, w), dtype)

    def normal(self, keys, dtype):
        """(m,) standard normals: one scalar ``normal`` draw from each key."""
        return _normal_from_unit(self.unit(keys, dtype))


class _ThreefryPartitionable(_KeyOps):
    def split(self, keys, n):
        return sample_impl(keys, "keys", (n,), _U32)

    def bits(self, keys, width):
        return sample_impl(keys, "bits", (), np.dtype(f"uint{width}"))

    def unit(self, keys, dtype):
        if dtype in _FUSED_UNIFORM:
            return sample_impl(keys, "uniform", (), dtype)
        return super().unit(keys, dtype)

    def normal(self, keys, dtype):
        if dtype == _F32:
            return sample_impl(keys, "normal", (), dtype)
        return super().normal(keys, dtype)


class _ThreefryOriginal(_KeyOps):
    def split(self, keys, n):
        k0, k1 = keys[:, :1], keys[:, 1:2]
        first = np.arange(n, dtype=_U32)
        y0, y1 = threefry2x32_impl(k0, k1, first[None, :], first[None, :] + _U32.type(n))
        return np.concatenate([y0, y1], axis=1).reshape(keys.shape[0], n, 2)

    def bits(self, keys, width):
        zero = np.zeros(keys.shape[0], _U32)
        if width == 64:
            y0, y1 = threefry2x32_impl(keys[:, 0], keys[:, 1], zero, zero + _U32.type(1))
            return (y0.astype(_U64) << _U64.type(32)) | y1.astype(_U64)
        y0, _ = threefry2x32_impl(keys[:, 0], keys[:, 1], zero, zero)
        return y0.astype(np.dtype(f"uint{width}"))


def _philox_blocks(keys, block):
    """Philox block ``block`` (uint64 array or int) of each rbg key's stream: four words."""
    w = keys.astype(_U64)
    s0 = w[:, 0] | (w[:, 1] << _U64.type(32))
    s1 = w[:, 2] | (w[:, 3] << _U64.type(32))
    idx = np.asarray(block, _U64)
    ctr = s1 + idx                                   # wraps mod 2**64
    high = s0 + (ctr < idx).astype(_U64)
    mask = _U64.type(0xFFFFFFFF)
    c0, c1 = (ctr & mask).astype(_U32), (ctr >> _U64.type(32)).astype(_U32)
    c2, c3 = (high & mask).astype(_U32), (high >> _U64.type(32)).astype(_U32)
    return philox_4x32(w[:, 0], w[:, 1], c0, c1, c2, c3)


class _Rbg(_KeyOps):
    def __init__(self, halves):
        self._halves = halves          # threefry key operations for the two halves

    def split(self, keys, n):
        keys = np.ascontiguousarray(keys)
        first = self._halves.split(np.ascontiguousarray(keys[:, :2]), n)
        second = self._halves.split(np.ascontiguousarray(keys[:, 2:]), n)
        return np.concatenate([first, second], axis=2)

    def bits(self, keys, width):
        y = _philox_blocks(keys, 0)
        if width == 64:
            return y[0].astype(_U64) | (y[1].astype(_U64) << _U64.type(32))
        return y[0].astype(np.dtype(f"uint{width}"))


class _UnsafeRbg(_Rbg):
    def split(self, keys, n):
        m = keys.shape[0]
        blocks = np.arange(n, dtype=_U64) * _U64.type(_UNSAFE_STRIDE)
        rep = np.repeat(keys, n, axis=0)
        words = _philox_blocks(rep, np.tile(blocks, m))
        return np.stack(words, axis=-1).reshape(m, n, 4)


_PARTITIONABLE = _ThreefryPartitionable()
_ORIGINAL = _ThreefryOriginal()


def key_ops(impl, partitionable):
    """The key operations of the PRNG implementation tagged ``impl`` ("fry", "rbg" or
    "urbg") under the threefry layout chosen by ``partitionable``."""
    fry = _PARTITIONABLE if partitionable else _ORIGINAL
    if impl == "fry":
        return fry
    if impl == "rbg":
        return _Rbg(fry)
    if impl == "urbg":
        return _UnsafeRbg(fry)
    raise NotImplementedError(f"gamma: unsupported PRNG implementation {impl!r}")
