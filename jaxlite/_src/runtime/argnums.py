"""``jit``'s static and donated argument specifications, completed and checked as JAX does.

``infer_argnums_and_argnames`` fills in the missing half of a (numbers, names) pair from the
function's signature, and only when exactly one half is given: with both given, each is used
as written (a parameter named in ``static_argnames`` but passed by position stays dynamic,
as in JAX). Only positional-or-keyword parameters are named by a number or numbered by a
name; a negative number names nothing. ``validate_argnums`` / ``validate_argnames`` raise
JAX's ValueErrors for numbers past the positional parameters and for names the function
does not take (or takes only by position).
"""
from __future__ import annotations

import inspect
import operator

__all__ = ["as_index_tuple", "as_str_tuple", "infer_argnums_and_argnames",
           "validate_argnames", "validate_argnums"]

_P = inspect.Parameter
_POSITIONAL = (_P.POSITIONAL_ONLY, _P.POSITIONAL_OR_KEYWORD)
_KEYWORD = (_P.POSITIONAL_OR_KEYWORD, _P.KEYWORD_ONLY)


def as_index_tuple(x):
    """``x`` (an int or an iterable of ints) as a tuple of ints."""
    try:
        return (operator.index(x),)
    except TypeError:
        return tuple(map(operator.index, x))


def as_str_tuple(x):
    """``x`` (a str or an iterable of str) as a tuple of str; TypeError for a non-str."""
    xs = (x,) if isinstance(x, str) else tuple(x)
    for s in xs:
        if not isinstance(s, str):
            raise TypeError(f"argument is not a string: {s}")
    return xs


def infer_argnums_and_argnames(sig, argnums, argnames):
    """(argnums, argnames) as tuples, the half that is None inferred from ``sig`` (JAX's
    ``api_util.infer_argnums_and_argnames``)."""
    if argnums is None and argnames is None:
        return (), ()
    if argnums is not None and argnames is not None:
        return as_index_tuple(argnums), as_str_tuple(argnames)
    params = list(sig.parameters.items())
    if argnums is None:
        argnames = as_str_tuple(argnames)
        argnums = tuple(i for i, (k, p) in enumerate(params)
                        if p.kind is _P.POSITIONAL_OR_KEYWORD and k in argnames)
    else:
        argnums = as_index_tuple(argnums)
        argnames = tuple(k for i, (k, p) in enumerate(params)
                         if p.kind is _P.POSITIONAL_OR_KEYWORD and i in argnums)
    return argnums, argnames


def validate_argnums(sig, argnums, what):
    """ValueError when a number in ``argnums`` is past the positional parameters of ``sig``
    (any number goes for a function taking ``*args``)."""
    n = 0
    for p in sig.parameters.values():
        if p.kind in _POSITIONAL:
            n += 1
        elif p.kind is _P.VAR_POSITIONAL:
            return
    if argnums and (-min(argnums) > n or max(argnums) >= n):
        raise ValueError(f"Jitted function has {what}={argnums}, "
                         f"but only accepts {n} positional arguments.")


def validate_argnames(sig, argnames, what):
    """ValueError when a name in ``argnames`` is positional-only in ``sig``, or (for a
    function without ``**kwargs``) not one of its parameters."""
    valid, invalid, var_kw = set(), set(), False
    for name, p in sig.parameters.items():
        if p.kind in _KEYWORD:
            valid.add(name)
        elif p.kind is _P.VAR_KEYWORD:
            var_kw = True
        else:
            invalid.add(name)
    if bad := invalid & set(argnames):
        raise ValueError(f"Jitted function has invalid argnames {bad} in {what}. "
                         "These are positional-only")
    if not var_kw and (bad := set(argnames) - valid):
        raise ValueError(f"Jitted function has invalid argnames {bad} in {what}. "
                         "Function does not take these args.")
