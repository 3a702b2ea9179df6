"""``jax.export``: a jitted function saved as data, called and differentiated later.

``export(jit(f))(*specs)`` traces ``f`` for the given argument types and returns an
:class:`Exported`: the function's calling convention (input/output pytrees and avals) and
its program. JAX's program is StableHLO; jaxlite's is its own jaxpr, with the nested jit
calls and custom-derivative wrappers inlined (as lowering inlines them), so the program is
plain data. ``Exported.serialize()`` writes it in jaxlite's versioned format
(``codec.py``: tagged JSON, never pickle) and :func:`deserialize` reads it back; the result
runs with ``exp.call(*args)`` inside or outside of jit.

Differentiation follows JAX: ``exp.call`` is a ``custom_vjp`` function whose backward pass
calls the exported VJP (``exp.vjp()``), itself an Exported. A serialized Exported keeps
``vjp_order`` levels of VJPs, so ``jax.grad`` of a deserialized function works when it was
serialized with ``vjp_order >= 1`` (and ``grad(grad(...))`` with 2), as in JAX.

Differences from JAX: ``mlir_module()`` is the jaxpr's text; vmap of ``exp.call`` works
(JAX has no batching rule for ``call_exported``); shardings are not recorded (jaxlite
exports for one device). Shape polymorphism: see ``shape_poly.py``.
"""
from __future__ import annotations

import collections
import dataclasses
import json
import re
from typing import Any, Callable, Sequence

import numpy as np

from jaxlite._src import tree_util
from jaxlite._src.core import dtypes
from jaxlite._src.core.avals import ShapedArray
from jaxlite._src.core.ir import ClosedJaxpr
from jaxlite._src.compiler.passes import inline_calls
from jaxlite._src.prims.call import BodyCall, jit_p
from jaxlite._src.export import codec

__all__ = ["DisabledSafetyCheck", "Exported", "export", "deserialize", "call_exported",
           "call_exported_p", "register_pytree_node_serialization",
           "register_namedtuple_serialization", "default_export_platform",
           "minimum_supported_calling_convention_version",
           "maximum_supported_calling_convention_version"]

# The calling-convention versions JAX 0.10.2 reads and writes (Exported keeps the number).
minimum_supported_calling_convention_version = 9
maximum_supported_calling_convention_version = 10


class DisabledSafetyCheck:
    """A safety check to skip on (de)serialization: ``DisabledSafetyCheck.platform()``
    lets an Exported run on a platform it was not exported for;
    ``DisabledSafetyCheck.custom_call(name)`` is accepted for compatibility (jaxlite's
    programs have no custom calls)."""

    def __init__(self, _impl: str):
        self._impl = _impl

    @classmethod
    def platform(cls) -> "DisabledSafetyCheck":
        """Allow calling on a platform other than the export platforms."""
        return cls("platform")

    @classmethod
    def custom_call(cls, target_name: str) -> "DisabledSafetyCheck":
        """Allow the custom call ``target_name`` (recorded; jaxlite has no custom calls)."""
        return cls(f"custom_call:{target_name}")

    def is_custom_call(self) -> str | None:
        """The custom call target this check allows, or None."""
        m = re.match(r"custom_call:(.+)$", self._impl)
        return m.group(1) if m else None

    def __str__(self):
        return self._impl

    __repr__ = __str__

    def __eq__(self, other):
        return isinstance(other, DisabledSafetyCheck) and self._impl == other._impl

    def __hash__(self):
        return hash(self._impl)


def default_export_platform() -> str:
    """The platform functions are exported for by default: ``'cpu'``."""
    return "cpu"


# --------------------------------------------------------------- pytree node serialization

serialization_registry: dict = {}     # type -> (serialized name, serialize_auxdata)
deserialization_registry: dict = {}   # serialized name -> (type, deserialize, from_children)


