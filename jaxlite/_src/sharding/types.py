"""Sharding in types: the result sharding of each operation over ``AxisType.Explicit`` mesh
axes, as JAX 0.10 computes it.

An abstract value may carry a ``sharding``: a NamedSharding over the abstract mesh naming only
Explicit axes (printed ``f32[8@x,4]``). Tracing (jit) and eager execution call
``out_types`` after a primitive's ``abstract_eval``: it asks the primitive's
``explicit_sharding_rule`` method (or derives the answer from its ``sharding_rule``, the map
from operand to result dimensions the partitioner uses) for each result's sharding, and
raises ``ShardingTypeError`` where JAX does: operands split in conflicting ways, a dimension
the operation needs whole that is split, an ambiguous result (``out_sharding=`` resolves it).

Rules work on per-dimension tuples of axis names (``dims``): ``(('x',), ())`` is
``P('x', None)``.
"""
from __future__ import annotations

import contextlib
import math
import threading

from jaxlite._src.core.avals import ShapedArray, ShapeDtypeStruct
from jaxlite._src.core.errors import ShardingTypeError
from jaxlite._src.sharding.mesh import Mesh, context_mesh, get_abstract_mesh
from jaxlite._src.sharding.partition_spec import PartitionSpec, entry_axes
from jaxlite._src.sharding.shardings import NamedSharding, aval_sharding

__all__ = ["ShardingTypeError", "out_types", "untyped", "typing_on", "dims_of", "spec_of", "typed", "is_typed",
           "typed_aval", "resolve_out_sharding", "broadcast_dims", "mapped_dims",
           "sharding_dims", "spec_str", "concrete_mesh_for", "strip_axes"]


class _Untyped(threading.local):
    depth = 0


_untyped = _Untyped()


@contextlib.contextmanager
def untyped():
    """Trace without shardings in types: per-device programs (the partitioner's, a
    shard_map body over all mesh axes) work on blocks, whose types name no mesh axis."""
    _untyped.depth += 1
    try:
        yield
    finally:
        _untyped.depth -= 1


def typing_on():
    """Whether results get their shardings in their types (not inside ``untyped()``)."""
    return not _untyped.depth


def is_typed(aval):
    """Whether ``aval`` carries a sharding over Explicit mesh axes."""
    s = getattr(aval, "sharding", None)
    return s is not None and bool(s.mesh.explicit_axes)


def dims_of(aval):
    """The Explicit axes splitting each dimension of ``aval`` (``()`` where none does)."""
    s = getattr(aval, "sharding", None)
    if s is None or not s.mesh.explicit_axes:
        return ((),) * aval.ndim
    return sharding_dims(s, aval.ndim)


def sharding_dims(sharding, ndim):
    """Per-dimension Explicit axes of a NamedSharding for a rank-``ndim`` value."""
    explicit = set(sharding.mesh.explicit_axes)
    parts = list(sharding.spec)[:ndim]
    parts += [None] * (ndim - len(parts))
    return tuple(tuple(a for a in entry_axes(e) if a in explicit) for e in parts)


def spec_of(dims):
    """The PartitionSpec (one entry per dimension) of per-dimension axis tuples."""
    return PartitionSpec(*[None if not d else d[0] if len(d) == 1 else tuple(d)
                           for d in dims])


def with_axis_types(aval):
    """A type with its mesh's Explicit axes, as JAX shows it in some errors:
    ``float32[8@x,8]({Explicit: ('x', 'y')})``."""
    s = getattr(aval, "sharding", None)
    axes = s.mesh.explicit_axes if s is not None else ()
    return aval.str_short(False) + ("({Explicit: " + repr(tuple(axes)) + "})" if axes else "({})")


def spec_str(dims):
    """How JAX shows a spec in its sharding errors: ``('x', None)``."""
    return str(tuple(spec_of(dims)))


def typed(aval, mesh, dims):
    """``aval`` with the sharding ``dims`` over ``mesh`` (an AbstractMesh) in its type."""
    return ShapedArray(aval.shape, aval.dtype, aval.weak_type,
                       sharding=NamedSharding(mesh, spec_of(dims)))


