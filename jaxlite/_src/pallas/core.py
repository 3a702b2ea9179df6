"""Pallas' description of a kernel's data: block specs, grids, memory spaces, scratch shapes.

``BlockSpec(block_shape, index_map)`` says which block of an operand each grid step sees:
``index_map(*program_ids)`` returns one block index per dimension, and the step's block starts
at ``index * block_size`` (``Blocked`` dims, the default for an int), at ``index`` itself
(``Element`` dims) or is the single row ``index`` with the dimension squeezed out of the
kernel's ref (``None`` / ``Squeezed``). Canonicalised against the operand's shape, a spec
becomes a ``BlockMapping`` (with the index map traced to a jaxpr); the ``GridMapping`` holds
the grid and every operand's mapping, and is a parameter of ``pallas_call``.
"""
from __future__ import annotations

import dataclasses
import enum
import math

import numpy as np

from jaxlite._src.core.avals import ShapedArray
from jaxlite._src.prims.state import AbstractRef

__all__ = ["Blocked", "Element", "Squeezed", "squeezed", "BoundedSlice", "BlockSpec",
           "GridSpec", "NoBlockSpec", "no_block_spec", "MemorySpace", "MemoryRef",
           "CompilerParams", "CostEstimate", "Buffered", "BlockMapping", "GridMapping", "cdiv",
           "next_power_of_2", "align_to", "strides_from_shape", "canonical_block_dim",
           "TPUMemorySpace", "SemaphoreType"]


@dataclasses.dataclass(frozen=True)
class Blocked:
    """A block dimension of ``block_size`` elements at ``block_index * block_size``."""
    block_size: int

    def __str__(self):
        return f"Blocked({self.block_size})"


@dataclasses.dataclass(frozen=True)
class Element:
    """A block dimension of ``block_size`` elements starting at the element the index map
    returns (after ``padding=(low, high)`` elements of padding are added to the array)."""
    block_size: int
    padding: tuple = (0, 0)

    def __str__(self):
        if tuple(self.padding) == (0, 0):
            return f"Element({self.block_size})"
        return f"Element({self.block_size}, padding={self.padding})"


@dataclasses.dataclass(frozen=True)
class Squeezed:
    """A size-1 block dimension squeezed out of the kernel's ref (``None`` in a block
    shape)."""


squeezed = Squeezed()


@dataclasses.dataclass(frozen=True)
class BoundedSlice:
    """A block dimension whose index map returns a ``pl.ds`` of at most ``block_size``."""
    block_size: int


def canonical_block_dim(d, where):
    """``None`` -> Squeezed, int -> Blocked; BlockDim objects unchanged."""
    if d is None:
        return squeezed
    if isinstance(d, (Squeezed, Blocked, Element)):
        return d
    if isinstance(d, BoundedSlice):
        raise NotImplementedError(f"{where}: pl.BoundedSlice block dimensions are not "
                                  "supported by jaxlite's interpret mode")
    if isinstance(d, (int, np.integer)) and not isinstance(d, bool):
        if d < 0:
            raise ValueError(f"{where}: block dimensions must be >= 0, got {d}")
        return Blocked(int(d))
    raise ValueError(f"{where}: unsupported block dimension {d!r}. Allowed: an int, None, "
                     "pl.Blocked, pl.Element or pl.Squeezed.")


def block_size(d) -> int:
    return 1 if isinstance(d, Squeezed) else d.block_size


class BlockSpec:
    """How an operand is cut into blocks, one per grid step.

    ``BlockSpec(block_shape, index_map)``; JAX's older order ``BlockSpec(index_map,
    block_shape)`` (a callable first) is accepted too. ``block_shape=None`` is the whole
    array; ``index_map=None`` maps every step to block 0.
    """

    def __init__(self, block_shape=None, index_map=None, *, memory_space=None,
                 pipeline_mode=None):
        if callable(block_shape) and not callable(index_map):
            block_shape, index_map = index_map, block_shape   # the older argument order
        if block_shape is not None:
            if isinstance(block_shape, (int, np.integer)):
                block_shape = (block_shape,)
            block_shape = tuple(block_shape)
        if index_map is not None and not callable(index_map):
            raise TypeError(f"BlockSpec index_map must be callable, got {index_map!r}")
        self.block_shape = block_shape
        self.index_map = index_map
        self.memory_space = memory_space
        self.pipeline_mode = pipeline_mode

    def replace(self, **kw):
        """A copy with some fields replaced."""
        d = dict(block_shape=self.block_shape, index_map=self.index_map,
                 memory_space=self.memory_space, pipeline_mode=self.pipeline_mode)
        d.update(kw)
        return BlockSpec(d.pop("block_shape"), d.pop("index_map"), **d)

    def __repr__(self):
        return (f"BlockSpec(block_shape={self.block_shape}, index_map={self.index_map!r}, "
                f"memory_space={self.memory_space}, pipeline_mode={self.pipeline_mode})")


