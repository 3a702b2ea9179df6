"""The jaxpr IR: Var, Literal, Eqn, Jaxpr, ClosedJaxpr, a typechecker and JAX's text format."""
from __future__ import annotations

import functools
import itertools
import re
import weakref
from typing import Union
from collections import Counter, deque

import numpy as np

from jaxlite._src.core import pretty_printer as pp
from jaxlite._src.core.avals import ShapedArray

__all__ = ["Var", "Literal", "DropVar", "Eqn", "Jaxpr", "ClosedJaxpr", "typecheck",
           "JaxprTypeError", "jaxprs_in_params", "eqn_effects", "jaxpr_effects",
           "has_effects"]

_counter = itertools.count()


class Var:
    """A variable of a jaxpr, bound once (by an invar or an equation's output)."""
    __slots__ = ("aval", "count")

    def __init__(self, aval: ShapedArray):
        self.aval = aval
        self.count = next(_counter)

    def __repr__(self):
        return f"Var(id={self.count}):{self.aval.str_short()}"


class DropVar(Var):
    """An equation output that nothing reads (printed as ``_``)."""
    __slots__ = ()


class Literal:
    """A scalar constant appearing directly as an equation input (printed ``2.0:f32[]``)."""
    __slots__ = ("val", "aval", "py")

    def __init__(self, val, aval: ShapedArray, py=None):
        self.val = val
        self.aval = aval
        self.py = py    # the Python scalar it was made from, if any (printed as written)

    def __repr__(self):
        return f"Literal({self.val})"

    def text(self):
        v = np.asarray(self.val)
        if v.shape != ():
            s = "[...]"
        elif self.py is not None:
            s = str(self.py)
        elif self.aval.weak_type and v.dtype.kind == "f":
            # a weak float came from a Python scalar: print the shortest decimal that
            # round-trips in its dtype, as the Python float JAX keeps would print
            s = repr(float(np.format_float_positional(v[()], unique=True)))
        else:
            s = str(v.item())
        return f"{s}:{self.aval.str_short()}"


# An equation operand: a variable or a literal (JAX's ``core.Atom``, used in annotations).
Atom = Union[Var, Literal]


class Eqn:
    """One equation: ``outvars = primitive[params] invars``, with the user source line."""
    __slots__ = ("primitive", "invars", "params", "outvars", "source_info")

    def __init__(self, primitive, invars, params, outvars, source_info=None):
        self.primitive = primitive
        self.invars = list(invars)
        self.params = params
        self.outvars = list(outvars)
        self.source_info = source_info

    def replace(self, **kw):
        new = Eqn(self.primitive, self.invars, self.params, self.outvars, self.source_info)
        for k, v in kw.items():
            setattr(new, k, v)
        return new

    @property
    def effects(self):
        """The equation's effects (its primitive's and its jaxprs')."""
        return eqn_effects(self)

    def __repr__(self):
        return str(pp_eqn(self, _Ctx()).format())


class Jaxpr:
    """A typed, first-order program: constvars, invars, equations and outvars."""
    __slots__ = ("constvars", "invars", "eqns", "outvars", "debug_info", "__weakref__")

    def __init__(self, constvars, invars, eqns, outvars, debug_info=None):
        self.constvars = list(constvars)
        self.invars = list(invars)
        self.eqns = list(eqns)
        self.outvars = list(outvars)
        self.debug_info = debug_info

    @property
    def in_avals(self):
        return [v.aval for v in self.invars]

    @property
    def out_avals(self):
        return [v.aval for v in self.outvars]

    @property
    def effects(self):
        """The side effects of running this jaxpr (host callbacks, prints...), as JAX's
        ``jaxpr.effects``: the effects of its equations and of the jaxprs they carry."""
        return set(jaxpr_effects(self))

    def replace(self, **kw):
        new = Jaxpr(self.constvars, self.invars, self.eqns, self.outvars, self.debug_info)
        for k, v in kw.items():
            setattr(new, k, v)
        return new

    def pretty_print(self, width=80, source_info=False):
        """The jaxpr in JAX's text format."""
        return pp_toplevel(self, source_info=source_info).format(width)

    def __str__(self):
        return self.pretty_print()

    __repr__ = __str__


class ClosedJaxpr:
    """A Jaxpr together with the values of its constvars."""
    __slots__ = ("jaxpr", "consts", "__weakref__")

    def __init__(self, jaxpr: Jaxpr, consts):
        self.jaxpr = jaxpr
        self.consts = list(consts)

    @property
    def in_avals(self):
        return self.jaxpr.in_avals

    @property
    def out_avals(self):
        return self.jaxpr.out_avals

    @property
    def eqns(self):
        return self.jaxpr.eqns

    @property
    def effects(self):
        """The side effects of running this jaxpr (see ``Jaxpr.effects``)."""
        return set(jaxpr_effects(self.jaxpr))

    def pretty_print(self, width=80, source_info=False):
        """The jaxpr in JAX's text format."""
        return self.jaxpr.pretty_print(width, source_info)

    def __str__(self):
        return self.jaxpr.pretty_print()

    __repr__ = __str__


