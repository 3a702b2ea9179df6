"""``threefry_sample``: JAX's partitionable Threefry bits and the samplers built directly on
them, fused into one chunked NumPy kernel.

With ``jax_threefry_partitionable`` (the default), element ``i`` of a sample of one key is
derived from ``threefry2x32(key, (0, i))``: the bits are ``b1 ^ b2`` (32-bit), ``b1 << 32 |
b2`` (64-bit) or the low bits of ``b1 ^ b2`` (8/16-bit), and ``split`` stores ``(b1, b2)``
as the new key. As one primitive, a sample never materialises its counters or
intermediate arrays: each cache-sized chunk is hashed and turned into its final values
(floats in [0, 1) for ``uniform``, standard normals for ``normal``) before the next.

The results are bit-for-bit those of the lax compositions JAX traces (bits, shift, or,
bitcast, subtract; ``sqrt(2) * erf_inv(u)`` with XLA's float32 ``log1p`` and fused
multiply-adds), which jaxlite still uses for the original (non-partitionable) layout.

A sample laid out over devices (``out_sharding=``) is drawn shard by shard: each device
hashes only its block's counters (``draw_block``; under jit ``threefry_sample_block``).
"""
from __future__ import annotations

import contextlib
import math
import os
import threading
import time

import numpy as np

from jaxlite._src.core.avals import ShapedArray
from jaxlite._src.core.primitive import NOT_DIFFERENTIABLE, Primitive
from jaxlite._src.random import accel
from jaxlite._src.random import kernels as K

__all__ = ["threefry_sample_p", "threefry_sample", "KINDS", "sampled_as", "draw_block",
           "threefry_sample_block_p", "warmed_up"]

_U32 = np.dtype(np.uint32)
_F32 = np.dtype(np.float32)
KINDS = ("bits", "keys", "uniform", "normal")
_SQRT2 = np.float32(np.sqrt(2))
_NORMAL_LO = np.nextafter(np.float32(-1), np.float32(0))

# A float32 normal depends only on the 23 mantissa bits of its uniform, so large samples
# look their values up in a table of all 2**23 of them (32 MiB, built once per process by
# the exact kernel, as costly as drawing ~8M normals directly), which turns each element's
# ~60 erf_inv ufunc steps into one gather. JAXLITE_NORMAL_TABLE=0 turns it off.
# When to build it is a ski-rental choice: a sample of _TABLE_MIN elements builds it at once;
# otherwise the time spent drawing normals directly is added up, and the table is built
# once that reaches about what building it costs (so many small draws, e.g. a training
# loop's normal(key, (10,)), pay at most twice the best-case time).
_TABLE_BITS = 23
_TABLE_MIN = 1 << 22
_TABLE_RENT = 0.3             # seconds of direct normals before the table is built
_direct_time = [0.0]
_TABLE_ON = os.environ.get("JAXLITE_NORMAL_TABLE", "1") != "0"
_table = [None]
_table_lock = threading.Lock()


def warmed_up():
    """Whether this process's ski-rental choices for draws are all made: the numba loops
    loaded (or numba missing or off) and the normal table built (or off). Until then eager
    draws run slower, cheaper-to-start kernels; benchmarks of steady speed wait for this."""
    return accel.decided() and (not _TABLE_ON or _table[0] is not None)


def _normal_direct(u, o, s):
    """``o`` = sqrt(2) * erf_inv(2u + nextafter(-1, 0)) for float32 uniforms ``u`` in [0,
    1) (clobbered): JAX's normal from its uniform, with XLA's float32 rounding."""
    # uniform(lo=nextafter(-1, 0), hi=1): fma(u, hi - lo, lo) with hi - lo == 2 exactly in
    # float32, so the product is exact and one rounding remains
    np.multiply(u, np.float32(2), out=u)
    np.add(u, _NORMAL_LO, out=u)
    K.erf_inv_f32(u, o, s)
    np.multiply(o, _SQRT2, out=o)


def normal_table():
    """The float32 standard normal of every 23-bit uniform mantissa (built on first use)."""
    if _table[0] is None:
        with _table_lock:
            if _table[0] is None:
                n = 1 << _TABLE_BITS
                table = np.empty(n, _F32)

                def run(lo, hi):
                    s = K.scratch()
                    for c in range(lo, hi, K.CHUNK):
                        e = min(c + K.CHUNK, hi)
                        u = s.get("u", _F32, e - c)
                        m = s.get("b1", _U32, e - c)
                        m[:] = np.arange(c, e, dtype=_U32)
                        np.bitwise_or(m, np.uint32(0x3F800000), out=m)
                        np.subtract(m.view(_F32), np.float32(1), out=u)
                        _normal_direct(u, table[c:e], s)
                K.parallel_chunks(run, n)
                _table[0] = table
    return _table[0]


