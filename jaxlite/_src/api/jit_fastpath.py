"""jit's guarded call path: a cached specialisation called again without the general path's
flatten, cache key and unflatten.

When a call has gone through the general path (``JitWrapped._call_slow``) and found its
compiled specialisation, ``make_guard`` writes two small Python functions for it:

* ``check(args, kwargs)``: straight-line code that tests the call has exactly the
  structure of that call (container types and lengths, dict keys, no sharding, each leaf's
  type, shape, dtype and weak type; each static argument's value) and returns the NumPy
  values of its leaves in ``tree_flatten`` order, or None at the first difference;
* ``wrap(outs)``: builds the result pytree from the program's outputs (the output
  structure and weak types written into the code).

A guard remembers the config ``trace_context()`` object it was made under; any flag change
makes a new object, so the guard stops matching and the general path (which keys on the
flags) decides, and installs a fresh guard. The guard covers only what the general path
would key on: everything it does not recognise (custom pytree nodes, namedtuples, NumPy
arrays of non-canonical dtypes, NumPy scalars, committed/sharded arguments, tracers, static
values other than scalars, strings, dtypes and tuples of them) gets no guard, and such calls
keep the general path.
``make_guard`` checks the generated ``check`` against ``tree_flatten`` on the call it was
made from before handing it out.
"""
from __future__ import annotations

import numpy as np

from jaxlite._src import tree_util
from jaxlite._src.core import dtypes
from jaxlite._src.core.fpe import enter_quiet, leave_quiet
from jaxlite._src.runtime.array import ArrayImpl
from jaxlite._src.prims.refs import Ref

__all__ = ["Guard", "make_guard", "MISS", "MAX_GUARDS"]

MAX_GUARDS = 8          # guards kept per jitted function (most recent specialisations)
_MAX_GUARD_LEAVES = 2000
_py_scalars = (int, float, complex, bool)


class _Decline(Exception):
    """The call has something the guard does not cover: no guard."""


class _Miss:
    __slots__ = ()

    def __repr__(self):
        return "<guard miss>"


MISS = _Miss()   # what a guard's ``run`` returns for a call it does not cover


class Guard:
    """A specialisation's fast call path: ``run(args, kwargs)`` (the result, or ``MISS``),
    the ``entry`` it runs (whose program's ``fn`` is read at each call, so a tier-2 swap is
    seen) and the config ``tc`` object it is valid under."""
    __slots__ = ("run", "entry", "tc")

    def __init__(self, run, entry, tc):
        self.run, self.entry, self.tc = run, entry, tc


def _python_scalar_value(x):
    return np.asarray(x, dtypes.python_scalar_dtype(x))


def _leaf_value(x):
    return x._value if type(x) is ArrayImpl else _python_scalar_value(x)


_static_types = (int, float, bool, str, type(None))


def _static_ok(v):
    """Whether a static argument's value can be tested by ``type(x) is T and x == v`` (the
    equality jit's cache key uses): scalars, strings, None, NumPy dtypes and tuples of
    those."""
    t = type(v)
    if t in _static_types or isinstance(v, np.dtype):
        return True
    return t is tuple and all(_static_ok(c) for c in v)