def register_pytree_node_serialization(nodetype, *, serialized_name: str,
                                       serialize_auxdata: Callable,
                                       deserialize_auxdata: Callable,
                                       from_children: Callable | None = None):
    """Register how pytree nodes of ``nodetype`` in an Exported's ``in_tree``/``out_tree``
    are serialized: ``serialize_auxdata(aux) -> bytes``, ``deserialize_auxdata(bytes)``,
    and ``from_children(aux, children)`` (default: the type's pytree unflatten function).
    Returns ``nodetype`` (usable as a class decorator)."""
    if nodetype in serialization_registry:
        raise ValueError(
            f"Duplicate serialization registration for type `{nodetype}`. Previous "
            f"registration was with serialized_name `{serialization_registry[nodetype][0]}`.")
    if serialized_name in deserialization_registry:
        raise ValueError(
            "Duplicate serialization registration for serialized_name "
            f"`{serialized_name}`. Previous registration was for type "
            f"`{deserialization_registry[serialized_name][0]}`.")
    if from_children is None:
        from jaxlite._src.tree_util.kinds import _CustomKind, _kinds
        kind = _kinds.get(nodetype)
        if not isinstance(kind, _CustomKind):
            raise ValueError("If `from_children` is not present, you must call first "
                             f"`jax.tree_util.register_pytree_node` for `{nodetype}`")
        from_children = kind.from_iter
    serialization_registry[nodetype] = (serialized_name, serialize_auxdata)
    deserialization_registry[serialized_name] = (nodetype, deserialize_auxdata, from_children)
    return nodetype


def register_namedtuple_serialization(nodetype, *, serialized_name: str):
    """Register a ``collections.namedtuple`` type for serialization in pytrees (its field
    names are stored and must match on deserialization). Returns ``nodetype``."""
    if not (isinstance(nodetype, type) and issubclass(nodetype, tuple) and
            isinstance(getattr(nodetype, "_fields", None), tuple)):
        raise ValueError("Use `jax.export.register_pytree_node_serialization` for types "
                         "other than `collections.namedtuple`.")

    def from_children(aux, children):
        return nodetype(**dict(zip(aux, children)))
    return register_pytree_node_serialization(
        nodetype, serialized_name=serialized_name,
        serialize_auxdata=lambda _: json.dumps(nodetype._fields).encode("utf-8"),
        deserialize_auxdata=lambda b: json.loads(b.decode("utf-8")),
        from_children=from_children)


def _ordered_dict_keys(keys):
    if all(isinstance(k, str) for k in keys):
        return json.dumps(list(keys)).encode("utf-8")
    raise NotImplementedError("Serialization of collections.OrderedDict is supported only "
                              f"when the keys are strings. Found keys: {keys}.")


register_pytree_node_serialization(
    collections.OrderedDict, serialized_name="collections.OrderedDict",
    serialize_auxdata=_ordered_dict_keys,
    deserialize_auxdata=lambda b: json.loads(b.decode("utf-8")),
    from_children=lambda keys, kids: collections.OrderedDict(zip(keys, kids)))


def _encode_treedef(t) -> Any:
    nd = t.node_data()
    kids = [_encode_treedef(c) for c in t.children()]
    if nd is None:
        return "*"
    typ, aux = nd
    if typ is type(None):
        return {"none": []}
    if typ is tuple:
        return {"tuple": kids}
    if typ is list:
        return {"list": kids}
    if typ is dict:
        for k in aux:
            if not isinstance(k, str):
                raise TypeError("Serialization is supported only for dictionaries with "
                                f"string keys. Found key {k} of type {type(k)}.")
        return {"dict": [list(aux), kids]}
    if typ in serialization_registry:
        name, ser = serialization_registry[typ]
        data = ser(aux)
        if not isinstance(data, (bytes, bytearray)):
            raise ValueError("The custom serialization function for `node_type` must "
                             f"return a `bytes` object. It returned a {type(data)}.")
        import base64
        return {"custom": [name, base64.b64encode(bytes(data)).decode("ascii"), kids]}
    raise ValueError(f"Cannot serialize PyTreeDef containing an unregistered type `{typ}`. "
                     "Use `export.register_pytree_node_serialization` or "
                     "`export.register_namedtuple_serialization`.")


class _Leaf:
    pass