def _consumer(kind, dtype, out, table=None):
    """``consume(lo, hi, b1, b2, scratch)`` writing the values of elements ``[lo, hi)`` of a
    flat output (``out`` is (n,) or, for keys, (n, 2)); normals come from ``table`` if
    given."""
    if kind == "keys":
        def consume(lo, hi, b1, b2, s):
            out[lo:hi, 0] = b1
            out[lo:hi, 1] = b2
    elif kind == "bits":
        bw = dtype.itemsize * 8

        def consume(lo, hi, b1, b2, s):
            if bw == 64:
                u32 = out[lo:hi].view(_U32)
                u32[0::2] = b2
                u32[1::2] = b1
            elif bw == 32:
                np.bitwise_xor(b1, b2, out=out[lo:hi])
            else:
                np.bitwise_xor(b1, b2, out=b1)
                out[lo:hi] = b1          # wraps to the low bits, as convert_element_type
    elif kind == "uniform":
        def consume(lo, hi, b1, b2, s):
            K.unit_float_from_bits(b1, b2, dtype, out[lo:hi])
    elif table is not None:
        shift = np.uint32(32 - _TABLE_BITS)

        def consume(lo, hi, b1, b2, s):
            np.bitwise_xor(b1, b2, out=b1)
            np.right_shift(b1, shift, out=b1)
            np.take(table, b1, out=out[lo:hi], mode="clip")
    else:
        def consume(lo, hi, b1, b2, s):
            u = s.get("u", _F32, hi - lo)
            K.unit_float_from_bits(b1, b2, _F32, u)
            _normal_direct(u, out[lo:hi], s)
    return consume


def _sample_one(k0, k1, n, consume):
    if n <= K.SMALL_SWAR:
        b1, b2 = K.hash_swar(np.full(n, k0, _U32), np.full(n, k1, _U32),
                             np.arange(n, dtype=_U32))
        consume(0, n, b1, b2, K.scratch())
    else:
        K.fill_bits(k0, k1, n, consume)


def _sample_many(keys, n, consume):
    """Samples of ``n`` elements for each of the raw keys ``keys`` (B, 2), into the flat
    output (B * n elements): one kernel per key for large samples, else one hash over
    every (key, count) pair."""
    nkeys = keys.shape[0]
    if n >= K.CHUNK:
        for i in range(nkeys):
            base = i * n
            K.fill_bits(int(keys[i, 0]), int(keys[i, 1]), n,
                        lambda lo, hi, b1, b2, s, base=base: consume(base + lo, base + hi,
                                                                    b1, b2, s))
        return
    total = nkeys * n
    k0 = np.repeat(keys[:, 0], n)
    k1 = np.repeat(keys[:, 1], n)
    cnt = np.tile(np.arange(n, dtype=_U32), nkeys)
    if total <= K.SMALL_SWAR:
        b1, b2 = K.hash_swar(k0, k1, cnt)
        consume(0, total, b1, b2, K.scratch())
        return

    def run(lo, hi):
        s = K.scratch()
        for c in range(lo, hi, K.CHUNK):
            e = min(c + K.CHUNK, hi)
            m = e - c
            b1, b2 = s.get("b1", _U32, m), s.get("b2", _U32, m)
            K.hash_chunk(k0[c:e], k1[c:e], np.uint32(0), cnt[c:e], b1, b2,
                         s.get("tmp", _U32, m))
            consume(c, e, b1, b2, s)
    K.parallel_chunks(run, total)


def sample_impl(key, kind, shape, dtype):
    """NumPy impl of ``threefry_sample``: ``key`` uint32 (*batch, 2)."""
    key = np.asarray(key)
    batch = key.shape[:-1]
    n = math.prod(shape)
    extra = (2,) if kind == "keys" else ()
    out = np.empty(batch + tuple(shape) + extra, dtype)
    nkeys = math.prod(batch)
    if n == 0 or nkeys == 0:
        return out
    flat = out.reshape((nkeys * n,) + extra)
    table = None
    if kind == "normal" and _TABLE_ON and (_table[0] is not None or nkeys * n >= _TABLE_MIN
                                           or _direct_time[0] >= _TABLE_RENT):
        table = normal_table()
    consume = _consumer(kind, dtype, flat, table)
    timed = kind == "normal" and table is None
    t0 = time.perf_counter() if timed else 0.0
    if not batch:
        _sample_one(int(key[0]), int(key[1]), n, consume)
    else:
        _sample_many(key.reshape(nkeys, 2), n, consume)
    if timed:
        _direct_time[0] += time.perf_counter() - t0
    return out


