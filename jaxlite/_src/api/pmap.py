"""``jax.pmap``: one program per device, built on shard_map as in JAX 0.10.

``pmap(f)`` traces ``f`` once on the per-device slices (mapped axes removed) and runs that one
program on every device's executor thread. Under another transformation (``make_jaxpr``,
``jit``, ``grad``, ``vmap``) it stages what JAX 0.10 stages: a ``jit`` named ``_fun`` around a
``shard_map`` over a one-axis mesh, whose body squeezes the mapped axis, runs ``f`` and
broadcasts the results back.
"""
from __future__ import annotations

import functools
import operator

import numpy as np

from jaxlite._src import tree_util
from jaxlite._src.config import config
from jaxlite._src.core.avals import ShapedArray, aval_of_value
from jaxlite._src.core.primitive import extended_operands
from jaxlite._src.core.trace import ctx
from jaxlite._src.prims.shape import broadcast_in_dim_p, squeeze_p
from jaxlite._src.prims.shard_map import shard_map_p, plan_for, run_plan, run_shard_map_local
from jaxlite._src.runtime.array import ArrayImpl
from jaxlite._src.runtime import devices as _devices
from jaxlite._src.sharding.mesh import Mesh
from jaxlite._src.sharding.partition_spec import PartitionSpec
from jaxlite._src.api.shard_map import trace_body

__all__ = ["pmap"]

_PMAP_AXIS = "_internal_pmap_axis_name"


def _spec(axis, name):
    return PartitionSpec() if axis is None else PartitionSpec(*([None] * axis + [name]))


def _flat_axes(axes, tree, what, args=None):
    """in_axes/out_axes as one entry (int or None) per leaf of ``tree``."""
    if axes is None or isinstance(axes, int):
        return [axes] * tree.num_leaves
    try:
        return tree_util.broadcast_prefix(
            axes, tree_util.tree_unflatten(tree, [0] * tree.num_leaves),
            is_leaf=lambda x: x is None)
    except (ValueError, TypeError) as e:
        raise ValueError(f"pmap {what} specification must be a tree prefix of the "
                         f"corresponding value, got specification {axes} for value tree "
                         f"{tree}. {e}") from None


