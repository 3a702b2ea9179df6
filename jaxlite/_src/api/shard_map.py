"""``jax.shard_map``: write the per-device program yourself, with explicit collectives."""
from __future__ import annotations

import functools

from jaxlite._src import tree_util
from jaxlite._src.core.avals import aval_of_value
from jaxlite._src.core.ir import ClosedJaxpr
from jaxlite._src.interpreters.staging import DebugInfo, trace_to_jaxpr
from jaxlite._src.prims.collectives import axis_env, env_axes
from jaxlite._src.prims.shard_map import shard_map_p, local_aval
from jaxlite._src.sharding.mesh import Mesh, current_mesh
from jaxlite._src.sharding.partition_spec import PartitionSpec, entry_axes
from jaxlite._src.sharding import vma
from jaxlite._src.sharding.types import dims_of, is_typed, spec_of, untyped
from jaxlite._src.api.misc import typeof
from jaxlite._src.api.wrapping import wraps

__all__ = ["shard_map", "trace_body", "flat_specs"]


def flat_specs(specs, tree, what):
    """One PartitionSpec per leaf of ``tree`` from ``specs``, a pytree prefix of it."""
    if isinstance(specs, PartitionSpec) or specs is None:
        return [specs if specs is not None else PartitionSpec()] * tree.num_leaves
    try:
        out = tree_util.broadcast_prefix(specs, tree_util.tree_unflatten(
            tree, [0] * tree.num_leaves), is_leaf=lambda s: isinstance(s, PartitionSpec)
            or s is None)
    except (ValueError, TypeError) as e:
        raise ValueError(f"shard_map {what} must be a PartitionSpec or a pytree prefix of the "
                         f"{'arguments' if what == 'in_specs' else 'outputs'} whose leaves are "
                         f"PartitionSpecs: {e}") from None
    return [s if s is not None else PartitionSpec() for s in out]


def trace_body(fun, local_avals, mesh, name, check_vma=False):
    """Trace the per-device function ``fun`` (flat in, flat out) on per-device avals, with
    the mesh's axes bound for collectives (and, with ``check_vma``, values typed with the
    manual axes they vary over)."""
    if env_axes():
        raise ValueError(
            f"Nested per-device maps are not supported: {name} is traced inside another "
            f"pmap/shard_map over axes {tuple(env_axes())}. Use one shard_map over a mesh "
            f"with several axes instead (e.g. jax.make_mesh((2, 4), ('i', 'j'))).")
    with axis_env(mesh), untyped(), vma.checking(mesh.axis_names if check_vma else None):
        jaxpr, tconsts, consts = trace_to_jaxpr(
            fun, local_avals, DebugInfo.from_function(fun, None, "shard_map"))
    if tconsts:
        raise ValueError(f"{name} closes over traced values from an enclosing "
                         f"transformation; pass them as arguments instead.")
    return ClosedJaxpr(jaxpr, consts)


def _check_in_types(mesh, leaves, specs):
    """Over Explicit mesh axes an argument's type names its sharding: JAX's error when
    ``in_specs`` say otherwise."""
    explicit = set(mesh.explicit_axes)
    for x, spec in zip(leaves, specs):
        t = typeof(x)
        nd = len(t.shape)
        have = dims_of(t) if is_typed(t) else ((),) * nd
        want = tuple(tuple(a for a in entry_axes(e) if a in explicit)
                     for e in list(spec) + [None] * (nd - len(spec)))
        if have != want:
            raise ValueError(
                f"in_specs passed to shard_map: {spec_of(want)} does not match the specs of the "
                f"input: {spec_of(have)} for arg: {t.str_short(False)}. `in_specs` is an "
                f"optional argument so you can omit specifying it and shard_map will infer the "
                f"in_specs from the arguments. If you want to reshard your inputs, you can use "
                f"`jax.reshard` on the arguments and then pass those args to shard_map.")