class ThreefrySample(Primitive):
    """``threefry_sample[kind, shape, dtype](key)``: for raw threefry keys ``key``
    (uint32[..., 2]), JAX's partitionable random ``bits`` of ``dtype``, split ``keys``
    (uint32[..., *shape, 2]), ``uniform`` floats in [0, 1) (before JAX's scaling to
    [minval, maxval)) or float32 standard ``normal`` samples, each of ``shape`` per key."""
    name = "threefry_sample"
    jvp = NOT_DIFFERENTIABLE
    weak_rule = "never"

    def impl(self, key, *, kind, shape, dtype, sharding=None):
        return sample_impl(key, kind, shape, dtype)

    def numba(self, code, eqn, ins, *, kind, shape, dtype, sharding=None):
        """Tier 2's loop code (``compiler/numba_bodies.py``): one key's sample from the
        compiled Threefry hash and erf_inv of ``xla_numba`` (the loops tier 1's kernels run,
        bit for bit their NumPy versions): keys, uint32 bits, float32 uniforms and
        normals."""
        dtype = np.dtype(dtype)
        if eqn.invars[0].aval.shape != (2,) or sharding is not None or \
                (kind != "keys" and dtype != (_U32 if kind == "bits" else _F32)):
            return None
        n = math.prod(shape)
        out = eqn.outvars[0].aval
        if n == 0:
            return [code.new_array(out)]
        code.need_import("from jaxlite._src.random.xla_numba import hash_iota, "
                         "erf_inv_kernel")
        b1, b2 = code.fresh("h"), code.fresh("h")
        key = ins[0]
        code.emit(f"{b1} = np.empty({n}, np.uint32)")
        code.emit(f"{b2} = np.empty({n}, np.uint32)")
        code.emit(f"hash_iota({key}[0], {key}[1], 0, {b1}, {b2})")
        res = code.fresh("a")
        if kind == "keys":
            code.emit(f"{res} = np.empty(({n}, 2), np.uint32)")
            code.emit(f"{res}[:, 0] = {b1}")
            code.emit(f"{res}[:, 1] = {b2}")
        elif kind == "bits":
            code.emit(f"{res} = {b1} ^ {b2}")
        else:   # (JAX's uniform: 23 mantissa bits | 1.0, bitcast, minus one)
            code.emit(f"{b1} = (({b1} ^ {b2}) >> np.uint32(9)) | np.uint32(0x3F800000)")
            code.emit(f"{res} = {b1}.view(np.float32) - np.float32(1)")
            if kind == "normal":   # (as _normal_direct)
                code.emit(f"{res} = {res} * np.float32(2) + np.float32("
                          f"{float(_NORMAL_LO)!r})")
                o = code.fresh("a")
                code.emit(f"{o} = np.empty({n}, np.float32)")
                code.emit(f"if erf_inv_kernel({res}, {o}, np.empty({n}, np.int64)):")
                code.emit("    raise ValueError('erf_inv outside its domain')")
                code.emit(f"{res} = {o} * np.float32({float(_SQRT2)!r})")
        return [code.reshape(res, out.update(shape=(n,) + out.shape[len(shape):]), out)]

    def partition(self, builder, eqn, ins, mesh_spec):
        """Under jit, a sample whose result is to be laid out by ``sharding`` (the optional
        parameter ``random.*(..., out_sharding=)`` sets) is drawn block by block, each
        device hashing only its block's counters."""
        return partition_sample(builder, eqn, ins, mesh_spec)

    def sharding_rule(self, avals, *, kind, shape, dtype, sharding=None):
        """Each key's sample is its own: the keys' dimensions keep their layout (the key
        data dimension and the sample's dimensions are whole)."""
        nd = avals[0].ndim
        return [tuple(k if k < nd - 1 else None for k in range(nd))]

    def abstract_eval(self, key, *, kind, shape, dtype, sharding=None):
        if key.dtype != _U32 or not key.shape or key.shape[-1] != 2:
            raise TypeError(f"threefry_sample takes uint32[..., 2] keys, got "
                            f"{key.str_short()}")
        if kind not in KINDS:
            raise ValueError(f"threefry_sample: unknown kind {kind!r}")
        extra = (2,) if kind == "keys" else ()
        return ShapedArray(tuple(key.shape[:-1]) + tuple(shape) + extra, np.dtype(dtype))

    def batch(self, size, args, dims, **params):
        (key,), (d,) = args, dims
        if d != 0:
            from jaxlite._src.lax import shape as lax_shape
            perm = (d,) + tuple(i for i in range(key.ndim) if i != d)
            key = lax_shape.transpose(key, perm)
        return self.bind(key, **params), 0