def cached_on_jaxpr(fn):
    """Memoise ``fn(closed, *hashable_args)`` for as long as the jaxpr ``closed`` lives (and
    per tracing-relevant config), as JAX caches the jaxprs its transformations derive from
    a jaxpr: ``grad`` of a jitted function then differentiates and transposes its body once,
    and Python rules met on the way (a custom_vjp's bwd) are traced once, as in JAX."""
    from jaxlite._src.config import config
    per_jaxpr = weakref.WeakKeyDictionary()

    @functools.wraps(fn)
    def cached(closed, *args):
        key = (args, config.trace_context())
        try:
            table = per_jaxpr[closed]
        except KeyError:
            table = per_jaxpr[closed] = {}
        except TypeError:       # not weakly referenceable: no caching
            return fn(closed, *args)
        try:
            out = table.get(key, table)
        except TypeError:       # unhashable arguments
            return fn(closed, *args)
        if out is table:        # (a miss: computed outside any except clause, so errors
            out = table[key] = fn(closed, *args)   # raised by fn are not chained to it)
        return out
    cached.cache_tables = per_jaxpr
    return cached


def jaxprs_in_params(params):
    """The (closed) jaxprs among an equation's parameters, in order."""
    for v in params.values():
        vs = v if type(v) is tuple else (v,)
        for j in vs:
            if isinstance(j, ClosedJaxpr):
                yield j.jaxpr
            elif isinstance(j, Jaxpr):
                yield j


# ----------------------------------------------------------------------------- effects

# Jaxpr -> frozenset of effects. Jaxprs are not changed after they are built (passes make new
# ones), so the answer can be kept as long as the jaxpr lives.
_effects_cache = weakref.WeakKeyDictionary()


def eqn_effects(eqn) -> frozenset:
    """The effects of one equation: its primitive's own (``effects_of(params)``, for the
    primitives that have some) and those of the jaxprs among its parameters."""
    prim = eqn.primitive
    own = getattr(prim, "effects_of", None)
    effs = frozenset(own(eqn.params)) if own is not None else frozenset()
    for sub in jaxprs_in_params(eqn.params):
        sub_effs = jaxpr_effects(sub)
        if sub_effs:
            effs = effs | sub_effs
    return effs


def jaxpr_effects(jaxpr) -> frozenset:
    """The union of the effects of ``jaxpr``'s equations (nested jaxprs included)."""
    if isinstance(jaxpr, ClosedJaxpr):
        jaxpr = jaxpr.jaxpr
    got = _effects_cache.get(jaxpr)
    if got is None:
        got = frozenset()
        for e in jaxpr.eqns:
            effs = eqn_effects(e)
            if effs:
                got = got | effs
        _effects_cache[jaxpr] = got
    return got


def has_effects(eqn) -> bool:
    """Whether the compiler must keep ``eqn`` where it is even if its outputs are unused:
    its primitive is ``effectful``, it has effects for its parameters (``effects_of``, e.g.
    an ffi_call with has_side_effect) or a jaxpr it carries holds an effectful equation."""
    prim = eqn.primitive
    if prim.effectful:
        return True
    own = getattr(prim, "effects_of", None)
    if own is not None and own(eqn.params):
        return True
    # a primitive owning the refs its jaxprs write (pallas_call) hides those writes
    local = getattr(eqn.primitive, "encapsulates_ref_effects", False)
    for sub in jaxprs_in_params(eqn.params):
        if _jaxpr_effectful_beyond_refs(sub) if local else _jaxpr_effectful(sub):
            return True
    return False


def _jaxpr_effectful_beyond_refs(jaxpr) -> bool:
    """Whether ``jaxpr`` has effects other than writes to refs (``ref_effect`` primitives)."""
    for e in jaxpr.eqns:
        if e.primitive.effectful and not getattr(e.primitive, "ref_effect", False):
            return True
        if any(_jaxpr_effectful_beyond_refs(s) for s in jaxprs_in_params(e.params)):
            return True
    return False


_effectful_cache = weakref.WeakKeyDictionary()


def _jaxpr_effectful(jaxpr) -> bool:
    got = _effectful_cache.get(jaxpr)
    if got is None:
        got = _effectful_cache[jaxpr] = any(has_effects(e) for e in jaxpr.eqns)
    return got


