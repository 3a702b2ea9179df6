"""jaxlite.experimental.hijax (mirrors ``jax.experimental.hijax``): types that are not arrays
and primitives over them; see jaxlite._src.extend.hijax for what jaxlite supports of it.
Re-exports only."""
from jaxlite._src.extend.hijax import (  # noqa: F401
    Zero, AbstractValue, AvalQDD, ShapedArray, aval_method, aval_property, AvalMutableQDD,
    instantiate_zeros, is_undefined_primal, control_flow_allowed_effects, HiPrimitive,
    HiPspec, HiType, MutableHiType, VJPHiPrimitive, register_hitype, AbstractRef,
    TransformedRef)