threefry_sample_p = ThreefrySample()


def threefry_sample(key, kind, shape, dtype):
    """Bind ``threefry_sample`` on raw key data ``key`` (uint32[..., 2]); inside
    ``sampled_as(sharding, shape)`` an eager sample of that shape and one key is drawn
    shard by shard, each device hashing only the counters of its block."""
    t = getattr(_target, "value", None)
    if t is not None and kind != "keys" and t[1] == tuple(shape):
        if _one_concrete_key(key):
            return _sample_sharded(key, kind, tuple(shape), np.dtype(dtype), t[0])
        if tuple(np.shape(key)) == (2,):     # traced: the partitioner draws it by blocks
            return threefry_sample_p.bind(key, kind=kind, shape=tuple(shape),
                                          dtype=np.dtype(dtype), sharding=t[0])
    return threefry_sample_p.bind(key, kind=kind, shape=tuple(shape), dtype=np.dtype(dtype))


_target = threading.local()


@contextlib.contextmanager
def sampled_as(sharding, shape):
    """Draw eager samples of ``shape`` laid out by ``sharding`` (a NamedSharding) shard by
    shard (``out_sharding=`` of ``random.bits``/``uniform``/``normal``). With JAX's
    partitionable Threefry, element ``i`` depends only on the key and ``i``, so the blocks
    equal the unsharded sample's."""
    prev = getattr(_target, "value", None)
    _target.value = (sharding, tuple(shape))
    try:
        yield
    finally:
        _target.value = prev


def _one_concrete_key(key):
    from jaxlite._src.core.trace import Tracer
    return not isinstance(key, Tracer) and tuple(np.shape(key)) == (2,)


def _sample_sharded(key, kind, shape, dtype, sharding):
    from jaxlite._src.runtime import sharded_array as _sa
    from jaxlite._src.runtime.devices import run_on_devices
    k0, k1 = (int(v) for v in np.asarray(key).reshape(2))
    devs = list(sharding._device_assignment)
    index = sharding.devices_indices_map(shape)
    blocks, first = {}, []
    for d in devs:
        key_ = tuple(sl.indices(n)[:2] for sl, n in zip(index[d], shape))
        if key_ not in blocks:
            blocks[key_] = len(first)
            first.append((d, key_))
    table = normal_table() if kind == "normal" and _TABLE_ON and _table[0] is not None \
        else None

    def draw(bounds):
        return draw_block(k0, k1, kind, shape, dtype, bounds, table)
    got = run_on_devices([d for d, _ in first], draw, [(b,) for _, b in first])
    by_block = {b: got[i] for b, i in blocks.items()}
    bufs = [by_block[tuple(sl.indices(n)[:2] for sl, n in zip(index[d], shape))]
            for d in devs]
    return _sa.from_buffers(ShapedArray(shape, dtype), sharding, bufs)


# -- shard by shard ------------------------------------------------------------
# With the partitionable layout a device draws its block of a sharded sample by hashing the
# counters of its block alone: ``draw_block`` eagerly, and under jit the
# ``threefry_sample_block`` primitive the partitioner puts in the per-device program in place
# of a whole ``threefry_sample`` laid out by ``out_sharding``.


def draw_block(k0, k1, kind, shape, dtype, bounds, table=None):
    """The block ``bounds`` ((start, stop) per dimension) of the sample of ``shape`` drawn
    with the key (``k0``, ``k1``): the same values as that block of the whole sample."""
    counters = np.ravel_multi_index(
        np.meshgrid(*[np.arange(a, b) for a, b in bounds], indexing="ij"), shape) \
        if shape else np.zeros((), np.int64)
    cnt = np.asarray(counters).astype(_U32).ravel()
    out = np.empty(cnt.size, dtype)
    consume = _consumer(kind, dtype, out, table)
    s = K.scratch()
    for c in range(0, cnt.size, K.CHUNK):
        e = min(c + K.CHUNK, cnt.size)
        b1, b2 = s.get("b1", _U32, e - c), s.get("b2", _U32, e - c)
        K.hash_chunk(k0, k1, np.uint32(0), cnt[c:e], b1, b2, s.get("tmp", _U32, e - c))
        consume(c, e, b1, b2, s)
    return out.reshape(tuple(b - a for a, b in bounds))


