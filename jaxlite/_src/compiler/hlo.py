"""A jaxpr printed as an XLA HLO module: the text of ``Lowered.compiler_ir("hlo").as_hlo_text()``.

jaxlite has no XLA; this module prints the program jaxlite compiles (the lowered jaxpr after
jaxlite's own passes: key arrays as their data, nested calls inlined, constants folded, common
subexpressions merged, dead code removed) in HLO's text syntax, so that tools and tests that
read or compare HLO text work unchanged::

    HloModule jit_f, entry_computation_layout={(f32[3]{0})->f32[]}

    region_0.1 {
      reduce_sum.1 = f32[] parameter(0)
      reduce_sum.2 = f32[] parameter(1)
      ROOT reduce_sum.3 = f32[] add(reduce_sum.1, reduce_sum.2)
    }

    ENTRY main.2 {
      x.1 = f32[3]{0} parameter(0)
      ...
    }

Each equation becomes the HLO instruction(s) its primitive's ``hlo`` rule emits, named as JAX
0.10 names them: parameters after the function's arguments, instructions after the
primitive that produced them, with a per-name counter. Scalars combined with arrays are
broadcast explicitly, reductions get a ``to_apply`` computation, ``cond`` becomes
``conditional`` with branch computations, ``while`` a ``while`` over a tuple. An operation HLO
has no instruction for is printed as one ``custom-call`` whose target names the jaxlite
primitive and whose ``backend_config`` holds its parameters (the jaxprs it carries become
called computations), so the text still shows everything the program does.

The text is deterministic and a function of the lowered jaxpr alone: equal jaxprs give equal
text, and jaxprs that differ in an operation, shape, dtype, parameter or constant give
different text (constants of more than 10 elements print as ``{...}``, as XLA prints them,
unless ``print_large_constants=True``).

Differences from XLA's text, by design: XLA's text is its own lowering of StableHLO before
optimisation, and jaxlite's is of its optimised jaxpr, so nested ``jit`` calls appear inlined
(JAX shows ``call`` instructions), and operations XLA expands into several instructions (asin,
erf_inv, argmax, cumsum, sort, scan, ...) are single custom-calls here; layouts are always
the default major-to-minor ones; numbering of instructions and computations follows a
simpler rule than XLA's uniquifier; no metadata, sharding or frontend attributes are printed.
"""
from __future__ import annotations

import re

import numpy as np

from jaxlite._src.core import dtypes
from jaxlite._src.core.ir import ClosedJaxpr, DropVar, Jaxpr, Literal, _param_text

__all__ = ["HloComputation", "HloModule", "HloBuilder", "hlo_module", "hlo_shape", "hlo_dtype"]

_DTYPE_NAMES = {
    "bool": "pred", "int8": "s8", "int16": "s16", "int32": "s32", "int64": "s64",
    "uint8": "u8", "uint16": "u16", "uint32": "u32", "uint64": "u64", "int4": "s4",
    "uint4": "u4", "int2": "s2", "uint2": "u2", "float16": "f16", "bfloat16": "bf16",
    "float32": "f32", "float64": "f64", "complex64": "c64", "complex128": "c128",
    "float8_e4m3fn": "f8e4m3fn", "float8_e5m2": "f8e5m2", "float8_e4m3b11fnuz": "f8e4m3b11fnuz",
    "float8_e4m3fnuz": "f8e4m3fnuz", "float8_e5m2fnuz": "f8e5m2fnuz", "float8_e4m3": "f8e4m3",
    "float8_e3m4": "f8e3m4", "float8_e8m0fnu": "f8e8m0fnu", "float4_e2m1fn": "f4e2m1fn",
}

# Constants with more elements than this print as ``{...}`` (XLA's default).
LARGE_CONSTANT = 10


def hlo_dtype(dtype) -> str:
    """HLO's name of an element type: f32, s32, pred, bf16, c64 ..."""
    name = np.dtype(dtype).name
    try:
        return _DTYPE_NAMES[name]
    except KeyError:
        raise TypeError(f"dtype {name} has no HLO element type") from None


def hlo_shape(aval) -> str:
    """HLO's text of an array shape with its default layout: ``f32[3,4]{1,0}``, ``f32[]``."""
    shape = tuple(aval.shape)
    s = f"{hlo_dtype(aval.dtype)}[{','.join(map(str, shape))}]"
    if shape:
        s += "{" + ",".join(map(str, range(len(shape) - 1, -1, -1))) + "}"
    return s


def tuple_shape(avals) -> str:
    """HLO's text of a tuple shape, with XLA's ``/*index=5*/`` markers every fifth element."""
    parts = [(f"/*index={i}*/" if i and i % 5 == 0 else "") + hlo_shape(a)
             for i, a in enumerate(avals)]
    return "(" + ", ".join(parts) + ")"


