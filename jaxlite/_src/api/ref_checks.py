"""JAX's errors for mutable array references (``jax.new_ref``) at the boundary of a traced
function: a ref cannot be returned, and one ref cannot be passed twice."""
from __future__ import annotations

from jaxlite._src.core.ir import Var

__all__ = ["check_ref_args", "check_no_ref_outputs", "is_ref_aval"]


def is_ref_aval(aval) -> bool:
    """Whether ``aval`` is the type of a mutable reference."""
    return getattr(aval, "is_ref", False)


def _describe(fun) -> str:
    code = getattr(fun, "__code__", None)
    name = getattr(fun, "__name__", None) or type(fun).__name__
    if code is None:
        return name
    return f"{name} at {code.co_filename}:{code.co_firstlineno}"


def check_ref_args(leaves, names, fun, what):
    """Raise JAX's ValueError when one ref appears twice among the argument ``leaves``."""
    seen = {}
    for k, x in enumerate(leaves):
        if not is_ref_aval(getattr(x, "aval", None)):
            continue
        j = seen.setdefault(id(x), k)
        if j != k:
            a = names[j] if names and names[j] else f"argument {j}"
            b = names[k] if names and names[k] else f"argument {k}"
            raise ValueError(
                "only one reference to a mutable array may be passed as an argument to a "
                f"function, but when tracing {_describe(fun)} for {what} the mutable array "
                f"reference of type {x.aval.str_short(False)} appeared at both {a} and {b}.")


def check_no_ref_outputs(jaxpr, names, fun, what, paths=None):
    """Raise JAX's ValueError when the traced ``jaxpr`` returns a ref (naming where the ref
    came from: an argument, or the line that created it)."""
    for k, v in enumerate(jaxpr.outvars):
        if not is_ref_aval(v.aval):
            continue
        at = f" at output tree path {paths[k]}" if paths else ""
        msg = (f"function {_describe(fun)} traced for {what} returned a mutable array "
               f"reference of type {v.aval.str_short(False)}{at}, but mutable array "
               "references cannot be returned.")
        if isinstance(v, Var) and v in jaxpr.invars:
            i = jaxpr.invars.index(v)
            nm = names[i] if names and i < len(names) and names[i] else f"argument {i}"
            msg += f"\n\nThe returned mutable array was passed in as the argument {nm}."
        else:
            src = next((e.source_info for e in jaxpr.eqns if v in e.outvars), None)
            if src is not None:
                msg += f"\n\nThe returned mutable array was created on line {src}."
            elif isinstance(v, Var) and v in jaxpr.constvars:
                msg += ("\n\nThe returned mutable array was closed over by the function "
                        "(created outside it).")
        raise ValueError(msg)
