"""FFI targets and call frames: the registry of handlers (``register_ffi_target``), the
attributes of a call encoded as XLA encodes them, and ``CallPlan``, which runs one handler
on NumPy buffers through an ``XLA_FFI_CallFrame`` (see ``runtime/xla_ffi.py`` for the ABI).

A plan is built once per call site (target, operand and result types, attributes) and then
called many times: it checks the operands against the types it was built for before any C
code runs, allocates the results, points the frame's buffers at the data and calls the
handler's stages.
"""
from __future__ import annotations

import ctypes as C
import threading
import weakref

import numpy as np

from jaxlite._src.core.errors import JaxRuntimeError
from jaxlite._src.runtime import xla_ffi as abi
from jaxlite._src.runtime.devices import current_device
from jaxlite._src.runtime.xla_ffi import Stage

__all__ = ["register_target", "register_bundle", "lookup_target", "registered_targets",
           "dtype_code", "encode_attributes", "CallPlan", "Target"]

# ----------------------------------------------------------------------------- dtypes

_DTYPE_CODES = {
    "bool": 1, "int8": 2, "int16": 3, "int32": 4, "int64": 5, "uint8": 6, "uint16": 7,
    "uint32": 8, "uint64": 9, "float16": 10, "float32": 11, "float64": 12, "complex64": 15,
    "bfloat16": 16, "complex128": 18, "float8_e5m2": 19, "float8_e4m3fn": 20, "int4": 21,
    "uint4": 22, "float8_e4m3b11fnuz": 23, "float8_e5m2fnuz": 24, "float8_e4m3fnuz": 25,
    "int2": 26, "uint2": 27, "float8_e4m3": 28, "float8_e3m4": 29, "int1": 30, "uint1": 31,
    "float4_e2m1fn": 32, "float8_e8m0fnu": 33,
}


def dtype_code(dtype) -> int:
    """The XLA_FFI_DataType of a NumPy dtype (ValueError for dtypes XLA has no buffer of)."""
    code = _DTYPE_CODES.get(np.dtype(dtype).name)
    if code is None:
        raise ValueError(f"dtype {np.dtype(dtype)} has no XLA FFI buffer type")
    return code


# ----------------------------------------------------------------------------- targets

_PLATFORM_ALIASES = {"cpu": "host", "host": "host", "gpu": "cuda", "cuda": "cuda",
                     "rocm": "rocm", "tpu": "tpu"}


def canonical_platform(platform: str) -> str:
    """XLA's canonical platform name ("cpu" -> "host")."""
    p = str(platform).lower()
    if p not in _PLATFORM_ALIASES:
        raise JaxRuntimeError(f"INVALID_ARGUMENT: Unknown platform {platform!r}: "
                              "expected one of cpu, gpu, cuda, rocm, tpu")
    return _PLATFORM_ALIASES[p]


class Target:
    """A registered FFI handler: its stages' function pointers (the bundle), the API
    version it was compiled with, its traits and the type id of its state (if any)."""
    __slots__ = ("name", "platform", "stages", "version", "traits", "state_type_id",
                 "keep", "callables")

    def __init__(self, name, platform, stages, version, traits, state_type_id, keep):
        self.name, self.platform, self.stages = name, platform, stages
        self.callables = {st: _HANDLER(ptr) for st, ptr in stages.items()}
        self.version, self.traits, self.state_type_id = version, traits, state_type_id
        self.keep = keep   # the capsules, so the library stays referenced

    def __repr__(self):
        return (f"Target({self.name!r}, platform={self.platform!r}, stages="
                f"{[Stage.names[s] for s in sorted(self.stages)]}, "
                f"api_version={self.version[0]}.{self.version[1]})")


_STAGE_NAMES = {"instantiate": Stage.INSTANTIATE, "prepare": Stage.PREPARE,
                "initialize": Stage.INITIALIZE, "execute": Stage.EXECUTE}
_targets: dict[tuple[str, str], Target] = {}
_targets_lock = threading.Lock()

_HANDLER = C.CFUNCTYPE(C.c_void_p, C.c_void_p)

