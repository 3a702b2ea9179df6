"""Writing and reading jaxlite arrays with TensorStore (``jax.experimental.array_serialization
.tensorstore_impl``).

An array is stored as one TensorStore array of its global shape (zarr3 by default, the older
zarr format on request), its chunks dividing each device's shard so that every process writes
whole chunks. ``async_serialize`` writes each addressable shard whose ``replica_id`` is the
one chosen (0: each distinct piece is written once); ``async_deserialize`` reads, for every
addressable device of the target sharding, the region that device holds (zero-filling what
lies outside the stored shape) and assembles the array from those per-device pieces, so an
array saved with one sharding can be restored with any other. Paths become TensorStore specs
through ``get_tensorstore_spec`` (local ``file`` paths, ``gs://`` and ``s3://`` URLs,
optionally inside one OCDBT store per checkpoint directory).

jaxlite's device buffers are host memory already and immutable (donation copies a buffer
that anything else references), so a shard's data is handed to TensorStore without a copy,
as JAX does after its device-to-host transfer.
"""
from __future__ import annotations

import asyncio
import functools
import logging
import math
import os
import re
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import numpy as np

from jaxlite._src import tree_util
from jaxlite._src.api.placement import device_put, make_array_from_single_device_arrays
from jaxlite._src.array_serialization.ts_import import import_tensorstore
from jaxlite._src.core import dtypes as _dtypes
from jaxlite._src.core.avals import ShapeDtypeStruct
from jaxlite._src.runtime import devices as _devices
from jaxlite._src.runtime.array import Array, ArrayImpl
from jaxlite._src.sharding.layout import Format
from jaxlite._src.sharding.shardings import Sharding, SingleDeviceSharding

ts = import_tensorstore()

__all__ = [
    "Future",
    "Transaction",
    "async_deserialize",
    "async_serialize",
    "combine_kvstores",
    "estimate_read_memory_footprint",
    "get_tensorstore_spec",
    "is_tensorstore_spec_leaf",
    "merge_nested_ts_specs",
    "verify_tensorstore_spec",
]

_TS_ARRAY_DRIVER = "zarr3"

_TS_CONTEXT = ts.Context({
    "file_io_concurrency": {"limit": 128},
    "cache_pool": {"total_bytes_limit": 10_000_000_000},         # 10 GB of host memory
    "cache_pool#remote": {"total_bytes_limit": 10_000_000_000},
    "data_copy_concurrency": {"limit": 128},
})
# at most 100M elements per chunk (800 MB of float64)
_TS_CHUNK_LAYOUT = ts.ChunkLayout(chunk=ts.ChunkLayout.Grid(elements=100_000_000))

_DEFAULT_BASE_DRIVER = "file"
_PROCESS_DIR_FORMAT = "process_{}"
_FILE_SIZE_TARGET = 2 * 1024 ** 3      # chunks (files) of about 2 GB at most

Future, Transaction = ts.Future, ts.Transaction

logger = logging.getLogger(__name__)


class _LimitInFlightBytes:
    """Bounds the host memory that reads (or writes) in flight hold at once, per process."""

    def __init__(self, host_memory_bytes_limit: int):
        self._max_bytes = host_memory_bytes_limit
        self._available_bytes = host_memory_bytes_limit
        self._cv = asyncio.Condition(lock=asyncio.Lock())

    async def wait_for_bytes(self, requested_bytes):
        """Wait until ``requested_bytes`` are free, then take them (a request above the
        whole budget raises the budget to it, so that it can ever run)."""
        if requested_bytes > self._max_bytes:
            logger.debug("A single array item requests more bytes than we reserved space for "
                         "in the parallel pool: %d > %d. Increasing the limit to %d.",
                         requested_bytes, self._max_bytes, requested_bytes)
            in_use = self._max_bytes - self._available_bytes
            self._max_bytes = requested_bytes
            self._available_bytes = requested_bytes - in_use
        async with self._cv:
            await self._cv.wait_for(lambda: self._available_bytes >= requested_bytes)
            self._available_bytes -= requested_bytes
            assert self._available_bytes >= 0

    async def release_bytes(self, requested_bytes):
        """Give back bytes taken by ``wait_for_bytes`` and wake the waiters."""
        async with self._cv:
            self._available_bytes += requested_bytes
            assert self._available_bytes <= self._max_bytes
            self._cv.notify_all()


def is_tensorstore_spec_leaf(leaf: Any) -> bool:
    """Whether ``leaf`` of a pytree of specs is one spec (a dict with a driver or a kvstore,
    or None) rather than a subtree."""
    return leaf is None or (isinstance(leaf, dict) and ("driver" in leaf or "kvstore" in leaf))