def _table_for(kind):
    if kind == "normal" and _TABLE_ON and _table[0] is not None:
        return normal_table()
    return None


class ThreefrySampleBlock(Primitive):
    """``threefry_sample_block[kind, shape, block, dtype](key, *starts)``: the block of
    size ``block`` starting at ``starts`` (int32 scalars, one per dimension) of the
    partitionable sample ``threefry_sample[kind, shape, dtype](key)`` of one raw key
    (uint32[2]), or of each key of a batch (uint32[..., 2])."""
    name = "threefry_sample_block"
    jvp = NOT_DIFFERENTIABLE
    weak_rule = "never"

    def impl(self, key, *starts, kind, shape, block, dtype):
        key = np.asarray(key, _U32)
        bounds = [(int(s), int(s) + b) for s, b in zip(starts, block)]
        table = _table_for(kind)
        keys = key.reshape(-1, 2)
        outs = [draw_block(int(k[0]), int(k[1]), kind, tuple(shape), np.dtype(dtype), bounds,
                           table) for k in keys]
        return np.stack(outs).reshape(key.shape[:-1] + tuple(block))

    def abstract_eval(self, key, *starts, kind, shape, block, dtype):
        if key.dtype != _U32 or not key.shape or key.shape[-1] != 2:
            raise TypeError(f"threefry_sample_block takes uint32[..., 2] keys, got "
                            f"{key.str_short()}")
        if len(starts) != len(shape) or len(block) != len(shape) or \
                any(s.shape != () for s in starts):
            raise TypeError(f"threefry_sample_block takes one scalar start index per "
                            f"dimension of its sample shape {tuple(shape)}, got "
                            f"{len(starts)}")
        if kind not in ("bits", "uniform", "normal"):
            raise ValueError(f"threefry_sample_block: unknown kind {kind!r}")
        return ShapedArray(tuple(key.shape[:-1]) + tuple(block), np.dtype(dtype))

    def batch(self, size, args, dims, **params):
        key, starts = args[0], args[1:]
        if any(d is not None for d in dims[1:]):
            raise NotImplementedError(
                "threefry_sample_block: the start indices of a sharded sample's block cannot "
                "be batched (vmap the sampler over keys instead).")
        d = dims[0]
        if d != 0:
            from jaxlite._src.prims.batch_util import moveaxis
            key = moveaxis(key, d, 0)
        return self.bind(key, *starts, **params), 0


threefry_sample_block_p = ThreefrySampleBlock()


def partition_sample(builder, eqn, ins, mesh_spec):
    """The partitioner's rule for a ``threefry_sample`` asked to lay its result out by a
    ``sharding`` (``random.*(..., out_sharding=)`` under jit), or whose result a sharding
    constraint or the program's out_shardings lay out: each device draws its own block
    (None: the generic rule, the whole sample)."""
    from jaxlite._src.prims.collectives import axis_index_p
    from jaxlite._src.prims.elementwise import mul_p
    p = eqn.params
    sharding = p.get("sharding")
    (key, kdims), = ins
    shape = tuple(p["shape"])
    if p["kind"] == "keys" or eqn.invars[0].aval.shape != (2,):
        return None
    if sharding is not None:
        dims = mesh_spec(None, sharding, len(shape))
    else:      # (a sharding constraint or out_shardings asks for the sample so)
        dims = builder.desired_layout(eqn.outvars[0])
    if dims is None or not any(dims):
        return None
    block = []
    for n, axes in zip(shape, dims):
        f = builder.factor(axes)
        if n % f:
            return None
        block.append(n // f)
    if any(kdims):
        key, _ = builder.replicate(key, kdims, "threefry_sample needs its whole key",
                                   eqn.source_info)
    starts = []
    for axes, b in zip(dims, block):
        if not axes:
            starts.append(np.int32(0))
            continue
        idx = axis_index_p.bind(axis_name=axes if len(axes) > 1 else axes[0])
        starts.append(mul_p.bind(idx, np.int32(b)))
    y = threefry_sample_block_p.bind(key, *starts, kind=p["kind"], shape=shape,
                                     block=tuple(block), dtype=p["dtype"])
    return [(y, tuple(dims))]
