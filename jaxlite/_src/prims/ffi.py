"""The ``ffi_call`` primitive: a call of a registered XLA FFI handler (a compiled C/C++
function, see ``runtime/xla_ffi.py``) on array operands, with static attributes.

Parameters follow JAX's (``make_jaxpr`` prints the same equation): ``target_name``,
``result_avals``, ``attributes`` (sorted ``(name, value)`` pairs, arrays and dicts wrapped
hashable), ``has_side_effect``, ``vmap_method``, ``input_layouts``/``output_layouts``
(minor-to-major, as XLA), ``input_output_aliases``, ``custom_call_api_version`` and
``legacy_backend_config``. With ``has_side_effect`` the equation carries the FFI effect and
is never removed. There is no derivative (JAX's error), and vmap follows ``vmap_method`` as
for ``pure_callback``.
"""
from __future__ import annotations

import threading

import numpy as np

from jaxlite._src.core.avals import ShapedArray
from jaxlite._src.core.primitive import Primitive
from jaxlite._src.core.trace import Tracer
from jaxlite._src.runtime.array import ArrayImpl
from jaxlite._src.prims.callback import Effect, batch_by_vmap_method

__all__ = ["ffi_call_p", "FfiEffect", "ffi_effect", "HashableArray", "FrozenAttrDict",
           "hashable_attributes", "plain_attributes", "VMAP_METHODS"]

VMAP_METHODS = ("sequential", "sequential_unrolled", "expand_dims", "broadcast_all",
                "legacy_vectorized", None)


class FfiEffect(Effect):
    """The effect of an ``ffi_call`` with ``has_side_effect=True``."""
    __slots__ = ()
    __str__ = lambda self: "FFI"  # noqa: E731


ffi_effect = FfiEffect()


# ----------------------------------------------------------------------------- attributes

class HashableArray:
    """A NumPy array attribute, compared and hashed by value (attributes are static
    parameters of the equation)."""
    __slots__ = ("val",)

    def __init__(self, val):
        self.val = np.array(val, copy=True)
        self.val.setflags(write=False)

    def __eq__(self, other):
        return (type(other) is HashableArray and self.val.dtype == other.val.dtype
                and self.val.shape == other.val.shape and bool(np.all(self.val == other.val)))

    def __hash__(self):
        return hash((self.val.dtype.str, self.val.shape, self.val.tobytes()))

    def __repr__(self):
        return f"HashableArray({self.val!r})"


class FrozenAttrDict:
    """A dict attribute, immutable and hashed by value."""
    __slots__ = ("_items",)

    def __init__(self, d):
        self._items = tuple(sorted((str(k), _hashable(v)) for k, v in dict(d).items()))

    def items(self):
        return [(k, _plain(v)) for k, v in self._items]

    def keys(self):
        return [k for k, _ in self._items]

    def __getitem__(self, k):
        return dict(self.items())[k]

    def __eq__(self, other):
        return type(other) is FrozenAttrDict and self._items == other._items

    def __hash__(self):
        return hash(self._items)

    def __repr__(self):
        return "FrozenDict(" + repr(dict(self._items)) + ")"


def _hashable(v):
    if isinstance(v, ArrayImpl):
        # a concrete jaxlite array (e.g. the seed's ``parameter=jnp.float32(0.5)``): its
        # value, as a NumPy scalar or array (JAX refuses jax.Array attributes as unhashable)
        v = np.asarray(v)
        v = v[()] if v.ndim == 0 else v
    if isinstance(v, np.ndarray):
        return HashableArray(v)
    if isinstance(v, dict):
        return FrozenAttrDict(v)
    return v


def _plain(v):
    if isinstance(v, HashableArray):
        return v.val
    if isinstance(v, FrozenAttrDict):
        return dict(v.items())
    return v


def hashable_attributes(kwargs):
    """The ``attributes`` parameter: sorted (name, value) pairs, hashable (JAX's
    TypeError for values that cannot be made so)."""
    out = []
    for k, v in sorted(kwargs.items()):
        v = _hashable(v)
        try:
            hash(v)
        except TypeError as e:
            hint = (" (FFI attributes are static values baked into the call: pass a NumPy or "
                    "Python value, not a traced array; under jit mark it static, e.g. "
                    "static_argnames)" if isinstance(v, Tracer) else "")
            raise TypeError(f"Non-hashable keyword argument to ffi_call {k}: {v}{hint}") from e
        out.append((k, v))
    return tuple(out)


def plain_attributes(attributes):
    """The (name, value) pairs with arrays and dicts unwrapped."""
    return [(k, _plain(v)) for k, v in attributes]


# ----------------------------------------------------------------------------- plans

_plans: dict = {}
_plans_lock = threading.Lock()
_MAX_PLANS = 512


def _major_to_minor(layout, ndim):
    if layout is None:
        return None
    m2m = tuple(reversed(tuple(layout)))
    return None if m2m == tuple(range(ndim)) else m2m