def _scalar_text(v) -> str:
    v = np.asarray(v)[()]
    kind = v.dtype.kind
    if kind == "b":
        return "true" if v else "false"
    if kind in "iu":
        return str(int(v))
    if kind == "c":
        return f"({_scalar_text(v.real)}, {_scalar_text(v.imag)})"
    if np.isnan(v):
        return "-nan" if np.signbit(v) else "nan"
    if np.isinf(v):
        return "-inf" if v < 0 else "inf"
    s = str(v)   # the shortest text that round-trips in the value's own dtype
    return s[:-2] if s.endswith(".0") else s


def literal_text(value, print_large=False) -> str:
    """The operand of a ``constant(...)`` instruction: ``2``, ``{1, 2}``,
    ``{ {1, 2}, {3, 4} }``."""
    a = np.asarray(value)
    if a.ndim == 0:
        return _scalar_text(a)
    if a.size > LARGE_CONSTANT and not print_large:
        return "{...}"

    def rec(x):
        if x.ndim == 1:
            return "{" + ", ".join(_scalar_text(e) for e in x) + "}"
        return "{ " + ", ".join(rec(e) for e in x) + " }"
    return rec(a)


def _ident(s) -> str:
    s = re.sub(r"[^A-Za-z0-9_]", "_", str(s))
    return s if s and not s[0].isdigit() else "_" + s


class HloModule:
    """An HLO module being printed: unique names and the finished computations."""

    def __init__(self, name, print_large_constants=False):
        self.name = name
        self.print_large = print_large_constants
        self._counts = {}
        self._n_computations = 0
        self.n_regions = 0
        self.computations = []   # text of each finished computation, in order
        self.entry_layout = ""

    def unique(self, prefix) -> str:
        n = self._counts.get(prefix, 0) + 1
        self._counts[prefix] = n
        return f"{prefix}.{n}"

    def add_computation(self, prefix, builder, root, entry=False) -> str:
        """Finish ``builder`` as a computation whose result is instruction ``root``."""
        self._n_computations += 1
        name = f"{prefix}.{self._n_computations}"
        lines = [("ROOT " if n == root else "") + text for n, text in builder.lines]
        head = ("ENTRY " if entry else "") + name
        self.computations.append(head + " {\n" + "".join(f"  {ln}\n" for ln in lines) + "}\n")
        return name

    def text(self) -> str:
        return (f"HloModule {self.name}, entry_computation_layout={{{self.entry_layout}}}\n\n"
                + "\n".join(self.computations) + "\n")


