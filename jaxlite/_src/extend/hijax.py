"""``jax.experimental.hijax``: JAX's API for types that are not arrays ("high" types) and the
primitives over them.

What jaxlite supports of it today:

- the abstract-value vocabulary: ``AbstractValue`` (the base of ``ShapedArray`` and
  ``AbstractRef``), ``AvalQDD``/``AvalMutableQDD``, ``aval_method``/``aval_property`` (a
  tracer whose abstract value's class defines them exposes them), the AD helpers ``Zero``,
  ``instantiate_zeros``, ``is_undefined_primal`` and the effect-type set
  ``control_flow_allowed_effects``;
- ``register_hitype``: ``jax.typeof(value)`` of a registered Python type answers with the
  registered function;
- ``HiPrimitive``: binding it outside any transformation runs its ``impl``; while a
  transformation traces (jit, grad, vmap, scan, ...) it runs its ``to_lojax``, so the program
  holds the array operations it is written with (what JAX's lowering of hijax programs gives;
  the primitive's own ``jvp``/``transpose``/batching rules are not used: AD and vmap see those
  array operations);
- values of registered hijax types as arguments and results of ``jit`` and ``eval_shape``
  (api/hi_args.py): they enter the program as their arrays (``lower_val``/``raise_val``, or
  for mutable types ``cur_qdd``/``read_loval``/``new_from_loval``), and mutable arguments are
  written back after the call (``update_from_loval``), as in JAX; inside a transformation a
  hijax value is the object itself holding tracers;
- ``VJPHiPrimitive``: calling it runs ``expand`` (under jit, vmap and AD too), with the
  primitive's own ``vjp_fwd``/``vjp_bwd_retval`` as its reverse-mode rule when it defines them.

- mutable hijax values closed over by the body of a ``scan`` or ``while_loop`` (so
  ``fori_loop``), or by a ``while_loop`` condition: threaded through the loop as extra
  carries and written back (api/hi_capture.py), as JAX hoists them into the loop's state.

What it does not support yet: hijax values as arguments of ``grad``/``vmap``/``scan`` (give
their arrays, or use jit), mutable hijax values captured (closed over) by other staged
functions (jit, make_jaxpr, cond branches) and mutated there (JAX hoists them as inputs;
jaxlite would store the tracer into the captured object), and the accumulator-style
``VJPHiPrimitive.vjp_bwd``.
"""
from __future__ import annotations

from jaxlite._src import tree_util
from jaxlite._src.core.avals import (AbstractValue, AvalMutableQDD, AvalQDD, ShapedArray,
                                     aval_method, aval_property, hitype_aval_mappings)
from jaxlite._src.api.hi_capture import capture_active, check_captured
from jaxlite._src.core.trace import Tracer, ctx
from jaxlite._src.extend.ad import instantiate_zeros, is_undefined_primal
from jaxlite._src.prims.ad_util import Zero
from jaxlite._src.prims.callback import control_flow_allowed_effects
from jaxlite._src.prims.state import AbstractRef, TransformedRef

__all__ = ["Zero", "AbstractValue", "AvalQDD", "ShapedArray", "aval_method",
           "aval_property", "AvalMutableQDD", "instantiate_zeros", "is_undefined_primal",
           "control_flow_allowed_effects", "HiPrimitive", "HiPspec", "HiType",
           "MutableHiType", "VJPHiPrimitive", "register_hitype", "cur_qdd", "AbstractRef",
           "TransformedRef"]

def _must_override(obj, method):
    return NotImplementedError(f"{type(obj).__name__} must override {method} (a method of "
                               "the hijax interface)")