def typed_aval(x, aval):
    """The abstract value of concrete array ``x`` (abstract value ``aval``) with its
    sharding in the type when it is split over Explicit mesh axes."""
    s = getattr(x, "_sharding", None) if not isinstance(x, ShapeDtypeStruct) else x.sharding
    if s is None or not isinstance(s, NamedSharding) or not s.mesh.explicit_axes:
        return aval
    return ShapedArray(aval.shape, aval.dtype, aval.weak_type,
                       sharding=aval_sharding(s, aval.ndim))


def _param_sharding(params):
    for k in ("out_sharding", "sharding"):
        v = params.get(k)
        if isinstance(v, NamedSharding) and v.mesh.explicit_axes:
            return v
    return None


def _common_mesh(avals, extra):
    mesh = None
    for s in [getattr(a, "sharding", None) for a in avals] + [extra]:
        if s is None or not s.mesh.explicit_axes:
            continue
        m = s.mesh.abstract_mesh
        if mesh is None:
            mesh = m
        elif m != mesh:
            raise ShardingTypeError(f"Mesh for all inputs should be equal. Got one mesh: {mesh} "
                                    f"and another mesh: {m}")
    return mesh


def out_types(prim, avals, params, outs):
    """``outs`` (what ``prim.abstract_eval`` gave for ``avals``) with their shardings in
    their types when an operand's type (or an ``out_sharding``) names Explicit axes."""
    extra = _param_sharding(params)
    if extra is None and not any(is_typed(a) for a in avals):
        return outs
    mesh = extra.mesh.abstract_mesh if extra is not None else _common_mesh(avals, None)
    multi = prim.multiple_results
    out_list = list(outs) if multi else [outs]
    in_dims = [dims_of(a) for a in avals]
    rule = getattr(prim, "explicit_sharding_rule", None)
    if rule is not None:
        got = rule(avals, in_dims, **params)
    else:
        got = default_rule(prim, avals, in_dims, params, out_list)
    res = []
    for o, d in zip(out_list, got):
        if d is None:
            res.append(o)
            continue
        d = tuple(d) + ((),) * (o.ndim - len(d))
        res.append(_check(prim, avals, o, d, mesh))
    return res if multi else res[0]


def _check(prim, avals, o, d, mesh):
    used = [a for ax in d for a in ax]
    if len(used) != len(set(used)):
        ins = ", ".join(a.str_short() for a in avals)
        shown = ShapedArray(o.shape, o.dtype, sharding=_Shown(mesh, d))
        raise ShardingTypeError(
            f"{prim.name} operation with inputs: {ins} produces an illegally sharded "
            f"result: {shown.str_short()}. A mesh axis may split one dimension only: reshard "
            f"an operand (jax.sharding.reshard(x, P(...))) or pass out_sharding=.")
    out = typed(o, mesh, d)
    sizes = dict(zip(mesh.axis_names, mesh.axis_sizes))
    for k, (n, ax) in enumerate(zip(out.shape, d)):
        p = math.prod(sizes[a] for a in ax)
        if ax and n % p:
            raise ShardingTypeError(
                f"{prim.name} gives a result of type {out.str_short()} whose dimension {k} "
                f"of size {n} is not divisible by the {p} devices of mesh axes {ax}. Reshard "
                f"the operands so that this dimension is not split, or pass out_sharding=.")
    return out


class _Shown:
    """A sharding-like stand-in to print a type whose spec is not a valid sharding."""

    def __init__(self, mesh, dims):
        self.mesh = mesh
        self.spec = spec_of(dims)


def mesh_of(avals):
    """The abstract mesh of the first operand whose type is sharded (None if none is)."""
    for a in avals:
        if is_typed(a):
            return a.sharding.mesh
    return None


def axes_size(mesh, axes):
    """The number of devices along mesh axes ``axes``."""
    sizes = dict(zip(mesh.axis_names, mesh.axis_sizes))
    return math.prod(sizes[a] for a in axes)


def varying_shape_dims(name, aval, d, out_shape, mesh):
    """The rule of slicing and padding: the operand's sharding is kept; a split dimension
    whose size changes must stay divisible by its devices."""
    for n_in, n_out, ax in zip(aval.shape, out_shape, d):
        if n_in != n_out and ax and n_out % axes_size(mesh, ax):
            entry = ax[0] if len(ax) == 1 else ax
            raise ShardingTypeError(
                f"{name} on sharded dims where out dim ({n_out}) is not divisible by mesh axes "
                f"({axes_size(mesh, ax)}) with spec ({entry}) is not implemented. Got input "
                f"type={aval.str_short()} and output shape={tuple(out_shape)}. Reshard the "
                f"operand so that this dimension is not split first.")
    return d