def _gen_check(args, kwargs, static_argnums=(), static_argnames=()):
    """(lines, leaf value names, namespace) of the straight-line test of calls shaped like
    this one; each line returns ``@FAIL@`` at a difference. Static arguments (positions
    ``static_argnums``, keywords ``static_argnames``) are tested for equal values (the
    specialisation was compiled for them) and give no leaf."""
    ns = {"A": ArrayImpl, "NP": np.ndarray, "_scalar": _python_scalar_value}
    lines = []
    refs = []    # the names of the Ref arguments
    vals = []
    objs = []    # per leaf: the name of the argument object

    def const(v):
        name = f"c{len(ns)}"
        ns[name] = v
        return name

    def var():
        return f"x{len(lines)}"

    def name(expr):
        """A name for the value of ``expr`` (itself when it is one)."""
        if expr.isidentifier():
            return expr
        n = var()
        lines.append(f"{n} = {expr}")
        return n

    def static(x, expr):
        if not _static_ok(x):
            raise _Decline
        n = name(expr)
        # (a NaN never equals itself: such a call misses and takes the general path)
        lines.append(f"if type({n}) is not {const(type(x))} or {n} != {const(x)}: "
                     "return @FAIL@")

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
            n = name(expr)
            # (weak types are bools: ``is`` decides; anything else fails the guard and
            # takes the general path)
            weak = "True" if x.weak_type is True else "False" if x.weak_type is False \
                else None
            wtest = f"is not {weak}" if weak else f"!= {const(x.weak_type)}"
            vn = f"v{len(vals)}"
            # (NumPy's builtin dtypes are singletons: ``is`` decides at once, ``!=`` the rest)
            dt = const(v.dtype)
            lines.append(f"if type({n}) is not A or {n}._sharding is not None or "
                         f"{n}.weak_type {wtest} or ({vn} := {n}._value).shape != "
                         f"{const(v.shape)} or ({vn}.dtype is not {dt} and {vn}.dtype != {dt}):"
                         " return @FAIL@")
            vals.append(vn)
            objs.append(n)
        elif t is np.ndarray:
            # a NumPy array (of a canonical dtype: others are converted by the general path)
            # goes to the program as it is, as the general path passes it
            if dtypes.canonicalize_dtype(x.dtype) != x.dtype:
                raise _Decline
            n = name(expr)
            vn = f"v{len(vals)}"
            dt = const(x.dtype)
            lines.append(f"if type({n}) is not NP or {n}.shape != {const(x.shape)} or "
                         f"({n}.dtype is not {dt} and {n}.dtype != {dt}): return @FAIL@")
            lines.append(f"{vn} = {n}")
            vals.append(vn)
            objs.append(n)
        elif t in _py_scalars:
            n = name(expr)
            lines.append(f"if type({n}) is not {const(t)}: return @FAIL@")
            vn = f"v{len(vals)}"
            lines.append(f"{vn} = _scalar({n})")
            vals.append(vn)
            objs.append(n)
        elif t is Ref:
            # a mutable array reference: its buffer, which the program updates in place
            if x._freed:
                raise _Decline
            n = name(expr)
            vn = f"v{len(vals)}"
            lines.append(f"if type({n}) is not R or {n}._aval != {const(x._aval)} or "
                         f"({vn} := {n}._buf) is None: return @FAIL@")
            refs.append(n)
            vals.append(vn)
            objs.append(n)
        elif x is None:
            lines.append(f"if {expr} is not None: return @FAIL@")
        elif t is tuple or t is list:
            n = name(expr)
            # (the call's own ``args`` is a tuple: only its length is tested)
            if not x:
                lines.append(f"if {n}: return @FAIL@" if expr == "args" else
                             f"if type({n}) is not {const(t)} or {n}: return @FAIL@")
                return
            if expr != "args":
                lines.append(f"if type({n}) is not {const(t)}: return @FAIL@")
            # one unpacking names the children (another length raises ValueError: a miss)
            kids = [f"x{len(lines)}_{j}" for j in range(len(x))]
            lines.append(f"{', '.join(kids)}, = {n}")
            top = expr == "args"
            for j, (k, c) in enumerate(zip(kids, x)):
                if top and (j in static_argnums or j - len(x) in static_argnums):
                    static(c, k)
                else:
                    visit(c, k)
        elif t is dict:
            n = name(expr)
            # (the call's own ``kwargs`` is a dict)
            lines.append(f"if {n}: return @FAIL@" if expr == "kwargs" and not x else
                         f"if len({n}) != {len(x)}: return @FAIL@" if expr == "kwargs" else
                         f"if type({n}) is not dict or len({n}) != {len(x)}: return @FAIL@")
            if x:
                children, keys = tree_util.flatten_one_level(x)
                for k, c in zip(keys, children):
                    if expr == "kwargs" and k in static_argnames:
                        static(c, f"{n}[{const(k)}]")
                    else:
                        visit(c, f"{n}[{const(k)}]")
        else:
            raise _Decline

    visit(args, "args")
    visit(kwargs, "kwargs")
    if len(refs) > 4:
        raise _Decline
    for i, a in enumerate(refs):     # (one ref passed twice: the general path raises)
        for b in refs[i + 1:]:
            lines.append(f"if {a} is {b}: return @FAIL@")
    ns["R"] = Ref
    ns["_nrefs"] = len(refs)
    return lines, vals, objs, ns


class _Slot:
    __slots__ = ("i",)

    def __init__(self, i):
        self.i = i


def _gen_outputs(out_tree, out_weak, ns):
    """(lines, expression) building the result pytree from the NumPy outputs ``o`` (arrays
    of the given weak types in ``out_tree``'s structure) where that structure is made of
    tuples, lists, dicts and None; None otherwise."""
    n = len(out_weak)
    lines = []

    def gen(x):
        t = type(x)
        if t is _Slot:
            # ArrayImpl(o[i], weak) with its four slots set here (tests/
            # test_dispatch_fastpaths.py checks ArrayImpl's slots are these; a compiled
            # call runs eagerly, never while staging, so _literal is False)
            r = f"r{x.i}"
            lines.append(f"{r} = new(A); {r}._value = o{x.i}; "
                         f"{r}.weak_type = {bool(out_weak[x.i])}; {r}._sharding = None; "
                         f"{r}._literal = False")
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

    if n > _MAX_GUARD_LEAVES:
        return None
    try:
        result = gen(out_tree.unflatten([_Slot(i) for i in range(n)]))
    except _Decline:
        return None
    if n:   # the outputs named by one unpacking (the program returns a tuple of n)
        lines.insert(0, "".join(f"o{i}, " for i in range(n)) + "= o")
    return lines, result