def _decode_tree(x):
    if x == "*":
        return _Leaf()
    if not isinstance(x, dict) or len(x) != 1:
        raise ValueError("The serialized Exported is corrupted: bad pytree structure.")
    (k, p), = x.items()
    if k == "none":
        return None
    if k == "tuple":
        return tuple(_decode_tree(c) for c in p)
    if k == "list":
        return [_decode_tree(c) for c in p]
    if k == "dict":
        return dict(zip(p[0], [_decode_tree(c) for c in p[1]]))
    if k == "custom":
        import base64
        name, data, kids = p
        if name not in deserialization_registry:
            raise ValueError("Cannot deserialize a PyTreeDef containing an unregistered type "
                             f"`{name}`. Use `export.register_pytree_node_serialization` or "
                             "`export.register_namedtuple_serialization`.")
        _, deser, from_children = deserialization_registry[name]
        return from_children(deser(base64.b64decode(data)), [_decode_tree(c) for c in kids])
    raise ValueError(f"Cannot deserialize PyTreeDef with unknown kind: {k}")


def _decode_treedef(x):
    return tree_util.tree_structure(_decode_tree(x), is_leaf=lambda v: isinstance(v, _Leaf))


# ------------------------------------------------------------------------------- Exported


@dataclasses.dataclass(frozen=True)
class Exported:
    """A jitted function exported for given argument types: its calling convention
    (``in_tree``/``in_avals``, ``out_tree``/``out_avals``), the ``platforms`` it is for,
    and its program (jaxlite's jaxpr). Call it with :meth:`call`, save it with
    :meth:`serialize`."""
    fun_name: str
    in_tree: Any
    in_avals: tuple
    out_tree: Any
    out_avals: tuple
    in_shardings_hlo: tuple
    out_shardings_hlo: tuple
    nr_devices: int
    platforms: tuple
    ordered_effects: tuple
    unordered_effects: tuple
    disabled_safety_checks: Sequence[DisabledSafetyCheck]
    mlir_module_serialized: bytes
    calling_convention_version: int
    module_kept_var_idx: tuple
    uses_global_constants: bool
    _get_vjp: Callable | None
    _jaxpr: ClosedJaxpr | None = dataclasses.field(repr=False, compare=False)
    # for symbolic dimensions: the template program (polymorphic.PolyProgram)
    _poly: Any = dataclasses.field(default=None, repr=False, compare=False)

    def mlir_module(self, serialized: bool = True) -> str:
        """The exported program as text: jaxlite's jaxpr (jaxlite has no StableHLO); for
        symbolic dimensions, the program at sample sizes, headed by them."""
        if self._poly is not None:
            return self._poly.text()
        return self._jaxpr.pretty_print()

    def _program_for(self, avals) -> ClosedJaxpr:
        """The program to run for arguments of abstract values ``avals``."""
        if self._poly is None:
            return self._jaxpr
        return self._poly.at(_solve(self, avals))

    def __str__(self):
        return f"Exported(fun_name={self.fun_name}, ...)"

    def in_shardings_jax(self, mesh) -> tuple:
        """The input shardings for ``mesh``: None for every input (jaxlite exports for one
        device, as with unspecified shardings in JAX)."""
        return (None,) * len(self.in_avals)

    def out_shardings_jax(self, mesh) -> tuple:
        """The output shardings for ``mesh``: None for every output."""
        return (None,) * len(self.out_avals)

    def has_vjp(self) -> bool:
        """Whether this Exported can give its VJP (a deserialized one only up to the
        ``vjp_order`` it was serialized with)."""
        return self._get_vjp is not None

    def vjp(self) -> "Exported":
        """The exported VJP: a function of the flat primal inputs followed by one cotangent
        per flat output, returning the cotangents of the flat inputs."""
        if self._get_vjp is None:
            raise ValueError("No VJP is available")
        return self._get_vjp(self)

    def serialize(self, vjp_order: int = 0) -> bytearray:
        """The bytes of this Exported in jaxlite's format, with ``vjp_order`` levels of
        VJPs (``vjp_order=1`` lets ``jax.grad`` differentiate the deserialized function)."""
        return codec.dumps(_payload(self, vjp_order))

    def call(self, *args, **kwargs):
        """Call the exported function (eagerly or inside a traced program) with arguments
        of the exported pytree structure and types; differentiable through its VJP."""
        return call_exported(self)(*args, **kwargs)


