"""``cost_analysis`` of the staged programs: XLA:CPU's HloCostAnalysis numbers computed from
the jaxpr.

Each primitive's class gives its own cost (``Primitive.cost``: a list of the HLO operations
it lowers to, each ``(flops, transcendentals, operand bytes, output bytes)``); this walker
adds them up and recurses into the jaxprs equations carry (pjit, cond, while, scan, custom
rules). The result has XLA's keys: ``flops``, ``transcendentals``, ``bytes accessed`` (every
operation's operand and output bytes), and per operand position ``bytes accessed{i}{}`` /
``utilization{i}{}`` plus ``bytes accessedout{}``; keys whose value is 0 are left out, as
XLA does.

What cannot be reproduced from the jaxpr: XLA's compiled numbers follow its fusion decisions
(a fusion reads its inputs and writes its outputs once). ``Compiled.cost_analysis`` counts
the whole program as one fusion for ``bytes accessed`` (its inputs' and outputs' bytes) and
keeps the per-operation sums for the other keys; flops and transcendentals are the same in
both stages.
"""
from __future__ import annotations

from jaxlite._src.core.ir import ClosedJaxpr, Literal

__all__ = ["compiled_cost", "program_cost"]


def _nbytes(aval):
    shape = getattr(aval, "shape", None)
    dtype = getattr(aval, "dtype", None)
    if shape is None or dtype is None:
        return 0
    n = 1
    for d in shape:
        n *= int(d)
    try:
        return n * dtype.itemsize
    except AttributeError:
        return 0


class _Acc:
    def __init__(self):
        self.flops = 0.0
        self.trans = 0.0
        self.bytes = 0.0
        self.opnd = {}
        self.util = {}
        self.out = 0.0
        self.nops = 0
        self.calls = 0

    def add_op(self, flops, trans, in_bytes, out_bytes, util=None):
        self.nops += 1
        self.flops += flops
        self.trans += trans
        for i, b in enumerate(in_bytes):
            self.opnd[i] = self.opnd.get(i, 0.0) + b
            self.util[i] = self.util.get(i, 0.0) + (1.0 if util is None else util[i])
        self.out += out_bytes
        self.bytes += sum(in_bytes) + out_bytes

    def merge_max(self, others):
        """A conditional: XLA takes the largest of its branches' costs, key by key."""
        if not others:
            return
        self.flops += max(o.flops for o in others)
        self.trans += max(o.trans for o in others)
        self.bytes += max(o.bytes for o in others)
        self.out += max(o.out for o in others)
        for d, name in ((self.opnd, "opnd"), (self.util, "util")):
            keys = set().union(*(getattr(o, name) for o in others))
            for k in keys:
                d[k] = d.get(k, 0.0) + max(getattr(o, name).get(k, 0.0) for o in others)

    def as_dict(self):
        d = {}
        for k, v in (("flops", self.flops), ("transcendentals", self.trans),
                     ("bytes accessed", self.bytes)):
            if v:
                d[k] = float(v)
        for k in sorted(self.util):
            if self.util[k]:
                d[f"utilization{k}{{}}"] = float(self.util[k])
        for k in sorted(self.opnd):
            if self.opnd[k]:
                d[f"bytes accessed{k}{{}}"] = float(self.opnd[k])
        if self.out:
            d["bytes accessedout{}"] = float(self.out)
        return d


def _walk(jaxpr, acc):
    if isinstance(jaxpr, ClosedJaxpr):
        jaxpr = jaxpr.jaxpr
    for eqn in jaxpr.eqns:
        prim = eqn.primitive
        in_avals = [v.aval for v in eqn.invars]
        out_avals = [v.aval for v in eqn.outvars]
        lits = [isinstance(v, Literal) for v in eqn.invars]
        rule = getattr(prim, "cost", None)
        if rule is not None:
            ops = rule(in_avals, out_avals, lits, **eqn.params)
            if ops is not None:
                for op in ops:
                    acc.add_op(*op)
                continue
        how, subs = prim.cost_jaxprs(eqn.params)
        acc.calls += 1
        if how == "max":
            parts = []
            for s in subs:
                a = _Acc()
                _walk(s, a)
                parts.append(a)
            acc.merge_max(parts)
        else:
            for s in subs:
                _walk(s, acc)


def _cost(closed):
    acc = _Acc()
    _walk(closed, acc)
    return acc


def program_cost(closed):
    """The per-operation cost of ``closed`` (a ClosedJaxpr): XLA's unoptimized-HLO numbers,
    as ``Lowered.cost_analysis`` returns them."""
    return _cost(closed).as_dict()


def compiled_cost(closed):
    """``Compiled.cost_analysis``'s numbers. A program of one operation is not fused: its
    per-operation cost. Otherwise the program is counted as one fusion: it reads each input
    once (``bytes accessed{i}{}`` / ``utilization{i}{}`` of input i) and writes its outputs
    once; flops, transcendentals and the keys of operand positions past the inputs stay the
    per-operation sums (as XLA's fusion reports the operations fused into it)."""
    acc = _cost(closed)
    d = acc.as_dict()
    if acc.nops <= 1 and not acc.calls:
        return d
    ins = [_nbytes(a) for a in closed.in_avals]
    outs = sum(_nbytes(a) for a in closed.out_avals)
    if not d.get("bytes accessed"):
        return d
    d["bytes accessed"] = float(sum(ins) + outs)
    for i, b in enumerate(ins):
        d.pop(f"bytes accessed{i}{{}}", None)
        d.pop(f"utilization{i}{{}}", None)
        if b:
            d[f"bytes accessed{i}{{}}"] = float(b)
            d[f"utilization{i}{{}}"] = 1.0
    d.pop("bytes accessedout{}", None)
    if outs:
        d["bytes accessedout{}"] = float(outs)
    return _ordered(d)


def _ordered(d):
    """XLA's key order: totals, then utilizations, per-operand bytes and the output's."""
    def rank(k):
        for r, p in enumerate(("flops", "transcendentals", "bytes accessed", "utilization",
                               "bytes accessed")):
            if k == p or (r >= 3 and k.startswith(p) and k.endswith("{}")):
                if k == "bytes accessedout{}":
                    return (5, 0)
                num = k[len(p):-2]
                return (r, int(num) if num.isdigit() else 0)
        return (6, 0)
    return dict(sorted(d.items(), key=lambda kv: rank(kv[0])))
