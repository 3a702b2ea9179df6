"""The callback API: ``jax.pure_callback``, ``jax.experimental.io_callback``,
``jax.debug.callback``, ``jax.debug.print`` / ``log`` and ``jax.effects_barrier``.

Each flattens its arguments and binds one of the callback primitives of
``prims/callback.py``; the callbacks themselves run on the host with their operands as arrays,
eagerly or from jit's generated code.
"""
from __future__ import annotations

import logging
import string

import numpy as np

from jaxlite._src import tree_util
from jaxlite._src.core import dtypes
from jaxlite._src.core.avals import ShapedArray, aval_of_value
from jaxlite._src.core.trace import Tracer
from jaxlite._src.prims.callback import (FlatCallback, debug_callback_p, debug_effect,
                                         debug_print_p, io_callback_p, ordered_debug_effect,
                                         pure_callback_p)
from jaxlite._src.core.source_info import user_frame

__all__ = ["pure_callback", "io_callback", "debug_callback", "debug_print", "debug_log",
           "effects_barrier"]

_VMAP_METHODS = ["sequential", "sequential_unrolled", "expand_dims", "broadcast_all",
                 "legacy_vectorized", None]


def _result_avals(result_shape_dtypes):
    """(flat ShapedArrays, tree) of ``result_shape_dtypes`` (leaves with shape and dtype)."""
    leaves, tree = tree_util.tree_flatten(result_shape_dtypes)
    avals = []
    for x in leaves:
        if not (hasattr(x, "shape") and hasattr(x, "dtype")):
            raise TypeError(
                "result_shape_dtypes must be a pytree whose leaves have `shape` and `dtype` "
                f"attributes (e.g. jax.ShapeDtypeStruct), got a leaf {x!r} of type "
                f"{type(x).__name__}.")
        dt = np.dtype(x.dtype)
        if dtypes.canonicalize_dtype(dt) != dt:
            raise ValueError("result_shape_dtypes cannot specify 64-bit types when "
                             "`jax_enable_x64` is disabled")
        avals.append(ShapedArray(tuple(x.shape), dt))
    return avals, tree


def pure_callback(callback, result_shape_dtypes, *args, sharding=None, vmap_method=None,
                  **kwargs):
    """Call a pure (side-effect-free) Python function from traced code.

    ``callback(*args, **kwargs)`` runs on the host with arrays for the array leaves of its
    arguments and must return arrays matching ``result_shape_dtypes`` (a pytree of
    ``jax.ShapeDtypeStruct``-like leaves); otherwise a ``JaxRuntimeError`` says which output
    differs. Being pure, it may be called any number of times, or not at all under jit when
    its result is unused. Not differentiable (wrap it in ``jax.custom_jvp``/``custom_vjp``).

    Under ``vmap``, ``vmap_method`` says how it is batched: ``"sequential"`` (one call per
    batch member, in a loop), ``"sequential_unrolled"``, ``"expand_dims"`` (one call, unbatched
    arguments get a leading axis of size 1), ``"broadcast_all"`` (unbatched arguments are
    tiled to the batch size) or ``"legacy_vectorized"``; with None, vmap raises.

    Returns:
      A pytree of arrays with the structure of ``result_shape_dtypes``.
    """
    if vmap_method not in _VMAP_METHODS:
        raise ValueError(f"vmap_method must be on of the allowed methods {_VMAP_METHODS}, "
                         f"but got: {vmap_method}")
    flat_args, in_tree = tree_util.tree_flatten((args, kwargs))
    avals, out_tree = _result_avals(result_shape_dtypes)
    outs = pure_callback_p.bind(*flat_args, callback=FlatCallback(callback, in_tree),
                                result_avals=tuple(avals), sharding=sharding,
                                vmap_method=vmap_method)
    return tree_util.tree_unflatten(out_tree, outs)


def io_callback(callback, result_shape_dtypes, *args, sharding=None, ordered=False,
                **kwargs):
    """Call an impure Python function (one with side effects) from traced code.

    Like ``pure_callback`` but never removed by the compiler; with ``ordered=True`` the calls
    happen in program order with respect to the other ordered effects (also inside
    ``scan``/``while_loop``). Under vmap an unordered callback is called once per batch
    member (an ordered one cannot be vmapped); it cannot be differentiated.

    Returns:
      A pytree of arrays with the structure of ``result_shape_dtypes`` (None: nothing).
    """
    flat_args, in_tree = tree_util.tree_flatten((args, kwargs))
    avals, out_tree = _result_avals(result_shape_dtypes)
    outs = io_callback_p.bind(*flat_args, callback=FlatCallback(callback, in_tree),
                              ordered=bool(ordered), result_avals=tuple(avals),
                              sharding=sharding)
    return tree_util.tree_unflatten(out_tree, outs)


def _is_dynamic(x):
    """Whether a callback argument leaf is an array value (passed as an operand) rather than
    a static Python object handed to the callback as is."""
    if isinstance(x, Tracer):
        return True
    try:
        aval_of_value(x)
    except (TypeError, AssertionError):
        return False
    return True


def _split_callback_args(args, kwargs):
    flat, in_tree = tree_util.tree_flatten((args, kwargs))
    static, dyn = {}, []
    for i, a in enumerate(flat):
        if _is_dynamic(a):
            dyn.append(a)
        else:
            static[i] = a
    return in_tree, dyn, static