def _payload(exp: Exported, vjp_order: int) -> dict:
    if not isinstance(vjp_order, int) or vjp_order < 0:
        raise ValueError(f"vjp_order must be a non-negative integer, got {vjp_order!r}")
    vjp = None
    if vjp_order > 0:
        vjp = _payload(exp.vjp(), vjp_order - 1)
    return {
        "fun_name": exp.fun_name,
        "in_tree": _encode_treedef(exp.in_tree),
        "out_tree": _encode_treedef(exp.out_tree),
        "in_avals": [_encode_aval(a) for a in exp.in_avals],
        "out_avals": [_encode_aval(a) for a in exp.out_avals],
        "nr_devices": exp.nr_devices,
        "platforms": list(exp.platforms),
        "disabled_checks": [str(c) for c in exp.disabled_safety_checks],
        "calling_convention_version": exp.calling_convention_version,
        "module_kept_var_idx": list(exp.module_kept_var_idx),
        "module": None if exp._poly is not None else codec.encode_closed_jaxpr(exp._jaxpr),
        "poly": None if exp._poly is None else {"template": exp._poly.template,
                                                "names": list(exp._poly.names)},
        "vjp": vjp,
    }


def _from_payload(p: dict) -> Exported:
    try:
        poly = p.get("poly")
        if poly is not None:
            from jaxlite._src.export.polymorphic import PolyProgram
            poly = PolyProgram(poly["template"], [str(n) for n in poly["names"]])
            closed = None
        else:
            closed = codec.decode_closed_jaxpr(p["module"])
        vjp = p.get("vjp")
        exp = Exported(
            fun_name=str(p["fun_name"]),
            in_tree=_decode_treedef(p["in_tree"]),
            in_avals=tuple(_decode_aval(a) for a in p["in_avals"]),
            out_tree=_decode_treedef(p["out_tree"]),
            out_avals=tuple(_decode_aval(a) for a in p["out_avals"]),
            in_shardings_hlo=(None,) * len(p["in_avals"]),
            out_shardings_hlo=(None,) * len(p["out_avals"]),
            nr_devices=int(p["nr_devices"]),
            platforms=tuple(str(s) for s in p["platforms"]),
            ordered_effects=(), unordered_effects=(),
            disabled_safety_checks=tuple(DisabledSafetyCheck(str(c))
                                         for c in p["disabled_checks"]),
            mlir_module_serialized=bytes(codec.dumps({"module": p["module"],
                                                      "poly": p.get("poly")})),
            calling_convention_version=int(p["calling_convention_version"]),
            module_kept_var_idx=tuple(int(i) for i in p["module_kept_var_idx"]),
            uses_global_constants=poly is not None,
            _get_vjp=None if vjp is None else (lambda _e, _v=vjp: _from_payload(_v)),
            _jaxpr=closed, _poly=poly)
    except (KeyError, TypeError, IndexError) as e:
        raise ValueError(f"The serialized Exported is corrupted: {type(e).__name__}: {e}") \
            from None
    if closed is not None and (
            [a.str_short() for a in closed.in_avals] != [a.str_short() for a in exp.in_avals]
            or len(closed.out_avals) != len(exp.out_avals)):
        raise ValueError("The serialized Exported is corrupted: its program does not match "
                         "its calling convention.")
    return exp


def deserialize(blob) -> Exported:
    """The Exported saved by :meth:`Exported.serialize` (bytes or bytearray)."""
    return _from_payload(codec.loads(blob))


# --------------------------------------------------------------------------------- export

# Primitives that call back into Python: their functions cannot be serialized (JAX refuses
# host callbacks in exported code too).
_CALLBACKS = {"pure_callback", "io_callback", "debug_callback", "debug_print"}


def _exportable(closed: ClosedJaxpr) -> ClosedJaxpr:
    """``closed`` with nested jit calls and custom-derivative/remat wrappers inlined at every
    depth (their rules hold Python functions; lowering keeps only the primal program)."""
    closed = inline_calls(closed)
    eqns = []
    changed = False
    for e in closed.jaxpr.eqns:
        if e.primitive.name in _CALLBACKS:
            raise NotImplementedError("serialization of host_callbacks is not yet implemented")
        params = e.params
        new = {}
        for k, v in params.items():
            if isinstance(v, ClosedJaxpr):
                new[k] = _exportable(v)
            elif type(v) is tuple and v and all(isinstance(x, ClosedJaxpr) for x in v):
                new[k] = tuple(_exportable(x) for x in v)
        if new and any(new[k] is not params[k] for k in new):
            e = e.replace(params=dict(params, **new))
            changed = True
        eqns.append(e)
    if not changed:
        return closed
    return ClosedJaxpr(closed.jaxpr.replace(eqns=eqns), closed.consts)