def cur_qdd(x):
    """The current quasi-dynamic data of the mutable hijax value ``x``: what its
    ``cur_qdd()`` method says. (While a transformation traces, a hijax value is the object
    itself holding tracers, see api/hi_args.py, so its method answers there too.)"""
    if isinstance(x, Tracer):
        raise TypeError(f"cur_qdd: got a tracer of type {x.aval}, not a mutable hijax value "
                        "(jaxlite passes hijax values through transformations as the "
                        "objects themselves)")
    fn = getattr(x, "cur_qdd", None)
    if fn is None:
        raise TypeError(f"cur_qdd: {type(x).__name__} is not a mutable hijax value (it has "
                        "no cur_qdd method)")
    return fn()


class HiPrimitive:
    """A primitive over hijax values (JAX's ``hijax.HiPrimitive``): subclasses define
    ``impl``, ``abstract_eval``, ``to_lojax``, ``jvp`` and ``transpose``.

    ``bind`` outside every transformation calls ``impl``; under jit, grad, vmap or another
    transformation it calls ``to_lojax`` on the values (hijax values hold tracers there)."""

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return self.name

    def is_high(self, *avals, **params) -> bool:
        """Whether this application involves hijax types (True unless overridden)."""
        return True

    def is_effectful(self, params) -> bool:
        """Whether the primitive has side effects (False unless overridden)."""
        return False

    def impl(self, *args, **params):
        """The eager implementation (subclasses define it)."""
        raise _must_override(self, "impl")

    def abstract_eval(self, *avals, **params):
        """The output types (subclasses define it)."""
        raise _must_override(self, "abstract_eval")

    def to_lojax(self, *args, **params):
        """The primitive written with array operations (subclasses define it)."""
        raise _must_override(self, "to_lojax")

    def jvp(self, primals, tangents, **params):
        """Forward-mode rule (subclasses define it)."""
        raise _must_override(self, "jvp")

    def transpose(self, *args, **params):
        """Transpose rule, for primitives linear in some inputs."""
        raise _must_override(self, "transpose")

    def bind(self, *args, **params):
        """Apply the primitive: eagerly, ``impl(*args, **params)``; while a transformation
        traces (jit, grad, vmap, control flow), ``to_lojax(*args, **params)``, which writes
        it with array operations on the values' arrays (their tracers), so the program the
        transformation builds holds only those operations (what JAX's lowering of hijax
        primitives gives)."""
        if ctx.trace is not None or any(isinstance(a, Tracer) for a in args):
            if capture_active[0]:     # (a loop body closing over a mutable value: hoist it)
                check_captured(args)
            return self.to_lojax(*args, **params)
        return self.impl(*args, **params)


class HiType(AbstractValue):
    """The abstract value of an immutable hijax type (JAX's ``hijax.HiType``): subclasses
    define equality, ``lo_ty`` (its array types), ``lower_val``/``raise_val`` (to and from
    its arrays) and the AD/vmap/shard_map methods they need."""
    __slots__ = ()
    is_high = True
    has_qdd = False

    def __hash__(self):
        raise _must_override(self, "__hash__")

    def __eq__(self, other):
        raise _must_override(self, "__eq__")

    def lo_ty(self):
        """The array types a value of this type is made of."""
        raise _must_override(self, "lo_ty")

    def lower_val(self, hi_val):
        """The arrays making up ``hi_val``."""
        raise _must_override(self, "lower_val")

    def raise_val(self, *lo_vals):
        """A value of this type from its arrays."""
        raise _must_override(self, "raise_val")

    def vspace_zero(self):
        """The zero of this (tangent) type."""
        raise _must_override(self, "vspace_zero")

    def vspace_add(self, x, y):
        """The sum of two values of this (tangent) type."""
        raise _must_override(self, "vspace_add")

    def dec_rank(self, size, spec):
        """The type of one slice along a mapped axis (vmap, scan)."""
        raise _must_override(self, "dec_rank")

    def inc_rank(self, size, spec):
        """The type of ``size`` stacked values (vmap, scan)."""
        raise _must_override(self, "inc_rank")

    def leading_axis_spec(self):
        """The mapping spec of the leading axis (scan)."""
        raise _must_override(self, "leading_axis_spec")

    def shard(self, mesh, manual_axes, check_vma, spec):
        """The per-device type inside shard_map."""
        raise _must_override(self, "shard")

    def unshard(self, mesh, check_vma, spec):
        """The global type of per-device values leaving shard_map."""
        raise _must_override(self, "unshard")

    def nospec(self, mesh, check_vma, all_names):
        """The spec of an unsharded value."""
        raise _must_override(self, "nospec")


