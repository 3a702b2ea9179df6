"""The ``rng_bit_generator`` primitive (as JAX's ``lax.rng_bit_generator_p``): a stateful-style
bit generator whose state is an explicit key, reproducing what XLA computes on CPU.

It is exported by ``jax.lax`` but lives with the other bit generators here, because its
Threefry blocks are computed by this package's cipher kernels (``threefry``, ``kernels``).

The key is ``uint32[4]`` (or ``uint64[2]`` with x64), read as two 64-bit words: ``s0`` (words
0, 1, little end first) is the cipher key, ``s1`` (words 2, 3) is a counter. Block ``i`` of the
output is the cipher applied to counter ``s1 + i``; the returned key is the input with ``s1``
advanced by the number of blocks used (mod 2**64).

- Philox-4x32-10 (``RNG_PHILOX``, and ``RNG_DEFAULT`` on CPU): key ``(lo s0, hi s0)``, 128-bit
  counter ``(s1 + i) + 2**64 * s0`` (the carry out of the low half goes into the high half),
  four uint32 words per block taken in order.
- Threefry-2x32-20 (``RNG_THREE_FRY``): key ``(lo s0, hi s0)``, counter words ``(lo, hi)`` of
  ``s1 + i`` (mod 2**64), two uint32 words per block. For 64-bit outputs block ``j`` gives
  element ``j`` (``y0 | y1 << 32``). For narrower outputs the two words of a block land in
  neighbouring positions along one axis: the first even-sized axis, or (if none) the first
  longest axis, which is padded to even length; blocks run in row-major order over the shape
  with that axis halved.
- 8- and 16-bit outputs keep the low bits of the uint32 words; 64-bit Philox outputs join two
  consecutive words (low word first).

These layouts were found by observing JAX 0.10.2 on CPU; the ciphers follow Salmon et al.,
"Parallel random numbers: as easy as 1, 2, 3" (SC 2011).

The primitive is not differentiable. Its batching rule is JAX's: under ``vmap`` over keys only
the first key is used, to draw ``(batch, *shape)`` bits, and only the first key is advanced.
"""
from __future__ import annotations

import enum
import math
import operator

import numpy as np

from jaxlite._src.core import dtypes
from jaxlite._src.core.avals import ShapedArray
from jaxlite._src.core.primitive import NOT_DIFFERENTIABLE, Primitive
from jaxlite._src.core.trace import Tracer
from jaxlite._src.lax import shape as lax_shape
from jaxlite._src.prims.batch_util import moveaxis
from jaxlite._src.random import threefry

__all__ = ["RandomAlgorithm", "rng_bit_generator_p", "rng_bit_generator", "philox_4x32"]

_U32 = np.dtype(np.uint32)
_U64 = np.dtype(np.uint64)
_MASK32 = 0xFFFFFFFF
_MASK64 = (1 << 64) - 1
_OUT_DTYPES = tuple(np.dtype(d) for d in (np.uint8, np.uint16, np.uint32, np.uint64))

# Philox-4x32 round multipliers and Weyl key increments (Salmon et al. 2011, table 2)
_PHILOX_M0, _PHILOX_M1 = 0xD2511F53, 0xCD9E8D57
_PHILOX_W0, _PHILOX_W1 = 0x9E3779B9, 0xBB67AE85
_PHILOX_ROUNDS = 10
_CHUNK_BLOCKS = 1 << 14


class RandomAlgorithm(enum.IntEnum):
    """The algorithm ``rng_bit_generator`` uses (``RNG_DEFAULT`` is Philox on CPU)."""
    RNG_DEFAULT = 0
    RNG_THREE_FRY = 1
    RNG_PHILOX = 2

    def __str__(self):
        return self.name


# ---------------------------------------------------------------------------- the ciphers

def philox_4x32(k0, k1, c0, c1, c2, c3):
    """Philox-4x32-10 of the counter words ``c0..c3`` (uint32 arrays of one shape) under the
    key ``(k0, k1)`` (Python ints); returns four new uint32 arrays."""
    c0, c1, c2, c3 = (np.asarray(c, _U32) for c in (c0, c1, c2, c3))
    m0, m1 = np.uint64(_PHILOX_M0), np.uint64(_PHILOX_M1)
    shift = np.uint64(32)
    for r in range(_PHILOX_ROUNDS):
        rk0 = np.uint32((k0 + r * _PHILOX_W0) & _MASK32)
        rk1 = np.uint32((k1 + r * _PHILOX_W1) & _MASK32)
        p0 = c0.astype(_U64) * m0
        p1 = c2.astype(_U64) * m1
        hi0 = (p0 >> shift).astype(_U32)
        hi1 = (p1 >> shift).astype(_U32)
        c0, c1, c2, c3 = (hi1 ^ c1 ^ rk0, p1.astype(_U32), hi0 ^ c3 ^ rk1, p0.astype(_U32))
    return c0, c1, c2, c3


