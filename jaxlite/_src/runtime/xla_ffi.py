"""XLA's typed FFI C ABI, implemented by jaxlite with ctypes.

A handler compiled against the FFI headers that jaxlib ships (``xla/ffi/api/c_api.h``,
``api.h``, ``ffi.h``), e.g. with ``XLA_FFI_DEFINE_HANDLER_SYMBOL``, is a C function
``XLA_FFI_Error* handler(XLA_FFI_CallFrame*)``. It reads its operands from the call frame and
talks back to the framework only through the ``XLA_FFI_Api`` table of function pointers that
the frame carries (to create an error, get a stream, set a state, ...). This module lays out
both exactly as XLA does, so such a handler runs on jaxlite unchanged:

- the ``XLA_FFI_Api`` table (``api()``): errors (create / message / destroy), handler and
  type registration, run id and device ordinal, per-call-site states, host memory allocation,
  a thread pool that runs tasks inline, and futures for asynchronous handlers. What a CPU
  process cannot provide (a GPU stream, user data in an execution context) returns an
  ``UNIMPLEMENTED`` / ``NOT_FOUND`` error that the handler reports like any other;
- call frames (``runtime/xla_ffi_frame.py``): argument and result buffers (dtype, data
  pointer, rank, dims) and attributes sorted by name (scalars, arrays, strings, nested
  dictionaries), as XLA builds them from the custom call's ``mhlo.backend_config``.

The handler's own decoding (``ffi::Ffi::Bind()``) checks the number of operands, the buffer
dtypes and ranks and the attribute names and types; its errors, and the errors it returns,
come back as ``JaxRuntimeError`` with XLA's ``CODE: message`` text.

No XLA or jaxlib code is loaded: jaxlib is needed only to compile handlers (its headers).
"""
from __future__ import annotations

import ctypes as C
import itertools
import os
import threading

__all__ = ["API_MAJOR", "API_MINOR", "Stage", "ERROR_CODES", "api", "api_address",
           "error_message", "take_error", "check_error", "make_error", "ExecutionContext",
           "Future", "FutureTimeout", "wait_future", "struct_size", "FUTURE_TIMEOUT",
           "register_type", "ApiError"]

# The version of the C API this module implements (c_api.h's XLA_FFI_API_MAJOR/MINOR).
API_MAJOR, API_MINOR = 0, 3
# Handlers built against headers in this range are accepted.
MIN_SUPPORTED = (0, 1)


class Stage:
    """XLA_FFI_ExecutionStage."""
    INSTANTIATE, PREPARE, INITIALIZE, EXECUTE = 0, 1, 2, 3
    names = {0: "instantiate", 1: "prepare", 2: "initialize", 3: "execute"}


# XLA_FFI_Error_Code -> the status name XLA prints ("INVALID_ARGUMENT: ...").
ERROR_CODES = {
    0: "OK", 1: "CANCELLED", 2: "UNKNOWN", 3: "INVALID_ARGUMENT", 4: "DEADLINE_EXCEEDED",
    5: "NOT_FOUND", 6: "ALREADY_EXISTS", 7: "PERMISSION_DENIED", 8: "RESOURCE_EXHAUSTED",
    9: "FAILED_PRECONDITION", 10: "ABORTED", 11: "OUT_OF_RANGE", 12: "UNIMPLEMENTED",
    13: "INTERNAL", 14: "UNAVAILABLE", 15: "DATA_LOSS", 16: "UNAUTHENTICATED"}
INVALID_ARGUMENT, NOT_FOUND, FAILED_PRECONDITION, UNIMPLEMENTED, INTERNAL = 3, 5, 9, 12, 13

_p = C.c_void_p
_enum = C.c_int          # C enums are ints on every ABI XLA supports
_size = C.c_size_t
_i64 = C.c_int64


# ----------------------------------------------------------------------------- structs

class ExtensionBase(C.Structure):
    _fields_ = [("struct_size", _size), ("type", _enum), ("next", _p)]


class ApiVersion(C.Structure):
    _fields_ = [("struct_size", _size), ("extension_start", _p),
                ("major_version", C.c_int), ("minor_version", C.c_int)]


