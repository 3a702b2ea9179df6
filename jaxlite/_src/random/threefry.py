"""The Threefry-2x32 counter-based hash (20 rounds) and the key operations built on it.

``threefry2x32_p`` is the primitive: four uint32 operands (two key words, two count words,
broadcasting like elementwise ops) to two uint32 outputs. Its NumPy impl runs the 20 rounds
over chunks that fit in the L2 cache (the temporaries are reused in place) and spreads
large inputs over one worker thread per core (NumPy releases the GIL in its loops).

The key operations follow JAX's ``threefry_prng_impl`` exactly (seed, split, fold_in,
random_bits), including both layouts selected by ``jax_threefry_partitionable`` (default True
as in JAX 0.10.2): the partitionable layout hashes the 64-bit element index split into
(hi, lo) words; the original layout hashes a flat iota split into two halves.
"""
from __future__ import annotations

import math

import numpy as np

from jaxlite._src.config import config
from jaxlite._src.core.avals import ShapedArray
from jaxlite._src.core.primitive import NOT_DIFFERENTIABLE, Primitive
from jaxlite._src.lax import elementwise as lax
from jaxlite._src.lax import shape as lax_shape
from jaxlite._src.prims.base import broadcast_batcher, broadcast_shapes_or_scalar
from jaxlite._src.random import kernels as K
from jaxlite._src.random.fused import threefry_sample

__all__ = ["threefry2x32_p", "threefry_2x32", "threefry_seed", "threefry_split",
           "threefry_fold_in", "threefry_random_bits", "iota_2x32_shape", "UINT_DTYPES"]

UINT_DTYPES = {8: np.dtype(np.uint8), 16: np.dtype(np.uint16), 32: np.dtype(np.uint32),
               64: np.dtype(np.uint64)}
_U32 = np.dtype(np.uint32)
parallel_chunks = K.parallel_chunks


def threefry2x32_impl(k0, k1, x0, x1):
    """NumPy Threefry-2x32: uint32 operands broadcast together; returns two uint32 arrays."""
    shape = np.broadcast_shapes(np.shape(k0), np.shape(k1), np.shape(x0), np.shape(x1))
    n = math.prod(shape)
    out0 = np.empty(n, _U32)
    out1 = np.empty(n, _U32)
    if n == 0:
        return out0.reshape(shape), out1.reshape(shape)
    scalar_keys = np.ndim(k0) == 0 and np.ndim(k1) == 0
    if scalar_keys:
        k0, k1 = int(k0), int(k1)
    else:
        k0 = np.ascontiguousarray(np.broadcast_to(k0, shape)).reshape(-1)
        k1 = np.ascontiguousarray(np.broadcast_to(k1, shape)).reshape(-1)
    xs = []
    for x in (x0, x1):
        if np.ndim(x) == 0:
            xs.append(np.uint32(x))
        else:
            xs.append(np.ascontiguousarray(np.broadcast_to(x, shape)).reshape(-1))

    def run(lo, hi):
        tmp = np.empty(min(K.CHUNK, hi - lo), _U32)
        for s in range(lo, hi, K.CHUNK):
            e = min(s + K.CHUNK, hi)
            sl = slice(s, e)
            K.hash_chunk(k0 if scalar_keys else k0[sl], k1 if scalar_keys else k1[sl],
                         xs[0] if xs[0].ndim == 0 else xs[0][sl],
                         xs[1] if xs[1].ndim == 0 else xs[1][sl],
                         out0[sl], out1[sl], tmp[:e - s])

    parallel_chunks(run, n)
    return out0.reshape(shape), out1.reshape(shape)


class Threefry2x32(Primitive):
    """``threefry2x32(k1, k2, x1, x2) -> (y1, y2)``: the Threefry-2x32 block cipher
    (20 rounds) of the counts ``(x1, x2)`` under the key ``(k1, k2)``, elementwise."""
    name = "threefry2x32"
    multiple_results = True
    jvp = NOT_DIFFERENTIABLE

    def impl(self, k1, k2, x1, x2):
        return list(threefry2x32_impl(k1, k2, x1, x2))

    def abstract_eval(self, *avals):
        if any(a.dtype != _U32 for a in avals):
            raise TypeError("Arguments to threefry2x32 must have uint32 type, got "
                            f"{tuple(a.str_short() for a in avals)}")
        shape = broadcast_shapes_or_scalar("threefry2x32", [a.shape for a in avals])
        return [ShapedArray(shape, _U32)] * 2

    def batch(self, size, args, dims):
        out, d = broadcast_batcher(self, size, args, dims, {})
        return out, [d, d]

    def sharding_rule(self, avals):
        """Elementwise (size-1 dimensions broadcast)."""
        from jaxlite._src.prims.base import elementwise_sharding_rule
        return elementwise_sharding_rule(avals)

    def lower_py(self, ctx, ins):
        return None


threefry2x32_p = Threefry2x32()


def _word(key, i):
    """Word ``i`` of a raw uint32[2] key, as a scalar."""
    return lax_shape.reshape(lax_shape.slice(key, (i,), (i + 1,)), ())


def _u32(x):
    return lax.convert_element_type(x, np.uint32)