def _merge_args(in_tree, dyn, static):
    leaves, it = [], iter(dyn)
    for i in range(len(static) + len(dyn)):
        leaves.append(static[i] if i in static else next(it))
    return tree_util.tree_unflatten(in_tree, leaves)


def debug_callback(callback=None, *args, ordered=False, partitioned=False, **kwargs):
    """Call ``callback(*args, **kwargs)`` for its side effect, from traced code too.

    The array leaves of the arguments reach the callback as arrays (other leaves as they
    are). Transformations treat it as JAX does: under vmap it is called once per batch
    member, under grad with the primal values, and it is never removed by jit; with
    ``ordered=True`` it keeps program order among ordered effects. Also usable in two steps:
    ``jax.debug.callback(ordered=True)(callback, *args)``.
    """
    def _debug_callback(callback, *c_args, **c_kwargs):
        if not callable(callback):
            raise TypeError("first argument to jax.debug.callback must be callable, but got "
                            f"an object of type {type(callback)}")
        in_tree, dyn, static = _split_callback_args(c_args, c_kwargs)

        def _flat_callback(*flat):
            a, kw = _merge_args(in_tree, flat, static)
            callback(*a, **kw)
            return ()
        _flat_callback.__qualname__ = ("debug_callback.<locals>._debug_callback.<locals>."
                                       "_flat_callback")
        _flat_callback.user_callback = callback
        debug_callback_p.bind(*dyn, callback=_flat_callback,
                              effect=ordered_debug_effect if ordered else debug_effect,
                              partitioned=partitioned)

    if callback is not None:
        _debug_callback(callback, *args, **kwargs)
        return None
    if args or kwargs:
        raise TypeError("debug_callback received unexpected arguments in the two-call form: "
                        f"args={args!r} kwargs={kwargs!r}")
    return _debug_callback


class _FormatChecker(string.Formatter):
    """Checks a ``jax.debug.print`` format string against its arguments without formatting
    (values are not known while tracing)."""

    def format_field(self, value, format_spec):
        return ""

    def check_unused_args(self, used_args, args, kwargs):
        unused = [a for i, a in enumerate(args) if i not in used_args]
        unused_kw = [k for k in kwargs if k not in used_args]
        if unused:
            raise ValueError(f"Unused positional arguments to `jax.debug.print`: {unused}")
        if unused_kw:
            raise ValueError(
                f"Unused keyword arguments to `jax.debug.print`: {unused_kw}. You may be "
                "passing an f-string (i.e, `f\"{x}\"`) into `jax.debug.print` and instead "
                "should pass in a regular string.")


_checker = _FormatChecker()


def debug_print(fmt=None, *args, ordered=False, partitioned=False, skip_format_check=False,
                _use_logging=False, **kwargs):
    """Print values from traced code: ``jax.debug.print("x = {x:.3f}", x=x)``.

    ``fmt`` is a ``str.format`` string (not an f-string: the values are only known when the
    program runs), formatted with the arrays' values and NumPy's print options as they are
    when the call is traced. Under jit it prints every time the compiled code runs, under
    vmap once per batch member, under grad the primal values; ``ordered=True`` keeps program
    order among ordered effects. Also usable in two steps:
    ``jax.debug.print(ordered=True)("x = {}", x)``.
    """
    def _debug_print(fmt, *c_args, **c_kwargs):
        if not skip_format_check:
            _checker.format(fmt, *c_args, **c_kwargs)
        has_placeholders = False
        if fmt:
            _, field_name, *_ = next(iter(string.Formatter().parse(fmt)))
            has_placeholders = field_name is not None
        in_tree, dyn, static = _split_callback_args(c_args, c_kwargs)
        record = None
        if _use_logging:
            si = user_frame(2)
            filename, lineno = (si.filename, si.lineno) if si else ("(unknown file)", 0)
            record = logging.getLogger("jaxlite._src.debugging").makeRecord(
                "jaxlite._src.debugging", logging.INFO, filename, lineno, "", (), None)
        debug_print_p.bind(*dyn, fmt=fmt, has_placeholders=has_placeholders, in_tree=in_tree,
                           logging_record=record,
                           np_printoptions=tuple(np.get_printoptions().items()),
                           ordered=ordered, partitioned=partitioned,
                           static_args=tuple(static.items()))

    if fmt is not None:
        _debug_print(fmt, *args, **kwargs)
        return None
    if args or kwargs:
        raise TypeError("debug_print received unexpected arguments in the two-call form: "
                        f"args={args!r} kwargs={kwargs!r}")
    return _debug_print


def debug_log(fmt=None, *args, ordered=False, partitioned=False, skip_format_check=False,
              **kwargs):
    """``jax.debug.log``: like ``jax.debug.print`` but the message goes to the logging
    system (logger ``jaxlite._src.debugging``, level INFO, with the caller's file and line)
    instead of stdout."""
    return debug_print(fmt, *args, ordered=ordered, partitioned=partitioned,
                       skip_format_check=skip_format_check, _use_logging=True, **kwargs)


def effects_barrier():
    """Wait until every effect (callback, print) already dispatched has happened.

    jaxlite runs compiled code synchronously on the calling thread, so callbacks and prints
    have all happened when a computation returns: there is nothing to wait for."""
