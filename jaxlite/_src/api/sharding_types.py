"""The user-facing side of sharding in types: ``jax.sharding.reshard``, ``auto_axes``,
``explicit_axes`` and the ``out_sharding=`` arguments of array-creating functions.

``reshard`` binds ``sharding_constraint`` (eagerly it places the arrays; under jit the
partitioner lays the value out and the result's type names the new sharding). ``auto_axes``
runs a function with some Explicit mesh axes turned into Auto ones (the values it sees no
longer carry those axes in their types, so nothing in it can be ambiguous) and reshards its
results to ``out_sharding``; ``explicit_axes`` does the opposite.
"""
from __future__ import annotations

import functools

from jaxlite._src import tree_util
from jaxlite._src.core.trace import Tracer
from jaxlite._src.prims.sharding_constraint import reshard_p
from jaxlite._src.runtime.array import ArrayImpl
from jaxlite._src.sharding.mesh import AxisType, Mesh, context_mesh, current_mesh, set_mesh
from jaxlite._src.sharding.partition_spec import PartitionSpec
from jaxlite._src.sharding.shardings import NamedSharding, Sharding
from jaxlite._src.sharding.types import concrete_mesh_for, resolve_out_sharding, strip_axes
from jaxlite._src.api.wrapping import wraps

__all__ = ["reshard", "auto_axes", "explicit_axes", "with_out_sharding", "place_as",
           "type_sharding", "compute_with_out_sharding"]


def _is_spec_leaf(s):
    return s is None or isinstance(s, (Sharding, PartitionSpec))


def _constrain(x, s):
    return reshard_p.bind(x, sharding=s, layout=None, context_mesh=current_mesh(),
                                      unconstrained_dims=frozenset())


def place_as(x, sharding):
    """``x`` (an array, tracer or NumPy value) laid out by ``sharding`` (a Sharding, or a
    PartitionSpec under ``jax.set_mesh``); None leaves it as it is."""
    if sharding is None:
        return x
    if isinstance(sharding, PartitionSpec):
        sharding = resolve_out_sharding(sharding)
    if isinstance(sharding, NamedSharding) and getattr(sharding.mesh, "empty", False) and \
            not isinstance(sharding.mesh, Mesh):
        return x   # the type of an unsharded value (``jax.typeof(x).sharding``): no layout
    if isinstance(sharding, NamedSharding) and not isinstance(x, (ArrayImpl, Tracer)):
        from jaxlite._src.api.placement import device_put
        return device_put(x, sharding)
    return _constrain(x, sharding)


def reshard(xs, out_shardings):
    """Lay out the arrays of pytree ``xs`` as ``out_shardings`` say (a NamedSharding, a
    PartitionSpec under ``jax.set_mesh``, or a pytree prefix of them). Under Explicit mesh
    axes the results' types carry the new sharding; eagerly this moves the data."""
    if _is_spec_leaf(out_shardings):
        s = resolve_out_sharding(out_shardings) if isinstance(out_shardings, PartitionSpec) \
            else out_shardings
        return tree_util.tree_map(lambda x: place_as(x, s), xs)
    return tree_util.tree_map(
        lambda s, sub: tree_util.tree_map(lambda x: place_as(x, s), sub),
        out_shardings, xs, is_leaf=_is_spec_leaf)


def with_out_sharding(fn):
    """Decorate an array-creating function so that its ``out_sharding=`` argument lays out
    its result (the function itself computes it unsharded)."""
    @wraps(fn)
    def wrapped(*args, out_sharding=None, **kwargs):
        s = resolve_out_sharding(out_sharding) if out_sharding is not None else None
        return place_as(fn(*args, **kwargs), s)
    return wrapped


def type_sharding(x):
    """The concrete NamedSharding that ``x``'s type names over Explicit mesh axes (for a
    tracer, on the mesh of ``jax.set_mesh``), or None."""
    if isinstance(x, Tracer):
        s = x.aval.sharding
        if s is None or not s.mesh.explicit_axes:
            return None
        mesh = concrete_mesh_for(s.mesh)
        return None if mesh is None else NamedSharding(mesh, s.spec)
    s = getattr(x, "_sharding", None)
    if isinstance(s, NamedSharding) and s.mesh.explicit_axes:
        return s
    return None


def compute_with_out_sharding(fn, args, out_sharding):
    """``fn(*args)`` computed with the Explicit mesh axes dropped from the operands' types
    (so no intermediate result is ambiguous), laid out by ``out_sharding``: what the
    ``out_sharding=`` argument of ``jnp.einsum``/``matmul``/``dot``/``tensordot`` means."""
    s = resolve_out_sharding(out_sharding)
    mesh = s.mesh
    inner = strip_axes(mesh, None)
    args = [_on_mesh(a, inner) if isinstance(mesh, Mesh) else a for a in args]
    return place_as(fn(*args), s)


