"""``sharding_constraint``: ask for a layout of an intermediate value
(``lax.with_sharding_constraint``).

Eagerly it places the value (as ``device_put``); under ``jit`` the partitioner lays the value
out as asked, inserting the collectives that takes. Differentiation and vmap keep the
constraint on tangents, cotangents and batched values.
"""
from __future__ import annotations

import numpy as np

from jaxlite._src.core.avals import ShapedArray
from jaxlite._src.core.primitive import Primitive
from jaxlite._src.runtime import sharded_array as _sa
from jaxlite._src.runtime.array import ArrayImpl
from jaxlite._src.sharding.partition_spec import PartitionSpec
from jaxlite._src.sharding.shardings import NamedSharding
from jaxlite._src.sharding.mesh import AbstractMesh

__all__ = ["sharding_constraint_p", "reshard_p"]


class ShardingConstraint(Primitive):
    """``sharding_constraint[sharding, layout, context_mesh, unconstrained_dims]``."""
    name = "sharding_constraint"
    accepts_extended = True

    def impl(self, x, sharding, **_):
        return x

    def eager(self, args, params):
        (x,) = args
        s = params["sharding"]
        v = x._value if isinstance(x, ArrayImpl) else np.asarray(x)
        weak = x.weak_type if isinstance(x, ArrayImpl) else False
        s.check_rank(np.shape(v))
        if isinstance(s, NamedSharding) and isinstance(s.mesh, AbstractMesh):
            # eagerly, the devices come from the argument's or jax.set_mesh's mesh
            from jaxlite._src.sharding.types import concrete_mesh_for
            mesh = concrete_mesh_for(s.mesh, [getattr(x, "_sharding", None)])
            if mesh is None:
                raise TypeError(
                    f"with_sharding_constraint: the sharding's mesh is abstract ({s.mesh}) and "
                    "no concrete mesh with these axes is in context: call it under "
                    "jax.set_mesh(mesh), or give a NamedSharding over a concrete Mesh.")
            s = NamedSharding(mesh, s.spec, memory_kind=s.memory_kind)
        if isinstance(s, NamedSharding) and s.mesh.explicit_axes and len(s.spec) < np.ndim(v):
            # over Explicit axes the sharding comes from the type: one entry per dimension
            s = NamedSharding(s.mesh, PartitionSpec(*(list(s.spec) + [None] * (
                np.ndim(v) - len(s.spec)))))
        if isinstance(x, _sa.ShardedArray) and x._sharding.is_equivalent_to(s, np.ndim(v)):
            return _sa.from_buffers(x.aval, s, x._bufs)
        return _sa.from_global(np.asarray(v), weak, s)

    def abstract_eval(self, x, **_):
        return ShapedArray(x.shape, x.dtype, x.weak_type)

    def explicit_sharding_rule(self, avals, dims, sharding, **params):
        """The result's type names the Explicit axes of the layout asked for (none when
        that mesh has no Explicit axes: ``auto_axes`` drops them from types this way)."""
        from jaxlite._src.sharding.types import sharding_dims
        if isinstance(sharding, NamedSharding) and sharding.mesh.explicit_axes:
            return [sharding_dims(sharding, avals[0].ndim)]
        return [None]

    def sharding_rule(self, avals, **params):
        return [tuple(range(avals[0].ndim))]

    def jvp(self, primals, tangents, **params):
        from jaxlite._src.prims import ad_util as u
        return self.bind(primals[0], **params), self.bind(u.instantiate(tangents[0]), **params)

    def transpose(self, ct, x, **params):
        from jaxlite._src.prims import ad_util as u
        if u.is_zero(ct):
            return [None]
        return [self.bind(ct, **params)]

    def batch(self, size, args, dims, sharding, **params):
        d = dims[0]
        if d is None or not isinstance(sharding, NamedSharding):
            return self.bind(args[0], sharding=sharding, **params), d
        parts = list(sharding.spec) + [None] * max(0, d - len(sharding.spec))
        parts.insert(d, None)
        return self.bind(args[0], sharding=NamedSharding(sharding.mesh, PartitionSpec(*parts)),
                         **params), d

    def _sharding(self, eqn):
        """The equation's sharding over a concrete mesh: one over an abstract mesh (traced
        under ``jax.set_mesh``) is put on the mesh that was in context."""
        s = eqn.params.get("sharding")
        if isinstance(s, NamedSharding) and isinstance(s.mesh, AbstractMesh):
            m = eqn.params.get("context_mesh")
            if getattr(m, "abstract_mesh", None) != s.mesh:
                from jaxlite._src.sharding.types import concrete_mesh_for
                m = concrete_mesh_for(s.mesh)
            if m is not None:
                s = NamedSharding(m, s.spec, memory_kind=s.memory_kind)
        return s

    def sharding_hints(self, eqn):
        """The layout this constraint asks for (the partitioner names it on its mesh)."""
        s = self._sharding(eqn)
        return [] if s is None else [(s, eqn.outvars[0].aval.ndim)]

    def operand_layouts(self, eqn):
        """The layout the operand is moved to (its producer may make it so directly)."""
        s = self._sharding(eqn)
        return [None if s is None else (s, eqn.invars[0].aval.ndim)]

    def partition(self, builder, eqn, ins, mesh_spec):
        """The partitioner's rule: lay the value out as the constraint asks."""
        (x, dims), = ins
        want = mesh_spec(self, self._sharding(eqn), len(dims))
        if want is None:
            return [(x, dims)]
        s = eqn.params["sharding"]
        why = f"with_sharding_constraint asks for {getattr(s, 'spec', s)}"
        return [builder.relayout(x, dims, want, why, eqn.source_info)]


class Reshard(ShardingConstraint):
    """``reshard``: ``jax.sharding.reshard`` (and the ``out_sharding=`` of array-creating
    functions). The same rules as a sharding constraint; under Explicit mesh axes the
    result's type names the new sharding."""
    name = "reshard"
    hidden_params = ("sharding", "layout", "context_mesh", "unconstrained_dims")


sharding_constraint_p = ShardingConstraint()
reshard_p = Reshard()
