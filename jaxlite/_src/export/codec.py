"""jaxlite's serialization format for exported functions: a jaxpr as versioned, tagged JSON.

The format is data only. Reading it never runs code from the blob: primitives are looked up
by name among jaxlite's registered primitives, arrays are rebuilt from their raw bytes with
NumPy, and the only classes instantiated are value types of jaxlite itself (enums, named
tuples and frozen dataclasses defined under ``jaxlite._src``, such as gather dimension
numbers) and pytree node types registered with ``register_pytree_node_serialization``.

Layout of a blob: the 16-byte magic ``b"jaxlite-export\\n\\0"`` followed by UTF-8 JSON
``{"format": FORMAT_VERSION, ...}``. A jaxpr is encoded with variables numbered per jaxpr:

    {"constvars": [[id, aval]...], "invars": [[id, aval]...], "outvars": [atom...],
     "eqns": [{"p": name, "in": [atom...], "out": [[id, aval]...], "params": {k: value}}]}

where an atom is ``{"v": id}`` or ``{"lit": value, "aval": aval}``, an aval is
``[shape, dtype name, weak_type]``, and other values are JSON scalars or one-key objects
tagged with their type (``{"t": [...]}`` for a tuple, ``{"nd": [dtype, shape, base64]}`` for
an array, ``{"cj": ...}`` for a ClosedJaxpr, ...).
"""
from __future__ import annotations

import base64
import dataclasses
import enum
import importlib
import json

import numpy as np

from jaxlite._src.core import dtypes
from jaxlite._src.core.avals import ShapedArray
from jaxlite._src.core.ir import ClosedJaxpr, DropVar, Eqn, Jaxpr, Literal, Var
from jaxlite._src.core.primitive import Primitive, registry
from jaxlite._src.runtime.array import ArrayImpl

__all__ = ["MAGIC", "FORMAT_VERSION", "SerializationError", "encode_closed_jaxpr",
           "decode_closed_jaxpr", "encode_aval", "decode_aval", "dumps", "loads",
           "check_serializable"]

MAGIC = b"jaxlite-export\n\0"
# Version 1: the first format (November 2026).
FORMAT_VERSION = 1


class SerializationError(ValueError):
    """A value in an exported program cannot be written in (or read from) the format."""


# ------------------------------------------------------------------------------ dtypes


def _dtype_name(dt) -> str:
    if dtypes.is_extended(dt):
        name = str(dt.name)
        if name.startswith("key<"):
            return name
        raise SerializationError(f"Cannot serialize values of the extended dtype {dt}.")
    if dt == dtypes.float0:
        return "float0"
    return np.dtype(dt).name


def _dtype_from_name(name: str):
    if name == "float0":
        return dtypes.float0
    if name.startswith("key<") and name.endswith(">"):
        from jaxlite._src.random import prng
        tag = name[4:-1]
        for impl in prng.prngs.values():
            if impl.tag == tag:
                return prng.KeyTy(impl)
        raise SerializationError(f"Unknown PRNG implementation in key dtype {name}.")
    try:
        return np.dtype(name)
    except TypeError:
        pass
    try:
        return np.dtype(getattr(dtypes, name))
    except (AttributeError, TypeError) as e:
        raise SerializationError(f"Unknown dtype {name!r} in serialized data.") from e


def encode_aval(a) -> list:
    """``[shape, dtype name, weak_type]`` of an abstract value."""
    if not isinstance(a, ShapedArray):
        raise SerializationError(f"Cannot serialize the abstract value {a!r}.")
    shape = []
    for d in a.shape:
        if not isinstance(d, (int, np.integer)):
            raise SerializationError(f"Cannot serialize the symbolic dimension {d} of {a}.")
        shape.append(int(d))
    return [shape, _dtype_name(a.dtype), bool(a.weak_type)]


def decode_aval(x) -> ShapedArray:
    shape, name, weak = x
    return ShapedArray(tuple(int(d) for d in shape), _dtype_from_name(name), bool(weak))


# ------------------------------------------------------------------------------ arrays