def _prime_factors(x: int) -> list[int]:
    """The prime factors of ``x`` in increasing order (with repetition)."""
    out, p = [], 2
    while p * p <= x:
        while x % p == 0:
            out.append(p)
            x //= p
        p += 1 if p == 2 else 2
    if x > 1:
        out.append(x)
    return out


@functools.lru_cache(maxsize=1024)
def _compute_chunk_shape(local_shape: Sequence[int], dtype,
                         file_size_target: int = _FILE_SIZE_TARGET) -> list[int]:
    """A chunk shape dividing ``local_shape`` (a shard's shape) whose size in bytes is at most
    110% of ``file_size_target``, found by dividing, each step, the axis with the smallest
    remaining prime factor by that factor (the first such axis on ties). As in JAX, an axis
    keeps its last prime factor (a chunk dimension never drops to 1 unless the axis is 1),
    and when no axis can be divided further the current shape is returned. Zero-size or
    rank-0 shapes get chunks of at least 1."""
    local_shape = list(local_shape)
    if not local_shape or math.prod(local_shape) == 0:
        return [max(n, 1) for n in local_shape]
    chunk = list(local_shape)
    nbytes = math.prod(local_shape) * np.dtype(dtype).itemsize
    factors = [_prime_factors(n) for n in local_shape]
    while nbytes > 1.1 * file_size_target:
        candidates = [(f[0], ax) for ax, f in enumerate(factors) if len(f) > 1]
        if not candidates:
            return chunk
        p, ax = min(candidates)
        factors[ax].pop(0)
        chunk[ax] //= p
        nbytes //= p
    return chunk


def _get_tensorstore_metadata(arr, is_remote: bool = False,
                              file_size_target: int = _FILE_SIZE_TARGET,
                              driver: str = _TS_ARRAY_DRIVER) -> dict[str, Any]:
    """The TensorStore ``metadata`` of ``arr`` (an Array or NumPy array) for ``driver``:
    its global shape and dtype, chunked by its shard shape."""
    shape = tuple(arr.shape)
    local = tuple(arr.sharding.shard_shape(shape)) if isinstance(arr, Array) else shape
    return _get_tensorstore_metadata_cached(shape, np.dtype(arr.dtype), local, is_remote,
                                            file_size_target, driver)


@functools.lru_cache(maxsize=1024)
def _get_tensorstore_metadata_cached(global_shape, dtype, local_shape, is_remote=False,
                                     file_size_target=_FILE_SIZE_TARGET,
                                     driver=_TS_ARRAY_DRIVER) -> dict[str, Any]:
    if driver == "zarr3":
        return {
            "codecs": [{"name": "zstd"}] if is_remote else [],
            "shape": global_shape,
            "data_type": np.dtype(dtype).name,
            "chunk_grid": {"name": "regular", "configuration": {
                "chunk_shape": _compute_chunk_shape(local_shape, dtype,
                                                    file_size_target=file_size_target)}},
        }
    if driver == "zarr":        # (zarr keeps the dtype in the spec itself, not here)
        return {"compressor": {"id": "zstd"}, "shape": global_shape,
                "chunks": [max(1, int(n)) for n in local_shape]}
    raise ValueError(f"Unsupported driver: {driver}")


def _divides(shape, chunk) -> bool:
    return all(int(n) % int(c) == 0 for n, c in zip(shape, chunk))


def merge_nested_ts_specs(dict1: dict, dict2: dict | None) -> dict:
    """``dict1`` updated by ``dict2`` (its keys win); their ``kvstore`` dicts are merged the
    same way instead of replaced."""
    if dict2 is None:
        return dict1
    kvstore = dict1.get("kvstore", {}) | dict2.get("kvstore", {})
    return dict1 | dict(dict2, kvstore=kvstore)