class _PmapFunction:
    """What ``pmap(f)`` returns: callable, with JAX's attributes."""

    def __init__(self, fun, axis_name, in_axes, out_axes, static_argnums, devices, backend,
                 axis_size, donate_argnums):
        self.fun = fun
        self.axis_name = axis_name
        self.in_axes = in_axes
        self.out_axes = out_axes
        self.static_argnums = static_argnums
        self.devices = devices
        self.backend = backend
        self.axis_size = axis_size
        self.donate_argnums = donate_argnums
        self._cache = {}
        self._fast = {}      # (tree, leaf types, trace context) -> entry, positional calls
        functools.update_wrapper(self, fun, updated=())

    def _fun_name(self):
        return getattr(self.fun, "__name__", "fun")

    def _split(self, args, kwargs):
        static = tuple((i, args[i]) for i in self.static_argnums if i < len(args))
        dyn = tuple(a for i, a in enumerate(args) if i not in self.static_argnums)
        for _, v in static:
            try:
                hash(v)
            except TypeError:
                raise ValueError(f"Non-hashable static arguments are not supported. An error "
                                 f"occurred while trying to hash an object of type "
                                 f"{type(v)}, {v}.") from None
        return dyn, static

    def _prepare(self, args, kwargs):
        dyn, static = self._split(args, kwargs)
        leaves, in_tree = tree_util.tree_flatten((dyn, kwargs))
        in_axes = self.in_axes
        if isinstance(in_axes, list):
            in_axes = tuple(in_axes)
        axes_tree = (in_axes if isinstance(in_axes, tuple) else
                     (in_axes,) * len(dyn), {k: 0 for k in kwargs}) \
            if not (in_axes is None or isinstance(in_axes, int)) else in_axes
        if isinstance(in_axes, tuple) and len(in_axes) != len(dyn):
            raise ValueError(f"pmap in_axes specification must be a tree prefix of the "
                             f"corresponding value, got specification {in_axes} for value "
                             f"tree {tree_util.tree_structure(dyn)}.")
        flat_in = _flat_axes(axes_tree, in_tree, "in_axes")
        avals = [aval_of_value(x) for x in leaves]
        sizes = {}
        for a, ax, x in zip(avals, flat_in, leaves):
            if ax is None:
                continue
            if ax < 0:
                ax += a.ndim
            if not 0 <= ax < a.ndim:
                raise ValueError(f"pmap in_axes leaves must be non-negative integers less "
                                 f"than the rank of the argument, got in_axes={ax} for an "
                                 f"argument of shape {a.shape}.")
            sizes.setdefault(a.shape[ax], []).append(a.shape)
        flat_in = [None if ax is None else ax % a.ndim for ax, a in zip(flat_in, avals)]
        if len(sizes) > 1:
            raise ValueError("pmap got inconsistent sizes for array axes to be mapped:\n" +
                             "\n".join(f"  * arguments of shape(s) {v} have mapped size {k}"
                                       for k, v in sizes.items()))
        if sizes:
            n = next(iter(sizes))
        elif self.axis_size is not None:
            n = self.axis_size
        else:
            raise ValueError("pmap requires at least one argument with a mapped axis, or an "
                             "explicit axis_size.")
        devs = self._devices(n)
        name = self.axis_name if self.axis_name is not None else _PMAP_AXIS
        key = (in_tree, tuple(avals), tuple(flat_in), static, n, tuple(d.id for d in devs),
               config.trace_context())
        entry = self._cache.get(key)
        if entry is None:
            entry = self._cache[key] = self._trace(leaves, in_tree, avals, flat_in, static,
                                                   devs, name)
        return leaves, entry

    def _devices(self, n):
        if self.devices is not None:
            devs = list(self.devices)
            if len(devs) != n:
                raise ValueError(f"Leading axis size of input to pmapped function must equal "
                                 f"the number of local devices passed to pmap. Got axis_size="
                                 f"{n}, num_local_devices={len(devs)}.")
            return devs
        avail = _devices.local_devices(backend=self.backend)
        if n > len(avail):
            raise ValueError(f"compiling computation that requires {n} logical devices, but "
                             f"only {len(avail)} XLA devices are available (num_replicas={n}, "
                             f"num_partitions=1)")
        if _devices.process_count() > 1:
            # every process maps its own n devices: the axis spans n devices per process
            return [d for p in range(_devices.process_count())
                    for d in _devices.local_devices(process_index=p)[:n]]
        return avail[:n]

    def _trace(self, leaves, in_tree, avals, flat_in, static, devs, name):
        mesh = Mesh(np.asarray(devs, dtype=object), (name,))
        local = []
        for a, ax in zip(avals, flat_in):
            if ax is None:
                local.append(ShapedArray(a.shape, a.dtype, a.weak_type))
            else:
                local.append(ShapedArray(a.shape[:ax] + (1,) + a.shape[ax + 1:], a.dtype,
                                         a.weak_type))
        fun, store = self.fun, {}

        def body(*blocks):
            xs = [b if ax is None else squeeze_p.bind(b, dimensions=(ax,))
                  for b, ax in zip(blocks, flat_in)]
            dyn, kwargs = tree_util.tree_unflatten(in_tree, xs)
            args = list(dyn)
            for i, v in sorted(static):
                args.insert(i, v)
            out = fun(*args, **kwargs)
            o_leaves, o_tree = tree_util.tree_flatten(out)
            flat_out = _flat_axes(self.out_axes, o_tree, "out_axes")
            store["tree"], store["out_axes"] = o_tree, flat_out
            res = []
            for y, ax in zip(o_leaves, flat_out):
                y = _as_array(y)
                if ax is None:
                    res.append(y)
                    continue
                shape = tuple(y.shape)
                ax = ax % (len(shape) + 1)
                new = shape[:ax] + (1,) + shape[ax:]
                dims = tuple(k if k < ax else k + 1 for k in range(len(shape)))
                res.append(broadcast_in_dim_p.bind(y, shape=new, broadcast_dimensions=dims,
                                                   sharding=None))
            return res

        closed = trace_body(body, local, mesh, f"pmap of {self._fun_name()}")
        in_specs = tuple(_spec(ax, name) for ax in flat_in)
        out_specs = tuple(_spec(None if ax is None else ax % (a.ndim), name)
                          for ax, a in zip(store["out_axes"], closed.out_avals))
        params = dict(jaxpr=closed, mesh=mesh, in_specs=in_specs, out_specs=out_specs,
                      check_vma=False, newly_manual_axes=frozenset({name}))

        def _fun(*xs):
            return shard_map_p.bind(*xs, **params)
        from jaxlite._src.api.jit import jit
        return {"params": params, "out_tree": store["tree"], "staged": jit(_fun)}

    def __call__(self, *args, **kwargs):
        if not kwargs and not self.static_argnums and ctx.trace is None:
            # fast path: positional arrays of types seen before
            leaves, tree = tree_util.tree_flatten(args)
            sig = []
            for a in leaves:
                if not isinstance(a, ArrayImpl):
                    break
                sig.append((a.shape, a.dtype, a.weak_type))
            else:
                key = (tree, tuple(sig), config.trace_context())
                entry = self._fast.get(key)
                if entry is not None and not config._flags["jax_disable_jit"].value:
                    return tree_util.tree_unflatten(entry["out_tree"],
                                                    run_plan(entry["plan"], leaves))
                out, entry = self._call(args, kwargs)
                if entry is not None and len(self._fast) < 64:
                    self._fast[key] = entry
                return out
        return self._call(args, kwargs)[0]

    def _call(self, args, kwargs):
        """The call's result, and its cache entry when later calls of the same types may
        take the fast path (run on this process's devices, not staged)."""
        leaves, entry = self._prepare(args, kwargs)
        fast = None
        if ctx.trace is None and not config._flags["jax_disable_jit"].value and \
                not extended_operands(leaves):   # (key arrays go through jit's path)
            p = entry["params"]
            if _devices.process_count() > 1 and self.devices is None:
                local = entry.get("local")
                if local is None:
                    me = _devices.process_index()
                    local = entry["local"] = [d for d in p["mesh"].devices.flat
                                              if d.process_index == me]
                outs = run_shard_map_local(list(leaves), p["jaxpr"], p["mesh"], local,
                                           p["in_specs"], p["out_specs"])
            else:
                plan = entry.get("plan")
                if plan is None:
                    plan = entry["plan"] = plan_for(p["jaxpr"], p["mesh"], p["in_specs"],
                                                    p["out_specs"])
                outs = run_plan(plan, list(leaves))
                fast = entry
        else:
            outs = entry["staged"](*leaves)
        return tree_util.tree_unflatten(entry["out_tree"], outs), fast

    def lower(self, *args, **kwargs):
        """Stage the pmapped call (``.as_text()``, ``.compile()``: a callable taking the
        arguments as the pmapped function does and returning its output pytree)."""
        leaves, entry = self._prepare(args, kwargs)
        low = _PmapLowered(self, entry["staged"].lower(*leaves), entry["out_tree"])
        low._leaves = leaves
        return low