def _used_inputs(closed: ClosedJaxpr) -> tuple:
    from jaxlite._src.core.ir import Var
    used = set()
    for e in closed.jaxpr.eqns:
        used.update(a for a in e.invars if isinstance(a, Var))
    used.update(a for a in closed.jaxpr.outvars if isinstance(a, Var))
    return tuple(i for i, v in enumerate(closed.jaxpr.invars) if v in used)


def export(fun_jit, *, platforms: Sequence[str] | None = None,
           disabled_checks: Sequence[DisabledSafetyCheck] = (),
           _override_lowering_rules=None) -> Callable[..., Exported]:
    """Export a jitted function: ``export(jax.jit(f))(*specs, **kw_specs)`` traces ``f`` for
    arguments of those types (ShapeDtypeStructs or arrays) and returns an :class:`Exported`.
    ``platforms`` is recorded (default ``('cpu',)``); calling on another platform raises
    unless ``DisabledSafetyCheck.platform()`` is in ``disabled_checks``."""
    from jaxlite._src.api.jit import JitWrapped
    if not isinstance(fun_jit, JitWrapped):
        raise ValueError(f"Function to be exported must be the result of `jit` but is: "
                         f"{fun_jit}")
    if _override_lowering_rules is not None:
        raise NotImplementedError("_override_lowering_rules: jaxlite exports jaxprs, which "
                                  "have no lowering rules to override.")
    plats = tuple(platforms) if platforms is not None else (default_export_platform(),)
    checks = tuple(disabled_checks)
    for c in checks:
        if not isinstance(c, DisabledSafetyCheck):
            raise ValueError(f"disabled_checks must be DisabledSafetyCheck values, got {c!r}")

    def do_export(*args_specs, **kwargs_specs) -> Exported:
        from jaxlite._src.export.shape_poly import concrete_specs, dim_names, has_symbolic
        if has_symbolic((args_specs, kwargs_specs)):
            def trace_at(env):
                a, k = concrete_specs((args_specs, kwargs_specs), env)
                t = fun_jit.trace(*a, **k)
                return t.jaxpr, t.in_tree, t.out_tree
            return _export_poly(fun_jit._name, trace_at,
                                dim_names((args_specs, kwargs_specs)), plats, checks)
        traced = fun_jit.trace(*args_specs, **kwargs_specs)
        return exported_from_jaxpr(fun_jit._name, traced.jaxpr, traced.in_tree,
                                   traced.out_tree, plats, checks)
    return do_export


def exported_from_jaxpr(name, closed, in_tree, out_tree, platforms, checks) -> Exported:
    """The Exported of a traced program (its VJP exported on demand, as JAX's)."""
    from jaxlite._src.config import config
    version = config.jax_export_calling_convention_version
    if not (minimum_supported_calling_convention_version <= version <=
            maximum_supported_calling_convention_version):
        raise ValueError(
            f"The requested export calling convention version {version} is outside the "
            f"range of supported versions [{minimum_supported_calling_convention_version}"
            f"..{maximum_supported_calling_convention_version}]")
    prog = _exportable(closed)
    codec.check_serializable(prog)

    def get_vjp(primal: Exported) -> Exported:
        return _export_vjp(primal, closed)

    return Exported(
        fun_name=name, in_tree=in_tree, in_avals=tuple(closed.in_avals), out_tree=out_tree,
        out_avals=tuple(closed.out_avals),
        in_shardings_hlo=(None,) * len(closed.in_avals),
        out_shardings_hlo=(None,) * len(closed.out_avals),
        nr_devices=1, platforms=tuple(platforms), ordered_effects=(), unordered_effects=(),
        disabled_safety_checks=tuple(checks),
        mlir_module_serialized=bytes(codec.dumps({"module":
                                                  codec.encode_closed_jaxpr(prog)})),
        calling_convention_version=version,
        module_kept_var_idx=_used_inputs(prog), uses_global_constants=False,
        _get_vjp=get_vjp, _jaxpr=prog)