# ----------------------------------------------------------------------------- typechecking

class JaxprTypeError(TypeError):
    """A jaxpr is ill-typed (a bug in a transformation, not in user code)."""


def typecheck(jaxpr: Jaxpr):
    """Check that every variable is bound once before use and every equation's output avals
    agree with its primitive's abstract evaluation. Raises JaxprTypeError."""
    env = set()

    def read(a):
        if isinstance(a, Literal):
            return a.aval
        if a not in env:
            raise JaxprTypeError(f"Variable {a} used before it is defined")
        return a.aval

    def write(v):
        if v in env:
            raise JaxprTypeError(f"Variable {v} defined twice")
        env.add(v)

    for v in jaxpr.constvars + jaxpr.invars:
        write(v)
    for eqn in jaxpr.eqns:
        in_avals = [read(a) for a in eqn.invars]
        out = eqn.primitive.abstract_eval(*in_avals, **eqn.params)
        out = out if eqn.primitive.multiple_results else [out]
        if len(out) != len(eqn.outvars):
            raise JaxprTypeError(f"{eqn.primitive.name}: {len(out)} outputs expected, "
                                 f"equation binds {len(eqn.outvars)}")
        for o, v in zip(out, eqn.outvars):
            if (o.shape, o.dtype) != (v.aval.shape, v.aval.dtype):
                raise JaxprTypeError(f"{eqn.primitive.name}: output type {v.aval.str_short()} "
                                     f"but abstract evaluation gives {o.str_short()}")
            write(v)
        for sub in jaxprs_in_params(eqn.params):
            typecheck(sub)
    for a in jaxpr.outvars:
        read(a)


# ----------------------------------------------------------------------------- printing

def _encode_name(n: int) -> str:
    s = ""
    while not s or n:
        n, i = divmod(n, 26)
        s = chr(97 + i) + s
    return s


class _Ctx:
    def __init__(self):
        self.names: dict = {}
        self.shared: dict = {}
        self.shared_names: set = set()
        self._fresh = (n for i in itertools.count()
                       if (n := _encode_name(i)) not in self.shared_names)
        self.source_info = False
        self.dropped: set = set()

    def suggest_same_names(self, for_vars, like_vars):
        """Name inner-jaxpr binders after the outer atoms they alias (as JAX prints calls)."""
        used = set()
        if len(for_vars) != len(like_vars):
            return
        for f, l in zip(for_vars, like_vars):
            if (isinstance(l, Var) and l not in used and isinstance(f, Var)
                    and f not in self.names):
                used.add(l)
                self.names[f] = self.name(l)

    def name(self, v):
        if isinstance(v, Literal):
            return v.text()
        if isinstance(v, DropVar) or v in self.dropped:
            return "_"
        n = self.names.get(v)
        if n is None:
            n = self.names[v] = next(self._fresh)
        return n


def _pp_vars(vs, ctx, separator="", print_shapes=False):
    if print_shapes:
        items = [pp.text(ctx.name(v) + ":" + v.aval.str_short()) for v in vs]
    else:
        items = [pp.text(ctx.name(v)) for v in vs]
    return pp.nest(2, pp.group(pp.join(pp.text(separator) + pp.group(pp.brk()), items)))


def _param_text(v):
    if isinstance(v, np.dtype):
        return v.name
    if isinstance(v, type) and issubclass(v, np.generic):
        return np.dtype(v).name
    if isinstance(v, frozenset):
        return f"frozenset({{{', '.join(repr(e) for e in sorted(v))}}})"
    s = str(v)
    return re.sub(r" at 0x([0-9a-fA-F]+)", lambda m: " at 0x" + "X" * len(m.group(1)), s)


def _pp_kv(k, v, ctx):
    if type(v) is tuple and v and all(isinstance(j, (Jaxpr, ClosedJaxpr)) for j in v):
        docs = [pp_jaxpr(j.jaxpr if isinstance(j, ClosedJaxpr) else j, ctx) for j in v]
        val = pp.group(pp.concat([pp.nest(2, pp.concat([pp.text("("), pp.brk(""),
                                                         pp.join(pp.brk(), docs)])),
                                  pp.brk(""), pp.text(")")]))
    elif isinstance(v, Jaxpr):
        val = pp_jaxpr(v, ctx)
    elif isinstance(v, ClosedJaxpr):
        val = pp_jaxpr(v.jaxpr, ctx)
    else:
        val = pp.text(_param_text(v))
    return pp.text(f"{k}=") + val