class HloBuilder:
    """The instructions of one computation. Primitive ``hlo`` rules receive it as ``b``:
    ``b.in_avals``/``b.out_avals`` are the equation's types, ``b.op(...)`` emits an
    instruction and returns its name."""

    def __init__(self, module):
        self.module = module
        self.lines = []           # (instruction name, text)
        self.prefix = None        # the current equation's primitive name
        self.in_avals = ()
        self.out_avals = ()
        self._n_params = 0

    # -- emitting instructions
    def op(self, opcode, aval, operands=(), *attrs, prefix=None, layout=None) -> str:
        """Emit ``name = <shape> opcode(operands), attrs...``; ``aval`` may be a list (a
        tuple-shaped result); ``layout`` is a minor-to-major order other than the default."""
        shape = tuple_shape(aval) if isinstance(aval, (list, tuple)) else hlo_shape(aval)
        if layout is not None:
            shape = shape[:shape.index("{")] + "{" + ",".join(map(str, layout)) + "}"
        name = self.module.unique(prefix or self.prefix or opcode)
        text = f"{name} = {shape} {opcode}({', '.join(operands)})"
        text += "".join(f", {a}" for a in attrs)
        self.lines.append((name, text))
        return name

    def parameter(self, aval, prefix) -> str:
        """The computation's next ``parameter`` instruction (``aval`` may be a list: a
        tuple-shaped parameter)."""
        i = self._n_params
        self._n_params += 1
        shape = tuple_shape(aval) if isinstance(aval, (list, tuple)) else hlo_shape(aval)
        name = self.module.unique(prefix)
        self.lines.append((name, f"{name} = {shape} parameter({i})"))
        return name

    def constant(self, value, aval) -> str:
        """A ``constant`` instruction holding ``value`` (of ``aval``'s type)."""
        value = np.asarray(value, aval.dtype)
        name = self.module.unique("constant")
        self.lines.append((name, f"{name} = {hlo_shape(aval)} constant("
                                 f"{literal_text(value, self.module.print_large)})"))
        return name

    def scalar(self, value, dtype) -> str:
        """A rank-0 constant of ``dtype``."""
        from jaxlite._src.core.avals import ShapedArray
        return self.constant(np.asarray(value, dtype), ShapedArray((), np.dtype(dtype)))

    def broadcast_to(self, x, aval, shape) -> str:
        """``x`` (of ``aval``) broadcast to ``shape``: rank-0 operands and size-1 dimensions
        of equal-rank operands (lax's implicit broadcasting) become HLO's explicit
        ``broadcast``; an operand of the right shape is returned as it is."""
        shape = tuple(shape)
        if tuple(aval.shape) == shape:
            return x
        prefix = "broadcast" if self._is_constant(x) else None
        if aval.shape == ():
            return self.op("broadcast", aval.update(shape=shape), (x,), "dimensions={}",
                           prefix=prefix)
        keep = [d for d, n in enumerate(aval.shape) if n == shape[d]]
        if len(keep) != len(aval.shape):
            x = self.op("reshape", aval.update(shape=tuple(aval.shape[d] for d in keep)), (x,),
                        prefix=prefix)
        return self.op("broadcast", aval.update(shape=shape), (x,),
                       "dimensions={" + ",".join(map(str, keep)) + "}", prefix=prefix)

    def _is_constant(self, x):
        return x.startswith("constant.")

    def tuple(self, names, avals) -> str:
        return self.op("tuple", list(avals), names, prefix="tuple")

    def get_tuple_element(self, t, i, aval, prefix=None) -> str:
        return self.op("get-tuple-element", aval, (t,), f"index={i}",
                       prefix=prefix or "get-tuple-element")

    # -- nested computations
    def region(self, prefix, param_avals, body, param_prefix=None) -> str:
        """A computation of parameters ``param_avals`` whose result ``body(sub, params)``
        (an instruction name) computes; returns its name (``region_<k>.<n>`` when
        ``prefix`` is None)."""
        if prefix is None:
            prefix = f"region_{self.module.n_regions}"
            self.module.n_regions += 1
        sub = HloBuilder(self.module)
        params = [sub.parameter(a, param_prefix[i] if isinstance(param_prefix, list)
                                else param_prefix or self.prefix or "Arg")
                  for i, a in enumerate(param_avals)]
        sub.prefix = self.prefix
        root = body(sub, params)
        return self.module.add_computation(prefix, sub, root)

    def jaxpr_region(self, prefix, closed, tupled_in=False, tupled_out=None) -> str:
        """A computation running ``closed`` (a ClosedJaxpr or Jaxpr): its parameters are the
        jaxpr's inputs (one tuple parameter when ``tupled_in``), its result the jaxpr's
        outputs (a tuple when ``tupled_out``; by default when there is not exactly one)."""
        jaxpr, consts = _split(closed)
        avals = [v.aval for v in jaxpr.invars]
        if tupled_out is None:
            tupled_out = len(jaxpr.outvars) != 1

        def body(sub, params):
            if tupled_in:
                params = [sub.get_tuple_element(params[0], i, a)
                          for i, a in enumerate(avals)]
            outs = lower_jaxpr_into(sub, jaxpr, consts, params)
            return sub.tuple(outs, jaxpr.out_avals) if tupled_out else outs[0]
        return self.region(prefix, [avals] if tupled_in else avals, body,
                           param_prefix="arg_tuple" if tupled_in else
                           [f"Arg_{i}" for i in range(len(avals))])

    def inline_jaxpr(self, closed, ins) -> list:
        """Emit the instructions of ``closed`` applied to ``ins`` here; returns its outputs."""
        jaxpr, consts = _split(closed)
        return lower_jaxpr_into(self, jaxpr, consts, list(ins))

    # -- the fallback
    def custom_call(self, prim, ins, params) -> list:
        """One ``custom-call`` for an operation HLO has no instruction for: the target names
        the primitive, ``backend_config`` holds its parameters, its jaxprs are called
        computations. Returns one name per result."""
        subs, text = [], []
        for k in sorted(params):
            v = params[k]
            vs = v if type(v) is tuple else (v,)
            if vs and all(isinstance(j, (ClosedJaxpr, Jaxpr)) for j in vs):
                subs += [self.jaxpr_region(f"{_ident(prim.name)}_{k}", j) for j in vs]
                text.append(f"{k}=<{len(vs)} computation{'s' if len(vs) != 1 else ''}>")
            else:
                text.append(f"{k}={_param_text(v)}")
        attrs = [f'custom_call_target="jaxlite.{prim.name}"']
        if subs:
            attrs.append("called_computations={" + ", ".join(subs) + "}")
        if text:
            cfg = " ".join(text).replace("\\", "\\\\").replace('"', '\\"').replace("\n", " ")
            attrs.append(f'backend_config="{cfg}"')
        outs = list(self.out_avals)
        if prim.multiple_results:
            t = self.op("custom-call", outs, ins, *attrs)
            return [self.get_tuple_element(t, i, a) for i, a in enumerate(outs)]
        return [self.op("custom-call", outs[0], ins, *attrs)]