def _split64(x):
    """(low, high) uint32 words of uint64 values."""
    return x.astype(_U32), (x >> np.uint64(32)).astype(_U32)


def _state(key):
    """(s0, s1) Python ints of a raw key (uint32[4] or uint64[2])."""
    key = np.asarray(key)
    if key.dtype == _U64:
        return int(key[0]), int(key[1])
    w = [int(v) for v in key]
    return w[0] | w[1] << 32, w[2] | w[3] << 32


def _new_key(key, s1, nblocks):
    key = np.array(key, copy=True)
    s1 = (s1 + nblocks) & _MASK64
    if key.dtype == _U64:
        key[1] = s1
    else:
        key[2], key[3] = s1 & _MASK32, s1 >> 32
    return key


def _counters(s1, lo, hi):
    """Counters ``s1 + i`` for blocks ``i`` in ``[lo, hi)`` (uint64, wrapping) and whether
    each addition carried out of 64 bits."""
    idx = np.arange(lo, hi, dtype=_U64)
    ctr = idx + np.uint64(s1)
    return ctr, ctr < idx


def _philox_words(s0, s1, nblocks):
    """The first ``nblocks`` Philox blocks as a flat uint32 array of ``4 * nblocks`` words."""
    out = np.empty((nblocks, 4), _U32)
    k0, k1 = s0 & _MASK32, s0 >> 32

    def run(lo, hi):
        for s in range(lo, hi, _CHUNK_BLOCKS):
            e = min(s + _CHUNK_BLOCKS, hi)
            ctr, carry = _counters(s1, s, e)
            high = carry.astype(_U64) + np.uint64(s0)  # wraps mod 2**64 like the counter
            c0, c1 = _split64(ctr)
            c2, c3 = _split64(high)
            for j, y in enumerate(philox_4x32(k0, k1, c0, c1, c2, c3)):
                out[s:e, j] = y

    threefry.parallel_chunks(run, nblocks, _CHUNK_BLOCKS)
    return out.reshape(-1)


def _threefry_blocks(s0, s1, nblocks):
    """The first ``nblocks`` Threefry blocks as two uint32 arrays (first, second word)."""
    ctr, _ = _counters(s1, 0, nblocks)
    lo, hi = _split64(ctr)
    return threefry.threefry2x32_impl(s0 & _MASK32, s0 >> 32, lo, hi)


def threefry_pair_axis(shape):
    """The axis along which the two words of a Threefry block are laid side by side."""
    for d, n in enumerate(shape):
        if n % 2 == 0:
            return d
    return max(range(len(shape)), key=lambda d: (shape[d], -d))