def _encode_array(v) -> dict:
    if isinstance(v, ArrayImpl):
        if dtypes.is_extended(v.dtype):
            return {"key": [_dtype_name(v.dtype), _encode_array(v.dtype.to_physical(v))]}
        v = v._value
    a = np.asarray(v)
    if a.dtype == object:
        raise SerializationError(f"Cannot serialize an array of Python objects: {v!r}")
    if not a.flags.c_contiguous:
        a = a.copy(order="C")   # (np.ascontiguousarray would make a 0-d array 1-d)
    return {"nd": [a.dtype.name if a.dtype != dtypes.float0 else "float0", list(a.shape),
                   base64.b64encode(a.tobytes()).decode("ascii")]}


def _decode_array(x):
    name, shape, data = x
    dt = _dtype_from_name(name)
    raw = base64.b64decode(data.encode("ascii"), validate=True)
    n = int(np.prod(shape, dtype=np.int64))
    if len(raw) != n * np.dtype(dt).itemsize:
        raise SerializationError("Corrupted array data in serialized module.")
    return np.frombuffer(raw, dtype=dt).reshape(shape).copy()


# ------------------------------------------------------------------------------ values

_SAFE_PREFIX = "jaxlite._src."


def _class_ref(cls) -> list:
    mod = cls.__module__
    if not mod.startswith(_SAFE_PREFIX):
        raise SerializationError(
            f"Cannot serialize a value of type {cls.__module__}.{cls.__qualname__}: only "
            "jaxlite's own parameter types can be written.")
    return [mod, cls.__qualname__]


def _resolve_class(ref, kind):
    mod, qual = ref
    if not (isinstance(mod, str) and mod.startswith(_SAFE_PREFIX)) or not isinstance(qual, str):
        raise SerializationError(f"Refusing to load the type {mod}.{qual}: serialized modules "
                                 "may only name jaxlite's own parameter types.")
    obj = importlib.import_module(mod)
    for part in qual.split("."):
        obj = getattr(obj, part, None)
    ok = isinstance(obj, type) and (
        (kind == "enum" and issubclass(obj, enum.Enum)) or
        (kind == "nt" and issubclass(obj, tuple) and hasattr(obj, "_fields")) or
        (kind == "dc" and dataclasses.is_dataclass(obj)))
    if not ok:
        raise SerializationError(f"Serialized data names {mod}.{qual}, which is not a "
                                 f"jaxlite parameter type of kind {kind}.")
    return obj


def _is_prng_impl(v) -> bool:
    """Whether ``v`` is a registered PRNG implementation (written by name: it holds the
    implementation's functions)."""
    if type(v).__name__ != "PRNGImpl":
        return False
    from jaxlite._src.random import prng
    return prng.prngs.get(getattr(v, "name", None)) is v


class _Encoder:
    def __init__(self, where):
        self.where = where   # (primitive name, parameter name) for error messages

    def value(self, v):
        t = type(v)
        if v is None or t is bool or t is str:
            return v
        if t is int:
            return {"i": str(v)} if abs(v) >= 2 ** 53 else v
        if t is float:
            return {"f": float.hex(v)}
        if t is complex:
            return {"c": [float.hex(v.real), float.hex(v.imag)]}
        if t is tuple:
            return {"t": [self.value(x) for x in v]}
        if t is list:
            return {"l": [self.value(x) for x in v]}
        if t is dict:
            return {"d": [[self.value(k), self.value(x)] for k, x in v.items()]}
        if t is frozenset:
            return {"fs": [self.value(x) for x in sorted(v, key=repr)]}
        if t is slice:
            return {"sl": [self.value(v.start), self.value(v.stop), self.value(v.step)]}
        if isinstance(v, ClosedJaxpr):
            return {"cj": encode_closed_jaxpr(v)}
        if isinstance(v, Jaxpr):
            return {"j": _encode_jaxpr(v)}
        if isinstance(v, ShapedArray):
            return {"aval": encode_aval(v)}
        if isinstance(v, Primitive):
            if registry.get(v.name) is not v:
                raise SerializationError(f"Cannot serialize the primitive {v.name}: it is not "
                                         "one of jaxlite's built-in primitives.")
            return {"prim": v.name}
        if _is_prng_impl(v):
            return {"prng": v.name}
        if isinstance(v, enum.Enum):
            return {"enum": _class_ref(t) + [v.name]}
        if isinstance(v, tuple) and hasattr(t, "_fields"):
            return {"nt": _class_ref(t) + [[self.value(x) for x in v]]}
        if dataclasses.is_dataclass(v) and not isinstance(v, type):
            ref = _class_ref(t)
            return {"dc": ref + [{f.name: self.value(getattr(v, f.name))
                                  for f in dataclasses.fields(v)}]}
        if isinstance(v, (np.dtype,)) or (isinstance(v, type) and issubclass(v, np.generic)):
            return {"dt": _dtype_name(np.dtype(v))}
        if dtypes.is_extended(v):
            return {"dt": _dtype_name(v)}
        if isinstance(v, (np.ndarray, np.generic, ArrayImpl)):
            return _encode_array(v)
        prim, param = self.where
        raise SerializationError(
            f"Cannot serialize the parameter {param}={v!r} of the primitive {prim}: values "
            f"of type {t.__name__} have no serialized form (Python functions and other "
            "objects cannot be exported).")