class NoBlockSpec:
    """The default: the operand is one block, the whole array, at every grid step."""

    def __repr__(self):
        return "NoBlockSpec"


no_block_spec = NoBlockSpec()


@dataclasses.dataclass(frozen=True)
class Buffered:
    """A pipelining hint (how many buffers to use); interpret mode ignores it."""
    buffer_count: int = 2
    use_lookahead: bool = False


class MemorySpace(enum.Enum):
    """Logical memory spaces; calling one makes a scratch shape: ``pl.ANY((8,), f32)``."""
    ANY = "any"
    DEFAULT = "default"
    ERROR = "error"
    INDEX = "index"
    KEY = "key"
    HOST = "host"

    def __call__(self, shape, dtype):
        return MemoryRef(shape, dtype, self)

    def __str__(self):
        return self.value


class TPUMemorySpace(enum.Enum):
    """pltpu's memory spaces (``pltpu.VMEM((8, 128), jnp.float32)`` is a scratch shape)."""
    VMEM = "vmem"
    VMEM_SHARED = "vmem_shared"
    SMEM = "smem"
    CMEM = "cmem"
    SEMAPHORE = "semaphore_mem"
    HBM = "hbm"

    def __call__(self, shape, dtype):
        return MemoryRef(shape, dtype, self)

    def __str__(self):
        return self.value


class SemaphoreType(enum.Enum):
    """pltpu semaphore kinds. In interpret mode DMAs complete when they start, so a
    semaphore is a placeholder int32 ref (``SemaphoreType.DMA((2,))`` is an array of them)."""
    REGULAR = "regular"
    DMA = "dma"
    BARRIER = "barrier"

    def __call__(self, shape):
        return MemoryRef(shape, np.int32, TPUMemorySpace.SEMAPHORE)

    def get_ref_aval(self):
        """The aval of one semaphore (a scalar)."""
        return MemoryRef((), np.int32, TPUMemorySpace.SEMAPHORE).get_ref_aval()


class MemoryRef:
    """A scratch buffer's type: shape, dtype and memory space (``pltpu.VMEM(...)``)."""

    def __init__(self, shape, dtype, memory_space=MemorySpace.DEFAULT):
        self.shape = tuple(int(d) for d in shape)
        self.dtype = np.dtype(dtype)
        self.memory_space = memory_space

    def get_ref_aval(self):
        """The AbstractRef of a buffer of this type."""
        return AbstractRef(ShapedArray(self.shape, self.dtype), str(self.memory_space))

    def __repr__(self):
        return f"MemoryRef(shape={self.shape}, dtype={self.dtype.name}, " \
               f"memory_space={self.memory_space})"


class CompilerParams:
    """Backend compiler parameters (pltpu/plgpu/triton ``CompilerParams``): recorded in
    the ``pallas_call`` equation, not used by interpret mode."""
    PLATFORM = "any"

    def __init__(self, **kwargs):
        self.__dict__.update(kwargs)

    def __repr__(self):
        fields = ", ".join(f"{k}={v!r}" for k, v in sorted(vars(self).items()))
        return f"{type(self).__name__}({fields})"

    def __eq__(self, other):
        return type(self) is type(other) and vars(self) == vars(other)

    def __hash__(self):
        return hash((type(self), tuple(sorted((k, repr(v)) for k, v in vars(self).items()))))


@dataclasses.dataclass(frozen=True)
class CostEstimate:
    """A hint for XLA's scheduler; recorded, not used by interpret mode."""
    flops: int
    transcendentals: int
    bytes_accessed: int
    remote_bytes_transferred: int = 0


