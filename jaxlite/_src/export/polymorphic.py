"""Exporting for symbolic dimensions (``jax.export`` with ``symbolic_shape("b, 4")``).

jaxlite's jaxprs have concrete shapes, so a shape-polymorphic program is found by tracing:
the function is traced at a base size for every dimension variable, once more with each
variable moved alone, and the serialized forms of these programs (codec.py's JSON) are
compared. They must agree everywhere except in integers (shapes, sizes, slice bounds) and
scalar constants that move as affine functions of the variables (``b``, ``2*b + 1``); those
become dimension expressions of a template. A last trace at other sizes must equal the
template instantiated there, or export raises NotImplementedError (the program's structure
or a constant array depends on the sizes). Calling the Exported solves the variables from
the arguments' shapes and runs the template instantiated for them (cached per size).
"""
from __future__ import annotations

import base64

import numpy as np

from jaxlite._src.export import codec
from jaxlite._src.export.shape_poly import _DimExpr

__all__ = ["PolyProgram", "build_template", "fit_avals"]

_BASE, _STEP, _CHECK = 101, 13, 29


class _Mismatch(Exception):
    pass


def _fit(vals, kind, names, base):
    """The affine expression through ``vals`` (base trace first, then one trace per
    variable moved by _STEP), as a template node; raises _Mismatch when none fits."""
    v0 = vals[0]
    coeffs = {}
    for n, v in zip(names, vals[1:]):
        d = v - v0
        if kind == "int":
            if d % _STEP:
                raise _Mismatch(f"{v0} moves by {d} for a change of {_STEP} in {n}")
            c = d // _STEP
        else:
            c = d / _STEP
        if c:
            coeffs[n] = c
    const = v0 - sum(c * base[n] for n, c in coeffs.items())
    if kind == "int":
        return {"dimexpr": {"t": sorted(coeffs.items()), "c": int(const), "k": "int"}}
    return {"dimexpr": {"t": sorted([n, float(c)] for n, c in coeffs.items()),
                        "c": float(const), "k": kind}}


def _merge(xs, names, base):
    x0 = xs[0]
    if all(x == x0 for x in xs[1:]):
        return x0
    if all(type(x) is int for x in xs):
        return _fit(xs, "int", names, base)
    if all(isinstance(x, dict) for x in xs):
        keys = set(x0)
        if any(set(x) != keys for x in xs):
            raise _Mismatch("different structure")
        if keys == {"f"}:
            return _fit([float.fromhex(x["f"]) for x in xs], "f", names, base)
        if keys == {"nd"}:
            dts = {x["nd"][0] for x in xs}
            if len(dts) == 1 and all(x["nd"][1] == [] for x in xs):
                dt = np.dtype(codec._dtype_from_name(x0["nd"][0]))
                vals = [np.frombuffer(base64.b64decode(x["nd"][2]), dt)[0].item()
                        for x in xs]
                kind = "int" if dt.kind in "iu" else "float"
                node = _fit(vals, kind, names, base)
                node["dimexpr"]["dtype"] = x0["nd"][0]
                node["dimexpr"]["k"] = "nd"
                return node
            raise _Mismatch("a constant array whose shape or values depend on the sizes")
        return {k: _merge([x[k] for x in xs], names, base) for k in x0}
    if all(isinstance(x, list) for x in xs):
        if any(len(x) != len(x0) for x in xs):
            raise _Mismatch("a different number of equations or operands")
        return [_merge([x[i] for x in xs], names, base) for i in range(len(x0))]
    raise _Mismatch("values that are not affine in the dimension variables")


def _instantiate(t, env):
    if isinstance(t, list):
        return [_instantiate(x, env) for x in t]
    if isinstance(t, dict):
        e = t.get("dimexpr") if len(t) == 1 else None
        if e is None:
            return {k: _instantiate(v, env) for k, v in t.items()}
        val = sum(c * env[n] for n, c in e["t"]) + e["c"]
        if e["k"] == "int":
            return int(val)
        if e["k"] == "f":
            return {"f": float.hex(float(val))}
        dt = np.dtype(codec._dtype_from_name(e["dtype"]))
        a = np.asarray(val).astype(dt)
        return {"nd": [e["dtype"], [], base64.b64encode(a.tobytes()).decode("ascii")]}
    return t


def fit_avals(avals_per_trace, names, base):
    """The symbolic shapes of avals seen in the traces (same order as _merge's)."""
    from jaxlite._src.core.avals import ShapedArray
    out = []
    for avs in zip(*avals_per_trace):
        a0 = avs[0]
        dims = []
        for k in range(len(a0.shape)):
            node = _fit([a.shape[k] for a in avs], "int", names, base)["dimexpr"]
            expr = _DimExpr(dict(node["t"]), node["c"])
            dims.append(expr if expr.terms else expr.const)
        out.append(ShapedArray(tuple(dims), a0.dtype, a0.weak_type))
    return out


class PolyProgram:
    """A template program and the dimension variables it is written in; ``at(env)`` is the
    ClosedJaxpr for concrete values of the variables (cached)."""

    def __init__(self, template, names):
        self.template = template
        self.names = tuple(names)
        self._cache = {}

    def at(self, env):
        key = tuple(env[n] for n in self.names)
        got = self._cache.get(key)
        if got is None:
            got = self._cache[key] = codec.decode_closed_jaxpr(
                _instantiate(self.template, env))
        return got

    def text(self):
        """The program's text at the base sizes, headed by the variables' values."""
        env = {n: _BASE + 2 * i for i, n in enumerate(self.names)}
        head = ", ".join(f"{n}={v}" for n, v in env.items())
        return f"# polymorphic in {', '.join(self.names)}; shown at {head}\n" + \
            self.at(env).pretty_print()


def envs(names):
    """(base, one per moved variable, check) size assignments for the traces."""
    base = {n: _BASE + 2 * i for i, n in enumerate(names)}
    moved = [dict(base, **{n: base[n] + _STEP}) for n in names]
    check = {n: v + _CHECK + i for i, (n, v) in enumerate(base.items())}
    return base, moved, check


def build_template(encode_at, names):
    """The template of the programs ``encode_at(env)`` (their codec JSON), checked at
    another size; raises NotImplementedError when the program is not affine in the sizes."""
    base, moved, check = envs(names)
    progs = [encode_at(base)] + [encode_at(e) for e in moved]
    try:
        template = _merge(progs, list(names), base)
    except _Mismatch as e:
        raise NotImplementedError(
            f"jaxlite cannot export this function for symbolic dimensions "
            f"{', '.join(names)}: traced at different sizes, its program differs by "
            f"{e}. jaxlite supports programs whose shapes and scalar constants are affine in "
            "the dimension variables (e.g. a batch dimension); export once per concrete "
            "shape otherwise.") from None
    if _instantiate(template, check) != encode_at(check):
        raise NotImplementedError(
            f"jaxlite cannot export this function for symbolic dimensions "
            f"{', '.join(names)}: its program at other sizes is not the one the traces "
            "predict (it depends on the sizes in a way jaxlite cannot express); export once "
            "per concrete shape.")
    return template