class MutableHiType(AbstractValue):
    """The abstract value of a mutable hijax type (JAX's ``hijax.MutableHiType``): its
    values may change their inner type, described by quasi-dynamic data (qdd). Subclasses
    define equality, ``lo_ty_qdd``, ``new_from_loval``, ``read_loval``,
    ``update_from_loval`` and ``to_tangent_aval``."""
    __slots__ = ()
    is_high = True
    has_qdd = True
    is_writer = False
    type_state = aval_method(cur_qdd)

    def __hash__(self):
        raise _must_override(self, "__hash__")

    def __eq__(self, other):
        raise _must_override(self, "__eq__")

    def lo_ty_qdd(self, state, /):
        """The array types a value with quasi-dynamic data ``state`` is made of."""
        raise _must_override(self, "lo_ty_qdd")

    def lo_ty(self):
        """Mutable types give their array types with ``lo_ty_qdd``."""
        raise TypeError(f"{type(self).__name__} is a mutable hijax type: use lo_ty_qdd(qdd) "
                        "instead of lo_ty()")

    def new_from_loval(self, state, /, *vals):
        """A new value from its arrays."""
        raise _must_override(self, "new_from_loval")

    def read_loval(self, state, val, /):
        """The arrays making up ``val``."""
        raise _must_override(self, "read_loval")

    def read_loval_in(self, state, val, /):
        """The arrays making up ``val`` on entry to a traced function."""
        return self.read_loval(state, val)

    def update_from_loval(self, state, val, /, *lo_vals):
        """Set ``val``'s contents from arrays."""
        raise _must_override(self, "update_from_loval")


class HiPspec:
    """The partition spec of a hijax type under shard_map (subclasses define ``to_lo``,
    ``to_tangent_spec`` and ``to_ct_spec``)."""

    def to_lo(self):
        """The PartitionSpecs of the type's arrays."""
        raise _must_override(self, "to_lo")

    def to_tangent_spec(self):
        """The spec of the tangent type."""
        raise _must_override(self, "to_tangent_spec")

    def to_ct_spec(self):
        """The spec of the cotangent type."""
        raise _must_override(self, "to_ct_spec")


def register_hitype(val_cls, typeof_fn) -> None:
    """Declare the Python type ``val_cls`` a hijax type: ``jax.typeof(v)`` of its values is
    ``typeof_fn(v)``, and jit/eval_shape take such values as arguments and results (their
    arrays go through the program, see api/hi_args.py)."""
    if not isinstance(val_cls, type):
        raise TypeError(f"register_hitype takes a class, got {val_cls!r}")
    if not callable(typeof_fn):
        raise TypeError(f"register_hitype: typeof_fn must be callable, got {typeof_fn!r}")
    hitype_aval_mappings[val_cls] = typeof_fn