class ByteSpan(C.Structure):
    _fields_ = [("ptr", _p), ("len", _size)]


class Scalar(C.Structure):
    _fields_ = [("dtype", _enum), ("value", _p)]


class Array(C.Structure):
    _fields_ = [("dtype", _enum), ("size", _size), ("data", _p)]


class Buffer(C.Structure):
    _fields_ = [("struct_size", _size), ("extension_start", _p), ("dtype", _enum),
                ("data", _p), ("rank", _i64), ("dims", _p)]


class Args(C.Structure):
    _fields_ = [("struct_size", _size), ("extension_start", _p), ("size", _i64),
                ("types", _p), ("args", _p)]


class Rets(C.Structure):
    _fields_ = [("struct_size", _size), ("extension_start", _p), ("size", _i64),
                ("types", _p), ("rets", _p)]


class Attrs(C.Structure):
    _fields_ = [("struct_size", _size), ("extension_start", _p), ("size", _i64),
                ("types", _p), ("names", _p), ("attrs", _p)]


class CallFrame(C.Structure):
    _fields_ = [("struct_size", _size), ("extension_start", _p), ("api", _p), ("ctx", _p),
                ("stage", _enum), ("args", Args), ("rets", Rets), ("attrs", Attrs),
                ("future", _p)]


class TypeId(C.Structure):
    _fields_ = [("type_id", _i64)]


class TypeInfo(C.Structure):
    _fields_ = [("struct_size", _size), ("extension_start", _p), ("deleter", _p)]


class Metadata(C.Structure):
    _fields_ = [("struct_size", _size), ("api_version", ApiVersion), ("traits", C.c_uint32),
                ("state_type_id", TypeId)]


class MetadataExtension(C.Structure):
    _fields_ = [("extension_base", ExtensionBase), ("metadata", _p)]


def _args_struct(*fields):
    class S(C.Structure):
        _fields_ = [("struct_size", _size), ("extension_start", _p)] + list(fields)
    return S


ErrorCreateArgs = _args_struct(("message", _p), ("errc", _enum))
ErrorGetMessageArgs = _args_struct(("error", _p), ("message", _p))
ErrorDestroyArgs = _args_struct(("error", _p))
HandlerBundle = type("HandlerBundle", (C.Structure,), {"_fields_": [
    ("instantiate", _p), ("prepare", _p), ("initialize", _p), ("execute", _p)]})
HandlerRegisterArgs = _args_struct(("name", ByteSpan), ("platform", ByteSpan),
                                   ("bundle", HandlerBundle), ("traits", C.c_uint32))
StreamGetArgs = _args_struct(("ctx", _p), ("stream", _p))
TypeRegisterArgs = _args_struct(("name", ByteSpan), ("type_id", _p), ("type_info", _p))
ExecutionContextGetArgs = _args_struct(("ctx", _p), ("type_id", _p), ("data", _p))
StateSetArgs = _args_struct(("ctx", _p), ("stage", _enum), ("type_id", _p), ("state", _p))
StateGetArgs = _args_struct(("ctx", _p), ("stage", _enum), ("type_id", _p), ("state", _p))
MemAllocateArgs = _args_struct(("ctx", _p), ("size", _size), ("alignment", _size),
                               ("data", _p))
MemFreeArgs = _args_struct(("ctx", _p), ("size", _size), ("data", _p))
ThreadPoolScheduleArgs = _args_struct(("ctx", _p), ("task", _p), ("data", _p))
ThreadPoolNumThreadsArgs = _args_struct(("ctx", _p), ("num_threads", _p))
RunIdGetArgs = _args_struct(("ctx", _p), ("run_id", _i64))
DeviceOrdinalGetArgs = _args_struct(("ctx", _p), ("device_ordinal", C.c_int32))
FutureCreateArgs = _args_struct(("future", _p))
FutureSetAvailableArgs = _args_struct(("future", _p))
FutureSetErrorArgs = _args_struct(("future", _p), ("error", _p))