def verify_tensorstore_spec(spec: dict, arr, path, ocdbt: bool,
                            check_metadata: bool = True) -> None:
    """Check that ``spec`` can store ``arr`` at ``path``: an OCDBT kvstore when ``ocdbt``;
    metadata whose dtype and shape are the array's and whose chunks divide its shards; the
    kvstore's path equal to ``path``. Raises ValueError naming the mismatch."""
    if ocdbt and spec.get("kvstore", {}).get("driver", "") != "ocdbt":
        raise ValueError(f"Expected ocdbt driver, got spec={spec!r}")
    if check_metadata:
        if arr is None:
            raise ValueError("Array is required for metadata verification.")
        metadata = spec["metadata"]
        if spec.get("driver", "") == "zarr3" and \
                metadata["data_type"] != np.dtype(arr.dtype).name:
            raise ValueError(f"Provided dtype (metadata['data_type']="
                             f"{metadata['data_type']!r}) doesn't match "
                             f"(arr.dtype={arr.dtype!r})")
        if "shape" in metadata and tuple(metadata["shape"]) != tuple(arr.shape):
            raise ValueError(f"Provided shape (metadata['shape']={metadata['shape']!r}) "
                             f"doesn't match (arr.shape={arr.shape!r})")
        local = arr.sharding.shard_shape(arr.shape) if isinstance(arr, Array) else arr.shape
        if spec.get("driver", "") == "zarr3":
            chunk = metadata["chunk_grid"]["configuration"]["chunk_shape"]
            if not _divides(local, chunk):
                raise ValueError(f"Provided chunk shape {chunk} does not divide the local "
                                 f"shape of the array {local}")
    found = spec["kvstore"]["base"]["path"] if ocdbt else spec["kvstore"]["path"]
    if str(found) != str(path):
        raise ValueError(f"Provided path={path!r} does not match the spec path: "
                         f"{spec['kvstore']}")


def _spec_has_metadata(tree) -> bool:
    """Whether a spec dict holds ``metadata`` at any depth (a ``cast`` driver nests it)."""
    return isinstance(tree, dict) and (
        "metadata" in tree or any(_spec_has_metadata(v) for v in tree.values()))


def _bucket_kvstore(driver: str, scheme: str, ckpt_path: str) -> dict:
    m = re.fullmatch(f"^{scheme}://([^/]*)/(.*)$", ckpt_path, re.DOTALL)
    if m is None:
        raise ValueError("The ckpt_path should contain the bucket name and the file path "
                         f"inside the bucket. Got: {ckpt_path}")
    return {"driver": driver, "bucket": m.group(1), "path": m.group(2)}


def get_tensorstore_spec(ckpt_path, ocdbt: bool = True, process_idx: int | None = None,
                         arr=None, driver: str = _TS_ARRAY_DRIVER) -> dict[str, Any]:
    """The TensorStore spec storing an array at ``ckpt_path`` (a local absolute path or a
    ``gs://``/``s3://`` URL).

    With ``ocdbt`` the array is the entry named by the path's last component inside one OCDBT
    store at its parent directory; ``process_idx`` puts it under that process's own
    ``process_<i>`` directory (multi-process writes, combined afterwards); ``arr`` adds the
    metadata (shape, dtype, chunks) of that array.
    """
    ckpt_path = os.path.normpath(str(ckpt_path))
    ckpt_path = re.sub(r"^(gs|s3):/", r"\1://", ckpt_path)    # (normpath merged the //)
    if process_idx is not None:
        parent, name = os.path.split(ckpt_path)
        ckpt_path = os.path.join(parent, _PROCESS_DIR_FORMAT.format(process_idx), name)
    remote = "gs" if ckpt_path.startswith("gs://") else \
        "s3" if ckpt_path.startswith("s3://") else None
    spec: dict[str, Any] = {"driver": driver, "kvstore": {}}
    entry_key = None
    if ocdbt:
        full = ckpt_path
        ckpt_path, entry_key = os.path.split(ckpt_path)
        if remote is not None and re.fullmatch(f"^{remote}://([^/]*)/(.*)$", ckpt_path) is None:
            raise ValueError("Using OCDBT requires the bucket name, the directory name and "
                             f"the array name, your path is: {full}")
    if remote == "gs":
        base = _bucket_kvstore("gcs", "gs", ckpt_path)
    elif remote == "s3":
        base = _bucket_kvstore("s3", "s3", ckpt_path)
    else:
        base = {"driver": _DEFAULT_BASE_DRIVER, "path": ckpt_path}
    if ocdbt:
        if remote is None and not os.path.isabs(ckpt_path):
            raise ValueError(f"Checkpoint path should be absolute. Got {ckpt_path}")
        spec["kvstore"] = {"driver": "ocdbt", "base": base, "path": entry_key}
    else:
        spec["kvstore"] = base
    if arr is not None:
        spec["metadata"] = _get_tensorstore_metadata(arr, driver=str(spec["driver"]))
    return spec