def make_guard(args, kwargs, leaves, entry, tc, donation=None, static_argnums=(),
               static_argnames=()):
    """A ``Guard`` for calls shaped like ``(args, kwargs)`` (whose flattened leaves are
    ``leaves``) running ``entry``, or None when the call has something it does not cover.

    Its ``run(args, kwargs)`` is one generated function: the checks, the program's call
    (``entry.program.raw``, read at each call, in the quiet floating-point state) and the outputs' construction; it returns
    ``MISS`` at the first difference. With a ``donation`` plan (``runtime/donation.py``) it
    also refuses a donated buffer passed twice, and after the call deletes the donated
    arguments and writes outputs into their buffers."""
    if donation is not None and any(type(x) is np.ndarray for x in leaves):
        return None    # (a donated NumPy argument: the general path)
    try:
        lines, vals, objs, ns = _gen_check(args, kwargs, static_argnums, static_argnames)
    except _Decline:
        return None
    if ns.pop("_nrefs") and donation is not None:
        return None
    ns.update(new=ArrayImpl.__new__, P=entry.program, MISS=MISS)
    out = _gen_outputs(entry.out_tree, entry.out_weak, ns)
    if out is None:   # (namedtuples, custom nodes: the generic unflatten)
        tree, weaks = entry.out_tree, list(entry.out_weak)
        ns["WRAP"] = lambda o: tree.unflatten([ArrayImpl(v, w) for v, w in zip(o, weaks)])
        out_lines, result = [], "WRAP(o)"
    else:
        out_lines, result = out
    ret = "(" + "".join(v + ", " for v in vals) + ")"
    # the program bare (P.raw, read at each call: a tier-2 swap is seen) in NumPy's quiet
    # floating-point state set here (a wrapper's frame less), or with no state at all for a
    # program that only moves values
    call = f"        o = P.raw({', '.join(vals)})\n"
    if entry.program.needs_quiet:
        ns.update(QIN=enter_quiet, QOUT=leave_quiet)
        call = ("        t = QIN()\n        try:\n    " + call +
                "        finally:\n            QOUT(t)\n")
    if donation is not None:
        from jaxlite._src.runtime.donation import check_call, owned_value, run_donating
        ns.update(CHECK=check_call, OWN=owned_value, RUN=run_donating, PLAN=donation,
                  CONV=_leaf_value)
        lv = "[" + ", ".join(objs) + "]"
        # each donated value is dropped, then taken again through OWN (the buffer itself
        # when nothing else references it, so the program may write into it, else a copy);
        # RUN clears the list it is given, so only the outputs can hold a donated buffer
        own = "".join(f"        {vals[i]} = None; {vals[i]} = OWN({objs[i]}, CONV)\n"
                      for i in donation.donated)
        drop = "".join(f"        {vals[i]} = None\n" for i in donation.donated)
        call = (f"        CHECK({lv}, PLAN)\n" + own +
                f"        L = [{', '.join(vals)}]\n" + drop +
                f"        o = RUN(P.fn, L, {lv}, PLAN)\n")

    def block(fail, indent):
        return "".join(f"{indent}{ln.replace('@FAIL@', fail)}\n" for ln in lines)
    src = (f"def make({', '.join(ns)}):\n"
           "    def check(args, kwargs):\n        try:\n" + block("None", " " * 12) +
           f"            return {ret}\n"
           "        except (KeyError, IndexError, ValueError):\n            return None\n"
           "    def run(args, kwargs):\n        try:\n" + block("MISS", " " * 12) +
           "        except (KeyError, IndexError, ValueError):\n            return MISS\n" + call +
           "".join(f"        {ln}\n" for ln in out_lines) +
           f"        return {result}\n"
           "    return check, run\n")
    space = {}
    exec(compile(src, "<jaxlite jit guard>", "exec"), space)
    check, run = space["make"](**ns)
    got = check(args, kwargs)
    # the generated code must see this call as the general path saw it: same leaves, in
    # tree_flatten's order
    if got is None or len(vals) != len(leaves) or not all(
            (v is x._value) if type(x) is ArrayImpl else type(v) is np.ndarray
            for v, x in zip(got, leaves)):
        return None
    return Guard(run, entry, tc)
