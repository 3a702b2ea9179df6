"""``jax_debug_nans`` / ``jax_debug_infs``: raise at the first operation producing a nan/inf.

While either flag is on, the calling thread's base trace is a ``FloatCheckTrace`` instead of
plain evaluation: every primitive applied eagerly runs as usual and its floating-point
outputs are then checked. The first nan (or inf) raises ``FloatingPointError`` naming the
primitive (JAX's text: ``invalid value (nan) encountered in log``) and the user's line.

A jitted function is checked on its outputs only (its compiled code is not slowed down);
when they hold a nan, jaxlite does what JAX does: it prints a notice and calls the
function again without its ``jit`` (nested jitted functions are checked the same way), so
the error points at the primitive and the line that produced the value. A call primitive met
while running (the body of a ``custom_jvp``, ``checkpoint``, a jit inside a transformation)
is re-run equation by equation when its result holds a nan. If the de-optimized run produces
no invalid value, the error says so, as JAX's does.
"""
from __future__ import annotations

import numpy as np

from jaxlite._src import tree_util
from jaxlite._src.config import config
from jaxlite._src.core.source_info import user_frame
from jaxlite._src.core.trace import Trace, ctx, set_current_trace
from jaxlite._src.runtime.array import ArrayImpl

__all__ = ["FloatCheckTrace", "check_trace", "install_for_this_thread"]

_NO_NAN_MSG = (
    ". Because jax_config.debug_nans.value and/or config.jax_debug_infs is set, the "
    "de-optimized function (i.e., the function as if the `jit` decorator were removed) was "
    "called in an attempt to get a more precise error message. However, the de-optimized "
    "function did not produce invalid values during its execution. This behavior can result "
    "from `jit` optimizations causing the invalid value to be produced. It may also arise "
    "from having nan/inf literals as inputs or outputs, like "
    "`jax.jit(lambda ...: jax.numpy.nan)(...)`. \n\nIt may be possible to avoid the invalid "
    "value by removing the `jit` decorator, at the cost of losing optimizations. \n\nIf you "
    "see this error, consider opening a bug report at https://github.com/jax-ml/jax.")


def _flags():
    f = config._flags
    return f["jax_debug_nans"].value, f["jax_debug_infs"].value


def _invalid(values):
    """'nan' or 'inf' for the first invalid value among ``values`` (arrays), or None."""
    nans, infs = _flags()
    for v in values:
        x = v._value if type(v) is ArrayImpl else v
        if not isinstance(x, (np.ndarray, np.generic)):
            continue
        if x.dtype.kind not in "fc" and x.dtype.name not in ("bfloat16",) and \
                not x.dtype.name.startswith("float"):
            continue
        if nans and np.isnan(x).any():
            return "nan"
        if infs and np.isinf(x).any():
            return "inf"
    return None


def _where(src):
    if src is None:
        return ""
    text = src.line_text()
    return f"\nThe operation was applied at {src}" + (f": {text}" if text else "")


class FloatCheckTrace(Trace):
    """The base trace while nan/inf checks are on: applies primitives eagerly and checks
    their floating-point outputs (see the module docstring)."""
    __slots__ = ("source",)
    checks_floats = True

    def __init__(self):
        super().__init__(None)
        self.source = None   # the equation being re-run, when re-running a jaxpr

    def process_primitive(self, prim, args, params):
        src = self.source or user_frame(3)
        with set_current_trace(None):
            out = prim.eager(args, params)
        outs = out if prim.multiple_results else [out]
        ty = _invalid(outs)
        if ty is not None:
            body = self._body(prim, params, len(args))
            if body is not None:
                print("Invalid nan value encountered in the output of a jax.jit function. "
                      "Calling the de-optimized version.")
                self._rerun(body, args)
            raise FloatingPointError(
                f"invalid value ({ty}) encountered in {prim.name}{_where(src)}")
        return out

    @staticmethod
    def _body(prim, params, nargs):
        if not getattr(prim, "inlinable", False):
            return None
        body = params.get(getattr(prim, "inline_param", "jaxpr"))
        if body is None or len(body.in_avals) != nargs:
            return None
        return body

    def _rerun(self, body, args):
        """Evaluate ``body`` equation by equation (raising at the first invalid value)."""
        jaxpr = body.jaxpr
        env = dict(zip(jaxpr.constvars, body.consts))
        env.update(zip(jaxpr.invars, args))
        from jaxlite._src.core.ir import Literal
        saved = self.source
        try:
            with set_current_trace(self):
                for eqn in jaxpr.eqns:
                    self.source = eqn.source_info
                    ins = [ArrayImpl(np.asarray(a.val, a.aval.dtype), a.aval.weak_type)
                           if type(a) is Literal else env[a] for a in eqn.invars]
                    out = eqn.primitive.bind(*ins, **eqn.params)
                    outs = out if eqn.primitive.multiple_results else [out]
                    env.update(zip(eqn.outvars, outs))
        except FloatingPointError as e:
            raise e from None
        finally:
            self.source = saved

    def jit_call(self, wrapped, args, kwargs):
        """Call a jitted function: its compiled code, then, when an output holds an invalid
        value, the function itself without jit (JAX's de-optimized re-run)."""
        with set_current_trace(None):
            out = wrapped._call_slow(args, kwargs)
        ty = _invalid(tree_util.tree_leaves(out))
        if ty is None:
            return out
        print("Invalid nan value encountered in the output of a jax.jit function. "
              "Calling the de-optimized version.")
        try:
            with set_current_trace(self):
                wrapped.fun(*args, **kwargs)
        except FloatingPointError as e:
            raise e from None
        raise FloatingPointError(f"('jit({wrapped._name})', '{ty}')" + _NO_NAN_MSG)


_TRACE = FloatCheckTrace()


def check_trace():
    """The trace that checks floating-point results (one per process)."""
    return _TRACE


def install_for_this_thread():
    """Make the calling thread's base trace follow the flags: the checking trace while
    ``jax_debug_nans`` or ``jax_debug_infs`` is on, plain evaluation otherwise."""
    on = any(_flags())
    if on and ctx.trace is None:
        ctx.trace = _TRACE
    elif not on and ctx.trace is _TRACE:
        ctx.trace = None


def _on_flag(name):
    if name in ("jax_debug_nans", "jax_debug_infs"):
        install_for_this_thread()


config.add_listener(_on_flag)
install_for_this_thread()   # JAX_DEBUG_NANS / JAX_DEBUG_INFS set in the environment
