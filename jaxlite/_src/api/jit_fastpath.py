"""jit's guarded call path: a cached specialisation called again without the general path's
flatten, cache key and unflatten.

When a call has gone through the general path (``JitWrapped._call_slow``) and found its
compiled specialisation, ``make_guard`` writes two small Python functions for it:

* ``check(args, kwargs)``: straight-line code that tests the call has exactly the
  structure of that call (container types and lengths, dict keys, no sharding, each leaf's
  type, shape, dtype and weak type) and returns the NumPy values of its leaves in
  ``tree_flatten`` order, or None at the first difference;
* ``wrap(outs)``: builds the result pytree from the program's outputs (the output
  structure and weak types written into the code).

A guard remembers the config ``trace_context()`` object it was made under; any flag change
makes a new object, so the guard stops matching and the general path (which keys on the
flags) decides, and installs a fresh guard. The guard covers only what the general path
would key on: everything it does not recognise (custom pytree nodes, namedtuples, NumPy or
committed/sharded arguments, tracers) gets no guard, and such calls keep the general path.
``make_guard`` checks the generated ``check`` against ``tree_flatten`` on the call it was
made from before handing it out.
"""
from __future__ import annotations

import numpy as np

from jaxlite._src import tree_util
from jaxlite._src.core import dtypes
from jaxlite._src.runtime.array import ArrayImpl

__all__ = ["Guard", "make_guard", "output_wrapper", "MAX_GUARDS"]

MAX_GUARDS = 8          # guards kept per jitted function (most recent specialisations)
_MAX_GUARD_LEAVES = 2000
_py_scalars = (int, float, complex, bool)


class _Decline(Exception):
    """The call has something the guard does not cover: no guard."""


class Guard:
    """A specialisation's fast call path: ``check``, the ``entry`` it runs (whose program's
    ``fn`` is read at each call, so a tier-2 swap is seen), ``wrap`` and the config
    ``tc`` object it is valid under."""
    __slots__ = ("check", "entry", "wrap", "tc")

    def __init__(self, check, entry, wrap, tc):
        self.check, self.entry, self.wrap, self.tc = check, entry, wrap, tc


def _python_scalar_value(x):
    return np.asarray(x, dtypes.python_scalar_dtype(x))


def _gen_check(args, kwargs):
    """Source and namespace of ``check(args, kwargs)`` for calls shaped like this one."""
    ns = {"A": ArrayImpl, "_scalar": _python_scalar_value}
    lines = []
    vals = []

    def const(v):
        name = f"c{len(ns)}"
        ns[name] = v
        return name

    def var():
        return f"x{len(lines)}"

    def visit(x, expr):
        t = type(x)
        if len(vals) > _MAX_GUARD_LEAVES:
            raise _Decline
        if t is ArrayImpl:
            if x._sharding is not None:
                raise _Decline
            v = x._value
            if type(v) is not np.ndarray and not isinstance(v, np.generic):
                raise _Decline      # (a deleted array: the general path raises)
            n = var()
            lines.append(f"{n} = {expr}")
            lines.append(f"if type({n}) is not A or {n}._sharding is not None or "
                         f"{n}.weak_type != {const(x.weak_type)}: return None")
            vn = f"v{len(vals)}"
            lines.append(f"{vn} = {n}._value")
            lines.append(f"if {vn}.shape != {const(v.shape)} or {vn}.dtype != "
                         f"{const(v.dtype)}: return None")
            vals.append(vn)
        elif t in _py_scalars:
            n = var()
            lines.append(f"{n} = {expr}")
            lines.append(f"if type({n}) is not {const(t)}: return None")
            vn = f"v{len(vals)}"
            lines.append(f"{vn} = _scalar({n})")
            vals.append(vn)
        elif x is None:
            lines.append(f"if {expr} is not None: return None")
        elif t is tuple or t is list:
            n = var()
            lines.append(f"{n} = {expr}")
            lines.append(f"if type({n}) is not {const(t)} or len({n}) != {len(x)}: "
                         "return None")
            for j, c in enumerate(x):
                visit(c, f"{n}[{j}]")
        elif t is dict:
            n = var()
            lines.append(f"{n} = {expr}")
            lines.append(f"if type({n}) is not dict or len({n}) != {len(x)}: return None")
            if x:
                children, keys = tree_util.flatten_one_level(x)
                for k, c in zip(keys, children):
                    visit(c, f"{n}[{const(k)}]")
        else:
            raise _Decline

    visit(args, "args")
    visit(kwargs, "kwargs")
    body = "".join(f"            {ln}\n" for ln in lines)
    ret = "(" + "".join(v + ", " for v in vals) + ")"
    # (the constants are closure cells of a factory: cheaper to read than globals)
    src = (f"def make({', '.join(ns)}):\n"
           "    def check(args, kwargs):\n        try:\n" + body +
           f"            return {ret}\n"
           "        except (KeyError, IndexError):\n            return None\n"
           "    return check\n")
    return src, ns, len(vals)