class GridSpec:
    """A grid with the operands' block specs and the kernel's scratch buffers."""

    def __init__(self, grid=(), in_specs=no_block_spec, out_specs=no_block_spec,
                 scratch_shapes=()):
        if isinstance(in_specs, list):
            in_specs = tuple(in_specs)
        if isinstance(out_specs, list):
            out_specs = tuple(out_specs)
        self.grid = _canonical_grid(grid)
        self.in_specs = in_specs
        self.out_specs = out_specs
        self.scratch_shapes = tuple(scratch_shapes)
        self.num_scalar_prefetch = 0


def _canonical_grid(grid):
    if grid is None:
        return ()
    if isinstance(grid, (int, np.integer)):
        grid = (grid,)
    try:
        grid = tuple(grid)
    except TypeError:
        raise ValueError(f"Grid must be an int or a tuple of ints, got {grid!r}") from None
    if grid and isinstance(grid[0], tuple):   # named grid: ((name, size), ...)
        grid = tuple(g[1] for g in grid)
    out = []
    for g in grid:
        if isinstance(g, bool) or not isinstance(g, (int, np.integer)):
            raise ValueError(f"Grid must be a tuple of integers, got {grid!r}: jaxlite's "
                             "interpret mode needs static grid sizes")
        if g < 0:
            raise ValueError(f"Grid dimensions must be >= 0, got {grid!r}")
        out.append(int(g))
    return tuple(out)


canonical_grid = _canonical_grid


class BlockMapping:
    """One operand's blocking: canonical block dims, the array's aval, the index map (a
    closed jaxpr from the grid indices to one block index per dimension) and the ref aval
    the kernel sees."""

    def __init__(self, block_shape, array_aval, index_map_jaxpr, block_aval, origin):
        self.block_shape = tuple(block_shape)
        self.array_aval = array_aval
        self.index_map_jaxpr = index_map_jaxpr
        self.block_aval = block_aval
        self.origin = origin

    def __repr__(self):
        dims = ", ".join(repr(b) for b in self.block_shape)
        return f"BlockMapping(block_shape=({dims}{',' if len(self.block_shape) == 1 else ''}))"


class GridMapping:
    """The grid, every operand's BlockMapping (inputs, then outputs), which grid
    dimensions vmap added (``program_id`` skips them), the scratch buffers' avals and the
    scalar-prefetch operands' avals (passed whole, before the inputs, to the kernel and to
    every index map)."""

    def __init__(self, grid, block_mappings, num_inputs, num_outputs, vmapped_dims=(),
                 scratch_avals=(), scalar_avals=()):
        self.grid = tuple(grid)
        self.scalar_avals = tuple(scalar_avals)   # scalar-prefetch operands (SMEM refs)
        self.block_mappings = tuple(block_mappings)
        self.num_inputs = num_inputs
        self.num_outputs = num_outputs
        self.vmapped_dims = tuple(vmapped_dims)
        self.scratch_avals = tuple(scratch_avals)

    @property
    def kernel_grid(self):
        """The grid as the kernel sees it (program_id/num_programs), vmapped dims left out."""
        return tuple(g for i, g in enumerate(self.grid) if i not in self.vmapped_dims)

    def __repr__(self):
        bms = ", ".join(repr(b) for b in self.block_mappings)
        if len(self.block_mappings) == 1:
            bms += ","
        return f"GridMapping(grid={self.grid}, block_mappings=({bms}))"


def cdiv(a, b):
    """Ceiling division ``-(-a // b)`` for ints and arrays (traced values included)."""
    if isinstance(a, (int, np.integer)) and isinstance(b, (int, np.integer)):
        return -(-int(a) // int(b))
    from jaxlite._src.prims.operands import asarray_value
    import jaxlite._src.numpy.array_methods  # noqa: F401  (array operators on tracers)
    a, b = asarray_value(a), asarray_value(b)
    return (a + b - 1) // b


def next_power_of_2(x: int) -> int:
    """The smallest power of two >= ``x`` (``x`` >= 0)."""
    if x < 0:
        raise ValueError("`next_power_of_2` requires a non-negative integer.")
    return 1 if x == 0 else 1 << (x - 1).bit_length()


def align_to(x: int, y: int) -> int:
    """``x`` rounded up to a multiple of ``y``."""
    return cdiv(x, y) * y


def strides_from_shape(shape) -> tuple:
    """Row-major element strides of ``shape``."""
    size = math.prod(shape)
    out = []
    for s in shape:
        size //= s
        out.append(size)
    return tuple(out)