# The API table's function pointers, in c_api.h's order, with their argument structs and
# whether they return XLA_FFI_Error* (all but GetMessage and Destroy).
_API_FUNCTIONS = [
    ("XLA_FFI_Error_Create", ErrorCreateArgs, True),
    ("XLA_FFI_Error_GetMessage", ErrorGetMessageArgs, False),
    ("XLA_FFI_Error_Destroy", ErrorDestroyArgs, False),
    ("XLA_FFI_Handler_Register", HandlerRegisterArgs, True),
    ("XLA_FFI_Stream_Get", StreamGetArgs, True),
    ("XLA_FFI_Type_Register", TypeRegisterArgs, True),
    ("XLA_FFI_ExecutionContext_Get", ExecutionContextGetArgs, True),
    ("XLA_FFI_State_Set", StateSetArgs, True),
    ("XLA_FFI_State_Get", StateGetArgs, True),
    ("XLA_FFI_DeviceMemory_Allocate", MemAllocateArgs, True),
    ("XLA_FFI_DeviceMemory_Free", MemFreeArgs, True),
    ("XLA_FFI_ThreadPool_Schedule", ThreadPoolScheduleArgs, True),
    ("XLA_FFI_ThreadPool_NumThreads", ThreadPoolNumThreadsArgs, True),
    ("XLA_FFI_Future_Create", FutureCreateArgs, True),
    ("XLA_FFI_Future_SetAvailable", FutureSetAvailableArgs, True),
    ("XLA_FFI_Future_SetError", FutureSetErrorArgs, True),
    ("XLA_FFI_RunId_Get", RunIdGetArgs, True),
    ("XLA_FFI_DeviceOrdinal_Get", DeviceOrdinalGetArgs, True),
]


class Api(C.Structure):
    _fields_ = ([("struct_size", _size), ("extension_start", _p), ("api_version", ApiVersion),
                 ("internal_api", _p)] + [(n, _p) for n, _, _ in _API_FUNCTIONS])


def struct_size(cls, last_field=None) -> int:
    """c_api.h's XLA_FFI_STRUCT_SIZE: the offset of ``last_field`` plus its size (the whole
    struct when ``last_field`` is None)."""
    if last_field is None:
        return C.sizeof(cls)
    f = getattr(cls, last_field)
    return f.offset + f.size


# The sizes the headers compute (XLA_FFI_DEFINE_STRUCT_TRAITS): CallFrame ends at `attrs`
# and Metadata at `traits` (the fields after them are newer additions).
CALL_FRAME_SIZE = struct_size(CallFrame, "attrs")
METADATA_SIZE = struct_size(Metadata, "traits")

# ----------------------------------------------------------------------------- errors

# XLA_FFI_Error objects made by jaxlite: address of the message buffer -> (code, buffer).
# The address is the opaque XLA_FFI_Error* handed to the handler.
_errors: dict[int, tuple] = {}
_errors_lock = threading.Lock()


def make_error(code: int, message: str) -> int:
    """A new XLA_FFI_Error* (as an int) with ``code`` and ``message``."""
    buf = C.create_string_buffer(message.encode("utf-8", "replace"))
    addr = C.addressof(buf)
    with _errors_lock:
        _errors[addr] = (code, buf)
    return addr


def take_error(ptr: int) -> tuple[int, str]:
    """(code, message) of the error ``ptr``, destroying it."""
    with _errors_lock:
        got = _errors.pop(ptr, None)
    if got is None:
        return INTERNAL, (f"the FFI handler returned an XLA_FFI_Error (at {ptr:#x}) that was "
                          "not created through the XLA_FFI_Api it was given")
    code, buf = got
    return code, buf.value.decode("utf-8", "replace")


def error_message(code: int, message: str) -> str:
    """XLA's text for a failed status: ``INVALID_ARGUMENT: message``."""
    return f"{ERROR_CODES.get(code, 'UNKNOWN')}: {message}"


def check_error(ptr, context=""):
    """Raise the JaxRuntimeError for a non-null XLA_FFI_Error* (``context`` is appended
    below XLA's text)."""
    if ptr:
        from jaxlite._src.core.errors import JaxRuntimeError
        code, msg = take_error(ptr)
        raise JaxRuntimeError(error_message(code, msg) + context)


# ----------------------------------------------------------------------------- contexts