def _vjp_traced(closed: ClosedJaxpr):
    """(jaxpr, in_tree, out_tree) of ``(*primals, *out_cts) -> in_cts`` of the traced
    program (with its custom derivative rules: the VJP is taken of the original jaxpr, not
    the inlined one)."""
    from jaxlite._src.api.ad import vjp
    from jaxlite._src.api.jit import jit
    from jaxlite._src.core.avals import ShapeDtypeStruct
    from jaxlite._src.interpreters.eval import jaxpr_as_fun
    from jaxlite._src.interpreters.ad import tangent_aval
    n_in = len(closed.in_avals)
    fun = jaxpr_as_fun(closed)

    def fun_vjp_jax(*args_and_cts):
        primals, cts = args_and_cts[:n_in], args_and_cts[n_in:]
        _, pullback = vjp(lambda *xs: list(fun(*xs)), *primals)
        return tuple(pullback(list(cts)))

    specs = [ShapeDtypeStruct(a.shape, a.dtype, weak_type=a.weak_type)
             for a in closed.in_avals] + \
            [ShapeDtypeStruct(t.shape, t.dtype, weak_type=t.weak_type)
             for t in (tangent_aval(a) for a in closed.out_avals)]
    t = jit(fun_vjp_jax).trace(*specs)
    return t.jaxpr, t.in_tree, t.out_tree


def _export_vjp(primal: Exported, closed: ClosedJaxpr) -> Exported:
    """The exported VJP of a traced program."""
    vj, in_tree, out_tree = _vjp_traced(closed)
    return exported_from_jaxpr("fun_vjp_jax", vj, in_tree, out_tree, primal.platforms,
                               primal.disabled_safety_checks)


def _export_poly(name, trace_at, names, platforms, checks) -> Exported:
    """The Exported of a program traced by ``trace_at(env)`` (-> jaxpr, in_tree, out_tree)
    for sizes ``env`` of the dimension variables ``names`` (polymorphic.py)."""
    from jaxlite._src.export import polymorphic as pm
    traces = {}

    def traced(env):
        k = tuple(sorted(env.items()))
        if k not in traces:
            traces[k] = trace_at(env)
        return traces[k]

    def encode_at(env):
        prog = _exportable(traced(env)[0])
        return codec.encode_closed_jaxpr(prog)

    template = pm.build_template(encode_at, names)
    base, moved, _ = pm.envs(names)
    closeds = [traced(e)[0] for e in [base] + moved]
    in_avals = pm.fit_avals([c.in_avals for c in closeds], list(names), base)
    out_avals = pm.fit_avals([c.out_avals for c in closeds], list(names), base)
    first = exported_from_jaxpr(name, closeds[0], traced(base)[1], traced(base)[2],
                                platforms, checks)

    def get_vjp(primal):
        return _export_poly("fun_vjp_jax", lambda env: _vjp_traced(traced(env)[0]), names,
                            platforms, checks)
    return dataclasses.replace(
        first, in_avals=tuple(in_avals), out_avals=tuple(out_avals), _jaxpr=None,
        _poly=pm.PolyProgram(template, names), uses_global_constants=True,
        mlir_module_serialized=bytes(codec.dumps({"poly": {"template": template,
                                                           "names": list(names)}})),
        _get_vjp=get_vjp)


def _encode_aval(a):
    from jaxlite._src.export.shape_poly import is_symbolic_dim
    if not any(is_symbolic_dim(d) for d in a.shape):
        return codec.encode_aval(a)
    dims = [{"e": [[n, c] for n, c in d.terms], "c": d.const} if is_symbolic_dim(d) else int(d)
            for d in a.shape]
    return [dims, codec._dtype_name(a.dtype), bool(a.weak_type)]


def _decode_aval(x):
    from jaxlite._src.export.shape_poly import _DimExpr
    shape, name, weak = x
    if all(isinstance(d, int) for d in shape):
        return codec.decode_aval(x)
    dims = tuple(_DimExpr(dict(d["e"]), d["c"]) if isinstance(d, dict) else int(d)
                 for d in shape)
    return ShapedArray(dims, codec._dtype_from_name(name), bool(weak))