class VJPHiPrimitive:
    """An operation written with array operations (``expand``) that may carry its own
    reverse-mode rule (JAX's ``hijax.VJPHiPrimitive``). A subclass's ``__init__`` sets
    ``in_avals`` (a tuple of pytrees of avals), ``out_aval`` and ``params`` (a dict, also set
    as attributes) before calling ``super().__init__()``.

    Calling it runs ``expand`` (under every transformation). When the subclass defines
    ``vjp_fwd(nzs_in, *args) -> (out, residuals)`` and ``vjp_bwd_retval(residuals, g) ->
    input cotangents``, reverse-mode AD uses them (as a ``jax.custom_vjp``); otherwise it
    differentiates ``expand``. Its own ``jvp`` and ``batch`` rules are not used by jaxlite
    (forward mode and vmap transform ``expand``, or the custom_vjp), and the accumulator-style
    ``vjp_bwd`` raises NotImplementedError when called."""
    effects = frozenset()

    def __init__(self):
        for name in ("in_avals", "out_aval", "params"):
            if not hasattr(self, name):
                raise AttributeError(f"subclass __init__ should set `self.{name}`")
        if type(self).vjp_bwd is not VJPHiPrimitive.vjp_bwd:
            if type(self).vjp_bwd_retval is not VJPHiPrimitive.vjp_bwd_retval:
                raise AttributeError(f"subclass {type(self)} should not override both "
                                     "`vjp_bwd` and `vjp_bwd_retval`")
        self.in_avals_flat, self.in_tree = tree_util.tree_flatten(self.in_avals)
        self.out_avals_flat, self.out_tree = tree_util.tree_flatten(self.out_aval)
        self.__dict__.update(self.params)
        self.check(*self.in_avals)

    def expand(self, *args):
        """The operation written with array operations (subclasses define it)."""
        raise NotImplementedError(f"subclass {type(self)} must implement `expand`")

    def vjp_fwd(self, nzs_in, /, *args):
        """Forward pass of the reverse-mode rule: ``(out, residuals)``."""
        raise NotImplementedError(f"for grad support, subclass {type(self)} must implement "
                                  "`vjp_fwd`")

    def vjp_bwd(self, res, outgrad, /, *arg_accums):
        """Accumulator-style backward pass: not supported by jaxlite."""
        raise NotImplementedError(
            f"{type(self).__name__}.vjp_bwd: jaxlite does not support the accumulator-style "
            "backward rule of hijax VJPHiPrimitive yet; define vjp_bwd_retval(res, g) "
            "returning the input cotangents instead.")

    def vjp_bwd_retval(self, res, outgrad, /):
        """Backward pass of the reverse-mode rule: the cotangents of the inputs."""
        raise NotImplementedError(f"for grad support, subclass {type(self)} must implement "
                                  "`vjp_bwd_retval`")

    def jvp(self, primals, tangents):
        """Forward-mode rule (jaxlite differentiates ``expand`` instead)."""
        raise NotImplementedError(f"for jvp support, subclass {type(self)} must implement "
                                  "`jvp`")

    def check(self, *arg_tys):
        """Optional checks of the argument types (subclasses may override)."""
        return None

    def __call__(self, *args):
        flat, tree = tree_util.tree_flatten(args)
        if tree != self.in_tree:
            raise TypeError(f"{type(self).__name__} was called with arguments of structure "
                            f"{tree}, but its in_avals have structure {self.in_tree}")
        cls = type(self)
        if cls.vjp_bwd is not VJPHiPrimitive.vjp_bwd:
            return self.vjp_bwd(None, None)       # raises: not supported
        if cls.vjp_fwd is VJPHiPrimitive.vjp_fwd:
            return self.expand(*args)
        from jaxlite._src.api.custom_derivatives import custom_vjp
        nzs = tuple(True for _ in args)

        @custom_vjp
        def op(*xs):
            return self.expand(*xs)

        def fwd(*xs):
            out, res, *_ = self.vjp_fwd(nzs, *xs)
            return out, res

        def bwd(res, g):
            cts = self.vjp_bwd_retval(res, g)
            return tuple(cts) if isinstance(cts, (tuple, list)) else (cts,)

        op.defvjp(fwd, bwd)
        return op(*args)

    def __repr__(self):
        return f"{type(self).__name__}[{self.params}]"

    def __hash__(self):
        return hash((type(self).__name__, tuple(self.params.items()), self.effects))

    def __eq__(self, other):
        return (type(self) is type(other) and self.params == other.params
                and self.effects == other.effects)