def pp_kv_pairs(pairs, ctx):
    """The ``[k=v ...]`` parameter block of an equation."""
    if not pairs:
        return pp.nil()
    return pp.group(pp.concat([
        pp.nest(2, pp.concat([pp.text("["), pp.brk(""),
                              pp.join(pp.brk(), [_pp_kv(k, v, ctx) for k, v in pairs])])),
        pp.brk(""), pp.text("]")]))


def _pp_atom(ctx, v, typed=False, literal_dtype=False):
    """The text of one atom for a primitive's own syntax: ``name``, ``name:f32[3]`` when
    ``typed``, a literal's value (with its type when ``literal_dtype``)."""
    if isinstance(v, Literal):
        t = v.text()
        return t if literal_dtype else t.rsplit(":", 1)[0]
    n = ctx.name(v)
    return f"{n}:{v.aval.str_short()}" if typed else n


def pp_eqn(eqn, ctx):
    """One equation as a document (primitives may customise which params print)."""
    prim = eqn.primitive
    custom = getattr(prim, "pp_eqn", None)
    if custom is not None:   # primitives with a syntax of their own (JAX's ref ops)
        text = custom(eqn, ctx, functools.partial(_pp_atom, ctx))
        if ctx.source_info and eqn.source_info is not None:
            text += f"  # {eqn.source_info}"
        return pp.text(text)
    params = prim.pp_params(eqn.params)
    hook = getattr(prim, "pp_suggest_names", None)
    if hook is not None:
        hook(eqn, ctx)
    lhs = _pp_vars(eqn.outvars, ctx, print_shapes=True)
    rhs = [pp.text(prim.name), pp_kv_pairs(params, ctx),
           pp.text(" ") + _pp_vars(eqn.invars, ctx)]
    if ctx.source_info and eqn.source_info is not None:
        rhs.append(pp.text(f"  # {eqn.source_info}"))
    if eqn.outvars:
        return pp.concat([lhs, pp.text(" = "), *rhs])
    return pp.concat(rhs)


def _pp_skeleton(jaxpr, ctx):
    constvars = _pp_vars(jaxpr.constvars, ctx, print_shapes=True)
    invars = _pp_vars(jaxpr.invars, ctx, print_shapes=True)
    eqns = pp.join(pp.brk("; "), [pp_eqn(e, ctx) for e in jaxpr.eqns])
    outvars = pp.concat([pp.text("("), _pp_vars(jaxpr.outvars, ctx, separator=","),
                         pp.text(")" if len(jaxpr.outvars) != 1 else ",)")])
    return pp.group(pp.nest(2, pp.concat([
        pp.text("{ "), pp.text("lambda "), constvars, pp.text("; "), invars,
        pp.text(". "), pp.text("let"), pp.nest(2, pp.brk() + eqns), pp.brk(),
        pp.text("in "), outvars])) + pp.text(" }"))


def pp_jaxpr(jaxpr, ctx):
    name = ctx.shared.get(jaxpr)
    if name is not None:
        return pp.text(name)
    return _pp_skeleton(jaxpr, ctx)


def pp_toplevel(top: Jaxpr, source_info=False):
    """The document for a whole jaxpr; jaxprs used more than once (or large inner ones) are
    printed first as ``let name = { ... } in`` as JAX does."""
    ctx = _Ctx()
    ctx.source_info = source_info
    # outputs of top-level equations that nothing reads print as "_" (as JAX)
    used = {a for a in top.outvars if isinstance(a, Var)}
    for e in reversed(top.eqns):
        ctx.dropped.update(v for v in e.outvars if v not in used)
        used.update(a for a in e.invars if isinstance(a, Var))
    names: dict = {}
    counts: Counter = Counter()
    queue = deque([top])
    while queue:
        j = queue.popleft()
        counts[j] += 1
        if j is not top and len(j.eqns) > 10:
            counts[j] += 1
        for eqn in j.eqns:
            nm = eqn.params.get("name")
            subs = list(jaxprs_in_params(eqn.params))
            queue.extend(subs)
            if nm is not None:
                nm = str(nm).strip("<>")
                for s in subs:
                    names.setdefault(s, nm)
    name_counts: Counter = Counter()
    docs = []
    shared = []
    for j, c in counts.items():
        if c == 1:
            continue
        nm = names.get(j, "jaxpr")
        k = name_counts[nm]
        if k > 0:
            name_counts[nm] += 1
            nm = nm + str(k)
        name_counts[nm] += 1
        ctx.shared_names.add(nm)
        ctx.shared[j] = nm
        shared.append((nm, j))
    for nm, j in shared:
        docs.append(pp.concat([pp.text("let "), pp.text(nm), pp.text(" = "),
                               _pp_skeleton(j, ctx), pp.text(" in"), pp.brk()]))
    docs.append(pp_jaxpr(top, ctx))
    return pp.concat(docs)