_capsule_get_name = C.pythonapi.PyCapsule_GetName
_capsule_get_name.restype = C.c_char_p
_capsule_get_name.argtypes = [C.py_object]
_capsule_get_pointer = C.pythonapi.PyCapsule_GetPointer
_capsule_get_pointer.restype = C.c_void_p
_capsule_get_pointer.argtypes = [C.py_object, C.c_char_p]
_capsule_valid = C.pythonapi.PyCapsule_IsValid
_capsule_valid.restype = C.c_int
_capsule_valid.argtypes = [C.py_object, C.c_char_p]


def _capsule_pointer(obj) -> int | None:
    if type(obj).__name__ != "PyCapsule":
        return None
    name = _capsule_get_name(obj)
    if not _capsule_valid(obj, name):
        return None
    return _capsule_get_pointer(obj, name) or None


def _metadata(fn_ptr: int, name: str):
    """Ask a handler for its metadata (API version, traits, state type), as XLA does when
    it registers one: a call frame carrying the metadata extension."""
    md = abi.Metadata()
    md.struct_size = abi.struct_size(abi.Metadata)
    md.api_version.struct_size = abi.struct_size(abi.ApiVersion)
    ext = abi.MetadataExtension()
    ext.extension_base.struct_size = abi.struct_size(abi.MetadataExtension)
    ext.extension_base.type = 1    # XLA_FFI_Extension_Metadata
    ext.metadata = C.addressof(md)
    frame = abi.CallFrame()
    frame.struct_size = abi.CALL_FRAME_SIZE
    frame.extension_start = C.addressof(ext)
    frame.api = abi.api_address()
    frame.stage = Stage.EXECUTE
    frame.args.struct_size = abi.struct_size(abi.Args)
    frame.rets.struct_size = abi.struct_size(abi.Rets)
    frame.attrs.struct_size = abi.struct_size(abi.Attrs)
    err = _HANDLER(fn_ptr)(C.addressof(frame))
    abi.check_error(err, f"\n(while reading the metadata of the FFI handler {name!r}: is it "
                         "a handler made with XLA_FFI_DEFINE_HANDLER_SYMBOL?)")
    v = md.api_version
    return (v.major_version, v.minor_version), md.traits, md.state_type_id.type_id


def register_bundle(name, platform, stage_ptrs, traits=0, keep=()):
    """Register the stage handlers ``{"execute": ptr, ...}`` under (name, platform)."""
    canon = canonical_platform(platform)
    stage_ptrs = {k: v for k, v in stage_ptrs.items() if v}
    if "execute" not in stage_ptrs:
        raise JaxRuntimeError(f"INVALID_ARGUMENT: FFI handler for {name} on a platform "
                              f"{platform} must provide an execute implementation")
    version, md_traits, state_tid = _metadata(stage_ptrs["execute"], name)
    if not (abi.MIN_SUPPORTED <= version and version[0] == abi.API_MAJOR
            and version[1] <= abi.API_MINOR):
        raise JaxRuntimeError(
            f"INVALID_ARGUMENT: XLA FFI handler registration for {name} on platform "
            f"{platform} (canonical {canon}) failed because the handler's API version "
            f"({version[0]}.{version[1]}) is incompatible with the framework's API version "
            f"({abi.API_MAJOR}.{abi.API_MINOR}). Minimum supported API version is "
            f"({abi.MIN_SUPPORTED[0]}.{abi.MIN_SUPPORTED[1]}). Rebuild the handler against "
            "headers of a supported version.")
    if "instantiate" in stage_ptrs:
        state_tid = _metadata(stage_ptrs["instantiate"], name)[2]
    target = Target(name, canon, {_STAGE_NAMES[k]: v for k, v in stage_ptrs.items()},
                    version, md_traits | traits, state_tid, keep)
    with _targets_lock:
        old = _targets.get((name, canon))
        if old is not None and old.stages != target.stages:
            raise JaxRuntimeError(
                f"INVALID_ARGUMENT: Duplicate FFI handler registration for {name} on "
                f"platform {platform} (canonical {canon}) with different bundle addresses")
        _targets[(name, canon)] = target
    return target


abi.handler_registry[:] = [register_bundle]   # XLA_FFI_Handler_Register lands here


