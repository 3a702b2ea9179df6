"""The FFI API (``jax.ffi``): register compiled XLA FFI handlers and call them.

A handler written in C++ against the headers that jaxlib ships (``xla/ffi/api/ffi.h``) and
exported with ``XLA_FFI_DEFINE_HANDLER_SYMBOL`` is registered from a PyCapsule
(``register_ffi_target(name, pycapsule(lib.Handler))``) and called with
``ffi_call(name, result_shape_dtypes)(*arrays, **attributes)``, eagerly, under ``jit``,
``vmap`` (by ``vmap_method``) and the other transformations, exactly as on JAX: jaxlite
implements XLA's FFI C ABI itself (``runtime/xla_ffi.py``), so the same compiled library
runs on both.
"""
from __future__ import annotations

import ctypes
import importlib.util
import os
import warnings
from collections.abc import Sequence

import numpy as np

from jaxlite._src.core.avals import ShapedArray, aval_of_value
from jaxlite._src.core.errors import JaxRuntimeError
from jaxlite._src.prims.ffi import VMAP_METHODS, ffi_call_p, hashable_attributes
from jaxlite._src.sharding.shardings import aval_sharding
from jaxlite._src.runtime import xla_ffi_frame

__all__ = ["ffi_call", "register_ffi_target", "register_ffi_type_id", "register_ffi_type",
           "register_ffi_target_as_batch_partitionable", "pycapsule", "include_dir",
           "ffi_lowering", "build_ffi_lowering_function", "FfiLowering"]


def register_ffi_target(name, fn, platform="cpu", api_version=1, **kwargs):
    """Register a foreign function target (an XLA FFI handler).

    Args:
      name: the target's name, used by ``ffi_call``.
      fn: a PyCapsule holding the handler's function pointer (see ``pycapsule``), or a dict
        mapping FFI stage names (``"instantiate"``, ``"prepare"``, ``"initialize"``,
        ``"execute"``) to such capsules.
      platform: ``"cpu"`` (handlers for other platforms are recorded but jaxlite runs on the
        host, so calling them finds no CPU handler).
      api_version: 1, the typed FFI (the legacy custom-call API 0 is not supported).

    The handler is asked for its metadata on registration, as XLA does: a function that is
    not an XLA FFI handler, or one built against incompatible headers, is refused here.
    """
    if kwargs:
        raise TypeError(f"register_ffi_target: unsupported keyword argument(s) "
                        f"{sorted(kwargs)} (jaxlite has no XLA client options)")
    xla_ffi_frame.register_target(name, fn, platform, api_version)


def register_ffi_type_id(name, obj, platform="cpu"):
    """Deprecated in JAX (jaxlib >= 0.8): raises as JAX does; use ``register_ffi_type``."""
    raise ValueError("register_ffi_type_id is not supported after jaxlib version 381.")


def register_ffi_type(name, type_registration, platform="cpu"):
    """Register a custom type for FFI handlers (``{"type_id": capsule, "type_info":
    capsule}``): the ``XLA_FFI_TypeId`` the capsule points to receives its id."""
    from jaxlite._src.runtime import xla_ffi as abi
    if not isinstance(type_registration, dict) or "type_id" not in type_registration:
        raise TypeError("register_ffi_type expects a dict with a 'type_id' PyCapsule (and an "
                        "optional 'type_info' PyCapsule)")
    tid_ptr = xla_ffi_frame._capsule_pointer(type_registration["type_id"])
    info = type_registration.get("type_info")
    info_ptr = xla_ffi_frame._capsule_pointer(info) if info is not None else None
    if tid_ptr is None or (info is not None and info_ptr is None):
        raise TypeError("register_ffi_type: 'type_id' and 'type_info' must be PyCapsules")
    try:
        abi.register_type(name, tid_ptr, info_ptr)
    except abi.ApiError as e:
        raise JaxRuntimeError(abi.error_message(e.code, str(e))) from None


def register_ffi_target_as_batch_partitionable(name):
    """Accepted for compatibility: jaxlite partitions an ffi_call over a batch dimension
    through its vmap rule; nothing needs recording."""
    if not isinstance(name, str):
        raise TypeError("register_ffi_target_as_batch_partitionable expects a target name")


def pycapsule(funcptr):
    """Wrap a ctypes function pointer (e.g. ``ctypes.cdll.LoadLibrary(path).Handler``) in a
    PyCapsule, the form ``register_ffi_target`` takes."""
    destructor = ctypes.CFUNCTYPE(None, ctypes.py_object)
    builder = ctypes.pythonapi.PyCapsule_New
    builder.restype = ctypes.py_object
    builder.argtypes = (ctypes.c_void_p, ctypes.c_char_p, destructor)
    ptr = ctypes.cast(funcptr, ctypes.c_void_p).value
    if not ptr:
        raise ValueError("pycapsule: null function pointer")
    return builder(ptr, None, destructor(0))


