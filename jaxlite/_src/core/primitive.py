"""The Primitive base class: one class per primitive holds all of its rules.

Method names are fixed and mirror the interpreters:
  impl(*arrays, **params)           NumPy implementation (eager execution, compiled fallback)
  abstract_eval(*avals, **params)   output aval(s) from input avals
  jvp(primals, tangents, **params)  forward-mode rule        (autodiff issue)
  transpose(cts, *args, **params)   for linear primitives    (autodiff issue)
  batch(args, dims, **params)       vmap rule                (vmap issue)
  lower_py(ctx, ins, **params)      Python source expression for the jit code generator
Family base classes (prims/) give defaults so most primitives are a few lines.
"""
from __future__ import annotations

import threading

import numpy as np

from jaxlite._src.config import config
from jaxlite._src.core import dtypes
from jaxlite._src.core.fpe import quiet_call
from jaxlite._src.core.avals import ShapedArray
from jaxlite._src.core.trace import Tracer, ctx, innermost_trace, set_current_trace
from jaxlite._src.runtime.array import ArrayImpl
from jaxlite._src.runtime import guards
from jaxlite._src.runtime.dispatch import mesh_active, mesh_listeners

__all__ = ["Primitive", "registry", "NOT_DIFFERENTIABLE", "eager_operand", "extended_operands",
           "extended_eager", "check_extended"]

registry: dict[str, "Primitive"] = {}

# How an eager primitive runs on arrays of extended dtypes (typed keys): on their NumPy data
# (set by the compiler's physical pass, compiler/physical.py).
extended_eager = [None]

# Marker for primitives with no derivative (comparisons, integer ops, ...).
NOT_DIFFERENTIABLE = "not differentiable"

_py_scalars = {int, float, complex, bool}

# Mirrors the jaxlite_check_eager_avals flag (read on every eager op, so kept in a list).
_check_eager = [config.jaxlite_check_eager_avals]
# True when eager fast paths must take ``eager()``: eager aval checks, jax_no_execution, a
# host-to-device transfer guard (runtime/guards.py) or a concrete ``jax.set_mesh`` are on.
_slow_eager = [_check_eager[0] or guards.active[0] or bool(mesh_active[0])]


def _on_flag(name=None):
    if name == "jaxlite_check_eager_avals":
        _check_eager[0] = config.jaxlite_check_eager_avals
    _slow_eager[0] = _check_eager[0] or guards.active[0] or bool(mesh_active[0])


config.add_listener(_on_flag)
mesh_listeners.append(_on_flag)


class _CompileTimeEval(threading.local):
    depth = 0   # > 0 inside jax.ensure_compile_time_eval()
    suspended = ()   # the traces that were current where each such context was entered

    def holds(self, trace) -> bool:
        """Whether ``trace`` is a trace an ``ensure_compile_time_eval`` context suspended
        (or encloses one): it is still alive, so its tracers may be closed over by what is
        traced inside the context (as constants, as JAX's tracing takes them)."""
        return any(trace.is_ancestor_of(t) for t in self.suspended)


compile_time_eval = _CompileTimeEval()


def _bind_in_operand_trace(prim, args, params):
    """Under ``ensure_compile_time_eval`` (no current trace), an operation on tracers is
    handed to the innermost trace among its operands, as JAX only folds constants there."""
    with set_current_trace(innermost_trace(args)):
        return prim.bind(*args, **params)


def check_extended(prim, avals, params):
    """Raise JAX's TypeError when ``prim`` (not accepting extended dtypes) is applied to an
    operand of an extended dtype (a key array)."""
    if prim.accepts_extended:
        return
    for v in params.values():
        for j in (v if type(v) is tuple else (v,)):
            if hasattr(j, "eqns") or hasattr(j, "jaxpr"):
                return   # a higher-order primitive: its jaxprs say what happens to keys
    names = [str(a.dtype) for a in avals]
    raise TypeError(f"{prim.name} does not accept dtype{'s' if len(names) > 1 else ''} "
                    f"{', '.join(names)}.")