def _decode_value(x):
    if x is None or isinstance(x, (bool, str, int)):
        return x
    if isinstance(x, float):
        return x
    if not isinstance(x, dict) or len(x) != 1:
        raise SerializationError(f"Malformed value in serialized module: {x!r}")
    (tag, p), = x.items()
    if tag == "i":
        return int(p)
    if tag == "f":
        return float.fromhex(p)
    if tag == "c":
        return complex(float.fromhex(p[0]), float.fromhex(p[1]))
    if tag == "t":
        return tuple(_decode_value(v) for v in p)
    if tag == "l":
        return [_decode_value(v) for v in p]
    if tag == "d":
        return {_decode_value(k): _decode_value(v) for k, v in p}
    if tag == "fs":
        return frozenset(_decode_value(v) for v in p)
    if tag == "sl":
        return slice(*[_decode_value(v) for v in p])
    if tag == "cj":
        return decode_closed_jaxpr(p)
    if tag == "j":
        return _decode_jaxpr(p)
    if tag == "aval":
        return decode_aval(p)
    if tag == "prim":
        if p not in registry:
            raise SerializationError(f"Unknown primitive {p!r} in serialized module.")
        return registry[p]
    if tag == "prng":
        from jaxlite._src.random import prng
        if p not in prng.prngs:
            raise SerializationError(f"Unknown PRNG implementation {p!r} in serialized module.")
        return prng.prngs[p]
    if tag == "enum":
        return _resolve_class(p[:2], "enum")[p[2]]
    if tag == "nt":
        return _resolve_class(p[:2], "nt")(*[_decode_value(v) for v in p[2]])
    if tag == "dc":
        return _resolve_class(p[:2], "dc")(**{k: _decode_value(v) for k, v in p[2].items()})
    if tag == "dt":
        return _dtype_from_name(p)
    if tag == "nd":
        return _decode_array(p)
    if tag == "key":
        dt = _dtype_from_name(p[0])
        return dt.from_physical(ArrayImpl(_decode_array(p[1]["nd"])))
    raise SerializationError(f"Unknown value tag {tag!r} in serialized module.")


# ------------------------------------------------------------------------------ jaxprs