def include_dir() -> str:
    """The directory holding XLA's FFI headers (``xla/ffi/api/ffi.h``) to compile handlers
    against: jaxlite implements that ABI but ships no headers, so this is the ``include``
    directory of an installed jaxlib (found without importing it)."""
    spec = importlib.util.find_spec("jaxlib")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError(
            "jax.ffi.include_dir(): the XLA FFI headers come with jaxlib, which is not "
            "installed. jaxlite runs handlers built against them without jaxlib; to compile "
            "one, `pip install jaxlib` (a build-time dependency only) or use the headers of "
            "an XLA checkout (xla/ffi/api/).")
    return os.path.join(list(spec.submodule_search_locations)[0], "include")


# ----------------------------------------------------------------------------- ffi_call

def _result_avals(results):
    avals = []
    for idx, r in enumerate(results):
        if type(r).__name__ == "AbstractToken":
            raise TypeError("ffi_call: token results are not supported by jaxlite")
        if not hasattr(r, "shape") or not hasattr(r, "dtype"):
            raise ValueError("All elements of result_shape_dtypes must have 'shape' and "
                             f"'dtype' attributes. Got {r} at position {idx}.")
        aval = ShapedArray(tuple(int(d) for d in r.shape), np.dtype(r.dtype))
        sharding = getattr(r, "sharding", None)
        if sharding is not None and getattr(getattr(sharding, "mesh", None), "explicit_axes",
                                            None):
            aval = aval.update(sharding=aval_sharding(sharding, aval.ndim))
        avals.append(aval)
    return tuple(avals)


def _layout(aval, layout):
    """A layout as the minor-to-major tuple XLA uses (``ffi_call`` takes major-to-minor)."""
    nd = len(aval.shape)
    if layout is None:
        return tuple(reversed(range(nd)))
    m2m = getattr(layout, "major_to_minor", None)
    if m2m is not None:
        if getattr(layout, "tiling", None):
            raise ValueError("The FFI does not support layouts with tiling")
        out = tuple(m2m)[::-1]
    else:
        out = tuple(int(d) for d in layout)[::-1]
    if sorted(out) != list(range(nd)):
        raise ValueError(f"ffi_call: layout {tuple(layout)} is not a permutation of the "
                         f"{nd} dimensions of {aval.str_short()}")
    return out


def _aval_text(a):
    return f"{a.dtype.name}[{','.join(str(d) for d in a.shape)}]"


def _compatible(a, b):
    return tuple(a.shape) == tuple(b.shape) and a.dtype == b.dtype


def ffi_call(target_name, result_shape_dtypes, *deprecated_args, has_side_effect=False,
             vmap_method=None, input_layouts=None, output_layouts=None,
             input_output_aliases=None, custom_call_api_version=4,
             legacy_backend_config=None, **deprecated_kwargs):
    """Call a registered FFI target.

    ``ffi_call(target_name, result_shape_dtypes, ...)`` returns a function taking the input
    arrays as positional arguments and the handler's attributes as keyword arguments (NumPy
    scalars, Python numbers (int64 / float64), strings, NumPy arrays and dicts of those),
    returning one array, or a list/tuple of arrays when ``result_shape_dtypes`` is a
    sequence. ``has_side_effect`` keeps the call even when its results are unused;
    ``vmap_method`` says how it batches under ``vmap`` (as ``pure_callback``'s);
    ``input_layouts``/``output_layouts`` (major-to-minor) ask for buffers in another
    dimension order; ``input_output_aliases`` ({input: output}) makes an output start as
    (and be written in) the buffer of an input.

    The seed's one-shot form ``ffi_call(target_name, out_type, *args, **attributes)`` (from
    older JAX) calls at once, with a DeprecationWarning.
    """
    if vmap_method not in VMAP_METHODS:
        raise ValueError(f"vmap_method must be on of the allowed methods {list(VMAP_METHODS)}, "
                         f"but got: {vmap_method}")
    if custom_call_api_version != 4:
        raise ValueError(
            f"ffi_call: custom_call_api_version={custom_call_api_version} is a legacy XLA "
            "custom call, which jaxlite does not run; only the typed FFI (version 4) is "
            "supported.")
    if legacy_backend_config is not None:
        raise ValueError("The use of the legacy_backend_config parameter requires "
                         f"custom_call_api_version < 4; got {custom_call_api_version}.")
    if isinstance(result_shape_dtypes, Sequence):
        multiple = True
        result_avals = _result_avals(result_shape_dtypes)
        out_layouts = output_layouts
    else:
        multiple = False
        result_avals = _result_avals([result_shape_dtypes])
        out_layouts = (output_layouts,)

    def wrapped(*args, **kwargs):
        in_avals = [aval_of_value(x) for x in args]
        if input_layouts is None:
            in_l = tuple(_layout(a, None) for a in in_avals)
        else:
            if len(input_layouts) != len(in_avals):
                raise ValueError(f"The number of input arguments ({len(in_avals)}) must equal "
                                 f"the number of input layouts ({len(input_layouts)}).")
            in_l = tuple(_layout(a, l) for a, l in zip(in_avals, input_layouts))
        if out_layouts is None:
            out_l = tuple(_layout(a, None) for a in result_avals)
        else:
            if len(out_layouts) != len(result_avals):
                raise ValueError(f"The number of outputs ({len(result_avals)}) must equal the "
                                 f"number of output layouts ({len(out_layouts)}).")
            out_l = tuple(_layout(a, l) for a, l in zip(result_avals, out_layouts))
        aliases = []
        for i, o in sorted((input_output_aliases or {}).items()):
            i, o = int(i), int(o)
            if i >= len(args):
                raise ValueError(f"input_output_aliases contains the mapping '{i}:{o}' with "
                                 f"input index {i} outside the range [0, {len(args)}).")
            if o >= len(result_avals):
                raise ValueError(f"input_output_aliases contains the mapping '{i}:{o}' with "
                                 f"output index {o} outside the range [0, "
                                 f"{len(result_avals)}).")
            if not _compatible(in_avals[i], result_avals[o]):
                raise ValueError(
                    f"input_output_aliases contains the mapping '{i}:{o}' referring to an "
                    f"input with abstract value {_aval_text(in_avals[i])} and an output with "
                    f"a different abstract value {_aval_text(result_avals[o])}.")
            if in_l[i] != out_l[o]:
                raise ValueError(
                    f"input_output_aliases contains the mapping '{i}:{o}' referring to an "
                    f"input with layout {in_l[i]} and an output with a different layout "
                    f"{out_l[o]}.")
            aliases.append((i, o))
        outs = ffi_call_p.bind(
            *args, result_avals=result_avals, vmap_method=vmap_method,
            target_name=target_name, has_side_effect=bool(has_side_effect),
            input_layouts=in_l, output_layouts=out_l, input_output_aliases=tuple(aliases),
            custom_call_api_version=custom_call_api_version,
            legacy_backend_config=legacy_backend_config,
            attributes=hashable_attributes(kwargs))
        if multiple:
            return tuple(outs) if isinstance(result_shape_dtypes, tuple) else list(outs)
        return outs[0]

    if deprecated_args or deprecated_kwargs:
        warnings.warn(
            "Calling ffi_call directly with input arguments is deprecated (and removed in "
            "current JAX): ffi_call builds a function, which is then called with the inputs, "
            f"e.g. ffi_call({target_name!r}, out_type)(x, attr=...).", DeprecationWarning,
            stacklevel=2)
        return wrapped(*deprecated_args, **deprecated_kwargs)
    return wrapped


