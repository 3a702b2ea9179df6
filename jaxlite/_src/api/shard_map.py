"""``jax.shard_map``: write the per-device program yourself, with explicit collectives."""
from __future__ import annotations

import contextlib
import functools
import threading

from jaxlite._src import tree_util
from jaxlite._src.core.avals import ShapedArray, aval_of_value
from jaxlite._src.core.ir import ClosedJaxpr
from jaxlite._src.interpreters.staging import DebugInfo, trace_to_jaxpr
from jaxlite._src.prims.collectives import axis_env, env_axes
from jaxlite._src.prims.shard_map import shard_map_p, local_aval
from jaxlite._src.sharding.mesh import AbstractMesh, AxisType, Mesh, current_mesh, \
    use_abstract_mesh
from jaxlite._src.sharding.partition_spec import PartitionSpec, entry_axes
from jaxlite._src.sharding.shardings import NamedSharding
from jaxlite._src.sharding import vma
from jaxlite._src.sharding.types import dims_of, is_typed, spec_of, untyped
from jaxlite._src.api.misc import typeof
from jaxlite._src.api.wrapping import wraps

__all__ = ["shard_map", "experimental_shard_map", "trace_body", "flat_specs", "manual_context"]


class _ManualStack(threading.local):
    def __init__(self):
        self.stack = []


_manual = _ManualStack()


def manual_context():
    """(mesh, manual axes) of the innermost shard_map whose body is being traced (the axes
    manual there, its own and its enclosing shard_maps'), or None outside any."""
    return _manual.stack[-1] if _manual.stack else None


class _Axes:
    """The (name, size) pairs of some mesh axes, for ``axis_env``."""

    def __init__(self, mesh, names):
        sizes = dict(zip(mesh.axis_names, mesh.axis_sizes))
        self.axis_names = tuple(n for n in mesh.axis_names if n in names)
        self.axis_sizes = tuple(sizes[n] for n in self.axis_names)
        # the mesh's other axes: not bound for collectives inside (JAX's errors name them)
        self.auto_axis_names = tuple(n for n in mesh.axis_names if n not in names)


def manual_abstract_mesh(mesh, manual):
    """``mesh``'s abstract mesh with the axes ``manual`` typed Manual (what
    ``jax.sharding.get_abstract_mesh()`` gives inside a shard_map over them)."""
    return mesh.abstract_mesh.update(axis_types=tuple(
        AxisType.Manual if n in manual else t for n, t in zip(mesh.axis_names,
                                                              mesh.axis_types)))


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


def trace_body(fun, local_avals, mesh, name, check_vma=False, manual=None, show_mesh=False,
               typed=False):
    """Trace the per-device function ``fun`` (flat in, flat out) on per-device avals, with
    the mesh axes ``manual`` (default: all) bound for collectives (and, with ``check_vma``,
    values typed with the manual axes they vary over). Inside another shard_map's body over
    the same mesh, the axes manual there stay bound (a nested shard_map). ``show_mesh``:
    ``get_abstract_mesh()`` inside gives the mesh with its manual axes typed Manual, as in
    JAX's shard_map. ``typed``: values keep their splits over the Explicit mesh axes that
    stay automatic in their types (a shard_map over some of the axes)."""
    ctx = manual_context()
    if env_axes() and (ctx is None or ctx[0] != mesh):
        raise ValueError(
            f"Nested per-device maps are not supported: {name} is traced inside another "
            f"pmap/shard_map over axes {tuple(env_axes())}. Use one shard_map over a mesh "
            f"with several axes instead (e.g. jax.make_mesh((2, 4), ('i', 'j'))), or a "
            f"shard_map over a subset of a mesh's axes (axis_names=) with shard_maps over "
            f"the other axes inside it.")
    manual = frozenset(mesh.axis_names if manual is None else manual)
    every = manual | (ctx[1] if ctx is not None else frozenset())
    order = tuple(a for a in mesh.axis_names if a in every)
    with contextlib.ExitStack() as stack:
        stack.enter_context(axis_env(_Axes(mesh, manual)))
        if not typed:
            stack.enter_context(untyped())
        stack.enter_context(vma.checking(order if check_vma else None))
        if show_mesh:
            stack.enter_context(use_abstract_mesh(manual_abstract_mesh(mesh, every)))
        _manual.stack.append((mesh, every))
        try:
            jaxpr, tconsts, consts = trace_to_jaxpr(
                fun, local_avals, DebugInfo.from_function(fun, None, "shard_map"))
        finally:
            _manual.stack.pop()
    if tconsts:
        raise ValueError(f"{name} closes over traced values from an enclosing "
                         f"transformation; pass them as arguments instead.")
    return ClosedJaxpr(jaxpr, consts)