async def _create_async_array_from_callback(
        global_shape, dtype, inp_sharding: Sharding,
        data_callback: Callable[[tuple, Any], Awaitable[Array]]):
    """The array of ``global_shape`` and ``inp_sharding`` whose piece on each addressable
    device is awaited from ``data_callback(index, device)`` (all concurrently)."""
    index_of = inp_sharding.devices_indices_map(global_shape)
    devs = inp_sharding._addressable_device_assignment
    pieces = await asyncio.gather(*(data_callback(index_of[d], d) for d in devs))
    return make_array_from_single_device_arrays(global_shape, inp_sharding, pieces,
                                                dtype=dtype)


async def _transfer_shard_to_host(shard) -> np.ndarray:
    """A shard's data as a NumPy array. jaxlite's buffers are host memory: no transfer, and
    the (read-only) view shares the buffer. Yields once so that other writes get scheduled."""
    data = shard.data
    await asyncio.sleep(0)
    return np.asarray(data)


async def combine_kvstores(combined_kvstore: dict, kvstores: list[dict],
                           context=_TS_CONTEXT) -> None:
    """Copy every key of the ``kvstores`` into ``combined_kvstore`` in one transaction (the
    per-process stores of a checkpoint merged into one). Not safe to run from several
    processes at once."""
    combined, opened = await asyncio.gather(
        ts.KvStore.open(combined_kvstore, context=context),
        asyncio.gather(*(ts.KvStore.open(k, context=context) for k in kvstores)))
    tx = ts.Transaction()
    await asyncio.gather(*(k.experimental_copy_range_to(combined.with_transaction(tx))
                           for k in opened))
    await tx.commit_async()


async def async_serialize(arr_inp, tensorstore_spec, commit_future=None, context=_TS_CONTEXT,
                          chunk_layout=_TS_CHUNK_LAYOUT, primary_host: int | None = None,
                          replica_id: int = 0, transaction=None):
    """Write the array ``arr_inp`` (a jaxlite Array, possibly sharded) with TensorStore to
    ``tensorstore_spec`` (a dict; its metadata is filled in from the array when absent).

    Each addressable shard whose ``replica_id`` equals ``replica_id`` writes its region.
    ``commit_future``: a list that receives the futures of the open and of each write's
    commit, to be awaited later (the data is copied out before this returns); None waits for
    the commits here. ``primary_host``: the process that creates the store (None: all of
    them, as for a local file system). ``transaction``: a TensorStore transaction to write in
    (None: non-transactional writes).
    """
    if isinstance(arr_inp, ArrayImpl) and _devices.process_count() > 1 and \
            arr_inp.is_fully_addressable:
        raise ValueError(
            "Passing fully addressable arrays to a multiprocess serialization is not "
            "allowed, as this may lead to a race condition between processes. Serialization "
            "have failed for the array with the path from kvstore: "
            f"\"{tensorstore_spec['kvstore']}\".")
    # ('metadata' may sit deeper than the top level, e.g. under a 'cast' driver)
    if not _spec_has_metadata(tensorstore_spec):
        tensorstore_spec["metadata"] = _get_tensorstore_metadata(
            arr_inp, driver=tensorstore_spec["driver"])
    if tensorstore_spec["driver"] == "zarr" and "dtype" not in tensorstore_spec:
        tensorstore_spec["dtype"] = np.dtype(arr_inp.dtype).name

    if primary_host is None or _devices.process_index() == primary_host:
        open_future = ts.open(ts.Spec(tensorstore_spec), create=True, open=True,
                              context=context, chunk_layout=chunk_layout,
                              transaction=transaction)
        if commit_future is not None:
            assert isinstance(commit_future, list)
            commit_future.append(open_future)
        else:
            await open_future
    # the store object to write through: opening with assume_metadata does no I/O (the
    # primary host's open above creates the store on disk)
    t = await ts.open(ts.Spec(tensorstore_spec), open=True, assume_metadata=True,
                      context=context, chunk_layout=chunk_layout, transaction=transaction)

    async def write_shard(shard):
        if shard.replica_id != replica_id:
            return
        data = await _transfer_shard_to_host(shard)
        written = t[shard.index].write(
            data, can_reference_source_data_indefinitely=isinstance(arr_inp, ArrayImpl))
        if commit_future is not None:
            commit_future.append(written.commit)
            await written.copy
        else:
            await written.commit

    return await asyncio.gather(*(write_shard(s) for s in arr_inp.addressable_shards))


def _run_serialization(arrays, tensorstore_specs):
    """Write each of ``arrays`` to the matching spec and wait for all commits."""
    async def run():
        return await asyncio.gather(*tree_util.tree_leaves(
            tree_util.tree_map(async_serialize, arrays, tensorstore_specs)))
    asyncio.run(run())