def threefry_2x32(keypair, count):
    """Apply the Threefry-2x32 hash to ``count`` (uint32, any shape) under ``keypair``
    (a uint32[2] key), as JAX's ``threefry_2x32``: the flattened counts (padded to even
    length) are split in halves that form the two count words."""
    key1, key2 = _word(keypair, 0), _word(keypair, 1)
    if not (key1.dtype == key2.dtype == count.dtype == _U32):
        raise TypeError("threefry_2x32 requires uint32 arguments, got "
                        f"{[str(x.dtype) for x in (key1, key2, count)]}")
    shape = tuple(count.shape)
    flat = lax_shape.reshape(count, (math.prod(shape),))
    odd = flat.shape[0] % 2
    if odd:
        flat = lax_shape.concatenate([flat, lax_shape.full((1,), 0, _U32)], 0)
    half = flat.shape[0] // 2
    x1 = lax_shape.slice(flat, (0,), (half,))
    x2 = lax_shape.slice(flat, (half,), (2 * half,))
    y1, y2 = threefry2x32_p.bind(key1, key2, x1, x2)
    out = lax_shape.concatenate([y1, y2], 0)
    if odd:
        out = lax_shape.slice(out, (0,), (2 * half - 1,))
    return lax_shape.reshape(out, shape)


def threefry_seed(seed):
    """The raw uint32[2] key of an integer scalar seed: the seed's 64 bits split into
    (high word, low word); a 32-bit seed gives a zero high word."""
    from jaxlite._src.core import dtypes
    if seed.shape:
        raise TypeError(f"PRNG key seed must be a scalar; got {seed!r}.")
    if not dtypes.issubdtype(seed.dtype, np.integer) or seed.dtype == np.bool_:
        raise TypeError(f"PRNG key seed must be an integer; got {seed!r}")
    if seed.dtype.itemsize == 8:
        hi = _u32(lax.shift_right_logical(seed, lax_shape.full((), 32, seed.dtype)))
    else:
        hi = lax_shape.full((), 0, _U32)
    lo = _u32(seed)
    return lax_shape.concatenate([lax_shape.reshape(hi, (1,)), lax_shape.reshape(lo, (1,))],
                                 0)


def iota_2x32_shape(shape):
    """The row-major index of each element of ``shape`` as 64 bits split into two uint32
    arrays ``(hi, lo)`` (``hi`` is a scalar zero when every index fits in 32 bits)."""
    n = math.prod(shape)
    if n > 2 ** 32:
        raise NotImplementedError("jaxlite: random bits arrays with more than 2**32 "
                                  "elements are not supported")
    if not shape:
        return lax_shape.full((), 0, _U32), lax_shape.full((), 0, _U32)
    lo = lax_shape.reshape(lax_shape.iota(_U32, n), tuple(shape))
    return lax_shape.full((), 0, _U32), lo


def threefry_split(key, shape):
    """``shape`` new raw keys from one uint32[2] key (shape + (2,))."""
    shape = tuple(int(d) for d in shape)
    if config.jax_threefry_partitionable:
        return threefry_sample(key, "keys", shape, _U32)
    num = math.prod(shape)
    counts = lax_shape.iota(_U32, num * 2)
    return lax_shape.reshape(threefry_2x32(key, counts), (*shape, 2))


def threefry_fold_in(key, data):
    """Fold a uint32 scalar ``data`` into a raw key."""
    return threefry_2x32(key, threefry_seed(_u32(data)))


def threefry_random_bits(key, bit_width, shape):
    """Uniform random bits of ``bit_width`` (8/16/32/64) and ``shape`` from a raw key."""
    if not (tuple(key.shape) == (2,) and key.dtype == _U32):
        raise TypeError("threefry_random_bits got invalid prng key.")
    if bit_width not in (8, 16, 32, 64):
        raise TypeError("requires 8-, 16-, 32- or 64-bit field width.")
    shape = tuple(int(d) for d in shape)
    dtype = UINT_DTYPES[bit_width]
    if config.jax_threefry_partitionable:
        return threefry_sample(key, "bits", shape, dtype)
    return _random_bits_original(key, bit_width, shape)


def _random_bits_original(key, bit_width, shape):
    size = math.prod(shape)
    max_count, r = divmod(bit_width * size, 32)
    if r > 0:
        max_count += 1
    nblocks, rem = divmod(max_count, np.iinfo(np.uint32).max)
    if nblocks:
        raise NotImplementedError("jaxlite: random bits arrays this large are not supported")
    bits = threefry_2x32(key, lax_shape.iota(_U32, rem))
    dtype = UINT_DTYPES[bit_width]
    if bit_width == 64:
        half = bits.shape[0] // 2
        h = lax.convert_element_type(lax_shape.slice(bits, (0,), (half,)), dtype)
        lo = lax.convert_element_type(lax_shape.slice(bits, (half,), (2 * half,)), dtype)
        bits = lax.bitwise_or(lax.shift_left(h, lax_shape.full((), 32, dtype)), lo)
    elif bit_width in (8, 16):
        per = 32 // bit_width
        b = lax_shape.broadcast_in_dim(bits, (per, max_count), (1,))
        sh = lax.mul(lax_shape.full((per, max_count), bit_width, _U32),
                     lax_shape.broadcasted_iota(_U32, (per, max_count), 0))
        b = lax.bitwise_and(lax.shift_right_logical(b, sh),
                            lax_shape.full((per, max_count), np.iinfo(dtype).max, _U32))
        b = lax_shape.reshape(lax_shape.transpose(b, (1, 0)), (max_count * per,))
        bits = lax_shape.slice(lax.convert_element_type(b, dtype), (0,), (size,))
    return lax_shape.reshape(bits, shape)