def _philox_bits(key, shape, dtype):
    s0, s1 = _state(key)
    n = math.prod(shape)
    nwords = n * (2 if dtype == _U64 else 1)
    nblocks = -(-nwords // 4)
    words = _philox_words(s0, s1, nblocks)[:nwords]
    if dtype == _U64:
        pairs = words.reshape(n, 2).astype(_U64)
        bits = pairs[:, 0] | (pairs[:, 1] << np.uint64(32))
    else:
        bits = words.astype(dtype)
    return _new_key(key, s1, nblocks), bits.reshape(shape)


def _threefry_bits(key, shape, dtype):
    s0, s1 = _state(key)
    n = math.prod(shape)
    if dtype == _U64:
        y0, y1 = _threefry_blocks(s0, s1, n)
        bits = y0.astype(_U64) | (y1.astype(_U64) << np.uint64(32))
        return _new_key(key, s1, n), bits.reshape(shape)
    if not shape:
        y0, _ = _threefry_blocks(s0, s1, 1)
        return _new_key(key, s1, 1), y0.reshape(()).astype(dtype)
    d = threefry_pair_axis(shape)
    half = -(-shape[d] // 2)
    block_shape = shape[:d] + (half,) + shape[d + 1:]
    nblocks = math.prod(block_shape)
    y0, y1 = _threefry_blocks(s0, s1, nblocks)
    both = np.stack([y0.reshape(block_shape), y1.reshape(block_shape)], axis=d + 1)
    words = both.reshape(shape[:d] + (2 * half,) + shape[d + 1:])
    if 2 * half != shape[d]:
        words = words[(slice(None),) * d + (slice(0, shape[d]),)]
    return _new_key(key, s1, nblocks), np.ascontiguousarray(words).astype(dtype)


def rng_bit_generator_impl(key, shape, dtype, algorithm):
    """NumPy ``rng_bit_generator`` of one raw key: (new key, bits of ``shape``/``dtype``)."""
    shape = tuple(shape)
    dtype = np.dtype(dtype)
    if algorithm == RandomAlgorithm.RNG_THREE_FRY:
        return _threefry_bits(key, shape, dtype)
    return _philox_bits(key, shape, dtype)


# ----------------------------------------------------------------------------- primitive

def _check_key_aval(key):
    ok = ((key.dtype == _U32 and tuple(key.shape) == (4,))
          or (key.dtype == _U64 and tuple(key.shape) == (2,)))
    if not ok:
        raise TypeError(
            "rng_bit_generator: the key must be a uint32[4] array (or uint64[2] with "
            f"jax_enable_x64), got {key.str_short(short_dtypes=False)}. To draw bits for "
            "several keys use jax.vmap, or jax.random with impl='rbg'.")


class RngBitGenerator(Primitive):
    """``rng_bit_generator[shape, dtype, algorithm, out_sharding](key) -> (new_key, bits)``."""
    name = "rng_bit_generator"
    multiple_results = True
    weak_rule = "never"
    jvp = NOT_DIFFERENTIABLE

    def check_operands(self, vals, params):
        key = vals[0]
        self.abstract_eval(ShapedArray(np.shape(key), np.asarray(key).dtype), **params)

    def impl(self, key, shape, dtype, algorithm, out_sharding=None):
        return list(rng_bit_generator_impl(key, shape, dtype, algorithm))

    def abstract_eval(self, key, shape, dtype, algorithm, out_sharding=None):
        _check_key_aval(key)
        dtype = np.dtype(dtype)
        if dtype not in _OUT_DTYPES:
            raise TypeError(f"rng_bit_generator: unsupported dtype {dtype.name}")
        if any(d < 0 for d in shape):
            raise ValueError(f"rng_bit_generator: shape must have non-negative sizes, got "
                             f"{tuple(shape)}")
        return [ShapedArray(tuple(key.shape), key.dtype), ShapedArray(tuple(shape), dtype)]

    def batch(self, size, args, dims, shape, dtype, algorithm, out_sharding=None):
        # JAX's rule: bits for the whole batch come from the first key, and only that key
        # advances (the keys are not treated independently)
        (keys,), (bd,) = args, dims
        params = dict(dtype=dtype, algorithm=algorithm, out_sharding=out_sharding)
        if bd is None:
            return self.bind(keys, shape=shape, **params), [None, None]
        keys = moveaxis(keys, bd, 0)
        first = lax_shape.index_in_dim(keys, 0, 0, keepdims=False)
        new_key, bits = self.bind(first, shape=(size, *shape), **params)
        new_keys = lax_shape.dynamic_update_index_in_dim(keys, new_key, 0, 0)
        return [new_keys, bits], [0, 0]


rng_bit_generator_p = RngBitGenerator()


def _shape_arg(shape):
    if isinstance(shape, Tracer) or not hasattr(shape, "__iter__"):
        shape = (shape,)
    out = []
    for d in shape:
        try:
            if isinstance(d, Tracer):
                raise TypeError
            out.append(operator.index(d))
        except TypeError:
            raise TypeError("Shapes must be 1D sequences of concrete values of integer type, "
                            f"got {tuple(shape)}.") from None
    return tuple(out)


def rng_bit_generator(key, shape, dtype=np.uint32, algorithm=RandomAlgorithm.RNG_DEFAULT,
                      *, out_sharding=None):
    """Random bits of ``shape`` and unsigned ``dtype`` from the generator state ``key``.

    Returns ``(new_key, bits)``. ``key`` is a uint32[4] array (uint64[2] with x64); pass
    ``new_key`` to the next call to continue the stream. ``algorithm`` is a
    ``RandomAlgorithm`` (``RNG_DEFAULT`` is Philox on CPU, as in XLA). The bits equal JAX's
    on CPU; like JAX's, they may differ on other backends, and under ``vmap`` only the first
    key is used (prefer ``jax.random`` for independent streams).
    """
    shape = _shape_arg(shape)
    dtypes.check_user_dtype_supported(dtype, "rng_bit_generator")
    dtype = dtypes.canonicalize_dtype(np.dtype(dtype))
    if dtype not in _OUT_DTYPES:
        raise TypeError(f"rng_bit_generator: unsupported dtype {dtype.name}")
    if not isinstance(algorithm, RandomAlgorithm):
        try:
            algorithm = RandomAlgorithm(algorithm)
        except ValueError:
            raise ValueError(f"rng_bit_generator: unknown algorithm {algorithm!r}; use one of "
                             f"{[str(a) for a in RandomAlgorithm]}") from None
    new_key, bits = rng_bit_generator_p.bind(key, shape=shape, dtype=dtype,
                                             algorithm=algorithm, out_sharding=out_sharding)
    return new_key, bits