def _type_sharding(x):
    """The NamedSharding naming ``x``'s layout, or None."""
    if isinstance(x, Tracer):
        return x.aval.sharding
    s = getattr(x, "_sharding", None)
    return s if isinstance(s, NamedSharding) else None


def _on_mesh(x, mesh):
    """``x`` with its layout re-expressed over ``mesh`` (same devices and spec, other axis
    types): no data moves."""
    s = _type_sharding(x)
    if s is None or not s.mesh.axis_names or s.mesh.axis_names != mesh.axis_names:
        return x
    return _constrain(x, NamedSharding(mesh, s.spec))


def _mesh_for(out_sharding):
    m = context_mesh()
    if m is not None and not m.empty:
        return m
    for s in tree_util.tree_leaves(out_sharding, is_leaf=_is_spec_leaf):
        if isinstance(s, NamedSharding):
            return s.mesh
    raise ValueError("auto_axes/explicit_axes need a mesh: call them under "
                     "`with jax.set_mesh(mesh):` or pass NamedShardings.")


def _check_axes(mesh, axes, want, who):
    names = mesh.axis_names if axes is None else ((axes,) if isinstance(axes, str) else axes)
    kinds = dict(zip(mesh.axis_names, mesh.axis_types))
    for a in names:
        if a not in kinds:
            raise ValueError(f"{who}: {a!r} is not an axis of the mesh {mesh}.")
        if axes is not None and kinds[a] is not want:
            raise ValueError(f"{who} expects mesh axes {tuple(names)} to be of type "
                             f"{want.name}, but {a!r} is {kinds[a].name} in {mesh}.")
    return tuple(names)


def auto_axes(fun=None, *, axes=None, out_sharding=None):
    """Run ``fun`` with mesh ``axes`` (default: every Explicit axis) turned into Auto axes,
    so the compiler chooses the layouts inside it, then reshard its results to
    ``out_sharding`` (a sharding or PartitionSpec per result, or a pytree prefix)."""
    if fun is None:
        return functools.partial(auto_axes, axes=axes, out_sharding=out_sharding)

    @wraps(fun)
    def wrapped(*args, **kwargs):
        if out_sharding is None:
            raise ValueError("auto_axes needs out_sharding=: the shardings its results get "
                             "back over the Explicit axes.")
        mesh = _mesh_for(out_sharding)
        names = _check_axes(mesh, axes, AxisType.Explicit, "auto_axes")
        inner = strip_axes(mesh, names)
        args, kwargs = tree_util.tree_map(lambda x: _on_mesh(x, inner), (args, kwargs))
        outer_specs = reshard_specs(out_sharding, mesh)
        with set_mesh(inner):
            out = fun(*args, **kwargs)
        return reshard(out, outer_specs)
    return wrapped


def explicit_axes(fun=None, *, axes=None, in_sharding=None):
    """Run ``fun`` with Auto mesh ``axes`` (default: all) turned into Explicit axes, its
    arguments laid out (and typed) by ``in_sharding``; the results come back over the
    original (Auto) axes."""
    if fun is None:
        return functools.partial(explicit_axes, axes=axes, in_sharding=in_sharding)

    @wraps(fun)
    def wrapped(*args, **kwargs):
        if in_sharding is None:
            raise ValueError("explicit_axes needs in_sharding=: the shardings its arguments "
                             "get over the Explicit axes.")
        mesh = _mesh_for(in_sharding)
        names = _check_axes(mesh, axes, AxisType.Auto, "explicit_axes")
        types = tuple(AxisType.Explicit if n in names else t
                      for n, t in zip(mesh.axis_names, mesh.axis_types))
        inner = mesh.update(axis_types=types)
        args = reshard(args, reshard_specs(in_sharding, inner))
        with set_mesh(inner):
            out = fun(*args, **kwargs)
        return tree_util.tree_map(lambda x: _on_mesh(x, mesh), out)
    return wrapped


def reshard_specs(shardings, mesh):
    """``shardings`` (a pytree of shardings/PartitionSpecs) as NamedShardings over
    ``mesh``."""
    def one(s):
        if s is None:
            return None
        if isinstance(s, PartitionSpec):
            return NamedSharding(mesh, s)
        if isinstance(s, NamedSharding):
            return NamedSharding(mesh, s.spec)
        return s
    return tree_util.tree_map(one, shardings, is_leaf=_is_spec_leaf)