def register_target(name, fn, platform="cpu", api_version=1):
    """``jax.ffi.register_ffi_target``: ``fn`` is a PyCapsule holding the handler's
    function pointer, or a dict mapping stage names ("instantiate", "prepare",
    "initialize", "execute") to PyCapsules."""
    if not isinstance(name, str):
        raise TypeError(f"register_ffi_target: name must be a str, got {type(name).__name__}")
    if api_version != 1:
        if api_version == 0:
            raise JaxRuntimeError(
                "UNIMPLEMENTED: jaxlite runs typed XLA FFI handlers (api_version=1) only; the "
                "legacy custom-call API (api_version=0) is not supported. Port the target "
                "to the typed FFI (xla/ffi/api/ffi.h, XLA_FFI_DEFINE_HANDLER_SYMBOL).")
        raise JaxRuntimeError(
            f"UNIMPLEMENTED: API version {api_version} is not supported by "
            "RegisterCustomCallTarget. Supported versions are 0 and 1.")
    if isinstance(fn, dict):
        bad = sorted(set(fn) - set(_STAGE_NAMES))
        if bad:
            raise JaxRuntimeError(f"INVALID_ARGUMENT: Unsupported FFI stage(s) {bad}: "
                                  f"expected some of {list(_STAGE_NAMES)}")
        ptrs = {}
        for stage, cap in fn.items():
            ptr = _capsule_pointer(cap)
            if ptr is None:
                raise JaxRuntimeError(
                    f"INVALID_ARGUMENT: Unsupported custom call target type for "
                    f"api_version=1 (stage {stage!r}: expected a PyCapsule, got "
                    f"{type(cap).__name__}; wrap ctypes function pointers with "
                    "jax.ffi.pycapsule)")
            ptrs[stage] = ptr
        keep = tuple(fn.values())
    else:
        ptr = _capsule_pointer(fn)
        if ptr is None:
            raise JaxRuntimeError(
                "INVALID_ARGUMENT: Unsupported custom call target type for api_version=1 "
                f"(expected a PyCapsule, got {type(fn).__name__}; wrap a ctypes function "
                "pointer with jax.ffi.pycapsule(lib.Handler))")
        ptrs, keep = {"execute": ptr}, (fn,)
    register_bundle(name, platform, ptrs, keep=keep)


def lookup_target(name, platform="cpu") -> Target:
    """The registered target, or JAX's NOT_FOUND error."""
    canon = canonical_platform(platform)
    got = _targets.get((name, canon))
    if got is None:
        others = sorted(n for n, p in _targets if p == canon)
        hint = (f" Registered targets: {', '.join(others)}." if others else
                " No FFI target is registered.")
        raise JaxRuntimeError(
            f"NOT_FOUND: No FFI handler registered for {name} on a platform Host (canonical "
            f"{canon}).{hint} Register it with jax.ffi.register_ffi_target({name!r}, "
            "jax.ffi.pycapsule(lib.Handler), platform='cpu') before calling it.")
    return got


def registered_targets(platform="cpu") -> dict:
    """{name: Target} of the targets registered for ``platform``."""
    canon = canonical_platform(platform)
    return {n: t for (n, p), t in _targets.items() if p == canon}


# ----------------------------------------------------------------------------- attributes

_ATTR_ARRAY, _ATTR_DICT, _ATTR_SCALAR, _ATTR_STRING = 1, 2, 3, 4
_SCALAR_KINDS = {"b": {8: "bool"}, "i": {8: "int8", 16: "int16", 32: "int32", 64: "int64"},
                 "u": {8: "uint8", 16: "uint16", 32: "uint32", 64: "uint64"},
                 "f": {32: "float32", 64: "float64"}}


def _attr_error(text):
    return JaxRuntimeError(f"INVALID_ARGUMENT: {text}")


def _scalar_dtype(name, dt):
    if dt.kind == "c":
        raise TypeError(f"Unsupported scalar attribute type: {dt.type}")
    got = _SCALAR_KINDS.get(dt.kind, {}).get(dt.itemsize * 8)
    if got is None:
        if dt.kind == "f" or dt.name == "bfloat16":
            raise _attr_error(f"Unsupported float attribute bit width for attribute: {name}")
        raise _attr_error(f"Unsupported attribute type for attribute: {name}")
    return np.dtype(got)