class ExecutionContext:
    """What an ``XLA_FFI_ExecutionContext*`` stands for in jaxlite: one call site (a plan)
    executing on a device, with its run id and the states its handler set."""
    __slots__ = ("handle", "device_ordinal", "run_id", "states", "__weakref__")

    def __init__(self, device_ordinal=0, states=None):
        self.handle = C.c_int64(0)          # its address is the opaque pointer
        self.device_ordinal = device_ordinal
        self.run_id = 0
        self.states = states if states is not None else {}

    @property
    def address(self):
        return C.addressof(self.handle)


_contexts: dict[int, ExecutionContext] = {}
_run_ids = itertools.count(1)


def enter_context(ctx: ExecutionContext) -> int:
    ctx.run_id = next(_run_ids)
    _contexts[ctx.address] = ctx
    return ctx.address


def exit_context(ctx: ExecutionContext):
    _contexts.pop(ctx.address, None)


def _context(ptr):
    ctx = _contexts.get(ptr)
    if ctx is None:
        raise ApiError(INVALID_ARGUMENT, "XLA_FFI_ExecutionContext is not the one of a "
                                          "running FFI call")
    return ctx


# types registered with XLA_FFI_Type_Register: name -> (id, deleter address)
_types: dict[str, tuple[int, int]] = {}
_type_ids = itertools.count(1)


def type_deleter(type_id: int):
    for tid, deleter in _types.values():
        if tid == type_id:
            return deleter
    return None


# ----------------------------------------------------------------------------- futures

class Future:
    """An XLA_FFI_Future: completed (available, or with an error) by the handler, possibly
    from another thread."""
    __slots__ = ("event", "error", "handle")

    def __init__(self):
        self.event = threading.Event()
        self.error = None
        self.handle = C.c_int64(0)


_futures: dict[int, Future] = {}


# How long a call waits for the future of an asynchronous handler.
FUTURE_TIMEOUT = float(os.environ.get("JAXLITE_FFI_FUTURE_TIMEOUT", "600"))


class FutureTimeout(Exception):
    """An asynchronous handler did not complete its future in time."""


def wait_future(ptr: int, target: str, timeout: float | None = None):
    """Wait for the future a handler returned; raise its error (or FutureTimeout: the
    future then stays registered, so the handler may still complete it safely)."""
    from jaxlite._src.core.errors import JaxRuntimeError
    fut = _futures.get(ptr)
    if fut is None:
        raise JaxRuntimeError(f"INTERNAL: the FFI handler for {target!r} returned a future "
                              "jaxlite did not create")
    timeout = FUTURE_TIMEOUT if timeout is None else timeout
    if not fut.event.wait(timeout):
        raise FutureTimeout(
            f"DEADLINE_EXCEEDED: the asynchronous FFI handler for {target!r} did not "
            f"complete its future within {timeout:g} s (JAXLITE_FFI_FUTURE_TIMEOUT sets "
            "the wait, in seconds)")
    _futures.pop(ptr, None)
    if fut.error is not None:
        check_error(fut.error)


# ----------------------------------------------------------------------------- the API

class ApiError(Exception):
    """An error an API function reports back to the handler (code, message)."""

    def __init__(self, code, message):
        super().__init__(message)
        self.code = code


# c_api.h's struct sizes end at the last field named in XLA_FFI_DEFINE_STRUCT_TRAITS: the
# last one, but for Future_Create_Args (its `future` output came later).
_LAST_FIELD = {"XLA_FFI_Future_Create": "extension_start"}


def _check_size(args, cls, name):
    need = struct_size(cls, _LAST_FIELD.get(name, cls._fields_[-1][0]))
    if args.struct_size < need:
        raise ApiError(INVALID_ARGUMENT, f"Unexpected {name}_Args size: expected at least "
                        f"{need}, "
                        f"got {args.struct_size}. Check installed software versions. The "
                        f"framework XLA FFI API version is {API_MAJOR}.{API_MINOR}.")


def _error_create(a):
    msg = C.string_at(a.message).decode("utf-8", "replace") if a.message else ""
    return make_error(a.errc, msg)


def _error_get_message(a):
    with _errors_lock:
        got = _errors.get(a.error)
    a.message = C.addressof(got[1]) if got else None


