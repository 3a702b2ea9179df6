"""Key operations of the ``rbg`` and ``unsafe_rbg`` PRNG implementations (as JAX's).

Both use ``uint32[4]`` keys and draw their bits with ``lax.rng_bit_generator`` (Philox on
CPU, the key's words 2-3 acting as the counter). They differ in how keys are derived:

- ``rbg``: a key is two Threefry keys side by side (words 0-1 and 2-3). Seeding puts the
  Threefry seed key in both halves; ``split`` and ``fold_in`` apply Threefry's ``split`` /
  ``fold_in`` to each half (so they follow ``jax_threefry_partitionable`` too).
- ``unsafe_rbg``: ``split`` keeps every tenth row of a ``(10 * num, 4)`` draw from the key,
  and ``fold_in`` XORs the key with the tenth row of a ``(10, 4)`` draw from the ``rbg`` seed
  key of the data. Cheap, with no guarantee of independence.

``rng_bit_generator`` treats a batch of keys as JAX does (only the first key draws), and so
do these operations under ``vmap`` over keys, bit for bit like JAX.
"""
from __future__ import annotations

import math

import numpy as np

from jaxlite._src.lax import elementwise as lax
from jaxlite._src.lax import shape as lax_shape
from jaxlite._src.random.rng_bit_generator import rng_bit_generator
from jaxlite._src.random import threefry

__all__ = ["rbg_seed", "rbg_split", "rbg_fold_in", "rbg_random_bits", "unsafe_rbg_split",
           "unsafe_rbg_fold_in"]

_U32 = np.dtype(np.uint32)
_UNSAFE_STRIDE = 10   # rows drawn per derived key by the unsafe_rbg key operations


def _halves(key):
    """The two Threefry keys (uint32[2] each) held in a raw rbg key."""
    return lax_shape.slice(key, (0,), (2,)), lax_shape.slice(key, (2,), (4,))


def rbg_seed(seed):
    """The raw uint32[4] key of an integer scalar seed: the Threefry seed key twice."""
    half = threefry.threefry_seed(seed)
    return lax_shape.concatenate([half, half], 0)


def rbg_split(key, shape):
    """``shape`` new raw keys (shape + (4,)): each half split with Threefry."""
    shape = tuple(int(d) for d in shape)
    first, second = _halves(key)
    return lax_shape.concatenate([threefry.threefry_split(first, shape),
                                  threefry.threefry_split(second, shape)], len(shape))


def rbg_fold_in(key, data):
    """Fold the uint32 scalar ``data`` into each Threefry half of ``key``."""
    first, second = _halves(key)
    return lax_shape.concatenate([threefry.threefry_fold_in(first, data),
                                  threefry.threefry_fold_in(second, data)], 0)


def rbg_random_bits(key, bit_width, shape):
    """Random bits of ``bit_width`` (8/16/32/64) and ``shape``, drawn with
    ``rng_bit_generator`` (default algorithm) from the raw key."""
    if not (tuple(key.shape) == (4,) and key.dtype == _U32):
        raise TypeError(f"rbg random_bits got an invalid PRNG key: expected uint32[4], got "
                        f"{key.dtype}{list(key.shape)}.")
    if bit_width not in threefry.UINT_DTYPES:
        raise TypeError("requires 8-, 16-, 32- or 64-bit field width.")
    _, bits = rng_bit_generator(key, tuple(int(d) for d in shape),
                                dtype=threefry.UINT_DTYPES[bit_width])
    return bits


def unsafe_rbg_split(key, shape):
    """``shape`` new raw keys: rows 0, 10, 20, ... of a ``(10 * num, 4)`` draw from ``key``."""
    shape = tuple(int(d) for d in shape)
    num = math.prod(shape)
    _, rows = rng_bit_generator(key, (_UNSAFE_STRIDE * num, 4), dtype=_U32)
    picked = lax_shape.slice(rows, (0, 0), (_UNSAFE_STRIDE * num, 4), (_UNSAFE_STRIDE, 1))
    return lax_shape.reshape(picked, (*shape, 4))


def unsafe_rbg_fold_in(key, data):
    """``key`` XOR the last row of a ``(10, 4)`` draw from the rbg seed key of ``data``."""
    _, rows = rng_bit_generator(rbg_seed(data), (_UNSAFE_STRIDE, 4), dtype=_U32)
    last = lax_shape.reshape(
        lax_shape.slice(rows, (_UNSAFE_STRIDE - 1, 0), (_UNSAFE_STRIDE, 4)), (4,))
    return lax.bitwise_xor(key, last)