def _array_dtype(name, dt):
    got = _SCALAR_KINDS.get(dt.kind, {}).get(dt.itemsize * 8) if dt.kind in "iuf" else None
    if got is None:
        raise _attr_error(f"Unsupported array element type for attribute: {name}")
    return np.dtype(got)


class _Keep:
    """Keeps the memory of encoded attributes alive."""
    __slots__ = ("objs",)

    def __init__(self):
        self.objs = []

    def __call__(self, obj):
        self.objs.append(obj)
        return obj


def _encode_value(name, v, keep):
    """(attribute type, address of its payload) of one attribute value, following JAX's
    conversion to MLIR attributes and XLA's from MLIR to FFI attributes."""
    from jaxlite._src.runtime.array import ArrayImpl
    if isinstance(v, (bool, np.bool_)):
        v = np.bool_(v)
    elif isinstance(v, int) and not isinstance(v, np.generic):
        if not -2 ** 63 <= v < 2 ** 63:
            raise OverflowError(f"Python int {v} of attribute {name!r} does not fit in int64")
        v = np.int64(v)
    elif isinstance(v, float) and not isinstance(v, np.generic):
        v = np.float64(v)
    elif isinstance(v, complex) and not isinstance(v, np.generic):
        raise TypeError(f"Unsupported scalar attribute type: {type(v)}")
    if isinstance(v, np.generic):
        dt = _scalar_dtype(name, v.dtype)
        val = keep(np.array(v, dt).reshape(1))
        s = keep(abi.Scalar(dtype_code(dt), val.ctypes.data))
        return _ATTR_SCALAR, C.addressof(s)
    if isinstance(v, ArrayImpl):
        v = np.asarray(v)
    if isinstance(v, np.ndarray):
        dt = _array_dtype(name, v.dtype)
        data = keep(np.ascontiguousarray(v, dt).reshape(-1))
        arr = keep(abi.Array(dtype_code(dt), data.size, data.ctypes.data))
        return _ATTR_ARRAY, C.addressof(arr)
    if isinstance(v, (str, bytes)):
        b = keep(C.create_string_buffer(v.encode() if isinstance(v, str) else v))
        span = keep(abi.ByteSpan(C.addressof(b), len(b) - 1))
        return _ATTR_STRING, C.addressof(span)
    if isinstance(v, dict):
        attrs = keep(abi.Attrs())
        _fill_attrs(attrs, list(dict(v).items()), keep)
        return _ATTR_DICT, C.addressof(attrs)
    if isinstance(v, (list, tuple, np.dtype)):
        raise _attr_error(f"Unsupported attribute type for attribute: {name}")
    raise TypeError(f"No attribute handler defined for type: {type(v)} (attribute {name!r}: "
                    "FFI attributes are NumPy scalars, Python numbers, strings, NumPy arrays "
                    "and dicts of those)")


def _fill_attrs(attrs, items, keep):
    for k, _ in items:
        if not isinstance(k, str):
            raise TypeError(f"FFI attribute names must be strings, got {k!r}")
    items = sorted(items, key=lambda kv: kv[0].encode())   # XLA sorts names bytewise
    n = len(items)
    types = keep((C.c_int * max(n, 1))())
    names = keep((C.c_void_p * max(n, 1))())
    ptrs = keep((C.c_void_p * max(n, 1))())
    for i, (k, v) in enumerate(items):
        kb = keep(C.create_string_buffer(k.encode()))
        span = keep(abi.ByteSpan(C.addressof(kb), len(kb) - 1))
        names[i] = C.addressof(span)
        types[i], ptrs[i] = _encode_value(k, v, keep)
    attrs.struct_size = abi.struct_size(abi.Attrs)
    attrs.extension_start = None
    attrs.size = n
    attrs.types, attrs.names, attrs.attrs = (C.addressof(types), C.addressof(names),
                                             C.addressof(ptrs))


def encode_attributes(attributes, attrs_struct=None):
    """Fill an ``XLA_FFI_Attrs`` (a new one unless given) from ``(name, value)`` pairs;
    returns (struct, keep-alive object)."""
    keep = _Keep()
    attrs = attrs_struct if attrs_struct is not None else abi.Attrs()
    _fill_attrs(attrs, list(attributes), keep)
    return attrs, keep


