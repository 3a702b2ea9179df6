"""Symbolic dimensions for ``jax.export`` (``symbolic_shape("b, 4")``).

jaxlite parses JAX's shape specifications into dimension variables that print, compare and
hash as JAX's do, so specs can be written and inspected. Exporting a function for symbolic
shapes is not supported: jaxlite's jaxprs have concrete shapes, and ``export`` raises
NotImplementedError for such specs (export once per concrete shape instead).
"""
from __future__ import annotations

import re

import numpy as np

from jaxlite._src import tree_util

__all__ = ["SymbolicScope", "symbolic_shape", "symbolic_args_specs", "is_symbolic_dim",
           "has_symbolic", "export_polymorphic"]


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


class _DimVar:
    """A dimension variable of a symbolic shape (``b`` in ``"b, 4"``)."""
    __slots__ = ("name", "scope")
    _symbolic_dim = True

    def __init__(self, name, scope):
        self.name = name
        self.scope = scope

    def __str__(self):
        return self.name

    __repr__ = __str__

    def __eq__(self, other):
        return isinstance(other, _DimVar) and (self.name, self.scope) == \
            (other.name, other.scope)

    def __hash__(self):
        return hash((self.name, id(self.scope)))

    def _unsupported(self, *_):
        raise NotImplementedError(
            f"Arithmetic on the symbolic dimension {self.name}: jaxlite supports symbolic "
            "dimensions in specifications only (jaxlite cannot export shape-polymorphic "
            "functions; export once per concrete shape).")

    __add__ = __radd__ = __mul__ = __rmul__ = __sub__ = __rsub__ = _unsupported
    __floordiv__ = __mod__ = __lt__ = __le__ = __gt__ = __ge__ = _unsupported

    def __index__(self):
        raise TypeError(f"The symbolic dimension {self.name} is not a concrete integer.")

    __int__ = __index__


_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


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
        elif _NAME.match(p):
            out.append(_DimVar(p, scope))
        else:
            raise NotImplementedError(
                f"The dimension expression {p!r} of {shape_spec!r}: jaxlite parses only "
                "integers and single dimension variables.")
    if like is not None and len(out) != len(like):
        raise ValueError(f"polymorphic shape {shape_spec!r} has {len(out)} dimensions, the "
                         f"argument has {len(like)}")
    return tuple(out)


def is_symbolic_dim(p) -> bool:
    """Whether ``p`` is a symbolic dimension (not a concrete integer)."""
    return isinstance(p, _DimVar)


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


def export_polymorphic(fun_jit, platforms, checks, args_specs, kwargs_specs):
    """Export for symbolic shapes: not supported by jaxlite (raises NotImplementedError)."""
    shapes = [str(tuple(x.shape)) for x in tree_util.tree_leaves((args_specs, kwargs_specs))
              if any(is_symbolic_dim(d) for d in getattr(x, "shape", ()) or ())]
    raise NotImplementedError(
        f"Exporting {getattr(fun_jit, '_name', 'the function')} for symbolic shapes "
        f"{', '.join(shapes)}: jaxlite's programs have concrete shapes, so it cannot export "
        "shape-polymorphic functions. Export once per concrete shape (e.g. "
        "jax.ShapeDtypeStruct((8, 4), jnp.float32)).")
