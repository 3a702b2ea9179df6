"""Symbolic dimensions for ``jax.export`` (``symbolic_shape("b, 4")``).

jaxlite parses JAX's shape specifications into affine dimension expressions (``b``,
``2*b + 1``) that print, compare and hash as JAX's do; export for such specs is
polymorphic.py's (the program is traced at several sizes and must be affine in them).
"""
from __future__ import annotations

import re

import numpy as np

from jaxlite._src import tree_util

__all__ = ["SymbolicScope", "symbolic_shape", "symbolic_args_specs", "is_symbolic_dim",
           "has_symbolic", "dim_names", "concrete_specs"]


class InconclusiveDimensionOperation(Exception):
    """A computation with symbolic dimensions whose result the dimensions do not decide
    (comparing, dividing or multiplying them)."""


class SymbolicScope:
    """The scope that dimension variables belong to (with optional ``constraints``, which
    jaxlite records but does not use); variables of different scopes do not mix."""

    def __init__(self, constraints_str=()):
        if isinstance(constraints_str, str):
            raise ValueError("The symbolic constraints should be a sequence of strings. "
                             f"Got {constraints_str!r}")
        self.constraints = tuple(constraints_str)

    def __str__(self):
        return f"SymbolicScope(constraints={list(self.constraints)})"

    __repr__ = __str__


class _DimExpr:
    """A symbolic dimension: an affine expression ``sum(coeff * var) + const`` over
    dimension variables (``b`` in ``"b, 4"``); printed, compared and hashed as JAX's."""
    __slots__ = ("terms", "const", "scope")
    _symbolic_dim = True

    def __init__(self, terms, const=0, scope=None):
        self.terms = tuple(sorted((n, int(c)) for n, c in dict(terms).items() if c))
        self.const = int(const)
        self.scope = scope

    @classmethod
    def var(cls, name, scope=None):
        return cls({name: 1}, 0, scope)

    def evaluate(self, env) -> int:
        """The value of the expression for the variable values in ``env``."""
        return sum(c * env[n] for n, c in self.terms) + self.const

    @property
    def name(self):
        return str(self)

    def __str__(self):
        parts = [n if c == 1 else f"-{n}" if c == -1 else f"{c}*{n}" for n, c in self.terms]
        if self.const or not parts:
            parts.append(str(self.const))
        return " + ".join(parts).replace("+ -", "- ")

    __repr__ = __str__

    def _lift(self, other):
        if isinstance(other, _DimExpr):
            return other
        if isinstance(other, (int, np.integer)):
            return _DimExpr({}, int(other), self.scope)
        return None

    def __add__(self, other):
        o = self._lift(other)
        if o is None:
            return NotImplemented
        t = dict(self.terms)
        for n, c in o.terms:
            t[n] = t.get(n, 0) + c
        return _DimExpr(t, self.const + o.const, self.scope)

    __radd__ = __add__

    def __neg__(self):
        return _DimExpr({n: -c for n, c in self.terms}, -self.const, self.scope)

    def __sub__(self, other):
        o = self._lift(other)
        return NotImplemented if o is None else self + (-o)

    def __rsub__(self, other):
        o = self._lift(other)
        return NotImplemented if o is None else o + (-self)

    def __mul__(self, other):
        if isinstance(other, (int, np.integer)):
            k = int(other)
            return _DimExpr({n: c * k for n, c in self.terms}, self.const * k, self.scope)
        raise InconclusiveDimensionOperation(
            f"Multiplying the symbolic dimension {self} by {other}: jaxlite's symbolic "
            "dimensions are sums of variables times integers.")

    __rmul__ = __mul__

    def __eq__(self, other):
        o = self._lift(other)
        return o is not None and (self.terms, self.const) == (o.terms, o.const)

    def __hash__(self):
        return hash((self.terms, self.const)) if self.terms else hash(self.const)

    def _unsupported(self, *_):
        raise InconclusiveDimensionOperation(
            f"Comparing or dividing the symbolic dimension {self}: not supported by jaxlite's "
            "symbolic dimensions (an exported function is traced at concrete sizes; "
            "code that branches on a dimension cannot be exported polymorphically).")

    __floordiv__ = __mod__ = __lt__ = __le__ = __gt__ = __ge__ = _unsupported

    def __index__(self):
        raise TypeError(f"The symbolic dimension {self} is not a concrete integer.")

    __int__ = __index__


_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


_TERM = re.compile(r"\s*([+-]?)\s*(?:(\d+)\s*\*\s*)?([A-Za-z_][A-Za-z0-9_]*|\d+)\s*")


