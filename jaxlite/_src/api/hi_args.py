"""Values of hijax types (``jax.experimental.hijax``) as arguments and results of ``jit``.

JAX stages a hijax value into the jaxpr with its high type and lowers the program to arrays
before compiling. jaxlite lowers at the boundary instead, with the type's own interface:

- an argument of an immutable type (``HiType``) enters as its arrays (``lower_val``) and the
  traced function sees ``raise_val`` of their tracers;
- an argument of a mutable type (``MutableHiType``) enters as the arrays of its current
  quasi-dynamic data (``cur_qdd``, ``read_loval_in``); the function sees a new value built
  over their tracers (``new_from_loval``), which it may mutate; the arrays of its final state
  (``read_loval`` under its final ``cur_qdd``) are extra results, written back into the
  caller's value after the call (``update_from_loval``), as JAX does;
- a result of a hijax type leaves as its arrays and is rebuilt after the call.

The program in between holds only arrays; hijax primitives applied while tracing run their
``to_lojax`` (extend/hijax.py), so they leave array operations in the jaxpr.
"""
from __future__ import annotations

from jaxlite._src import tree_util
from jaxlite._src.core.avals import hitype_aval_mappings

__all__ = ["call_with_hi_leaves", "eval_shape_with_hi_leaves", "has_hi_leaves", "is_hi_value"]


def _hi_aval(x):
    fn = hitype_aval_mappings.get(type(x))
    if fn is None:
        return None
    aval = fn(x)
    return aval if getattr(aval, "is_high", False) and (
        hasattr(aval, "lo_ty_qdd") or hasattr(aval, "lower_val")) else None


def is_hi_value(x) -> bool:
    """Whether ``x`` is a value of a registered hijax type that is lowered to arrays."""
    return type(x) in hitype_aval_mappings and _hi_aval(x) is not None


def has_hi_leaves(leaves) -> bool:
    """Whether any of ``leaves`` is a value of a hijax type."""
    return any(type(x) in hitype_aval_mappings and _hi_aval(x) is not None for x in leaves)


class _Spec:
    """How one hijax leaf is lowered: its type, its quasi-dynamic data (mutable types) and
    how many arrays it is made of. Hashable (part of the cache key)."""
    __slots__ = ("aval", "n", "qdd")

    def __init__(self, aval, qdd, n):
        self.aval, self.qdd, self.n = aval, qdd, n

    def _key(self):
        return (type(self.aval), self.aval, self.qdd, self.n)

    def __hash__(self):
        return hash(self._key())

    def __eq__(self, other):
        return isinstance(other, _Spec) and self._key() == other._key()

    def lower(self, x):
        if self.aval.has_qdd:
            return list(self.aval.read_loval_in(self.qdd, x))
        return list(self.aval.lower_val(x))

    def raise_(self, lo):
        if self.aval.has_qdd:
            return self.aval.new_from_loval(self.qdd, *lo)
        return self.aval.raise_val(*lo)


def _spec_of(x):
    aval = _hi_aval(x)
    if aval is None:
        return None
    if aval.has_qdd:
        qdd = x.cur_qdd()
        n = len(aval.lo_ty_qdd(qdd))
        return _Spec(aval, qdd, n)
    return _Spec(aval, None, len(aval.lo_ty()))


def _lower_leaves(leaves):
    specs, lo = [], []
    for x in leaves:
        s = _spec_of(x)
        specs.append(s)
        if s is None:
            lo.append(x)
        else:
            vals = s.lower(x)
            if len(vals) != s.n:
                raise TypeError(f"{type(s.aval).__name__}: lowering a value gave {len(vals)} "
                                f"arrays, its lo_ty says {s.n}")
            lo.extend(vals)
    return tuple(specs), lo


def _raise_leaves(specs, lo, make=None):
    """The leaves of ``specs`` from the flat arrays ``lo``: a hijax leaf from its ``n``
    arrays (``s.raise_``, or ``make(s, arrays)``), any other leaf as it is."""
    out, i = [], 0
    for s in specs:
        if s is None:
            out.append(lo[i])
            i += 1
        else:
            out.append(make(s, lo[i:i + s.n]) if make else s.raise_(lo[i:i + s.n]))
            i += s.n
    return out


class _LoFunction:
    """The function over arrays that ``jit`` compiles for one layout of hijax arguments; it
    records, while traced, the layout of the results (the final quasi-dynamic data of mutable
    arguments, the hijax results)."""

    def __init__(self, fun, in_tree, specs):
        self.fun, self.in_tree, self.specs = fun, in_tree, specs
        self.__name__ = getattr(fun, "__name__", "fun")
        self.__qualname__ = getattr(fun, "__qualname__", self.__name__)
        self.layout = None

    def __call__(self, *lo):
        leaves = _raise_leaves(self.specs, list(lo))
        out = self.fun(*tree_util.tree_unflatten(self.in_tree, leaves))
        # the final state of the mutable arguments (written back by the caller)
        finals, back = [], []
        for x, s in zip(leaves, self.specs):
            if s is not None and s.aval.has_qdd:
                qdd = x.cur_qdd()
                finals.append(qdd)
                back.extend(s.aval.read_loval(qdd, x))
        out_leaves, out_tree = tree_util.tree_flatten(out)
        out_specs, out_lo = _lower_leaves(out_leaves)
        self.layout = (tuple(finals), len(back), out_tree, out_specs)
        return back, out_lo


def call_with_hi_leaves(jit_fn, cache, fun, leaves, in_tree, key):
    """Call ``fun`` (taking the pytree ``in_tree`` of ``leaves``, some of hijax types) through
    ``jit_fn`` (jax.jit) applied to its lowered form, compiled once per ``key`` and layout of
    the hijax arguments; mutable arguments are updated with their final state."""
    specs, lo = _lower_leaves(leaves)
    ck = (key, in_tree, specs)
    hit = cache.get(ck)
    if hit is None:
        lo_fun = _LoFunction(fun, in_tree, specs)
        hit = cache[ck] = (lo_fun, jit_fn(lo_fun))
    lo_fun, jitted = hit
    back, out_lo = jitted(*lo)
    finals, _, out_tree, out_specs = lo_fun.layout
    i = 0
    k = 0
    for x, s in zip(leaves, specs):
        if s is not None and s.aval.has_qdd:
            qdd = finals[k]
            k += 1
            n = len(s.aval.lo_ty_qdd(qdd))
            s.aval.update_from_loval(qdd, x, *back[i:i + n])
            i += n
    return tree_util.tree_unflatten(out_tree, _raise_leaves(out_specs, list(out_lo)))


def eval_shape_with_hi_leaves(eval_shape, fun, leaves, in_tree):
    """``eval_shape`` (the array version, given) of ``fun`` whose arguments include hijax
    values: their arrays are traced; results of hijax types are given as their types.
    Nothing runs, so mutable arguments keep their state."""
    specs, lo = _lower_leaves(leaves)
    lo_fun = _LoFunction(fun, in_tree, specs)
    _, out_lo = eval_shape(lo_fun, *lo)
    _, _, out_tree, out_specs = lo_fun.layout
    outs = _raise_leaves(out_specs, out_lo, lambda s, _: s.aval)
    return tree_util.tree_unflatten(out_tree, outs)