def extended_operands(args) -> bool:
    """Whether some operand is a concrete array of an extended dtype (a key array): then
    ``extended_eager[0](prim, args, params)`` runs the primitive on the arrays' data."""
    ext = dtypes.extended_array_types
    return any(type(a) in ext for a in args)


def eager_operand(a):
    """(numpy value, weak flag) for a non-ArrayImpl operand of an eager primitive."""
    t = type(a)
    if t in _py_scalars:
        return np.asarray(a, dtypes.python_scalar_dtype(a)), t is not bool
    if isinstance(a, Tracer):
        a._trace.leaked(a)
    if isinstance(a, (np.ndarray, np.generic)):
        dt = dtypes.canonicalize_dtype(a.dtype)
        return (a if a.dtype == dt else a.astype(dt)), False
    if isinstance(a, ArrayImpl):  # subclasses
        return a._value, a.weak_type
    if hasattr(a, "__jax_array__"):
        return eager_operand(a.__jax_array__())
    rv = getattr(t, "_runtime_value", None)
    if rv is not None:      # a value standing for a buffer where programs run (a Ref)
        return rv(a), False
    raise TypeError(f"Value {a!r} of type {t.__name__} is not a valid JAX type")


def aval_nbytes(aval) -> int:
    """Bytes of an array of ``aval``'s shape and dtype (0 for tokens and other non-arrays)."""
    shape, dtype = getattr(aval, "shape", None), getattr(aval, "dtype", None)
    if shape is None or dtype is None:
        return 0
    return int(np.prod(shape, dtype=np.int64)) * getattr(dtype, "itemsize", 0)


def _is_jaxpr(v) -> bool:
    return hasattr(v, "eqns") or hasattr(v, "jaxpr") and hasattr(v, "consts")


def _carries_jaxpr(v) -> bool:
    if isinstance(v, (tuple, list)):
        return any(_carries_jaxpr(w) for w in v)
    return _is_jaxpr(v)