def _error_destroy(a):
    with _errors_lock:
        _errors.pop(a.error, None)


# Set by runtime/xla_ffi_frame.py (which owns the target registry): register_bundle.
handler_registry = []


def _handler_register(a):
    if not handler_registry:
        raise ApiError(UNIMPLEMENTED, "no FFI target registry is loaded")
    name = C.string_at(a.name.ptr, a.name.len).decode()
    platform = C.string_at(a.platform.ptr, a.platform.len).decode()
    b = a.bundle
    handler_registry[0](name, platform, {
        "instantiate": b.instantiate, "prepare": b.prepare, "initialize": b.initialize,
        "execute": b.execute}, traits=a.traits)


def _stream_get(a):
    raise ApiError(UNIMPLEMENTED, "XLA FFI GPU context is not available (jaxlite runs FFI "
                                   "handlers on the host CPU, which has no stream)")


def register_type(name: str, type_id_ptr: int, type_info_ptr: int | None):
    """Register a user type (XLA_FFI_Type_Register): the XLA_FFI_TypeId at ``type_id_ptr``
    receives a fresh id (or keeps the one it holds); the deleter of the XLA_FFI_TypeInfo at
    ``type_info_ptr`` deletes states of that type."""
    tid = C.cast(type_id_ptr, C.POINTER(TypeId)).contents
    deleter = (C.cast(type_info_ptr, C.POINTER(TypeInfo)).contents.deleter
               if type_info_ptr else None)
    with _errors_lock:
        if name in _types:
            if tid.type_id in (0, _types[name][0]):
                tid.type_id = _types[name][0]
                return
            raise ApiError(6, f"Type name {name} already registered with type id "
                               f"{_types[name][0]}")
        if tid.type_id == 0:
            tid.type_id = next(_type_ids) + (1 << 32)
        _types[name] = (tid.type_id, deleter)


def _type_register(a):
    register_type(C.string_at(a.name.ptr, a.name.len).decode(), a.type_id, a.type_info)


def _execution_context_get(a):
    tid = C.cast(a.type_id, C.POINTER(TypeId)).contents.type_id
    raise ApiError(NOT_FOUND, f"User data with type id {tid} not found in the execution "
                               "context (jaxlite passes no user data to FFI handlers)")


def _state_set(a):
    ctx = _context(a.ctx)
    if a.stage != Stage.INSTANTIATE:
        raise ApiError(FAILED_PRECONDITION, "FFI handler state can only be set at the "
                                             "instantiate stage")
    tid = C.cast(a.type_id, C.POINTER(TypeId)).contents.type_id
    if "state" in ctx.states:
        raise ApiError(FAILED_PRECONDITION, "State is already set")
    ctx.states["state"] = (tid, a.state)


def _state_get(a):
    ctx = _context(a.ctx)
    tid = C.cast(a.type_id, C.POINTER(TypeId)).contents.type_id
    got = ctx.states.get("state")
    if got is None:
        raise ApiError(NOT_FOUND, "State is not set")
    if got[0] != tid:
        raise ApiError(INVALID_ARGUMENT, f"Set state type id {got[0]} does not match the "
                                          f"requested one {tid}")
    a.state = got[1]


_allocations: dict[int, object] = {}


def _mem_allocate(a):
    _context(a.ctx)
    align = max(int(a.alignment), 1)
    if align & (align - 1):
        raise ApiError(INVALID_ARGUMENT, f"alignment {align} is not a power of two")
    raw = C.create_string_buffer(int(a.size) + align)
    base = C.addressof(raw)
    addr = (base + align - 1) // align * align
    _allocations[addr] = raw
    a.data = addr


def _mem_free(a):
    if _allocations.pop(a.data, None) is None and a.data:
        raise ApiError(INVALID_ARGUMENT, "DeviceMemory_Free of memory not allocated by "
                                          "DeviceMemory_Allocate")


_TASK = C.CFUNCTYPE(None, _p)


def _threadpool_schedule(a):
    _context(a.ctx)
    # The host "thread pool" of a jaxlite FFI call runs each task at once, on the calling
    # thread (NumThreads reports 1): a handler that waits for its tasks finds them done.
    _TASK(a.task)(a.data)