# ----------------------------------------------------------------------------- plans

def _buffers(n, avals):
    """The Buffer structs, their dims and the (types, pointers) arrays of ``n`` buffers."""
    bufs = (abi.Buffer * max(n, 1))()
    dims = []
    types = (C.c_int * max(n, 1))()
    ptrs = (C.c_void_p * max(n, 1))()
    for i, (shape, dtype) in enumerate(avals):
        d = (C.c_int64 * max(len(shape), 1))(*shape)
        dims.append(d)
        b = bufs[i]
        b.struct_size = abi.struct_size(abi.Buffer)
        b.extension_start = None
        b.dtype = dtype_code(dtype)
        b.rank = len(shape)
        b.dims = C.addressof(d)
        types[i] = 1       # XLA_FFI_ArgType_BUFFER / XLA_FFI_RetType_BUFFER
        ptrs[i] = C.addressof(b)
    return bufs, dims, types, ptrs


# Frames (with their buffers) of asynchronous calls that timed out.
_abandoned: list = []


class _Frame:
    """One XLA_FFI_CallFrame laid out for a plan's types; its data pointers change per
    call."""

    def __init__(self, plan):
        self.frame = f = abi.CallFrame()
        f.struct_size = abi.CALL_FRAME_SIZE
        f.extension_start = None
        f.api = abi.api_address()
        self.args = _buffers(len(plan.in_types), plan.in_types)
        self.rets = _buffers(len(plan.out_types), plan.out_types)
        f.args.struct_size = abi.struct_size(abi.Args)
        f.args.size = len(plan.in_types)
        f.args.types = C.addressof(self.args[2])
        f.args.args = C.addressof(self.args[3])
        f.rets.struct_size = abi.struct_size(abi.Rets)
        f.rets.size = len(plan.out_types)
        f.rets.types = C.addressof(self.rets[2])
        f.rets.rets = C.addressof(self.rets[3])
        self.attrs_keep = encode_attributes(plan.attributes, f.attrs)[1]
        self.lock = threading.Lock()
        self.addr = C.addressof(f)
        self.buffers = None
        self.abandoned = False
        self.ctx = abi.ExecutionContext()


def _finalize_states(per_device):
    """Delete the states a plan's handler created (with their type's registered deleter)."""
    for states in per_device.values():
        got = states.get("state")
        if got is not None:
            deleter = abi.type_deleter(got[0])
            if deleter and got[1]:
                C.CFUNCTYPE(None, C.c_void_p)(deleter)(got[1])