class _PmapLowered:
    """A lowered pmapped call: the flat program's stages, called with the function's own
    arguments and returning its output pytree (as JAX's AOT stages of pmap)."""

    def __init__(self, pmapped, lowered, out_tree):
        self._pmapped, self._lowered, self._out_tree = pmapped, lowered, out_tree

    def as_text(self, *args, **kwargs):
        """The flat program's text (see ``Lowered.as_text``)."""
        return self._lowered.as_text(*args, **kwargs)

    def compiler_ir(self, dialect=None):
        """The flat program in a compiler IR (see ``Lowered.compiler_ir``)."""
        return self._lowered.compiler_ir(dialect)

    def cost_analysis(self):
        return self._lowered.cost_analysis()

    def compile(self, compiler_options=None):
        """Compile: a callable taking the pmapped function's arguments."""
        if _devices.process_count() > 1 and self._pmapped.devices is None:
            # the arguments are this process's rows of a mapped axis spanning every
            # process: the flat program (over global shapes) is not the one to run
            return _PmapCompiled(self._pmapped, _PerDeviceCompiled(self._pmapped, self._leaves,
                                                                   compiler_options),
                                 self._out_tree)
        return _PmapCompiled(self._pmapped, self._lowered.compile(compiler_options),
                             self._out_tree)