def _threadpool_num_threads(a):
    _context(a.ctx)
    C.cast(a.num_threads, C.POINTER(_i64)).contents.value = 1


def _run_id_get(a):
    a.run_id = _context(a.ctx).run_id


def _device_ordinal_get(a):
    a.device_ordinal = _context(a.ctx).device_ordinal


def _future_create(a):
    fut = Future()
    addr = C.addressof(fut.handle)
    _futures[addr] = fut
    a.future = addr


def _future_set_available(a):
    fut = _futures.get(a.future)
    if fut is None:
        raise ApiError(INVALID_ARGUMENT, "unknown XLA_FFI_Future")
    fut.event.set()


def _future_set_error(a):
    fut = _futures.get(a.future)
    if fut is None:
        raise ApiError(INVALID_ARGUMENT, "unknown XLA_FFI_Future")
    if not a.error:
        raise ApiError(INVALID_ARGUMENT, "Error must not be null or OK")
    fut.error = a.error
    fut.event.set()


_IMPLS = {
    "XLA_FFI_Error_Create": _error_create, "XLA_FFI_Error_GetMessage": _error_get_message,
    "XLA_FFI_Error_Destroy": _error_destroy, "XLA_FFI_Handler_Register": _handler_register,
    "XLA_FFI_Stream_Get": _stream_get, "XLA_FFI_Type_Register": _type_register,
    "XLA_FFI_ExecutionContext_Get": _execution_context_get, "XLA_FFI_State_Set": _state_set,
    "XLA_FFI_State_Get": _state_get, "XLA_FFI_DeviceMemory_Allocate": _mem_allocate,
    "XLA_FFI_DeviceMemory_Free": _mem_free,
    "XLA_FFI_ThreadPool_Schedule": _threadpool_schedule,
    "XLA_FFI_ThreadPool_NumThreads": _threadpool_num_threads,
    "XLA_FFI_Future_Create": _future_create,
    "XLA_FFI_Future_SetAvailable": _future_set_available,
    "XLA_FFI_Future_SetError": _future_set_error, "XLA_FFI_RunId_Get": _run_id_get,
    "XLA_FFI_DeviceOrdinal_Get": _device_ordinal_get,
}


def _wrap(name, args_cls, returns_error, impl):
    """A C-callable for one API function: checks the argument struct's size, runs ``impl``
    and turns any exception into an XLA_FFI_Error (never lets one cross into C)."""
    ptr_t = C.POINTER(args_cls)

    def fn(args_ptr):
        try:
            if not args_ptr:
                raise ApiError(INVALID_ARGUMENT, f"{name} called with a null argument")
            a = C.cast(args_ptr, ptr_t).contents
            _check_size(a, args_cls, name)
            got = impl(a)
            if name == "XLA_FFI_Error_Create":
                return got
            return None
        except ApiError as e:
            return make_error(e.code, str(e)) if returns_error else None
        except BaseException as e:   # noqa: BLE001 -- nothing may unwind into C
            return (make_error(INTERNAL, f"{name} failed in jaxlite: {type(e).__name__}: {e}")
                    if returns_error else None)

    proto = C.CFUNCTYPE(_p if returns_error else None, _p)
    return proto(fn)


_api_lock = threading.Lock()
_api = []   # [Api struct, callbacks kept alive]


def api() -> Api:
    """jaxlite's XLA_FFI_Api table (built on first use; lives as long as the process)."""
    if _api:
        return _api[0]
    with _api_lock:
        if not _api:
            table = Api()
            table.struct_size = struct_size(Api)
            table.extension_start = None
            table.api_version = ApiVersion(struct_size(ApiVersion), None, API_MAJOR, API_MINOR)
            table.internal_api = None
            keep = []
            for name, cls, ret in _API_FUNCTIONS:
                cb = _wrap(name, cls, ret, _IMPLS[name])
                keep.append(cb)
                setattr(table, name, C.cast(cb, _p).value)
            _api.extend([table, keep])
    return _api[0]


def api_address() -> int:
    """The address of jaxlite's XLA_FFI_Api table."""
    return C.addressof(api())