def _split(closed):
    if isinstance(closed, ClosedJaxpr):
        return closed.jaxpr, list(closed.consts)
    return closed, []


def lower_jaxpr_into(b: HloBuilder, jaxpr: Jaxpr, consts, ins) -> list:
    """Emit the equations of ``jaxpr`` into ``b`` with its inputs bound to the instruction
    names ``ins``; returns the names of its outputs."""
    saved = b.prefix, b.in_avals, b.out_avals
    env = {}
    for v, c in zip(jaxpr.constvars, consts):
        env[v] = b.constant(np.asarray(c), v.aval)
    env.update(zip(jaxpr.invars, ins))

    def read(a):
        if isinstance(a, Literal):
            return b.constant(np.asarray(a.val), a.aval)
        return env[a]

    for e in jaxpr.eqns:
        args = [read(a) for a in e.invars]
        b.prefix = e.primitive.name
        b.in_avals = [a.aval for a in e.invars]
        b.out_avals = [v.aval for v in e.outvars]
        outs = e.primitive.hlo(b, *args, **e.params)
        outs = [outs] if isinstance(outs, str) else list(outs)
        if len(outs) != len(e.outvars):
            raise AssertionError(f"the HLO rule of {e.primitive.name} gave {len(outs)} "
                                 f"results for {len(e.outvars)} outputs")
        for v, o in zip(e.outvars, outs):
            if not isinstance(v, DropVar):
                env[v] = o
    b.prefix, b.in_avals, b.out_avals = None, (), ()
    outs = [read(a) for a in jaxpr.outvars]
    b.prefix, b.in_avals, b.out_avals = saved
    return outs


def hlo_module(closed: ClosedJaxpr, name="jit_f", arg_names=None,
               print_large_constants=False) -> str:
    """The HLO text of ``closed``: an ``HloModule`` whose ENTRY computation takes the jaxpr's
    inputs as parameters (named after ``arg_names`` where given) and returns its outputs
    (a tuple when there is not exactly one)."""
    module = HloModule(_ident(name), print_large_constants)
    jaxpr = closed.jaxpr
    in_avals = [v.aval for v in jaxpr.invars]
    out_avals = list(jaxpr.out_avals)
    for a in in_avals + out_avals:
        if dtypes.is_extended(a.dtype):
            raise TypeError(f"HLO text needs arrays of NumPy dtypes, got {a.str_short()} "
                            "(run the jaxpr through the compiler's physical pass first)")
    b = HloBuilder(module)
    names = list(arg_names or ())
    params = []
    for i, a in enumerate(in_avals):
        n = names[i] if i < len(names) and names[i] else None
        params.append(b.parameter(a, _ident(n) if n else "Arg_" + str(i)))
    outs = lower_jaxpr_into(b, jaxpr, list(closed.consts), params)
    if len(outs) == 1:
        root = outs[0]
        out_layout = hlo_shape(out_avals[0])
    else:
        root = b.tuple(outs, out_avals)
        out_layout = tuple_shape(out_avals)
    module.entry_layout = ("(" + ", ".join(
        (f"/*index={i}*/" if i and i % 5 == 0 else "") + hlo_shape(a)
        for i, a in enumerate(in_avals)) + ")->" + out_layout)
    module.add_computation("main", b, root, entry=True)
    return module.text()


class HloComputation:
    """A jitted program as an HLO module: what ``Lowered.compiler_ir(dialect="hlo")``
    returns (JAX's ``XlaComputation``). ``as_hlo_text()`` prints it; see the module's
    docstring for how the text relates to XLA's."""

    def __init__(self, closed: ClosedJaxpr, fun_name="f"):
        from jaxlite._src.compiler.passes import optimize
        self._closed = optimize(closed, xla_simplify=False)   # (XLA's input, not its output)
        info = closed.jaxpr.debug_info
        self._arg_names = list(getattr(info, "arg_names", None) or ())
        self._name = "jit_" + (_ident(fun_name).rstrip("_") or "_")

    def name(self) -> str:
        """The module's name, ``jit_<function name>``."""
        return self._name

    def as_hlo_text(self, print_large_constants=False) -> str:
        """The HLO text of the program (constants of more than 10 elements print as
        ``{...}`` unless ``print_large_constants``)."""
        return hlo_module(self._closed, self._name, self._arg_names, print_large_constants)

    def __repr__(self):
        return f"<HloComputation {self._name}>"