def _encode_jaxpr(j: Jaxpr) -> dict:
    ids: dict = {}

    def define(v):
        ids[v] = len(ids)
        return [ids[v], encode_aval(v.aval)]

    def atom(a):
        if isinstance(a, Literal):
            return {"lit": _Encoder(("literal", "value")).value(
                a.val if not isinstance(a.val, (np.ndarray, np.generic)) else a.val),
                "aval": encode_aval(a.aval),
                "py": _Encoder(("literal", "py")).value(a.py)}
        if a not in ids:
            raise SerializationError("Malformed jaxpr: a variable is read before it is bound.")
        return {"v": ids[a]}

    out = {"constvars": [define(v) for v in j.constvars],
           "invars": [define(v) for v in j.invars], "eqns": []}
    for e in j.eqns:
        prim = e.primitive
        if registry.get(prim.name) is not prim:
            raise SerializationError(
                f"Cannot serialize the primitive {prim.name}: only jaxlite's built-in "
                "primitives can be exported (a primitive defined with jax.extend.core."
                "Primitive has no serialized form).")
        params = {k: _Encoder((prim.name, k)).value(v) for k, v in e.params.items()}
        ins = [atom(a) for a in e.invars]
        outs = [[None, encode_aval(v.aval)] if isinstance(v, DropVar) else define(v)
                for v in e.outvars]
        out["eqns"].append({"p": prim.name, "in": ins, "out": outs, "params": params})
    out["outvars"] = [atom(a) for a in j.outvars]
    return out


def _decode_jaxpr(d) -> Jaxpr:
    vars_: dict = {}

    def define(x):
        i, av = x
        aval = decode_aval(av)
        if i is None:
            return DropVar(aval)
        v = vars_[i] = Var(aval)
        return v

    def atom(x):
        if "v" in x:
            try:
                return vars_[x["v"]]
            except KeyError:
                raise SerializationError("Malformed jaxpr in serialized module.") from None
        val = _decode_value(x["lit"])
        aval = decode_aval(x["aval"])
        return Literal(val, aval, _decode_value(x.get("py")))

    constvars = [define(x) for x in d["constvars"]]
    invars = [define(x) for x in d["invars"]]
    eqns = []
    for e in d["eqns"]:
        name = e["p"]
        prim = registry.get(name)
        if prim is None:
            raise SerializationError(f"The serialized module uses the primitive {name!r}, "
                                     "which this version of jaxlite does not have.")
        ins = [atom(a) for a in e["in"]]
        params = {k: _decode_value(v) for k, v in e["params"].items()}
        outs = [define(x) for x in e["out"]]
        eqns.append(Eqn(prim, ins, params, outs))
    outvars = [atom(a) for a in d["outvars"]]
    return Jaxpr(constvars, invars, eqns, outvars)


def encode_closed_jaxpr(c: ClosedJaxpr) -> dict:
    """The JSON-able form of a ClosedJaxpr (its jaxpr and its constants' bytes)."""
    return {"jaxpr": _encode_jaxpr(c.jaxpr), "consts": [_encode_array(v) for v in c.consts]}


def decode_closed_jaxpr(d) -> ClosedJaxpr:
    """The ClosedJaxpr encoded by :func:`encode_closed_jaxpr`."""
    consts = [_decode_value(c) for c in d["consts"]]
    return ClosedJaxpr(_decode_jaxpr(d["jaxpr"]), consts)


def check_serializable(closed: ClosedJaxpr) -> None:
    """Raise SerializationError naming the first equation that cannot be written."""
    encode_closed_jaxpr(closed)


def dumps(payload: dict) -> bytearray:
    """The blob for a JSON-able payload (magic, then JSON with the format version)."""
    body = json.dumps(dict(payload, format=FORMAT_VERSION), separators=(",", ":"),
                      allow_nan=False)
    return bytearray(MAGIC + body.encode("utf-8"))


def loads(blob) -> dict:
    """The payload of a blob written by :func:`dumps` (after checking magic and version)."""
    blob = bytes(blob)
    if not blob.startswith(MAGIC):
        raise ValueError("The data is not a serialized jaxlite Exported (it does not start "
                         "with jaxlite's export header). Serialized modules of JAX (StableHLO "
                         "flatbuffers) cannot be read by jaxlite.")
    try:
        payload = json.loads(blob[len(MAGIC):].decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ValueError(f"The serialized Exported is corrupted: {e}") from None
    version = payload.get("format") if isinstance(payload, dict) else None
    if not isinstance(version, int) or version < 1:
        raise ValueError("The serialized Exported is corrupted: no format version.")
    if version > FORMAT_VERSION:
        raise ValueError(f"The serialized Exported uses format version {version}, newer than "
                         f"this jaxlite reads (up to {FORMAT_VERSION}); upgrade jaxlite.")
    return payload
