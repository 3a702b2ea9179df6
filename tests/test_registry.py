"""Every primitive carries its rules in its class: impl and abstract_eval, a JVP rule or an
explicit "not differentiable", a batching rule (unless it takes no operands), and a transpose
rule when it is linear."""
import importlib
import pkgutil

import pytest

import jaxlite  # noqa: F401  (registers the primitives of every public module)
import jaxlite.experimental.pallas  # noqa: F401  (Pallas' primitives)
import jaxlite._src.prims as prims_pkg
from jaxlite._src.core.primitive import NOT_DIFFERENTIABLE, Primitive, registry

for _m in pkgutil.iter_modules(prims_pkg.__path__):
    importlib.import_module(f"jaxlite._src.prims.{_m.name}")
for _m in jaxlite.scipy.__all__:   # loaded on first use (custom_linear_solve lives there)
    importlib.import_module(f"jaxlite.scipy.{_m}")

# Primitives that take no array operands, so vmap never hands them a batched one.
NO_OPERANDS = {"iota", "empty2", "axis_index", "program_id", "num_programs"}

# Linear (in at least one operand) primitives: reverse mode needs their transpose.
LINEAR = {"add", "sub", "neg", "mul", "div", "reduce_sum", "broadcast_in_dim", "reshape",
          "transpose", "squeeze", "expand_dims", "slice", "pad", "concatenate", "dot_general",
          "convert_element_type", "select_n", "gather", "scatter-add", "dynamic_slice",
          "dynamic_update_slice", "cumsum", "rev", "real", "imag", "conj", "complex",
          "split", "stack", "unstack", "tile", "psum", "ppermute", "add_any", "cond", "scan",
          "jit", "custom_lin", "copy", "reduce_precision", "triangular_solve",
          "conv_general_dilated", "reduce_window_sum", "select_and_gather_add",
          "select_and_scatter_add", "fft"}

NAMES = sorted(registry)


def _defines(prim, name):
    return any(name in vars(c) for c in type(prim).__mro__ if c is not Primitive)


def test_registry_is_populated():
    assert len(registry) > 120
    assert LINEAR - set(registry) <= {"expand_dims", "copy", "reduce_precision"}


@pytest.mark.parametrize("name", NAMES)
def test_primitive_has_all_rules(name):
    prim = registry[name]
    assert prim.name == name
    assert _defines(prim, "impl") or _defines(prim, "eager"), f"{name}: no impl"
    assert _defines(prim, "abstract_eval"), f"{name}: no abstract_eval"
    assert prim.jvp is NOT_DIFFERENTIABLE or callable(prim.jvp), f"{name}: no jvp rule"
    if name not in NO_OPERANDS:
        assert callable(prim.batch), f"{name}: no batching rule"
    if name in LINEAR:
        assert callable(prim.transpose), f"{name}: linear but no transpose rule"