def _solve(exp: Exported, avals) -> dict:
    """The values of the dimension variables for arguments of abstract values ``avals``
    (each variable must appear alone as a dimension of some argument)."""
    from jaxlite._src.export.shape_poly import is_symbolic_dim
    env = {}
    for i, (e, a) in enumerate(zip(exp.in_avals, avals)):
        if len(e.shape) != len(a.shape):
            raise ValueError(f"Rank mismatch for {_arg_desc(exp.in_tree, i)}: "
                             f"expected {e.shape} and called with {a.shape}")
        for d, (ed, ad) in enumerate(zip(e.shape, a.shape)):
            if is_symbolic_dim(ed) and ed.const == 0 and len(ed.terms) == 1 and \
                    ed.terms[0][1] == 1:
                n = ed.terms[0][0]
                if n in env and env[n] != ad:
                    raise ValueError(
                        f"Found inconsistency between dimension size "
                        f"{_arg_desc(exp.in_tree, i, d)} (= {ad}) and the specification "
                        f"'{n}' (= {env[n]}) for function '{exp.fun_name}'.")
                if ad < 1:
                    raise ValueError(f"Dimension variable '{n}' must have integer value >= 1. "
                                     f"Found {ad} for {_arg_desc(exp.in_tree, i, d)}.")
                env[n] = ad
    for i, (e, a) in enumerate(zip(exp.in_avals, avals)):
        for d, (ed, ad) in enumerate(zip(e.shape, a.shape)):
            if not is_symbolic_dim(ed):
                if ed != ad:
                    raise ValueError(
                        f"Shape mismatch for {_arg_desc(exp.in_tree, i, d)} (expected same "
                        f"constant): expected {e.shape} and called with {a.shape}")
                continue
            if is_symbolic_dim(ed):
                missing = [n for n, _ in ed.terms if n not in env]
                if missing:
                    raise ValueError(f"Cannot solve for the dimension variables {missing} of "
                                     f"'{exp.fun_name}': jaxlite needs each variable to be a "
                                     "whole dimension of some argument.")
                want = ed.evaluate(env)
            else:
                want = ed
            if want != ad:
                raise ValueError(f"Shape mismatch for {_arg_desc(exp.in_tree, i, d)}: "
                                 f"expected {ed} (= {want}) and called with {ad}")
    return env


# ---------------------------------------------------------------------------------- call


def _arg_desc(in_tree, flat_idx, dim_idx=None) -> str:
    paths = tree_util.tree_flatten_with_path(in_tree.unflatten([0] * in_tree.num_leaves))[0]
    path = paths[flat_idx][0]
    head = "args" if path[0] == tree_util.SequenceKey(0) else "kwargs"
    s = head + tree_util.keystr(tuple(path[1:]))
    return s if dim_idx is None else f"{s}.shape[{dim_idx}]"


def _check_args(avals, expected, in_tree):
    """Raise JAX's ValueError when an argument's rank, dtype or a dimension differs from
    the exported types."""
    for i, (e, a) in enumerate(zip(expected, avals)):
        if len(e.shape) != len(a.shape):
            raise ValueError(f"Rank mismatch for {_arg_desc(in_tree, i)}: "
                             f"expected {e.shape} and called with {a.shape}")
        if e.dtype != a.dtype:
            raise ValueError(f"Dtype mismatch for {_arg_desc(in_tree, i)}: "
                             f"expected {e.dtype} and called with {a.dtype}")
        for d, (ed, ad) in enumerate(zip(e.shape, a.shape)):
            if ed != ad:
                raise ValueError(
                    f"Shape mismatch for {_arg_desc(in_tree, i, d)} (expected "
                    f"same constant): expected {e.shape} and called with {a.shape}")