class CallPlan:
    """Calls one FFI target with operands of fixed types and fixed attributes.

    ``in_types``/``out_types`` are (shape, dtype) pairs; ``aliases`` (input, output) pairs
    make an output share its input's (copied) buffer, as XLA's input_output_aliases.
    ``in_layouts``/``out_layouts`` give, per buffer, None (row-major) or the major-to-minor
    order of the dimensions in memory the handler expects: such operands are handed over
    physically transposed (the dims stay logical, as XLA's), such results read back so."""

    def __init__(self, target_name, in_types, out_types, attributes, aliases=(),
                 platform="cpu", device_ordinal=0, in_layouts=None, out_layouts=None):
        self.target_name = target_name
        self.target = lookup_target(target_name, platform)
        self.in_types = tuple((tuple(int(d) for d in s), np.dtype(t)) for s, t in in_types)
        self.out_types = tuple((tuple(int(d) for d in s), np.dtype(t)) for s, t in out_types)
        for i, (_, dt) in enumerate(self.in_types):
            self._check_dtype(dt, f"argument {i}")
        for i, (_, dt) in enumerate(self.out_types):
            self._check_dtype(dt, f"result {i}")
        self.attributes = tuple(attributes)
        self.aliases = dict((int(o), int(i)) for i, o in aliases)
        self.in_layouts = list(in_layouts or [None] * len(self.in_types))
        self.out_layouts = list(out_layouts or [None] * len(self.out_types))
        self.out_inverse = [None if p is None else tuple(int(d) for d in np.argsort(p))
                            for p in self.out_layouts]
        self._tls = threading.local()
        self._tls.frame = _Frame(self)      # encodes the attributes: errors show up here
        self.states = {}                    # device ordinal -> that device's states
        self.device_ordinal = device_ordinal
        self._lock = threading.Lock()
        weakref.finalize(self, _finalize_states, self.states)

    def _check_dtype(self, dt, what):
        try:
            dtype_code(dt)
        except ValueError:
            raise TypeError(f"ffi_call to {self.target_name!r}: {what} has dtype {dt}, which "
                            "XLA FFI buffers cannot hold") from None

    def _check(self, args):
        if len(args) != len(self.in_types):
            raise TypeError(f"ffi_call to {self.target_name!r} was prepared for "
                            f"{len(self.in_types)} operands but got {len(args)}")
        vals = []
        for i, (a, (shape, dt)) in enumerate(zip(args, self.in_types)):
            a = np.asarray(a)
            if a.shape != shape or a.dtype != dt:
                raise TypeError(
                    f"ffi_call to {self.target_name!r}: operand {i} is "
                    f"{a.dtype}{list(a.shape)} but the call was prepared for {dt}{list(shape)}")
            p = self.in_layouts[i]
            vals.append(np.ascontiguousarray(a if p is None else np.transpose(a, p)))
        return vals

    def _run_stage(self, stage, frame):
        fn = self.target.callables.get(stage)
        if fn is None:
            return
        frame.frame.stage = stage
        frame.frame.future = None
        err = fn(frame.addr)
        abi.check_error(err)
        fut = frame.frame.future
        if fut:
            try:
                abi.wait_future(fut, self.target_name)
            except abi.FutureTimeout as e:
                # the handler may still write into the buffers and the frame later: they
                # are kept alive for good rather than freed under it
                frame.abandoned = True
                _abandoned.append(frame)
                raise JaxRuntimeError(str(e)) from None

    def __call__(self, *args):
        """Run the handler on NumPy operands; returns the list of result arrays."""
        vals = self._check(args)
        outs = []
        for j, (shape, dt) in enumerate(self.out_types):
            i = self.aliases.get(j)
            p = self.out_layouts[j]
            # an aliased output starts as a copy of its input (jaxlite arrays are immutable);
            # others start zeroed, so a handler that leaves them unwritten leaks no memory
            outs.append(vals[i].copy() if i is not None else
                        np.zeros(shape if p is None else tuple(shape[d] for d in p), dt))
        for j, i in self.aliases.items():
            vals[i] = outs[j]
        frame = getattr(self._tls, "frame", None)     # one frame per calling thread
        if frame is None:
            frame = self._tls.frame = _Frame(self)
        if not frame.lock.acquire(blocking=False):
            frame = _Frame(self)             # a re-entrant call on this thread
            frame.lock.acquire()
        frame.buffers = (vals, outs)     # owned by the frame while the handler may use them
        try:
            for b, v in zip(frame.args[0], vals):
                b.data = v.ctypes.data
            for b, v in zip(frame.rets[0], outs):
                b.data = v.ctypes.data
            # on a device's executor thread (pmap, shard_map, sharded jit) the handler sees
            # that device's ordinal, and the states instantiated for it
            dev = current_device()
            ordinal = self.device_ordinal if dev is None else dev.id
            states = self.states.get(ordinal)
            if states is None:
                with self._lock:
                    states = self.states.setdefault(ordinal, {})
            ctx = frame.ctx
            ctx.device_ordinal, ctx.states = ordinal, states
            frame.frame.ctx = abi.enter_context(ctx)
            try:
                if Stage.INSTANTIATE in self.target.stages and not states.get("ready"):
                    with self._lock:
                        if not states.get("ready"):
                            self._run_stage(Stage.INSTANTIATE, frame)
                            states["ready"] = True
                self._run_stage(Stage.PREPARE, frame)
                self._run_stage(Stage.INITIALIZE, frame)
                self._run_stage(Stage.EXECUTE, frame)
            finally:
                abi.exit_context(ctx)
        finally:
            if frame.abandoned:             # never reused: this thread gets a new frame
                if getattr(self._tls, "frame", None) is frame:
                    self._tls.frame = None
            else:
                frame.buffers = None
                frame.lock.release()
        return [o if p is None else np.ascontiguousarray(np.transpose(o, p))
                for o, p in zip(outs, self.out_inverse)]