def _check_in_types(mesh, leaves, specs, manual):
    """Over Explicit mesh axes an argument's type names its sharding: JAX's error when
    ``in_specs`` say otherwise. As in JAX, only when the shard_map is manual over every
    mesh axis and every one is Explicit (partial manual, or a mesh with Auto axes, takes
    the arguments as they come, a NumPy array included)."""
    if set(manual) != set(mesh.axis_names) or \
            not set(manual) <= set(mesh.explicit_axes):
        return
    explicit = set(mesh.explicit_axes) & set(manual)
    for x, spec in zip(leaves, specs):
        t = typeof(x)
        nd = len(t.shape)
        have = tuple(tuple(a for a in d if a in explicit)
                     for d in (dims_of(t) if is_typed(t) else ((),) * nd))
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


def check_out_vma(f, mesh, tree, specs, out_avals, manual=None):
    """JAX's error when an output varies over a mesh axis its ``out_spec`` does not split
    it on (shard_map could not return it as one value replicated over that axis). Only the
    shard_map's own ``manual`` axes count (an enclosing shard_map's are its business)."""
    msgs = []
    paths = _leaf_paths(tree)
    manual = frozenset(mesh.axis_names if manual is None else manual)
    for path, spec, a in zip(paths, specs, out_avals):
        named = spec_axes(spec)
        if set(a.vma) & manual <= named:
            continue
        unmentioned = [n for n in mesh.axis_names if n not in named and n in manual]
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
        m, ctx = _resolve_mesh(mesh)
        manual = _manual_axes(m, ctx, axis_names, auto)
        leaves, in_tree = tree_util.tree_flatten(args)
        if in_specs is not None:
            check_specs("in", in_specs, manual)
        check_specs("out", out_specs, manual)
        if in_specs is None:
            if not m.explicit_axes:
                raise ValueError("shard_map requires in_specs (a PartitionSpec per argument) "
                                 "unless the mesh has Explicit axes (then they are the "
                                 "arguments' shardings).")
            # (the arguments' splits over this shard_map's axes; the others stay inside)
            ispecs = [spec_of(tuple(tuple(a for a in d if a in manual)
                                    for d in dims_of(typeof(x))))
                      if is_typed(typeof(x)) else PartitionSpec() for x in leaves]
        else:
            ispecs = flat_specs(in_specs, in_tree, "in_specs")
        gavals = [aval_of_value(x) for x in leaves]
        for i, (a, sp) in enumerate(zip(gavals, ispecs)):
            if len(sp) > a.ndim:
                _spec_too_long(f, "in", sp, _arg_name(f, args, in_tree, i), a)
        if in_specs is not None and m.explicit_axes:
            _check_in_types(m, leaves, ispecs, manual)
        avals = [local_aval(a, m, s, f"shard_map argument {i}")
                 for i, (a, s) in enumerate(zip(gavals, ispecs))]
        if check_vma:
            # (inside another shard_map an argument also varies over the axes it did there)
            avals = [vma.with_vma(a, vma.ordered(spec_axes(s) | set(getattr(g, "vma", ())),
                                                 m.axis_names))
                     for a, g, s in zip(avals, gavals, ispecs)]
        store = {}

        def flat_fun(*xs):
            out = f(*tree_util.tree_unflatten(in_tree, list(xs)))
            o_leaves, o_tree = tree_util.tree_flatten(out)
            store["tree"] = o_tree
            return o_leaves
        avals, typed = _typed_auto(m, ctx, manual, leaves, avals)
        body = trace_body(flat_fun, avals, m, getattr(f, "__name__", "shard_map"),
                          bool(check_vma), manual, show_mesh=True, typed=typed)
        ospecs = flat_specs(out_specs, store["tree"], "out_specs")
        for i, (a, sp) in enumerate(zip(body.out_avals, ospecs)):
            if len(sp) > a.ndim:
                path = tree_util.keystr(tree_util.tree_flatten_with_path(
                    tree_util.tree_unflatten(store["tree"], [0] * store["tree"].num_leaves))
                    [0][i][0])
                _spec_too_long(f, "out", sp, f"{_name(f)}(*args){path}", a, i, len(ospecs))
        if check_vma:
            check_out_vma(f, m, store["tree"], ospecs, body.out_avals, manual)
        outs = shard_map_p.bind(
            *leaves, jaxpr=body, mesh=m, in_specs=tuple(ispecs), out_specs=tuple(ospecs),
            check_vma=bool(check_vma), newly_manual_axes=manual)
        return tree_util.tree_unflatten(store["tree"], outs)
    return wrapped