class CallExported(BodyCall):
    """Call of an Exported's program (JAX's ``call_exported``): prints as
    ``call_exported[exported=Exported(fun_name=f, ...)]``; its hidden ``jaxpr`` parameter
    is the program, which the compiler inlines and vmap batches. It is differentiated
    through the Exported's VJP (``exp.call`` wraps it in ``custom_vjp``)."""
    name = "call_exported"
    hidden_params = ("jaxpr",)

    def abstract_eval(self, *avals, exported, jaxpr):
        # (checked against the program's avals: the compiler's physical pass hands this
        # rule the data of key arrays, with the program rewritten to match)
        _check_args(avals, jaxpr.in_avals, exported.in_tree)
        return list(jaxpr.out_avals)

    def eager(self, args, params):
        from jaxlite._src.core.avals import aval_of_value
        _check_args([aval_of_value(a) for a in args], params["jaxpr"].in_avals,
                    params["exported"].in_tree)
        return super().eager(args, params)

    def eager_out_avals(self, vals, params):
        return list(params["jaxpr"].out_avals)

    def impl(self, *args, exported, jaxpr):
        return jit_p.compiled(jaxpr, exported.fun_name)(*args)

    def jvp(self, primals, tangents, **params):
        raise TypeError("call_exported is differentiated in reverse mode only, through the "
                        "VJP its Exported carries: differentiate `exp.call(...)` with "
                        "jax.grad/jax.vjp (forward mode is not available, as in JAX).")

    def batch(self, size, args, dims, exported, jaxpr):
        from jaxlite._src.interpreters.batching import batch_jaxpr_keep_dims
        closed, out_dims = batch_jaxpr_keep_dims(jaxpr, size, dims)
        outs = jit_p.bind(*args, jaxpr=closed, name=exported.fun_name,
                          donated_invars=(False,) * len(args))
        return outs, out_dims

    def pp_params(self, params):
        return [("exported", params["exported"])]


call_exported_p = CallExported()


def _fix_float0(ct, aval):
    if aval.dtype != dtypes.float0:
        return ct
    return np.zeros(np.shape(ct), dtypes.float0)


def call_exported(exported: Exported) -> Callable:
    """A function calling ``exported`` with its pytree calling convention (``exp.call``)."""
    from jaxlite._src.api.custom_derivatives import custom_vjp
    if not isinstance(exported, Exported):
        raise ValueError(f"The exported argument must be an export.Exported. "
                         f"Found {exported}.")

    @custom_vjp
    def f_flat(*args_flat):
        from jaxlite._src.core.avals import aval_of_value
        prog = exported._program_for([aval_of_value(a) for a in args_flat])
        return tuple(call_exported_p.bind(*args_flat, exported=exported, jaxpr=prog))

    def f_flat_vjp_fwd(*args_flat):
        return f_flat(*args_flat), args_flat

    def f_flat_vjp_bwd(args_flat, cts):
        exp_vjp = exported.vjp()
        cts = [_fix_float0(c, a) for c, a in zip(cts, exp_vjp.in_avals[len(args_flat):])]
        return tuple(call_exported(exp_vjp)(*args_flat, *cts))

    f_flat.defvjp(f_flat_vjp_fwd, f_flat_vjp_bwd)

    def f_imported(*args, **kwargs):
        if "cpu" not in exported.platforms and \
                DisabledSafetyCheck.platform() not in exported.disabled_safety_checks:
            raise ValueError(f"Function '{exported.fun_name}' was exported for platforms "
                             f"'{exported.platforms}' but it is used on '('cpu',)'.")
        args_flat, in_tree = tree_util.tree_flatten((args, kwargs))
        if in_tree != exported.in_tree:
            from jaxlite._src.tree_util.errors import equality_errors_pytreedef
            diffs = "".join(
                f"   - {_path_str(path)} is a {t1} in the invocation and a {t2} when "
                f"exported, so {why}.\n"
                for path, t1, t2, why in equality_errors_pytreedef(in_tree, exported.in_tree))
            raise ValueError(
                "The invocation args and kwargs must have the same pytree structure as when "
                f"the function '{exported.fun_name}' was exported, but they have the "
                "following structural differences:\n" + diffs)
        res = f_flat(*args_flat)
        return exported.out_tree.unflatten(list(res))
    return f_imported


def _path_str(path) -> str:
    head = "args" if path[0] == tree_util.SequenceKey(0) else "kwargs"
    return head + tree_util.keystr(tuple(path[1:]))
