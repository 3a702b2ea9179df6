"""The TPU (``pltpu``) and GPU (``plgpu``/triton) parameter types that kernels written for
those backends pass, accepted by interpret mode (recorded in the ``pallas_call``, unused)."""
from __future__ import annotations

import enum

from jaxlite._src.pallas import core as plc

__all__ = ["CompilerParams", "TritonCompilerParams", "GridDimensionSemantics", "PARALLEL",
           "ARBITRARY", "CORE_PARALLEL", "InterpretParams", "PrefetchScalarGridSpec"]


class CompilerParams(plc.CompilerParams):
    """pltpu.CompilerParams (dimension_semantics, vmem_limit_bytes, ...)."""
    PLATFORM = "mosaic"

    def __init__(self, dimension_semantics=None, allow_input_fusion=None,
                 vmem_limit_bytes=None, collective_id=None, has_side_effects=False, flags=None,
                 **kwargs):
        if dimension_semantics is not None:
            dimension_semantics = tuple(dimension_semantics)
        super().__init__(dimension_semantics=dimension_semantics,
                         allow_input_fusion=allow_input_fusion,
                         vmem_limit_bytes=vmem_limit_bytes, collective_id=collective_id,
                         has_side_effects=has_side_effects, flags=flags, **kwargs)


class TritonCompilerParams(plc.CompilerParams):
    """plgpu (triton) CompilerParams (num_warps, num_stages)."""
    PLATFORM = "triton"

    def __init__(self, num_warps=None, num_stages=None, **kwargs):
        super().__init__(num_warps=num_warps, num_stages=num_stages, **kwargs)


class GridDimensionSemantics(enum.Enum):
    """How a TPU grid dimension may be run (interpret mode runs every grid in order)."""
    PARALLEL = "parallel"
    CORE_PARALLEL = "core_parallel"
    SUBCORE_PARALLEL = "subcore_parallel"
    ARBITRARY = "arbitrary"


PARALLEL = GridDimensionSemantics.PARALLEL
ARBITRARY = GridDimensionSemantics.ARBITRARY
CORE_PARALLEL = GridDimensionSemantics.CORE_PARALLEL


class InterpretParams:
    """pltpu.InterpretParams: TPU interpret-mode options; jaxlite interprets every kernel
    its own way, so they are accepted and recorded only."""

    def __init__(self, **kwargs):
        self.__dict__.update(kwargs)

    def __repr__(self):
        return f"InterpretParams({', '.join(f'{k}={v!r}' for k, v in vars(self).items())})"


class PrefetchScalarGridSpec(plc.GridSpec):
    """A GridSpec whose first ``num_scalar_prefetch`` operands are passed whole (as SMEM
    refs) to the kernel and, after the grid indices, to every index map."""

    def __init__(self, num_scalar_prefetch, grid=(), in_specs=plc.no_block_spec,
                 out_specs=plc.no_block_spec, scratch_shapes=()):
        super().__init__(grid, in_specs, out_specs, scratch_shapes)
        self.num_scalar_prefetch = int(num_scalar_prefetch)