class _PerDeviceCompiled:
    """The compiled stage of a pmap whose mapped axis spans several processes: its text is
    the per-device program each local device runs (collectives meeting the other processes
    over MPI); ``_PmapCompiled`` runs the pmap itself on this process's devices."""

    def __init__(self, pmapped, leaves, compiler_options):
        from jaxlite._src.api.misc import check_compiler_options
        from jaxlite._src.compiler.codegen import lower_jaxpr
        from jaxlite._src.compiler.passes import optimize
        check_compiler_options(compiler_options)
        _, entry = pmapped._prepare(leaves, {})
        self._pmapped = pmapped
        p = entry["params"]
        self._code = lower_jaxpr(optimize(p["jaxpr"]), pmapped._fun_name())
        self._head = (f"# per-device program of {len(p['mesh'].devices.flat)} devices over "
                      f"{_devices.process_count()} processes "
                      f"({_devices.local_device_count()} in this process)\n")

    def as_text(self):
        """The per-device program's generated source."""
        return self._head + self._code.source

    def cost_analysis(self):
        return {}


class _PmapCompiled:
    """A compiled pmapped call (see ``_PmapLowered``)."""

    def __init__(self, pmapped, compiled, out_tree):
        self._pmapped, self._compiled, self._out_tree = pmapped, compiled, out_tree

    def as_text(self):
        """The generated code of the flat program."""
        return self._compiled.as_text()

    def cost_analysis(self):
        return self._compiled.cost_analysis()

    def __call__(self, *args, **kwargs):
        if isinstance(self._compiled, _PerDeviceCompiled):
            return self._pmapped._call(args, kwargs)[0]
        leaves, _ = self._pmapped._prepare(args, kwargs)
        return tree_util.tree_unflatten(self._out_tree, self._compiled(*leaves))


def _as_array(y):
    if hasattr(y, "aval"):
        return y
    from jaxlite._src.prims.operands import asarray_value
    return asarray_value(y)


def pmap(fun=None, axis_name=None, *, in_axes=0, out_axes=0, static_broadcasted_argnums=(),
         devices=None, backend=None, axis_size=None, donate_argnums=(),
         global_arg_shapes=None):
    """Map ``fun`` over the leading (or ``in_axes``) axis of its arguments, one slice per
    device, running the slices in parallel on the devices' threads.

    Collectives over ``axis_name`` (``lax.psum``, ``pmean``, ``all_gather``, ``ppermute``,
    ...) let the devices communicate. The mapped size must not exceed the device count
    (set ``XLA_FLAGS=--xla_force_host_platform_device_count=N`` for N CPU devices)."""
    if fun is None:
        return functools.partial(pmap, axis_name=axis_name, in_axes=in_axes,
                                 out_axes=out_axes,
                                 static_broadcasted_argnums=static_broadcasted_argnums,
                                 devices=devices, backend=backend, axis_size=axis_size,
                                 donate_argnums=donate_argnums)
    if not callable(fun):
        raise TypeError(f"pmap expects a callable as its first argument, got {fun!r}")
    if isinstance(static_broadcasted_argnums, int):
        static_broadcasted_argnums = (static_broadcasted_argnums,)
    static = tuple(sorted(operator.index(i) for i in static_broadcasted_argnums))
    return _PmapFunction(fun, axis_name, in_axes, out_axes, static, devices, backend,
                         axis_size, donate_argnums)