def spec_axes(spec):
    """The mesh axes a PartitionSpec splits some dimension on."""
    return {a for e in spec for a in entry_axes(e)}


def check_out_vma(f, mesh, tree, specs, out_avals):
    """JAX's error when an output varies over a mesh axis its ``out_spec`` does not split
    it on (shard_map could not return it as one value replicated over that axis)."""
    msgs = []
    paths = _leaf_paths(tree)
    for path, spec, a in zip(paths, specs, out_avals):
        named = spec_axes(spec)
        if set(a.vma) <= named:
            continue
        unmentioned = [n for n in mesh.axis_names if n not in named]
        where = f"out_specs{path}"
        if len(unmentioned) > 1:
            need = ",".join(vma.ordered(named, mesh.axis_names))
            diff = ",".join(n for n in unmentioned if n in a.vma)
            msgs.append(f"* {where} is {spec} which implies that the corresponding output value "
                        f"is only varying across mesh axes {{{need}}} and not {{{diff}}}, but "
                        f"it was inferred to be possibly varying over {{{','.join(a.vma)}}}")
        else:
            msgs.append(f"* {where} is {spec} which implies that the corresponding output value "
                        f"is replicated across mesh axis '{unmentioned[0]}', but could not "
                        f"infer replication over any axes")
    if not msgs:
        return
    if len(msgs) == 1:
        msgs = [msgs[0][2:]]
    name = getattr(f, "__name__", str(f))
    raise ValueError(
        f"shard_map applied to the function '{name}' was given out_specs which require "
        f"replication which can't be statically inferred given the mesh:\n\nThe mesh given "
        f"has shape {tuple(mesh.axis_sizes)} with corresponding axis names "
        f"{mesh.axis_names}.\n\n" + "\n\n".join(msgs) + "\n\nCheck if these output values "
        "are meant to be replicated over those mesh axes. If not, consider revising the "
        "corresponding out_specs entries. If so, consider disabling the check by passing the "
        "check_vma=False argument to `jax.shard_map` (or reduce the value over those axes "
        "first, e.g. with jax.lax.psum).")


def _leaf_paths(tree):
    try:
        leaves = tree_util.tree_flatten_with_path(
            tree_util.tree_unflatten(tree, [0] * tree.num_leaves))[0]
        if tree.num_leaves == 1 and not leaves[0][0]:
            return [""]
        return [tree_util.keystr(p) for p, _ in leaves]
    except Exception:  # noqa: BLE001 - a custom node that cannot be rebuilt
        return [""] * tree.num_leaves