def _reshape_groups(shape, new):
    """Pairs (operand dims, result dims) of a reshape whose sizes multiply to the same
    number; None when the shapes cannot be grouped."""
    groups, i, j = [], 0, 0
    while i < len(shape) or j < len(new):
        gi, gj = [], []
        a = b = 1
        while True:
            if (a <= b or j >= len(new)) and i < len(shape) and not (gi and a == b):
                a *= shape[i]
                gi.append(i)
                i += 1
            elif j < len(new) and not (gj and a == b):
                b *= new[j]
                gj.append(j)
                j += 1
            else:
                break
            if a == b and gi and gj:
                break
        if a != b:
            return None
        groups.append((gi, gj))
    return groups


def reshape_dims(aval, d, new_sizes, mesh, dimensions=None):
    """JAX's reshape rule over Explicit axes: singleton dimensions come and go freely; one
    operand dimension may split into several (its axes go, major first, to the result
    dimensions they divide) or several merge into one (split major-most first); any other
    reshape of a split operand needs ``out_sharding``."""
    new_sizes = tuple(new_sizes)
    if not any(d):
        return ((),) * len(new_sizes)

    def fail():
        return ShardingTypeError(
            "This reshape is not supported. Please specify the sharding of the output via the "
            f"`out_sharding` argument of jax.lax.reshape. Got operand type: {aval}, new "
            f"sizes: {new_sizes}")
    shape = tuple(aval.shape)
    if [s for s in shape if s != 1] == [s for s in new_sizes if s != 1]:
        it = iter([x for s, x in zip(shape, d) if s != 1])
        return tuple(() if n == 1 else next(it) for n in new_sizes)
    groups = _reshape_groups(shape, new_sizes)
    if groups is None:
        raise fail()
    out = [()] * len(new_sizes)
    changed = 0
    for gi, gj in groups:
        if len(gi) == 1 and len(gj) == 1:
            out[gj[0]] = d[gi[0]]
            continue
        gi = [k for k in gi if shape[k] != 1] or gi[:1]
        gj_real = [k for k in gj if new_sizes[k] != 1] or gj[:1]
        changed += 1
        axes = [a for k in gi for a in d[k]]
        if not axes:
            continue
        if changed > 1 or dimensions is not None or (len(gi) > 1 and len(gj_real) > 1):
            raise fail()
        if len(gi) == 1:          # a split: axes to the result dimensions, major first
            it = iter(axes)
            for k in gj_real:
                n, got = new_sizes[k], []
                while n > 1:
                    a = next(it, None)
                    if a is None:
                        break
                    if n % axes_size(mesh, (a,)):
                        raise fail()
                    n //= axes_size(mesh, (a,))
                    got.append(a)
                out[k] = tuple(got)
            if next(it, None) is not None:
                raise fail()
        else:                     # a merge: split dimensions must come major-most first
            entries = [d[k] for k in gi]
            while entries and not entries[-1]:
                entries.pop()
            if any(not e for e in entries):
                raise fail()
            if new_sizes[gj_real[0]] % axes_size(mesh, axes):
                raise fail()
            out[gj_real[0]] = tuple(axes)
    return tuple(out)