def _parse_expr(text, spec, scope):
    """An affine dimension expression such as ``b``, ``2*b + 1`` or ``b - k``."""
    pos, terms, const = 0, {}, 0
    while pos < len(text):
        m = _TERM.match(text, pos)
        if not m or m.end() == pos or (pos and not m.group(1)):
            raise ValueError(f"syntax error in polymorphic shape {spec!r} in dimension "
                             f"{text!r}: jaxlite reads sums of integers, variables and "
                             "integer multiples of variables (e.g. '2*b + 1').")
        sign = -1 if m.group(1) == "-" else 1
        k = int(m.group(2)) if m.group(2) else 1
        atom = m.group(3)
        if atom.isdigit():
            if m.group(2):
                const += sign * k * int(atom)
            else:
                const += sign * int(atom)
        else:
            terms[atom] = terms.get(atom, 0) + sign * k
        pos = m.end()
    return _DimExpr(terms, const, scope)


def symbolic_shape(shape_spec, *, constraints=(), scope=None, like=None) -> tuple:
    """The shape described by ``shape_spec`` (e.g. ``"b, 4"``): integers and dimension
    variables. ``like`` supplies the dimensions written ``_`` and ``...``."""
    if scope is None:
        scope = SymbolicScope(constraints)
    elif constraints:
        raise ValueError("Cannot specify both a `scope` and `constraints`.")
    if shape_spec is None:
        spec = "..."
    elif isinstance(shape_spec, tuple):
        spec = ",".join(str(d) for d in shape_spec)
    elif isinstance(shape_spec, str):
        spec = shape_spec.strip()
    else:
        raise ValueError(f"polymorphic shape {shape_spec!r} must be a string or a tuple")
    if spec.startswith("(") and spec.endswith(")"):
        spec = spec[1:-1]
    parts = [p.strip() for p in spec.split(",")]
    if parts and parts[-1] == "":
        parts = parts[:-1]
    out = []
    for i, p in enumerate(parts):
        if p == "...":
            if like is None or i != len(parts) - 1:
                raise ValueError(f"polymorphic shape {shape_spec!r}: '...' must be last and "
                                 "needs a shape to take the dimensions from (`like=`)")
            out.extend(like[len(out):])
        elif p == "_":
            if like is None:
                raise ValueError(f"polymorphic shape {shape_spec!r} in axis {i} must contain "
                                 "a dimension variable for unknown dimension in argument "
                                 "shape")
            out.append(like[i])
        elif re.fullmatch(r"-?\d+", p):
            out.append(int(p))
        else:
            out.append(_parse_expr(p, shape_spec, scope))
    if like is not None and len(out) != len(like):
        raise ValueError(f"polymorphic shape {shape_spec!r} has {len(out)} dimensions, the "
                         f"argument has {len(like)}")
    return tuple(out)


def is_symbolic_dim(p) -> bool:
    """Whether ``p`` is a symbolic dimension (not a concrete integer)."""
    return isinstance(p, _DimExpr)


def symbolic_args_specs(args, shapes_specs, constraints=(), scope=None):
    """ShapeDtypeStructs for the pytree ``args`` with the symbolic shapes ``shapes_specs``
    (one spec string for all leaves, or a pytree prefix of ``args`` of specs)."""
    from jaxlite._src.core.avals import ShapeDtypeStruct
    if scope is None:
        scope = SymbolicScope(constraints)
    leaves, tree = tree_util.tree_flatten(args)
    if isinstance(shapes_specs, (str, type(None))):
        specs = [shapes_specs] * len(leaves)
    else:
        specs = tree_util.broadcast_prefix(shapes_specs, args)

    def spec_of(x, s):
        shape = tuple(np.shape(x))
        from jaxlite._src.core import dtypes
        dt = getattr(x, "dtype", None)
        dt = np.asarray(x).dtype if dt is None else dt
        return ShapeDtypeStruct(symbolic_shape(s, scope=scope, like=shape),
                                dt if dtypes.is_extended(dt) else dtypes.canonicalize_dtype(dt))
    return tree.unflatten([spec_of(x, s) for x, s in zip(leaves, specs)])


def has_symbolic(tree) -> bool:
    """Whether a leaf of ``tree`` has a symbolic dimension in its shape."""
    for x in tree_util.tree_leaves(tree):
        if any(is_symbolic_dim(d) for d in getattr(x, "shape", ()) or ()):
            return True
    return False


def dim_names(tree) -> tuple:
    """The dimension variables in the shapes of the leaves of ``tree``, sorted."""
    names = set()
    for x in tree_util.tree_leaves(tree):
        for d in getattr(x, "shape", ()) or ():
            if is_symbolic_dim(d):
                names.update(n for n, _ in d.terms)
    return tuple(sorted(names))


def concrete_specs(tree, env):
    """``tree`` with every ShapeDtypeStruct's symbolic dimensions evaluated in ``env``."""
    from jaxlite._src.core.avals import ShapeDtypeStruct

    def conc(x):
        if isinstance(x, ShapeDtypeStruct) and any(is_symbolic_dim(d) for d in x.shape):
            return ShapeDtypeStruct(tuple(d.evaluate(env) if is_symbolic_dim(d) else d
                                          for d in x.shape), x.dtype, weak_type=x.weak_type)
        return x
    return tree_util.tree_map(conc, tree, is_leaf=lambda x: isinstance(x, ShapeDtypeStruct))