class _Slot:
    __slots__ = ("i",)

    def __init__(self, i):
        self.i = i


def output_wrapper(out_tree, out_weak):
    """``wrap(outs)``: the result pytree of the NumPy outputs ``outs`` (arrays of the given
    weak types in ``out_tree``'s structure), as straight-line code where the structure is
    made of tuples, lists, dicts and None; the generic unflatten otherwise."""
    ns = {"A": ArrayImpl, "new": ArrayImpl.__new__}
    n = len(out_weak)
    lines = []

    def gen(x):
        t = type(x)
        if t is _Slot:
            # ArrayImpl(o[i], weak) with its three slots set here (tests/
            # test_dispatch_fastpaths.py checks ArrayImpl's slots are these)
            r = f"r{x.i}"
            lines.append(f"    {r} = new(A); {r}._value = o[{x.i}]; "
                         f"{r}.weak_type = {bool(out_weak[x.i])}; {r}._sharding = None\n")
            return r
        if x is None:
            return "None"
        if t is tuple:
            return "(" + "".join(gen(c) + ", " for c in x) + ")"
        if t is list:
            return "[" + ", ".join(gen(c) for c in x) + "]"
        if t is dict:
            items = []
            for k, c in x.items():
                name = f"k{len(ns)}"
                ns[name] = k
                items.append(f"{name}: {gen(c)}")
            return "{" + ", ".join(items) + "}"
        raise _Decline

    if n <= _MAX_GUARD_LEAVES:
        try:
            body = gen(out_tree.unflatten([_Slot(i) for i in range(n)]))
        except _Decline:
            pass
        else:
            src = (f"def make({', '.join(ns)}):\n  def wrap(o):\n" +
                   "".join("  " + ln for ln in lines) + f"      return {body}\n  return wrap\n")
            space = {}
            exec(compile(src, "<jaxlite jit output>", "exec"), space)
            return space["make"](**ns)
    weaks = list(out_weak)

    def wrap(outs):
        return out_tree.unflatten([ArrayImpl(o, w) for o, w in zip(outs, weaks)])
    return wrap


def make_guard(args, kwargs, leaves, entry, wrap, tc):
    """A ``Guard`` for calls shaped like ``(args, kwargs)`` (whose flattened leaves are
    ``leaves``) running ``entry``, or None when the call has something it does not cover."""
    try:
        src, ns, n = _gen_check(args, kwargs)
    except _Decline:
        return None
    space = {}
    exec(compile(src, "<jaxlite jit guard>", "exec"), space)
    check = space["make"](**ns)
    vals = check(args, kwargs)
    # the generated code must see this call as the general path saw it: same leaves, in
    # tree_flatten's order
    if vals is None or n != len(leaves) or not all(
            (v is x._value) if type(x) is ArrayImpl else type(v) is np.ndarray
            for v, x in zip(vals, leaves)):
        return None
    return Guard(check, entry, wrap, tc)
