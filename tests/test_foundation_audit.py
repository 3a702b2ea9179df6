"""Audit of issue 2 (the foundation) against real JAX: ``.at[]`` options and weak types,
operator dtypes, the signatures of jax.numpy / jax.lax functions and Array methods, error
classes for bad arguments, and a few jit/tracer error details."""
import inspect
import pickle
import warnings

import numpy as np
import pytest

import jaxlite
import jaxlite.numpy as jnp
from jaxlite import lax


@pytest.fixture
def jax():
    """Real JAX (tests comparing against it are skipped when it is missing)."""
    return pytest.importorskip("jax")


# ----------------------------------------------------------------------------- .at[]
AT_CALLS = {
    "set_weak": lambda m: m.asarray(1.0).at[()].set(5),
    "set_strong_into_weak": lambda m: m.asarray(1.0).at[()].set(m.float32(5)),
    "divide_weak": lambda m: m.asarray(1.0).at[()].divide(2),
    "power_weak": lambda m: m.asarray(3.0).at[()].power(2),
    "add_float_to_int": lambda m: m.asarray([1, 3]).at[1].add(0.6),
    "mul_float_to_int": lambda m: m.asarray([1, 3]).at[1].multiply(1.5),
    "get_no_wrap": lambda m: m.arange(4.0).at[-1].get(wrap_negative_indices=False),
    "get_no_wrap_fill": lambda m: m.arange(4.0).at[m.array([-1, 1])].get(
        wrap_negative_indices=False, mode="fill"),
    "set_no_wrap": lambda m: m.arange(4.0).at[-1].set(9.0, wrap_negative_indices=False),
    "add_no_wrap": lambda m: m.arange(4.0).at[m.array([-1, 1])].add(
        1.0, wrap_negative_indices=False, out_sharding=None),
    "apply_no_wrap": lambda m: m.arange(4.0).at[m.array([-1, 1])].apply(
        lambda v: v + 1, wrap_negative_indices=False),
    "min_clip": lambda m: m.arange(4).at[m.array([7, 0])].min(-3, mode="clip"),
    "seed_index": lambda m: m.arange(24.0).reshape(4, 3, 2)[[0, 2, 1, 0], ..., ::-1, None],
}


@pytest.mark.parametrize("name", sorted(AT_CALLS))
def test_at_and_indexing_vs_jax(jax, name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        assert repr(AT_CALLS[name](jnp)) == repr(AT_CALLS[name](jax.numpy))


def test_at_unsafe_cast_warns_as_jax():
    with pytest.warns(FutureWarning, match="scatter inputs have incompatible types: cannot "
                      "safely cast value from dtype=float32 to dtype=int32"):
        jnp.asarray([1, 2]).at[0].set(2.5)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        jnp.asarray([1, 2], jnp.int8).at[0].set(3)   # a weak int fits: no warning


def test_at_method_signatures_vs_jax(jax):
    ours, ref = jnp.ones(2).at[0], jax.numpy.ones(2).at[0]
    for name in ("get", "set", "add", "subtract", "multiply", "mul", "divide", "power",
                 "min", "max", "apply"):
        assert _params(getattr(ours, name)) == _params(getattr(ref, name)), name


def test_shift_and_floordiv_and_pow_weak_types():
    assert repr(jnp.asarray(-7) // 2) == "Array(-4, dtype=int32, weak_type=True)"
    assert repr(jnp.asarray(3) ** jnp.asarray(2)) == "Array(9, dtype=int32, weak_type=True)"
    assert repr(jnp.array([True]) << True) == "Array([2], dtype=int32)"
    assert repr(jnp.array([True]) >> jnp.array([False])) == "Array([1], dtype=int32)"
    with pytest.raises(TypeError):
        jnp.left_shift(1.0, 2)


# ----------------------------------------------------------------------------- helpers
def _params(f):
    """(name, kind, default) of each parameter of ``f`` (annotations ignored)."""
    try:
        sig = inspect.signature(f)
    except (TypeError, ValueError):
        return None
    return [(p.name, p.kind.name, repr(p.default) if p.default is not p.empty else "-")
            for p in sig.parameters.values()]