# ----------------------------------------------------------------------------- lowering

class FfiLowering:
    """What ``ffi_lowering(target)`` returns: jaxlite has no MLIR, so a "lowering" of a
    custom primitive to an FFI call is the call itself. Called as a lowering rule
    ``rule(ctx, *operands, **params)`` — ``ctx.avals_out`` giving the result types — it binds
    ``ffi_call`` on the operands with the params as attributes."""

    def __init__(self, call_target_name, operand_layouts=None, result_layouts=None,
                 has_side_effect=False, operand_output_aliases=None, backend_config=None,
                 **lowering_args):
        self.call_target_name = call_target_name
        self.backend_config = dict(backend_config or {})
        self.operand_layouts = operand_layouts
        self.result_layouts = result_layouts
        self.has_side_effect = has_side_effect
        self.operand_output_aliases = operand_output_aliases
        self.lowering_args = lowering_args

    def __call__(self, ctx, *operands, **params):
        avals_out = getattr(ctx, "avals_out", None)
        if avals_out is None:
            raise TypeError("an FFI lowering rule is called with a context whose avals_out "
                            "give the result types")
        def m2m(layouts):       # XLA's minor-to-major -> ffi_call's major-to-minor
            if layouts is None:
                return None
            return [None if lay is None else tuple(lay)[::-1] for lay in layouts]
        fn = ffi_call(self.call_target_name, list(avals_out),
                      has_side_effect=self.has_side_effect, vmap_method="sequential",
                      input_layouts=m2m(self.operand_layouts),
                      output_layouts=m2m(self.result_layouts),
                      input_output_aliases=self.operand_output_aliases)
        return fn(*operands, **dict(self.backend_config, **params))

    def __repr__(self):
        return f"FfiLowering({self.call_target_name!r})"


def ffi_lowering(call_target_name, *, operand_layouts=None, result_layouts=None,
                 backend_config=None, skip_ffi_layout_processing=False, **lowering_args):
    """A lowering rule for a custom primitive that calls the FFI target
    ``call_target_name`` (layouts minor-to-major, as XLA's); see ``FfiLowering``."""
    if backend_config is not None and not isinstance(backend_config, dict):
        raise ValueError("When api_version > 4, backend_config must be a dictionary.")
    return FfiLowering(call_target_name, operand_layouts=operand_layouts,
                       result_layouts=result_layouts, backend_config=backend_config,
                       **lowering_args)


build_ffi_lowering_function = ffi_lowering