def _make_plan(target_name, in_avals, result_avals, attributes, input_output_aliases,
               input_layouts, output_layouts):
    from jaxlite._src.runtime.xla_ffi_frame import CallPlan
    return CallPlan(target_name, [(a.shape, a.dtype) for a in in_avals],
                    [(a.shape, a.dtype) for a in result_avals],
                    plain_attributes(attributes), input_output_aliases,
                    in_layouts=[_major_to_minor(l, len(a.shape))
                                for l, a in zip(input_layouts, in_avals)],
                    out_layouts=[_major_to_minor(l, len(a.shape))
                                 for l, a in zip(output_layouts, result_avals)])


def _plan(target_name, in_avals, result_avals, attributes, input_output_aliases,
          input_layouts, output_layouts):
    """The cached plan of an eager call (eager calls of one signature share it, as JAX's
    eager executables)."""
    key = (target_name, tuple((a.shape, a.dtype) for a in in_avals),
           tuple((a.shape, a.dtype) for a in result_avals), attributes, input_output_aliases,
           input_layouts, output_layouts)
    plan = _plans.get(key)
    if plan is None:
        plan = _make_plan(target_name, in_avals, result_avals, attributes,
                          input_output_aliases, input_layouts, output_layouts)
        with _plans_lock:
            if len(_plans) >= _MAX_PLANS:
                _plans.clear()
            _plans[key] = plan
    return plan


# ----------------------------------------------------------------------------- primitive

def _batched_layouts(params, vmap_method, is_b):
    """Layouts of a batched call: every result gets the new leading batch dimension, and so
    do the operands (only the batched ones under "legacy_vectorized")."""
    params["output_layouts"] = tuple(_bump_layout(l) for l in params["output_layouts"])
    params["input_layouts"] = tuple(
        _bump_layout(l) if b or vmap_method != "legacy_vectorized" else l
        for l, b in zip(params["input_layouts"], is_b))
    return params


def _bump_layout(layout):
    """A layout (minor-to-major) for the same array with a new leading batch dimension."""
    return None if layout is None else tuple(n + 1 for n in layout) + (0,)


class FfiCall(Primitive):
    """``jax.ffi.ffi_call``'s primitive: runs a registered FFI handler."""
    name = "ffi_call"
    runs_per_device = True   # called once per device under pmap/shard_map, with its context
    multiple_results = True
    weak_rule = "never"
    no_fold = True

    def effects_of(self, params):
        return (ffi_effect,) if params["has_side_effect"] else ()

    def abstract_eval(self, *avals, result_avals, **_):
        return [ShapedArray(a.shape, a.dtype) for a in result_avals]

    def explicit_sharding_rule(self, avals, dims, result_avals, **params):
        """Over Explicit mesh axes a result is typed with the sharding its
        ``result_shape_dtypes`` entry names, else unsplit (JAX's rule)."""
        from jaxlite._src.sharding.types import dims_of, is_typed
        return [dims_of(a) if is_typed(a) else ((),) * len(a.shape) for a in result_avals]

    def impl(self, *args, target_name, result_avals, attributes, input_output_aliases,
             input_layouts, output_layouts, **_):
        in_avals = [ShapedArray(np.shape(a), np.asarray(a).dtype) for a in args]
        plan = _plan(target_name, in_avals, result_avals, attributes, input_output_aliases,
                     input_layouts, output_layouts)
        return plan(*args)

    def lower_stmts(self, ctx, ins, outs, eqn):
        """jit's code: one call of a plan built now, at compile time (an unregistered target
        fails here, as in JAX), and owned by this compiled function (a stateful handler is
        instantiated once per compiled function, as per XLA executable)."""
        p = eqn.params
        plan = _make_plan(p["target_name"], [v.aval for v in eqn.invars], p["result_avals"],
                          p["attributes"], p["input_output_aliases"], p["input_layouts"],
                          p["output_layouts"])
        name = ctx.bind_global(plan, "ffi_")
        lhs = (", ".join(outs) + ("," if len(outs) == 1 else "")) if outs else "_"
        return [f"{lhs} = {name}({', '.join(ins)})"]

    def jvp(self, primals, tangents, *, target_name, **_):
        raise ValueError(f"The FFI call to `{target_name}` cannot be differentiated. You can "
                         "use `jax.custom_jvp` or `jax.custom_vjp` to add support.")

    def transpose(self, cts, *args, target_name, **_):
        raise ValueError(f"The FFI call to `{target_name}` cannot be differentiated. You can "
                         "use `jax.custom_jvp` or `jax.custom_vjp` to add support.")

    def batch(self, size, args, dims, *, vmap_method, result_avals, **params):
        return batch_by_vmap_method(
            self, size, args, dims, vmap_method, result_avals, params,
            "vmap is only supported for the ffi_call primitive when vmap_method is one of "
            "'sequential', 'sequential_unrolled', 'expand_dims', 'broadcast_all', or "
            f"'legacy_vectorized'. Got vmap_method={vmap_method!r}. Pass vmap_method= to "
            "jax.ffi.ffi_call to say how the handler handles a batch dimension.",
            relayout=_batched_layouts)


ffi_call_p = FfiCall()