def shard_map(f=None, /, *, out_specs, in_specs=None, mesh=None, axis_names=frozenset(),
              check_vma=True, check_rep=None, auto=frozenset()):
    """Map ``f`` over the devices of ``mesh``: each device runs ``f`` on its blocks of the
    inputs (split as ``in_specs`` say) and the outputs are assembled from the per-device
    blocks as ``out_specs`` say. Collectives (``psum``, ``all_gather``, ``ppermute``, ...)
    over the mesh's axis names let the devices communicate."""
    if f is None:
        return functools.partial(shard_map, out_specs=out_specs, in_specs=in_specs, mesh=mesh,
                                 axis_names=axis_names, check_vma=check_vma,
                                 check_rep=check_rep, auto=auto)
    if check_rep is not None:
        check_vma = check_rep

    @wraps(f)
    def wrapped(*args):
        m = mesh if mesh is not None else current_mesh()
        if m is None or not isinstance(m, Mesh):
            raise ValueError("shard_map requires a mesh: pass mesh=jax.make_mesh(...) or call "
                             "it inside `with jax.set_mesh(mesh):`.")
        leaves, in_tree = tree_util.tree_flatten(args)
        if in_specs is None:
            if not m.explicit_axes:
                raise ValueError("shard_map requires in_specs (a PartitionSpec per argument) "
                                 "unless the mesh has Explicit axes (then they are the "
                                 "arguments' shardings).")
            ispecs = [spec_of(dims_of(typeof(x))) if is_typed(typeof(x)) else PartitionSpec()
                      for x in leaves]
        else:
            ispecs = flat_specs(in_specs, in_tree, "in_specs")
        gavals = [aval_of_value(x) for x in leaves]
        for i, (a, sp) in enumerate(zip(gavals, ispecs)):
            if len(sp) > a.ndim:
                _spec_too_long(f, "in", sp, _arg_name(f, args, in_tree, i), a)
        if in_specs is not None and m.explicit_axes:
            _check_in_types(m, leaves, ispecs)
        avals = [local_aval(a, m, s, f"shard_map argument {i}")
                 for i, (a, s) in enumerate(zip(gavals, ispecs))]
        if check_vma:
            avals = [vma.with_vma(a, vma.ordered(spec_axes(s), m.axis_names))
                     for a, s in zip(avals, ispecs)]
        store = {}

        def flat_fun(*xs):
            out = f(*tree_util.tree_unflatten(in_tree, list(xs)))
            o_leaves, o_tree = tree_util.tree_flatten(out)
            store["tree"] = o_tree
            return o_leaves
        body = trace_body(flat_fun, avals, m, getattr(f, "__name__", "shard_map"),
                          bool(check_vma))
        ospecs = flat_specs(out_specs, store["tree"], "out_specs")
        for i, (a, sp) in enumerate(zip(body.out_avals, ospecs)):
            if len(sp) > a.ndim:
                path = tree_util.keystr(tree_util.tree_flatten_with_path(
                    tree_util.tree_unflatten(store["tree"], [0] * store["tree"].num_leaves))
                    [0][i][0])
                _spec_too_long(f, "out", sp, f"{_name(f)}(*args){path}", a, i, len(ospecs))
        if check_vma:
            check_out_vma(f, m, store["tree"], ospecs, body.out_avals)
        outs = shard_map_p.bind(
            *leaves, jaxpr=body, mesh=m, in_specs=tuple(ispecs), out_specs=tuple(ospecs),
            check_vma=bool(check_vma), newly_manual_axes=frozenset(m.axis_names))
        return tree_util.tree_unflatten(store["tree"], outs)
    return wrapped



def _name(f):
    return getattr(f, "__name__", "fun")


def _arg_name(f, args, in_tree, i):
    """JAX's words for flat argument ``i``: ``args[0], where args[0] is bound to f's
    parameter 'a'``."""
    import inspect
    path = tree_util.tree_flatten_with_path(args)[0][i][0]
    where = f"args{tree_util.keystr(path)}"
    try:
        params = list(inspect.signature(f).parameters)
        k = path[0].idx
        return f"{where}, where args[{k}] is bound to {_name(f)}'s parameter '{params[k]}',"
    except (TypeError, ValueError, IndexError, AttributeError):
        return where


def _spec_too_long(f, kind, spec, what, aval, i=0, n=1):
    """JAX's error for a PartitionSpec longer than its value's rank."""
    value = "input" if kind == "in" else "output"
    name = f"{kind}_specs" + (f"[{i}]" if kind == "out" and n > 1 else "")
    shown = f"the passed {what}" if kind == "in" else what
    raise ValueError(
        f"shard_map applied to the function '{_name(f)}' was given an {kind}_specs entry "
        f"which is too long to be compatible with the corresponding {value} value from the "
        f"function:\n\n{name} is {spec!r} which has length {len(spec)}, but {shown} has "
        f"shape {aval.str_short(short_dtypes=False)}, which has rank {aval.ndim} (and "
        f"{aval.ndim} < {len(spec)})\n\nEntries in {kind}_specs must be of length no greater "
        f"than the number of axes in the corresponding {value} value.\n\nEither revise the "
        f"spec to be shorter, or modify '{_name(f)}' so that its {value}s have sufficient "
        f"rank.")