def experimental_shard_map(f=None, mesh=None, in_specs=None, out_specs=None, check_rep=True,
                           auto=frozenset()):
    """``jax.experimental.shard_map.shard_map(f, mesh, in_specs, out_specs, check_rep=True)``
    (its arguments may be positional; the seed-era ``auto=``, the mesh axes left to the
    partitioner, is the complement of ``jax.shard_map``'s ``axis_names=``)."""
    if out_specs is None:
        raise TypeError("shard_map() missing required argument: 'out_specs'")
    sm = shard_map(out_specs=out_specs, in_specs=in_specs, mesh=mesh, check_vma=check_rep,
                   auto=frozenset(auto))
    return sm if f is None else sm(f)


def _typed_auto(mesh, ctx, manual, leaves, avals):
    """(the body's argument avals, whether the body is traced with types): over Explicit mesh
    axes that stay automatic inside (a shard_map over a subset of the axes), an argument's
    block keeps its split over them in its type, as in JAX (``float32[2,8@y]{V:x}``)."""
    every = manual | (ctx[1] if ctx is not None else frozenset())
    rest = [a for a in mesh.explicit_axes if a not in every]
    if not rest:
        return avals, False
    amesh = manual_abstract_mesh(mesh, every)
    out = []
    for x, a in zip(leaves, avals):
        t = typeof(x)
        have = dims_of(t) if is_typed(t) else ((),) * a.ndim
        d = tuple(tuple(ax for ax in axes if ax in rest) for axes in have)
        if any(d):
            a = ShapedArray(a.shape, a.dtype, a.weak_type,
                            sharding=NamedSharding(amesh, spec_of(d)), vma=a.vma)
        out.append(a)
    return out, True


def _resolve_mesh(mesh):
    """(the concrete mesh a shard_map runs over, the enclosing manual context or None): the
    given mesh, else the enclosing shard_map's, else the one of ``jax.set_mesh``."""
    ctx = manual_context()
    if ctx is not None:
        ctx_abstract = manual_abstract_mesh(*ctx)
        if mesh is None or (isinstance(mesh, AbstractMesh) and mesh == ctx_abstract):
            return ctx[0], ctx
        raise ValueError(f"The context mesh {ctx_abstract} should match the mesh passed to "
                         f"shard_map {mesh}")
    m = mesh if mesh is not None else current_mesh()
    if m is None or not isinstance(m, Mesh):
        raise ValueError("shard_map requires a mesh: pass mesh=jax.make_mesh(...) or call "
                         "it inside `with jax.set_mesh(mesh):`.")
    return m, None


def _manual_axes(mesh, ctx, axis_names, auto):
    """The mesh axes a shard_map makes manual: ``axis_names`` (the seed-era ``auto=``: all
    the others), by default every mesh axis not already manual in an enclosing shard_map."""
    if not isinstance(axis_names, (set, frozenset)):
        raise TypeError(f"`axis_names` argument of shard_map should be of type `frozenset` or "
                        f"`set`. Got type: {type(axis_names)}")
    names = frozenset(axis_names)
    outer = ctx[1] if ctx is not None else frozenset()
    if auto:
        names = frozenset(a for a in mesh.axis_names if a not in set(auto) and a not in outer)
    if not names:
        names = frozenset(a for a in mesh.axis_names if a not in outer)
    if not names <= frozenset(mesh.axis_names):
        raise ValueError(f"jax.shard_map requires axis_names={names} to be a subset of "
                         f"mesh.axis_names={frozenset(mesh.axis_names)}")
    if names & outer:
        raise ValueError(
            f"shard_map over axes {sorted(names & outer)}, which an enclosing shard_map "
            f"already made manual: inside a shard_map over some mesh axes, a nested "
            f"shard_map can only map the others ({[a for a in mesh.axis_names if a not in outer]}); "
            f"pass those as axis_names=.")
    if not names:
        raise ValueError("shard_map inside shard_maps that already made every mesh axis "
                         "manual has no axis left to map.")
    return names


def check_specs(kind, specs, manual):
    """JAX's error for in_specs/out_specs (as given: a PartitionSpec or a pytree of them)
    naming a mesh axis that is not manual in this shard_map."""
    leaves = tree_util.tree_flatten_with_path(
        specs, is_leaf=lambda s: isinstance(s, PartitionSpec) or s is None)[0]
    msgs = []
    for path, p in leaves:
        if not isinstance(p, PartitionSpec):
            continue
        for e in p:
            for name in entry_axes(e):
                if name not in manual:
                    msgs.append(f"  {kind}_specs{tree_util.keystr(path)} refers to {name!r}")
    if msgs:
        raise ValueError(f"shard_map {kind}_specs argument must refer to an axis marked as "
                         f"manual ({frozenset(manual)}), but:\n\n" + "\n\n".join(msgs) +
                         f"\n\nCheck the {kind}_specs values passed to shard_map.")


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