class Primitive:
    """A primitive operation: the unit the transformations and the compiler work on.

    Subclass it, set ``name``, and write ``impl`` and ``abstract_eval`` (or use a family base
    class). Create one module-level instance (``sin_p = Sin()``) and call ``bind``.
    """
    name: str = "?"
    multiple_results = False
    # Effectful primitives are never removed, merged or folded by the compiler.
    effectful = False
    # How the weak type of outputs follows the inputs: "all" (weak iff every input is weak),
    # "first" (the first operand's: indexing ops), "never", "param" (params['weak_type']) or
    # a function of the list of input weak flags.
    weak_rule = "all"
    # Rule slots filled by later issues: a method, or NOT_DIFFERENTIABLE.
    jvp = None
    transpose = None
    batch = None
    # True when the JVP rule runs even if every tangent is zero (a new ref has a tangent ref
    # that later writes of differentiated values go into)
    jvp_always = False
    # True when the backward pass runs the transpose rule even if every output cotangent is
    # zero (JAX transposes every linear equation: a custom_vjp's bwd runs and may return
    # cotangents that do not depend on the incoming ones, as flax's fp8 meta updates do)
    transpose_always = False
    # True when the batching rule runs even if no operand is batched (a ref made under vmap
    # is batched: a batched value may be written into it later)
    batch_always = False
    # Optional ``batch_changes_order(axis_size, avals, dims, **params) -> bool``: True when
    # the ``batch`` rule could compute some batch element in another order of operations
    # (so other rounding) than this primitive on that element alone (``avals``: one
    # element's operands; ``dims``: where the batch dimension is, None if unbatched). The
    # batched form of per-device programs (pmap/shard_map: ``BatchTrace.per_device``) then
    # runs such an equation once per device, so each device gets its own program's bits.
    batch_changes_order = None
    # Optional ``stage_known(params) -> bool``: True for an equation that belongs to the
    # linear (tangent) part of a program even when its operands are known (the tangent ref a
    # JVP makes): partial evaluation stages it, the backward pass transposes it.
    stage_known = None
    # Optional: ``fold(*scalar_consts, **params)`` computes the result while tracing when
    # every operand is a scalar constant (returns a concrete value, or None to stage).
    fold = None
    # Optional compiler hooks for folding a permutation of an output into its producer:
    # ``output_permutation(**params)`` returns the permutation a pure relayout primitive
    # applies (transpose), and ``permute_output(perm, invars, **params)`` returns
    # (invars, params) of an equation of this primitive computing its output permuted by
    # ``perm``, or None when it cannot.
    output_permutation = None
    permute_output = None
    # Likewise for a sum over output axes: ``output_sum_axes(**params)`` (the axes a pure
    # sum reduces, or None) and ``sum_output(axes, invars, **params)``.
    output_sum_axes = None
    sum_output = None
    # A sum over size-1 axes that a relayout just inserted: ``inserts_unit_axes(eqn)`` tells
    # whether an equation of a relayout primitive only inserts size-1 axes into its operand,
    # and ``sum_of_unit_axes(eqn, operand)`` returns the equation computing the sum ``eqn``
    # of such a value directly from ``operand`` (or None).
    inserts_unit_axes = None
    sum_of_unit_axes = None
    # Parameters not shown when the equation is printed (JAX hides some).
    hidden_params: tuple = ()
    # True when the compiled result is always memory of its own (never an operand, a view of
    # one, or a constant): tier 1 may then write a later elementwise result into it once it
    # dies (compiler/codegen.py reuse_plan). Elementwise ufunc lowerings are fresh already.
    fresh_result = False
    # True when ``impl_into(operand, *rest, **params)`` computes the result by updating its
    # first operand's buffer in place (a result of that operand's shape and dtype: scatter,
    # dynamic_update_slice). Tier 1 calls it when that operand is the program's own and dies
    # there (a donated buffer, or a dead intermediate), as XLA updates such buffers in place.
    updates_operand = False
    # True when the primitive only moves or copies values (reshape, transpose, slicing,
    # concatenation): no floating-point operation, so no NumPy floating-point error; a
    # program of these alone runs without the quiet error state (compiler/codegen.py)
    moves_values = False
    # True when the result picks elementwise among the operands after the first (the
    # selector: select_n). The compiler moves a selection between a buffer and its update
    # into the update (passes.masked_updates and the update's ``masked_update`` rule).
    selects_cases = False
    # XLA:CPU's code contracts a product feeding an addition into one fused multiply-add
    # (LLVM's contraction in its fused loops; passes.contract_products): ``adds`` is +1 for
    # an addition of the operands, -1 for ``x - y``; ``product_operands(eqn)`` gives the two
    # factors of the equation's last multiplication (None: not one), each an atom or a
    # ``(primitive, atom, params)`` equation computing it.
    adds = None
    product_operands = None
    # ``accepts_out(eqn)``: whether the call ``lower_py`` writes takes an ``out=`` buffer
    # for this equation (tier 1's buffer reuse, as for ufunc lowerings); None: never.
    accepts_out = None
    # Whether operands of extended dtypes (key arrays) are accepted: by the structural
    # primitives (reshape, slicing, gather, concatenate, select_n, ...: the compiler's
    # physical pass applies them to the keys' data), the key primitives and those carrying
    # jaxprs. Others reject them with JAX's error (``add does not accept dtypes ...``).
    accepts_extended = False

    def __init_subclass__(cls, **kw):
        super().__init_subclass__(**kw)
        # A plain function stored as a class attribute (np.all, np.real, ...) would bind as a
        # method; keep NumPy callables that subclasses name ``np_fn`` unbound.
        fn = cls.__dict__.get("np_fn")
        if callable(fn) and not isinstance(fn, staticmethod):
            cls.np_fn = staticmethod(fn)

    def __init__(self):
        if self.name in registry:
            raise ValueError(f"primitive {self.name} registered twice")
        registry[self.name] = self

    def __repr__(self):
        return self.name

    # -- binding
    def bind(self, *args, **params):
        """Apply the primitive: run it eagerly, or hand it to the current trace."""
        trace = ctx.trace
        if trace is None:
            return self.eager(args, params)
        return trace.process_primitive(self, args, params)

    def eager(self, args, params):
        """Run ``impl`` on concrete operands and wrap the result(s) as arrays."""
        if guards.active[0]:
            self._check_guards(args)
        vals = []
        weak = True
        for a in args:
            if type(a) is ArrayImpl:
                if a._sharding is not None:
                    return _eager_placed(self, args, params)
                vals.append(a._value)
                weak = weak and a.weak_type
            else:
                if isinstance(a, ArrayImpl) and a._sharding is not None:
                    return _eager_placed(self, args, params)
                if compile_time_eval.depth and isinstance(a, Tracer):
                    return _bind_in_operand_trace(self, args, params)
                if type(a) in dtypes.extended_array_types:
                    return extended_eager[0](self, args, params)
                v, w = eager_operand(a)
                vals.append(v)
                weak = weak and w
        self.check_operands(vals, params)
        try:
            out = quiet_call(self.impl, *vals, **params)   # (inf/nan silently, as in JAX)
        except Exception:
            # Bad operands: let abstract_eval raise JAX's error (it names the rule broken).
            self.abstract_eval(*[ShapedArray(np.shape(v), np.asarray(v).dtype) for v in vals],
                               **params)
            raise
        rule = self.weak_rule
        if rule == "all":
            weak = weak and bool(args)
        elif rule == "first":
            a = args[0]
            weak = a.weak_type if type(a) is ArrayImpl else eager_operand(a)[1]
        else:
            weak = self.weak_from_flags([eager_operand(a)[1] for a in args], params)
        if _check_eager[0]:
            self._check_eager(vals, weak, params, out)
            self._check_eager_weak(args, vals, weak, params)
        if self.multiple_results:
            out = [ArrayImpl(o, weak) for o in out]
        else:
            out = ArrayImpl(out, weak)
        if mesh_active[0]:      # (under jax.set_mesh: results live on the mesh's devices)
            return _on_context_mesh(out)
        return out

    def _check_guards(self, args):
        # jax_no_execution and the host-to-device transfer guard (runtime/guards.py): an
        # eager operation is one execution; each host operand is an implicit transfer
        guards.check_execution(f"jit({self.name})")
        for a in args:
            if not isinstance(a, (ArrayImpl, Tracer)) and \
                    type(a) not in dtypes.extended_array_types:
                guards.check_host_to_device(a)

    def _check_eager(self, vals, weak, params, out):
        avals = [ShapedArray(np.shape(v), np.asarray(v).dtype) for v in vals]
        expect = self.abstract_eval(*avals, **params)
        outs = out if self.multiple_results else [out]
        expect = expect if self.multiple_results else [expect]
        for o, e in zip(outs, expect):
            if not isinstance(o, (np.ndarray, np.generic)):
                raise AssertionError(f"{self.name}.impl returned {type(o).__name__}, "
                                     "not a NumPy value")
            if o.shape != e.shape or o.dtype != e.dtype:
                raise AssertionError(
                    f"{self.name}: impl gave {o.dtype}{list(o.shape)} but abstract_eval "
                    f"gives {e.str_short(short_dtypes=False)} for {params}")

    def _check_eager_weak(self, args, vals, weak, params):
        """The eager result's weak type (``weak_rule``) is the one ``abstract_eval`` gives."""
        if self.multiple_results or type(self)._check_eager is not Primitive._check_eager:
            return       # (primitives of refs check their own way)
        avals = [ShapedArray(np.shape(v), np.asarray(v).dtype, eager_operand(a)[1])
                 for a, v in zip(args, vals)]
        want = self.abstract_eval(*avals, **params).weak_type
        if weak != want:
            raise AssertionError(f"{self.name}: eager weak type {weak} but abstract_eval "
                                 f"gives {want} for {params} (set weak_rule)")

    def check_operands(self, vals, params):
        """Cheap eager validation of concrete operands (raise JAX's error for bad ones);
        primitives whose impl would silently accept bad input override it."""

    # -- rules
    def impl(self, *args, **params):
        raise NotImplementedError(f"{self.name} has no impl")

    def abstract_eval(self, *avals, **params):
        raise NotImplementedError(f"{self.name} has no abstract_eval")

    def out_weak(self, avals, params) -> bool:
        """The weak type of the outputs, following ``weak_rule``."""
        return self.weak_from_flags([a.weak_type for a in avals], params)

    def weak_from_flags(self, flags, params) -> bool:
        """Apply ``weak_rule`` ("all", "first": the first operand's, "never", "param" or a
        function of the input flags)."""
        rule = self.weak_rule
        if rule == "all":
            return bool(flags) and all(flags)
        if rule == "first":
            return bool(flags) and flags[0]
        if rule == "never":
            return False
        if rule == "param":
            return params["weak_type"]
        return rule(flags)

    def lower_py(self, ctx, ins, **params):
        """A Python expression computing the output(s) from the input names ``ins``,
        or None to call ``impl`` (the generic fallback)."""
        return None

    def hlo(self, b, *ins, **params):
        """Emit this equation as HLO instructions through the builder ``b``
        (compiler/hlo.py; ``ins`` are the operands' instruction names) and return the
        result names. The default is one ``custom-call`` naming the primitive."""
        return b.custom_call(self, ins, params)

    def cost(self, avals_in, avals_out, literals, **params):
        """XLA's HloCostAnalysis cost of one equation (api/cost.py adds them up): a list of
        the HLO operations it lowers to, each ``(flops, transcendentals, [bytes of each
        operand], bytes of the output)``, or None for an equation whose cost is that of the
        jaxprs it carries (the walker recurses into them). The default is one data-movement
        operation: no arithmetic, its operands read and its outputs written once. An operation
        may carry a fifth item: the fraction of each operand it reads (XLA's
        ``utilization{i}{}``; 1 when left out)."""
        if any(_carries_jaxpr(v) for v in params.values()):
            return None
        return [(0, 0, [aval_nbytes(a) for a in avals_in],
                 sum(aval_nbytes(a) for a in avals_out))]

    def cost_jaxprs(self, params):
        """For an equation whose ``cost`` is None: ``(how, jaxprs)``, the jaxprs whose costs
        make its cost and how they combine ("sum", or "max" key by key for alternatives
        of which one runs, as XLA's conditional). The default sums every jaxpr it carries
        (a loop's body and condition counted once: XLA counts one iteration)."""
        found = []
        for v in params.values():
            for w in (v if isinstance(v, (tuple, list)) else (v,)):
                if _is_jaxpr(w):
                    found.append(w)
        return "sum", found

    def get_bind_params(self, params):
        """The parameters to re-bind an equation of this primitive with (JAX 0.10's
        interface: ``prim.bind(*invals, **prim.get_bind_params(eqn.params))``; jaxlite's
        parameters are bound as they are, except the bodies of some call primitives, which
        JAX hands over as wrapped functions under ``subfuns``)."""
        return dict(params)

    def pp_params(self, params):
        """The (name, value) pairs shown when an equation of this primitive is printed."""
        hidden = self.hidden_params
        return [(k, params[k]) for k in sorted(params) if k not in hidden]


def _on_context_mesh(outs):
    from jaxlite._src.runtime.dispatch import on_context_mesh
    return on_context_mesh(outs)


def _eager_placed(prim, args, params):
    from jaxlite._src.runtime.dispatch import eager_placed
    return eager_placed(prim, args, params)


def check_same_dtypes(name, avals):
    """Raise JAX's TypeError when operands of a primitive disagree in dtype."""
    dts = {a.dtype for a in avals}
    if len(dts) > 1:
        raise TypeError(f"{name} requires arguments to have the same dtypes, got "
                        f"{', '.join(a.dtype.name for a in avals)}.")
