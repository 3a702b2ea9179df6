"""Matmul precision: ``lax.Precision``, ``DotAlgorithm``, ``DotAlgorithmPreset`` and the
canonical form dot_general / conv_general_dilated carry in their ``precision`` parameter.

As on JAX's CPU backend, precision does not change what a float32 product computes; it is
validated, canonicalised (``'highest'`` -> ``(Precision.HIGHEST, Precision.HIGHEST)``) and
shown in the jaxpr. ``precision=None`` takes ``jax_default_matmul_precision`` (set with
``jax.default_matmul_precision``). Algorithm presets the CPU backend rejects raise JAX's
ValueError.
"""
from __future__ import annotations

import enum
from typing import Any, NamedTuple

import numpy as np

from jaxlite._src.config import config
from jaxlite._src.core import dtypes

__all__ = ["Precision", "DotAlgorithm", "DotAlgorithmPreset", "canonicalize_precision",
           "check_cpu_precision"]


class Precision(enum.Enum):
    """Precision of float32 matrix products: DEFAULT (aliases 'default', 'fastest',
    'bfloat16'), HIGH ('high', 'bfloat16_3x', 'tensorfloat32'), HIGHEST ('highest',
    'float32'). It only matters on accelerators; on the CPU every setting computes in
    float32."""
    DEFAULT = 0
    HIGH = 1
    HIGHEST = 2

    @classmethod
    def _missing_(cls, value):
        return _PRECISION_STRINGS.get(value)

    def __repr__(self):
        return f"{type(self).__name__}.{self.name}"

    def __str__(self):
        return self.name


_PRECISION_STRINGS: dict[Any, Precision] = {
    "highest": Precision.HIGHEST, "float32": Precision.HIGHEST,
    "high": Precision.HIGH, "bfloat16_3x": Precision.HIGH, "tensorfloat32": Precision.HIGH,
    "default": Precision.DEFAULT, "bfloat16": Precision.DEFAULT,
    "fastest": Precision.DEFAULT, None: Precision.DEFAULT}


class DotAlgorithm(NamedTuple):
    """A dot product algorithm given by its operand storage types, accumulation type and
    component counts (XLA's DotAlgorithm). Accepted as ``precision=``; the CPU backend
    supports none of these custom algorithms (use a DotAlgorithmPreset)."""
    lhs_precision_type: Any
    rhs_precision_type: Any
    accumulation_type: Any
    lhs_component_count: int = 1
    rhs_component_count: int = 1
    num_primitive_operations: int = 1
    allow_imprecise_accumulation: bool = False


class DotAlgorithmPreset(enum.Enum):
    """Named dot product algorithms (``precision=DotAlgorithmPreset.BF16_BF16_F32`` or its
    name as a string). On the CPU, DEFAULT, F16_F16_F16, BF16_BF16_F32(_X3, _X6),
    F32_F32_F32 and F64_F64_F64 run (computing in the operands' precision, as XLA's CPU
    backend); the others raise ValueError, as in JAX."""
    DEFAULT = enum.auto()
    ANY_F8_ANY_F8_F32 = enum.auto()
    ANY_F8_ANY_F8_F32_FAST_ACCUM = enum.auto()
    ANY_F8_ANY_F8_ANY = enum.auto()
    ANY_F8_ANY_F8_ANY_FAST_ACCUM = enum.auto()
    F16_F16_F16 = enum.auto()
    F16_F16_F32 = enum.auto()
    BF16_BF16_BF16 = enum.auto()
    BF16_BF16_F32 = enum.auto()
    BF16_BF16_F32_X3 = enum.auto()
    BF16_BF16_F32_X6 = enum.auto()
    BF16_BF16_F32_X9 = enum.auto()
    TF32_TF32_F32 = enum.auto()
    TF32_TF32_F32_X3 = enum.auto()
    F32_F32_F32 = enum.auto()
    F64_F64_F64 = enum.auto()

    def __repr__(self):
        return f"{type(self).__name__}.{self.name}"

    def __str__(self):
        return self.name

    @property
    def supported_lhs_types(self):
        """The operand dtypes this algorithm accepts (None: any)."""
        n = self.name
        if n == "DEFAULT" or n.startswith("ANY_F8"):
            return None
        if n.startswith("F16"):
            return (np.float16,)
        if n.startswith("BF16"):
            return (dtypes.bfloat16, np.float32)
        if n == "F64_F64_F64":
            return (np.float64,)
        return (np.float32,)

    @property
    def supported_rhs_types(self):
        """The rhs operand dtypes this algorithm accepts (as the lhs)."""
        return self.supported_lhs_types

    @property
    def accumulation_type(self):
        """The dtype products are accumulated in (None: the default)."""
        n = self.name
        if n in ("DEFAULT", "ANY_F8_ANY_F8_ANY", "ANY_F8_ANY_F8_ANY_FAST_ACCUM"):
            return None
        return {"F16_F16_F16": np.float16, "BF16_BF16_BF16": dtypes.bfloat16,
                "F64_F64_F64": np.float64}.get(n, np.float32)


# presets XLA's CPU backend does not implement
_CPU_UNSUPPORTED = frozenset({
    "ANY_F8_ANY_F8_F32", "ANY_F8_ANY_F8_F32_FAST_ACCUM", "ANY_F8_ANY_F8_ANY",
    "ANY_F8_ANY_F8_ANY_FAST_ACCUM", "F16_F16_F32", "BF16_BF16_BF16", "BF16_BF16_F32_X9",
    "TF32_TF32_F32", "TF32_TF32_F32_X3"})


def _bad(precision):
    return ValueError(
        "Precision argument must be one of:\n- None,\n"
        f"- a string in {list(_PRECISION_STRINGS)},\n- a lax.Precision value,\n"
        "- a tuple of two lax.Precision values or strings,\n"
        "- a lax.DotAlgorithmPreset or the name of one of these presets, or\n"
        f"- a lax.DotAlgorithm value;\nbut got {precision}.")


def canonicalize_precision(precision):
    """The canonical form of a ``precision=`` argument: None, a pair of Precision values,
    a DotAlgorithmPreset or a DotAlgorithm. None takes ``jax_default_matmul_precision``."""
    if precision is None:
        default = config._flags["jax_default_matmul_precision"].value
        if default is None:
            return None
        try:
            return canonicalize_precision(default)
        except ValueError:
            raise ValueError(
                "jax_default_matmul_precision flag must be set to None, a value in "
                f"{list(_PRECISION_STRINGS)}, or the name of a lax.DotAlgorithmPreset, but "
                f"got {default}") from None
    if isinstance(precision, str):
        if precision in _PRECISION_STRINGS:
            p = _PRECISION_STRINGS[precision]
            return p, p
        try:
            return DotAlgorithmPreset[precision]
        except KeyError:
            raise _bad(precision) from None
    if isinstance(precision, Precision):
        return precision, precision
    if isinstance(precision, (DotAlgorithm, DotAlgorithmPreset)):
        return precision
    if isinstance(precision, (list, tuple)) and len(precision) == 2:
        if all(isinstance(p, Precision) for p in precision):
            return tuple(precision)
        if all(isinstance(p, str) for p in precision):
            return tuple(canonicalize_precision(p)[0] for p in precision)
    raise _bad(precision)


def check_cpu_precision(precision, name="dot_general"):
    """Raise JAX's ValueError for an algorithm the CPU backend cannot run."""
    if isinstance(precision, DotAlgorithmPreset) and precision.name in _CPU_UNSUPPORTED or \
            isinstance(precision, DotAlgorithm):
        raise ValueError(f"The precision '{precision}' is not supported by {name} on CPU")