def estimate_read_memory_footprint(t, domain) -> int:
    """Bytes that reading ``domain`` of the TensorStore ``t`` touches: the chunks it
    overlaps (the whole domain for an unchunked driver)."""
    nbytes = t.dtype.numpy_dtype.itemsize
    template = t.chunk_layout.read_chunk_template
    if domain is None:
        domain = t.domain
    if any(not template[i].finite for i in range(t.rank)):
        return domain.size * nbytes
    for i in range(t.rank):
        size = template.shape[i]
        lo = domain.origin[i] - template.origin[i]
        hi = lo + domain.shape[i]
        nbytes *= -(-hi // size) * size - lo // size * size
    return nbytes


async def async_deserialize(in_type, tensorstore_spec, global_shape=None, dtype=None,
                            byte_limiter: _LimitInFlightBytes | None = None,
                            context=_TS_CONTEXT, chunk_layout=_TS_CHUNK_LAYOUT,
                            assume_metadata: bool = False):
    """Read the array stored at ``tensorstore_spec`` as a jaxlite Array placed by
    ``in_type``: a Sharding, a Format (layout and sharding) or a ShapeDtypeStruct (its
    sharding, and its dtype unless ``dtype`` is given).

    ``global_shape`` (default: the stored shape) may differ from the stored one: regions
    outside the stored array read as zeros, and a smaller shape reads a prefix. ``dtype``
    casts on the host while reading. ``byte_limiter`` bounds the memory of reads in flight.
    A Format's layout is not applied: jaxlite arrays are always row-major.
    """
    if isinstance(in_type, Format):
        in_sharding = in_type.sharding
    elif isinstance(in_type, ShapeDtypeStruct):
        dtype = in_type.dtype if dtype is None else dtype
        in_sharding = in_type.sharding
    else:
        if not isinstance(in_type, Sharding):
            raise TypeError("sharding passed to deserialization should be specified, "
                            "concrete and an instance of `jax.sharding.Sharding`. Got "
                            f"{in_type}")
        in_sharding = in_type
    if not isinstance(in_sharding, Sharding):
        raise TypeError("sharding passed to deserialization should be specified, concrete "
                        f"and an instance of `jax.sharding.Sharding`. Got {in_sharding}")
    t = await ts.open(tensorstore_spec, open=True, assume_metadata=assume_metadata,
                      context=context, chunk_layout=chunk_layout)
    shape = tuple(t.shape if global_shape is None else global_shape)
    stored_dtype = t.dtype.numpy_dtype
    dtype = dtype if dtype is not None else stored_dtype
    shard_shape = tuple(in_sharding.shard_shape(shape))

    async def read_piece(index, device):
        requested = ts.IndexTransform(input_shape=shape)[tuple(index)].domain
        present = t.domain.intersect(requested)
        nbytes = estimate_read_memory_footprint(t, present)
        if byte_limiter is not None:
            await byte_limiter.wait_for_bytes(nbytes)
        # the stored array may be smaller than the requested shape: the rest stays zero
        out = np.zeros(shard_shape, dtype=stored_dtype)
        await ts.array(out)[ts.d[:].translate_to[requested.origin]][present].write(
            t[present])
        if dtype is not None:
            out = out.astype(dtype)     # cast on the host: one copy, not two
        # (``out`` is this read's own buffer: the device array takes it without a copy)
        piece = device_put(out, SingleDeviceSharding(device), may_alias=True)
        if byte_limiter is not None:
            await byte_limiter.release_bytes(nbytes)
        return piece

    # an array restored from storage has a dtype jaxlite arrays can hold (x64 off:
    # float64 -> float32), as JAX
    return await _create_async_array_from_callback(shape, _dtypes.canonicalize_dtype(dtype),
                                                   in_sharding, read_piece)


def _run_deserialization(shardings: Sequence, tensorstore_specs: Sequence,
                         global_shapes: Sequence | None = None,
                         dtypes: Sequence | None = None, concurrent_gb: int = 32):
    """Read each spec as an array placed by the matching sharding (optionally with the
    given global shapes and dtypes); at most ``concurrent_gb`` GB of reads in flight."""
    n = len(tensorstore_specs)

    async def run():
        limiter = _LimitInFlightBytes(concurrent_gb * 10 ** 9)
        return await asyncio.gather(*(
            async_deserialize(s, spec, shp, dt, byte_limiter=limiter)
            for s, spec, shp, dt in zip(
                list(shardings), list(tensorstore_specs),
                [None] * n if global_shapes is None else list(global_shapes),
                [None] * n if dtypes is None else list(dtypes))))
    return asyncio.run(run())