def default_rule(prim, avals, in_dims, params, outs):
    """Result shardings derived from the primitive's ``sharding_rule`` (which operand
    dimension becomes which result dimension) and ``whole_dims`` (dimensions it needs whole):
    each result dimension keeps the split of the operand dimensions mapped to it."""
    if all(is_typed(o) for o in outs):
        return [dims_of(o) for o in outs]
    for v in params.values():
        # calls and control flow: their jaxprs' results carry their types
        v = v[0] if isinstance(v, tuple) and v else v
        inner = getattr(v, "out_avals", None) if hasattr(v, "jaxpr") else None
        if inner is not None and len(inner) == len(outs):
            return [dims_of(o) for o in inner]
    rule = getattr(prim, "sharding_rule", None)
    dims_map = None
    if rule is not None:
        try:
            dims_map = rule(avals, **params)
        except Exception:  # noqa: BLE001 - no usable rule for these operands
            dims_map = None
    if dims_map is None or len({o.ndim for o in outs}) > 1:
        if not any(any(d) for d in in_dims):
            return [((),) * o.ndim for o in outs]
        ins = ", ".join(a.str_short() for a in avals)
        raise ShardingTypeError(
            f"sharding rule for {prim.name} is not implemented (operands {ins}). Work around "
            f"it by resharding the operands to be unsplit (jax.sharding.reshard(x, P())), or "
            f"by running the operation with the compiler choosing the layout: "
            f"`jax.sharding.auto_axes(fun, out_sharding=...)`.")
    whole = getattr(prim, "whole_dims", None)
    message = getattr(prim, "explicit_whole_message", None)
    if whole is not None and message is not None:
        # (a dimension the operation needs whole must not be split in its operand's type)
        for a, d, ks in zip(avals, in_dims, whole(avals, **params)):
            for k in ks:
                if d[k]:
                    raise ShardingTypeError(
                        message(a, k, **params) + " Reshard the operand first so that this "
                        "dimension is not split: jax.sharding.reshard(x, P(...)).")
    return [mapped_dims(prim.name, avals, in_dims, dims_map, outs[0].ndim)] * len(outs)


def mapped_dims(name, avals, in_dims, dims_map, out_ndim):
    """Each result dimension takes the split of the operand dimensions mapped to it; two
    different splits of one result dimension are JAX's broadcasting error."""
    out = [()] * out_ndim
    for d, m in zip(in_dims, dims_map):
        for k, od in enumerate(m):
            if od is None or not d[k]:
                continue
            if not out[od]:
                out[od] = d[k]
            elif out[od] != d[k]:
                specs = ", ".join(spec_str(x) for x, a in zip(in_dims, avals) if a.ndim)
                raise ShardingTypeError(f"{name} got incompatible shardings for broadcasting: "
                                        f"{specs}.")
    return tuple(out)


def broadcast_dims(name, avals, in_dims):
    """JAX's rule for n-ary elementwise operations (rank-0 operands broadcast)."""
    nd = max((a.ndim for a in avals), default=0)
    m = []
    for a in avals:
        if a.ndim != nd:
            m.append((None,) * a.ndim)
            continue
        m.append(tuple(k for k in range(nd)))
    return mapped_dims(name, avals, in_dims, m, nd)


# -- out_sharding arguments --------------------------------------------------------------------

def resolve_out_sharding(s, ndim=None):
    """An ``out_sharding=`` argument as a NamedSharding (a bare PartitionSpec needs the mesh
    of ``jax.set_mesh``; JAX's error otherwise). None stays None."""
    if s is None:
        return None
    if isinstance(s, PartitionSpec):
        m = context_mesh()
        if m is None or m.empty:
            am = get_abstract_mesh()
            if am.empty:
                raise ValueError(
                    "Using PartitionSpec when you are not under a mesh context is not allowed. "
                    "Please pass a NamedSharding instance or enter into a mesh context via "
                    f"`jax.set_mesh`. Got {s}")
            return NamedSharding(am, s)
        return NamedSharding(m, s)
    if isinstance(s, NamedSharding):
        return s
    raise TypeError(f"out_sharding must be a NamedSharding or a PartitionSpec, got {s!r} of "
                    f"type {type(s).__name__}")


def concrete_mesh_for(abstract, candidates=()):
    """A concrete Mesh whose abstract mesh is ``abstract``: one of ``candidates`` (shardings
    of arguments) or the mesh of ``jax.set_mesh``; None when there is none."""
    for s in candidates:
        m = getattr(s, "mesh", None)
        if isinstance(m, Mesh) and m.abstract_mesh == abstract:
            return m
    m = context_mesh()
    if m is not None and not m.empty and m.abstract_mesh == abstract:
        return m
    return None


def strip_axes(mesh, axes):
    """``mesh`` (a Mesh or AbstractMesh) with ``axes`` (None: every Explicit axis) turned
    into Auto axes, so that values over it no longer carry those axes in their types."""
    from jaxlite._src.sharding.mesh import AxisType
    axes = set(mesh.explicit_axes if axes is None else
               ((axes,) if isinstance(axes, str) else axes))
    types = tuple(AxisType.Auto if n in axes else t
                  for n, t in zip(mesh.axis_names, mesh.axis_types))
    return mesh.update(axis_types=types)

