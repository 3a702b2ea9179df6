"""Pallas in interpret mode: kernels over refs, grids, BlockSpecs, masks, atomics, scratch.

Each kernel is written once against a namespace ``m`` (``m.jax``, ``m.jnp``, ``m.pl``,
``m.plt``, ``m.pltpu``) and run on jaxlite; results are checked against NumPy references
always, and against real JAX's interpret mode (values, and jaxpr text where JAX prints it)
when JAX is installed.
"""
import functools
import linecache
import types

import numpy as np
import pytest

import jaxlite
import jaxlite.numpy as jlnp
from jaxlite.experimental import pallas as jl_pl
from jaxlite.experimental.pallas import tpu as jl_pltpu
from jaxlite.experimental.pallas import triton as jl_plt

LITE = types.SimpleNamespace(jax=jaxlite, jnp=jlnp, pl=jl_pl, pltpu=jl_pltpu, plt=jl_plt)


def _real():
    jax = pytest.importorskip("jax")
    import jax.numpy as jnp
    from jax.experimental import pallas as pl
    from jax.experimental.pallas import tpu as pltpu
    from jax.experimental.pallas import triton as plt
    from jax_print_compat import use_numpy1_scalar_repr
    use_numpy1_scalar_repr()
    return types.SimpleNamespace(jax=jax, jnp=jnp, pl=pl, pltpu=pltpu, plt=plt)


def _same(a, b, **kw):
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape and a.dtype == b.dtype, (a.dtype, a.shape, b.dtype, b.shape)
    np.testing.assert_allclose(a, b, equal_nan=True, **kw)


def _rand(*shape, seed=0):
    return np.random.RandomState(seed).randn(*shape).astype(np.float32)


# ----------------------------------------------------------------------------- programs

def add_vectors(m, x, y):
    def add_vectors_kernel(x_ref, y_ref, o_ref):
        x, y = x_ref[...], y_ref[...]
        o_ref[...] = x + y

    @m.jax.jit
    def f(x, y):
        return m.pl.pallas_call(add_vectors_kernel,
                                out_shape=m.jax.ShapeDtypeStruct(x.shape, x.dtype),
                                interpret=True)(x, y)
    return f(x, y)


def iota(m, n):
    def iota_kernel(o_ref):
        i = m.pl.program_id(0)
        o_ref[i] = i
    return m.pl.pallas_call(iota_kernel, out_shape=m.jax.ShapeDtypeStruct((n,), m.jnp.int32),
                            grid=(n,), interpret=True)()


def quickstart_matmul(m, x, y, activation=None):
    def matmul_kernel(x_ref, y_ref, z_ref, *, activation):
        z = x_ref[...] @ y_ref[...]
        z_ref[...] = z if activation is None else activation(z)
    return m.pl.pallas_call(
        functools.partial(matmul_kernel, activation=activation),
        out_shape=m.jax.ShapeDtypeStruct((x.shape[0], y.shape[1]), x.dtype),
        grid=(2, 2),
        in_specs=[m.pl.BlockSpec((x.shape[0] // 2, x.shape[1]), lambda i, j: (i, 0)),
                  m.pl.BlockSpec((y.shape[0], y.shape[1] // 2), lambda i, j: (0, j))],
        out_specs=m.pl.BlockSpec((x.shape[0] // 2, y.shape[1] // 2), lambda i, j: (i, j)),
        interpret=True)(x, y)


def pipelined_add(m, x, y):
    def add_matrices_kernel(x_ref, y_ref, z_ref):
        z_ref[:, :] = x_ref[:, :] + y_ref[:, :]
    spec = m.pl.BlockSpec((x.shape[0] // 2, x.shape[1]), lambda i: (i, 0))
    return m.pl.pallas_call(add_matrices_kernel, out_shape=x, in_specs=[spec, spec],
                            out_specs=spec, grid=(2,), interpret=True)(x, y)


def acc_matmul(m, x, y, bm, bk, bn):
    """The TPU matmul guide's kernel: (i, j, k) grid, VMEM accumulator, fused relu."""
    jnp, pl = m.jnp, m.pl

    def kernel(x_ref, y_ref, z_ref, acc_ref, *, nsteps):
        @pl.when(pl.program_id(2) == 0)
        def _():
            acc_ref[...] = jnp.zeros_like(acc_ref)
        acc_ref[...] += jnp.dot(x_ref[...], y_ref[...], preferred_element_type=jnp.float32)

        @pl.when(pl.program_id(2) == nsteps - 1)
        def _():
            z_ref[...] = jnp.maximum(acc_ref[...], 0).astype(z_ref.dtype)
    (mm, kk), nn = x.shape, y.shape[1]
    return pl.pallas_call(
        functools.partial(kernel, nsteps=kk // bk),
        out_shape=m.jax.ShapeDtypeStruct((mm, nn), x.dtype),
        grid=(mm // bm, nn // bn, kk // bk),
        in_specs=[pl.BlockSpec((bm, bk), lambda i, j, k: (i, k)),
                  pl.BlockSpec((bk, bn), lambda i, j, k: (k, j))],
        out_specs=pl.BlockSpec((bm, bn), lambda i, j, k: (i, j)),
        scratch_shapes=[m.pltpu.VMEM((bm, bn), jnp.float32)],
        compiler_params=m.pltpu.CompilerParams(
            dimension_semantics=("parallel", "parallel", "arbitrary")),
        interpret=True)(x, y)


def blocked_add(m, x, block, grid, index_map, out_shape=None, out_block=None, out_map=None):
    def kernel(x_ref, o_ref):
        o_ref[...] = x_ref[...] + 1
    out_shape = out_shape or x.shape
    return m.pl.pallas_call(
        kernel, out_shape=m.jax.ShapeDtypeStruct(out_shape, x.dtype), grid=grid,
        in_specs=[m.pl.BlockSpec(block, index_map)],
        out_specs=m.pl.BlockSpec(out_block or block, out_map or index_map),
        interpret=True)(x)


# ----------------------------------------------------------------------------- seed 003

def test_seed_003_add_kernel_whole_refs():
    def add_kernel(x_ref, y_ref, out_ref):
        x = x_ref[:, :]
        y = y_ref[:, :]
        out = x + y
        out_ref[:, :] = out
    x, y = _rand(4, 6), _rand(4, 6, seed=1)
    jax_add_kernel = jl_pl.pallas_call(add_kernel,
                                       out_shape=jaxlite.ShapeDtypeStruct(x.shape, x.dtype))
    _same(jax_add_kernel(x, y), x + y)


def test_seed_003_add_kernel_older_blockspec_order():
    """The seed's ``pl.BlockSpec(lambda i, j: (i, j), (m, n))``: the callable comes first
    (JAX's older order, which JAX 0.10.2 no longer accepts; jaxlite takes both)."""
    def add_kernel(x_ref, y_ref, out_ref):
        out_ref[:, :] = x_ref[:, :] + y_ref[:, :]
    M, N, m, n = 3, 2, 4, 5
    x, y = _rand(M * m, N * n), _rand(M * m, N * n, seed=1)
    f = jl_pl.pallas_call(
        add_kernel, out_shape=jaxlite.ShapeDtypeStruct(x.shape, x.dtype),
        in_specs=[jl_pl.BlockSpec(lambda i, j: (i, j), (m, n)),
                  jl_pl.BlockSpec(lambda i, j: (i, j), (m, n))],
        out_specs=jl_pl.BlockSpec(lambda i, j: (i, j), (m, n)), grid=(M, N))
    _same(f(x, y), x + y)
    assert jl_pl.BlockSpec(lambda i: (i,), (4,)).block_shape == (4,)


# ----------------------------------------------------------------------------- quickstart

def test_add_vectors():
    x = np.arange(8, dtype=np.int32)
    _same(add_vectors(LITE, x, x), 2 * x)
    xf = _rand(8)
    _same(add_vectors(LITE, xf, xf), 2 * xf)


def test_iota_program_id():
    out = iota(LITE, 8)
    _same(out, np.arange(8, dtype=np.int32))


@pytest.mark.parametrize("activation", [None, "relu"])
def test_quickstart_matmul(activation):
    x, y = _rand(64, 32), _rand(32, 48, seed=1)
    act = jaxlite.nn.relu if activation else None
    ref = x @ y
    _same(quickstart_matmul(LITE, x, y, act), np.maximum(ref, 0) if act else ref,
          rtol=1e-5, atol=1e-5)


def test_quickstart_vmap():
    x, y = _rand(3, 16, 8), _rand(3, 8, 12, seed=1)
    f = functools.partial(quickstart_matmul, LITE, activation=jaxlite.nn.relu)
    out = jaxlite.vmap(f)(x, y)
    _same(out, np.maximum(np.einsum("bij,bjk->bik", x, y), 0), rtol=1e-5, atol=1e-5)
    # an unbatched operand and a batch axis that is not the first
    out2 = jaxlite.vmap(f, in_axes=(None, 2))(x[0], np.moveaxis(y, 0, 2))
    _same(out2, np.maximum(np.einsum("ij,bjk->bik", x[0], y), 0), rtol=1e-5, atol=1e-5)
    out3 = jaxlite.jit(jaxlite.vmap(jaxlite.vmap(f)))(x[None], y[None])
    _same(out3[0], out, rtol=1e-6)


def test_pipelined_add():
    x, y = _rand(512, 512), _rand(512, 512, seed=1)
    _same(pipelined_add(LITE, x, y), x + y)
    _same(pipelined_add(LITE, jlnp.ones((512, 512)), jlnp.ones((512, 512))),
          np.full((512, 512), 2, np.float32))


@pytest.mark.parametrize("shape,block", [((256, 256), 128), ((128, 64), 32)])
def test_accumulator_matmul(shape, block):
    x, y = _rand(*shape), _rand(shape[1], shape[0], seed=1)
    out = acc_matmul(LITE, x, y, block, block, block)
    _same(out, np.maximum(x @ y, 0), rtol=1e-4, atol=1e-4)
    out_jit = jaxlite.jit(functools.partial(acc_matmul, LITE, bm=block, bk=block,
                                            bn=block))(x, y)
    _same(out_jit, out)


def test_program_id_num_programs_grid_order():
    """Grid steps run in row-major order; program_id/num_programs see each step."""
    def kernel(o_ref):
        i, j = jl_pl.program_id(0), jl_pl.program_id(1)
        o_ref[i, j] = i * 100 + j * 10 + jl_pl.num_programs(1)
    out = jl_pl.pallas_call(kernel, out_shape=jaxlite.ShapeDtypeStruct((2, 3), np.int32),
                            grid=(2, 3))()
    _same(out, np.array([[3, 13, 23], [103, 113, 123]], np.int32))

    order = []

    def kernel2(x_ref, o_ref):
        o_ref[...] = x_ref[...] + jl_pl.program_id(0) * 10 + jl_pl.program_id(1)
    out = jl_pl.pallas_call(kernel2, out_shape=jaxlite.ShapeDtypeStruct((4, 6), np.float32),
                            grid=(2, 3), in_specs=[jl_pl.BlockSpec((2, 2), lambda i, j: (i, j))],
                            out_specs=jl_pl.BlockSpec((2, 2), lambda i, j: (i, j)))(
        np.zeros((4, 6), np.float32))
    ref = np.repeat(np.repeat(np.arange(2)[:, None] * 10 + np.arange(3), 2, 0), 2, 1)
    _same(out, ref.astype(np.float32))
    assert not order


# ----------------------------------------------------------------------------- BlockSpecs

def test_non_dividing_grid_pads_with_uninitialised_values():
    x = np.arange(10, dtype=np.float32)
    # three blocks of 4 cover 12 elements: the output keeps the first 10
    out = blocked_add(LITE, x, (4,), (3,), lambda i: (i,))
    _same(out, x + 1)

    def sum_kernel(x_ref, o_ref):
        o_ref[...] = jlnp.zeros_like(o_ref) + jlnp.sum(x_ref[...])
    out = jl_pl.pallas_call(sum_kernel, out_shape=jaxlite.ShapeDtypeStruct((3,), np.float32),
                            grid=(3,), in_specs=[jl_pl.BlockSpec((4,), lambda i: (i,))],
                            out_specs=jl_pl.BlockSpec((1,), lambda i: (i,)))(x)
    _same(out, np.array([6, 22, np.nan], np.float32))   # the last block reads NaN padding


def test_out_of_range_block_index_is_clamped_and_unwritten_output_uninitialised():
    x = np.arange(10, dtype=np.float32)
    # block index 3 would start at 12 > 12 - 4: it is clamped to the last block
    out = blocked_add(LITE, x, (4,), (2,), lambda i: (i + 2,), out_shape=(8,),
                      out_map=lambda i: (i,))
    _same(out, np.array([9, 10, np.nan, np.nan] * 2, np.float32))
    # outputs nothing writes stay uninitialised: NaN, the int minimum
    out = blocked_add(LITE, np.zeros(4, np.int32), (2,), (1,), lambda i: (0,))
    _same(out, np.array([1, 1, np.iinfo(np.int32).min, np.iinfo(np.int32).min], np.int32))


def test_none_squeezed_and_element_dims():
    x = np.arange(24, dtype=np.float32).reshape(4, 6)

    def kernel(x_ref, o_ref):
        o_ref[...] = x_ref[...] * 2
    # None squeezes the row dimension: the kernel sees (6,) rows
    out = jl_pl.pallas_call(kernel, out_shape=jaxlite.ShapeDtypeStruct((4, 6), np.float32),
                            grid=(4,), in_specs=[jl_pl.BlockSpec((None, 6), lambda i: (i, 0))],
                            out_specs=jl_pl.BlockSpec((None, 6), lambda i: (i, 0)))(x)
    _same(out, x * 2)
    # pl.Squeezed() is the same as None
    out = jl_pl.pallas_call(
        kernel, out_shape=jaxlite.ShapeDtypeStruct((4, 6), np.float32), grid=(4,),
        in_specs=[jl_pl.BlockSpec((jl_pl.Squeezed(), 6), lambda i: (i, 0))],
        out_specs=jl_pl.BlockSpec((None, 6), lambda i: (i, 0)))(x)
    _same(out, x * 2)
    # pl.Element: the index map gives an element offset (overlapping windows)
    v = np.arange(10, dtype=np.float32)

    def copy(x_ref, o_ref):
        o_ref[...] = x_ref[...]
    out = jl_pl.pallas_call(
        copy, out_shape=jaxlite.ShapeDtypeStruct((3, 4), np.float32), grid=(3,),
        in_specs=[jl_pl.BlockSpec((jl_pl.Element(4),), lambda i: (i * 3,))],
        out_specs=jl_pl.BlockSpec((None, 4), lambda i: (i, 0)))(v)
    _same(out, np.stack([v[0:4], v[3:7], v[6:10]]))
    # a fully squeezed block is a 0-d ref
    out = jl_pl.pallas_call(
        kernel, out_shape=jaxlite.ShapeDtypeStruct((4, 6), np.float32), grid=(4, 6),
        in_specs=[jl_pl.BlockSpec((None, None), lambda i, j: (i, j))],
        out_specs=jl_pl.BlockSpec((None, None), lambda i, j: (i, j)))(x)
    _same(out, x * 2)


def test_grid_spec_int_grid_and_default_specs():
    def kernel(x_ref, o_ref):
        o_ref[...] = x_ref[...] + jl_pl.program_id(0).astype(np.float32)
    spec = jl_pl.BlockSpec((2,), lambda i: (i,))
    gs = jl_pl.GridSpec(grid=3, in_specs=[spec], out_specs=spec)
    out = jl_pl.pallas_call(kernel, out_shape=jaxlite.ShapeDtypeStruct((6,), np.float32),
                            grid_spec=gs)(np.zeros(6, np.float32))
    _same(out, np.array([0, 0, 1, 1, 2, 2], np.float32))
    assert jl_pl.cdiv(10, 4) == 3
    _same(jl_pl.cdiv(jlnp.int32(10), 4), np.int32(3))


def test_block_spec_errors():
    x = np.zeros(10, np.float32)
    with pytest.raises(ValueError, match="same number of dimensions"):
        blocked_add(LITE, x, (2, 2), (1,), lambda i: (0, 0))
    with pytest.raises(ValueError, match="must return 1 values"):
        blocked_add(LITE, x, (2,), (1,), lambda i: (0, 0))
    with pytest.raises(ValueError, match="integer scalars"):
        blocked_add(LITE, x, (2,), (1,), lambda i: (0.5,))
    with pytest.raises(ValueError, match="Grid"):
        blocked_add(LITE, x, (2,), (1.5,), lambda i: (i,))


def test_kernel_errors():
    def returns(x_ref, o_ref):
        o_ref[...] = x_ref[...]
        return 1
    f = jl_pl.pallas_call(returns, out_shape=jaxlite.ShapeDtypeStruct((2,), np.float32))
    with pytest.raises(ValueError, match="return None"):
        f(np.zeros(2, np.float32))

    def bad_axis(o_ref):
        o_ref[...] = jlnp.zeros_like(o_ref) + jl_pl.program_id(1)
    g = jl_pl.pallas_call(bad_axis, out_shape=jaxlite.ShapeDtypeStruct((2,), np.int32),
                          grid=(2,))
    with pytest.raises(ValueError, match="program_id"):
        g()

    def wrong_dtype(x_ref, o_ref):
        o_ref[...] = x_ref[...].astype(np.int32)
    h = jl_pl.pallas_call(wrong_dtype, out_shape=jaxlite.ShapeDtypeStruct((2,), np.float32))
    with pytest.raises(ValueError, match="dtype"):
        h(np.zeros(2, np.float32))

    with pytest.raises(ValueError, match="pl.program_id can only be called inside"):
        jl_pl.program_id(0)
    with pytest.raises(NotImplementedError, match="custom_vjp"):
        jaxlite.grad(lambda x: add_vectors(LITE, x, x).sum())(np.ones(3, np.float32))


def test_closing_over_a_tracer_is_an_error():
    @jaxlite.jit
    def f(x, s):
        def kernel(x_ref, o_ref):
            o_ref[...] = x_ref[...] * s
        return jl_pl.pallas_call(kernel, out_shape=jaxlite.ShapeDtypeStruct(x.shape,
                                                                            x.dtype))(x)
    with pytest.raises(ValueError, match="closes over traced values"):
        f(np.ones(3, np.float32), 2.0)


# ----------------------------------------------------------------------------- refs

def test_ref_indexing_forms():
    def kernel(x_ref, o_ref):
        o_ref[...] = jlnp.zeros_like(o_ref)
        o_ref[0, :] = x_ref[1, :]                     # integer row
        o_ref[1, jl_pl.ds(2, 3)] = x_ref[0, 0:3]      # pl.ds and a Python slice
        i = jl_pl.program_id(0)
        o_ref[2, jl_pl.dslice(i, 2)] = x_ref[2, jl_pl.ds(i + 1, 2)]   # traced starts
        o_ref[3] = x_ref[3, ::-1] if False else x_ref[3]
        o_ref[3, 1] += 100.0
        o_ref[..., 5] = x_ref[:, 0] * 0 - 1           # ellipsis
    x = np.arange(24, dtype=np.float32).reshape(4, 6)
    out = jl_pl.pallas_call(kernel, out_shape=jaxlite.ShapeDtypeStruct((4, 6), np.float32),
                            grid=(1,))(x)
    ref = np.zeros((4, 6), np.float32)
    ref[0] = x[1]
    ref[1, 2:5] = x[0, 0:3]
    ref[2, 0:2] = x[2, 1:3]
    ref[3] = x[3]
    ref[3, 1] += 100
    ref[:, 5] = -1
    _same(out, ref)


def test_dynamic_start_is_clamped():
    def kernel(x_ref, o_ref):
        o_ref[...] = x_ref[jl_pl.ds(jl_pl.program_id(0) * 3, 4)]
    x = np.arange(8, dtype=np.float32)
    out = jl_pl.pallas_call(kernel, out_shape=jaxlite.ShapeDtypeStruct((3, 4), np.float32),
                            grid=(3,), out_specs=jl_pl.BlockSpec((None, 4), lambda i: (i, 0)))(x)
    _same(out, np.stack([x[0:4], x[3:7], x[4:8]]))   # start 6 clamps to 8 - 4


def test_static_out_of_bounds_indices():
    """As JAX: a static pl.ds past the end raises; Python slices clip; integer indices
    count negatives from the end and clamp."""
    def kernel(x_ref, o_ref):
        o_ref[...] = x_ref[jl_pl.ds(6, 4)]
    f = jl_pl.pallas_call(kernel, out_shape=jaxlite.ShapeDtypeStruct((4,), np.float32))
    with pytest.raises(ValueError, match="out of bound slice: start=6, size=4"):
        f(np.zeros(8, np.float32))

    def kernel2(x_ref, o_ref):
        o_ref[0:2] = x_ref[6:10]
        o_ref[2] = x_ref[9]
        o_ref[3] = x_ref[-1] * 2
    g = jl_pl.pallas_call(kernel2, out_shape=jaxlite.ShapeDtypeStruct((4,), np.float32))
    _same(g(np.arange(8, dtype=np.float32)), np.array([6, 7, 7, 14], np.float32))


def test_masked_load_store_ragged_edge():
    """Triton-style: blocks of 4 over 10 elements, the last one masked at the edge."""
    def kernel(x_ref, o_ref):
        i = jl_pl.program_id(0)
        idx = i * 4 + jlnp.arange(4)
        mask = idx < x_ref.shape[0]
        v = jl_plt.load(x_ref.at[jl_pl.ds(i * 4, 4)], mask=mask, other=-1.0)
        jl_plt.store(o_ref.at[jl_pl.ds(i * 4, 4)], v * 2, mask=mask)
    x = np.arange(10, dtype=np.float32)
    f = jl_pl.pallas_call(kernel, out_shape=jaxlite.ShapeDtypeStruct((10,), np.float32),
                          grid=(3,))
    _same(f(x), x * 2)

    def load_other(x_ref, o_ref):
        mask = jlnp.arange(4) < 2
        o_ref[...] = jl_pl.load(x_ref, (jl_pl.ds(0, 4),), mask=mask, other=7.0)
    g = jl_pl.pallas_call(load_other, out_shape=jaxlite.ShapeDtypeStruct((4,), np.float32))
    _same(g(np.arange(4, dtype=np.float32)), np.array([0, 1, 7, 7], np.float32))

    def load_past_end(x_ref, o_ref):   # unmasked lanes past the end read NaN
        o_ref[...] = jl_plt.load(x_ref.at[jl_pl.ds(jl_pl.program_id(0) + 2, 4)])
    h = jl_pl.pallas_call(load_past_end, out_shape=jaxlite.ShapeDtypeStruct((4,), np.float32),
                          grid=(1,))
    _same(h(np.arange(4, dtype=np.float32)), np.array([2, 3, np.nan, np.nan], np.float32))


def test_atomics():
    def kernel(x_ref, o_ref, old_ref):
        o_ref[...] = jlnp.zeros_like(o_ref)
        idx = jlnp.array([0, 1, 1, 3])
        old_ref[...] = jl_pl.atomic_add(o_ref, (idx,), x_ref[...])
        jl_pl.atomic_max(o_ref, (2,), 5.0)
        jl_pl.atomic_min(o_ref, (3,), -1.0, mask=jlnp.bool_(False))
    x = np.array([1, 2, 3, 4], np.float32)
    o, old = jl_pl.pallas_call(
        kernel, out_shape=(jaxlite.ShapeDtypeStruct((4,), np.float32),
                           jaxlite.ShapeDtypeStruct((4,), np.float32)))(x)
    _same(o, np.array([1, 5, 5, 4], np.float32))   # repeated index 1 adds twice
    _same(old, np.zeros(4, np.float32))

    def ints(o_ref):
        o_ref[...] = jlnp.array([1, 2, 3, 4], np.int32)
        jl_pl.atomic_or(o_ref, (0,), 6)
        jl_pl.atomic_xchg(o_ref, (1,), 9)
        jl_pl.atomic_cas(o_ref.at[2], 3, 30)
        jl_pl.atomic_cas(o_ref.at[3], 0, 40)
    out = jl_pl.pallas_call(ints, out_shape=jaxlite.ShapeDtypeStruct((4,), np.int32))()
    _same(out, np.array([7, 9, 30, 4], np.int32))


def test_fori_loop_while_and_cond_inside_kernels():
    def kernel(x_ref, o_ref):
        o_ref[...] = jlnp.zeros_like(o_ref)

        def body(j, carry):
            o_ref[j] = x_ref[j] * 2 + carry
            return carry + 1.0
        total = jaxlite.lax.fori_loop(0, x_ref.shape[0], body, 0.0)
        n = jl_pl.program_id(0) + 2     # a traced bound: a while loop

        def body2(j, c):
            o_ref[j] += 10.0
            return c
        jaxlite.lax.fori_loop(0, n, body2, 0)

        @jl_pl.when(total > 3)
        def _():
            o_ref[0] = -total
        jaxlite.lax.cond(total > 100, lambda: None, lambda: jl_pl.store(o_ref, (1,), 5.0))
    x = np.arange(5, dtype=np.float32)
    out = jl_pl.pallas_call(kernel, out_shape=jaxlite.ShapeDtypeStruct((5,), np.float32),
                            grid=(1,))(x)
    ref = x * 2 + np.arange(5)
    ref[:2] += 10
    ref[0] = -5
    ref[1] = 5
    _same(out, ref.astype(np.float32))


def test_run_scoped_and_scratch_shapes():
    def kernel(x_ref, o_ref, s_ref):
        s_ref[...] = x_ref[...] * 2

        def inner(tmp_ref, acc_ref):
            tmp_ref[...] = s_ref[...] + 1
            acc_ref[...] = jlnp.zeros_like(acc_ref)
            acc_ref[...] += tmp_ref[...]
            return jlnp.sum(acc_ref[...])
        total = jl_pl.run_scoped(inner, jl_pltpu.VMEM((4,), np.float32),
                                 jl_pltpu.SMEM((4,), np.float32))
        o_ref[...] = s_ref[...] + total
    x = np.arange(4, dtype=np.float32)
    out = jl_pl.pallas_call(kernel, out_shape=jaxlite.ShapeDtypeStruct((4,), np.float32),
                            scratch_shapes=[jl_pltpu.VMEM((4,), np.float32)])(x)
    _same(out, x * 2 + np.sum(x * 2 + 1))


def test_scratch_persists_across_grid_steps():
    def kernel(x_ref, o_ref, acc_ref):
        @jl_pl.when(jl_pl.program_id(0) == 0)
        def _():
            acc_ref[...] = jlnp.zeros_like(acc_ref)
        acc_ref[...] += x_ref[...]
        o_ref[...] = acc_ref[...]
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    out = jl_pl.pallas_call(kernel, out_shape=jaxlite.ShapeDtypeStruct((3, 4), np.float32),
                            grid=(3,), in_specs=[jl_pl.BlockSpec((None, 4), lambda i: (i, 0))],
                            out_specs=jl_pl.BlockSpec((None, 4), lambda i: (i, 0)),
                            scratch_shapes=[jl_pltpu.VMEM((4,), np.float32)])(x)
    _same(out, np.cumsum(x, 0))


def test_input_output_aliases_and_pytree_outputs():
    def kernel(x_ref, y_ref, o_ref, p_ref):
        o_ref[0] = 100.0                      # the rest keeps x's values
        p_ref["a"][...] = y_ref[...] * 2
        p_ref["b"][...] = (y_ref[...] > 0).astype(np.int32)
    x, y = np.arange(4, dtype=np.float32), np.array([-1, 1], np.float32)
    out = jl_pl.pallas_call(
        kernel, input_output_aliases={0: 0},
        out_shape=[jaxlite.ShapeDtypeStruct((4,), np.float32),
                   {"a": jaxlite.ShapeDtypeStruct((2,), np.float32),
                    "b": jaxlite.ShapeDtypeStruct((2,), np.int32)}])(x, y)
    _same(out[0], np.array([100, 1, 2, 3], np.float32))
    _same(out[1]["a"], y * 2)
    _same(out[1]["b"], np.array([0, 1], np.int32))
    _same(x, np.arange(4, dtype=np.float32))   # the caller's array is untouched
    with pytest.raises(ValueError, match="same shape and dtype"):
        jl_pl.pallas_call(kernel, input_output_aliases={1: 0},
                          out_shape=[jaxlite.ShapeDtypeStruct((4,), np.float32),
                                     {"a": jaxlite.ShapeDtypeStruct((2,), np.float32),
                                      "b": jaxlite.ShapeDtypeStruct((2,), np.int32)}])(x, y)


def test_kernel_writing_an_input_ref_leaves_the_input_array_alone():
    def kernel(x_ref, o_ref):
        x_ref[...] = x_ref[...] + 1
        o_ref[...] = x_ref[...]
    x = jlnp.arange(3.0)
    out = jl_pl.pallas_call(kernel, out_shape=jaxlite.ShapeDtypeStruct((3,), np.float32))(x)
    _same(out, np.arange(3, dtype=np.float32) + 1)
    _same(x, np.arange(3, dtype=np.float32))


def test_read_then_write_keeps_value_semantics():
    def kernel(o_ref):
        o_ref[...] = jlnp.ones_like(o_ref)
        v = o_ref[...]
        o_ref[...] = v * 5
        o_ref[...] = o_ref[...] + v     # v is still the ones read before the writes
    out = jl_pl.pallas_call(kernel, out_shape=jaxlite.ShapeDtypeStruct((3,), np.float32))()
    _same(out, np.full(3, 6, np.float32))


# ----------------------------------------------------------------------------- interpreter

def test_kernel_traced_once_per_signature_and_generated_code_in_linecache():
    calls = []

    def kernel(x_ref, o_ref):
        calls.append(1)
        o_ref[...] = x_ref[...] + 1
    f = jl_pl.pallas_call(kernel, out_shape=jaxlite.ShapeDtypeStruct((4,), np.float32),
                          grid=(2,), in_specs=[jl_pl.BlockSpec((2,), lambda i: (i,))],
                          out_specs=jl_pl.BlockSpec((2,), lambda i: (i,)))
    x = np.zeros(4, np.float32)
    for _ in range(3):
        _same(f(x), x + 1)
    assert len(calls) == 1
    from jaxlite._src.pallas.pallas_call import pallas_call_p
    closed, gm, _, _ = next(iter(f._cache.values()))
    runner = pallas_call_p.runner(dict(jaxpr=closed, grid_mapping=gm, input_output_aliases=(),
                                       name=None, debug=False))
    filename = runner.__code__.co_filename
    text = "".join(linecache.getlines(filename))
    assert "for g0 in range(2):" in text and "_kernel(" in text


def test_errors_in_kernels_point_into_generated_code():
    """A failure while a kernel runs has the generated grid loop and kernel in its
    traceback, with their source lines (as pdb would show them)."""
    import traceback

    def fail(v):
        raise ValueError(f"bad block {v}")

    def kernel(x_ref, o_ref):
        o_ref[...] = jaxlite.pure_callback(fail, jaxlite.ShapeDtypeStruct((2,), np.float32),
                                           x_ref[...])
    f = jl_pl.pallas_call(kernel, out_shape=jaxlite.ShapeDtypeStruct((4,), np.float32),
                          grid=(2,), in_specs=[jl_pl.BlockSpec((2,), lambda i: (i,))],
                          out_specs=jl_pl.BlockSpec((2,), lambda i: (i,)), name="failing")
    with pytest.raises(jaxlite.errors.JaxRuntimeError, match="bad block") as info:
        f(np.zeros(4, np.float32))
    frames = traceback.extract_tb(info.tb)
    loop = [fr for fr in frames if fr.filename.startswith("<jaxlite-pallas:pallas_failing")]
    assert loop and loop[0].line.startswith("_kernel(")
    assert any(fr.filename.startswith("<jaxlite-jit:failing_kernel") for fr in frames)


def test_debug_prints_the_generated_code(capsys):
    def kernel(x_ref, o_ref):
        o_ref[...] = x_ref[...]
    jl_pl.pallas_call(kernel, out_shape=jaxlite.ShapeDtypeStruct((2,), np.float32),
                      debug=True, name="copy")(np.zeros(2, np.float32))
    out = capsys.readouterr().out
    assert "def pallas_copy(" in out and "<-" not in out.split("def pallas_copy(")[0][-1:]


def test_make_jaxpr_prints_ref_ops():
    def kernel(x_ref, o_ref):
        o_ref[:, jl_pl.ds(0, 2)] = x_ref[:, 0:2] * 2
        o_ref[1, :] += 1.0
    f = jl_pl.pallas_call(kernel, out_shape=jaxlite.ShapeDtypeStruct((4, 4), np.float32),
                          grid=(2,), in_specs=[jl_pl.BlockSpec((4, 4), lambda i: (0, 0))],
                          out_specs=jl_pl.BlockSpec((4, 4), lambda i: (0, 0)))
    text = str(jaxlite.make_jaxpr(f)(np.ones((4, 4), np.float32)))
    assert "{ lambda ; c:Ref<default>{f32[4,4]} d:Ref<default>{f32[4,4]}. let" in text
    assert "e:f32[4,2] <- c[:,:2]" in text
    assert "g:f32[4,2], d[:,:2] <- d[:,:2], f" in text
    assert "h:f32[4] <- d[1,:]" in text
    assert "grid_mapping=GridMapping(grid=(2,)" in text


# ----------------------------------------------------------------------------- against JAX

def _kernels(m):
    """(name, thunk) pairs running the docs' programs on namespace ``m``."""
    x, y = _rand(64, 32), _rand(32, 48, seed=1)
    a, b = _rand(3, 16, 8), _rand(3, 8, 12, seed=1)
    relu = m.jax.nn.relu
    v = np.arange(10, dtype=np.float32)
    return [
        ("add_vectors", lambda: add_vectors(m, np.arange(8, dtype=np.int32),
                                            np.arange(8, dtype=np.int32))),
        ("iota", lambda: iota(m, 8)),
        ("matmul_relu", lambda: quickstart_matmul(m, x, y, relu)),
        ("vmap_matmul", lambda: m.jax.vmap(functools.partial(quickstart_matmul, m,
                                                             activation=relu))(a, b)),
        ("pipelined_add", lambda: pipelined_add(m, _rand(64, 32), _rand(64, 32, seed=1))),
        ("acc_matmul", lambda: acc_matmul(m, _rand(64, 64), _rand(64, 64, seed=1), 32, 16,
                                          32)),
        ("non_dividing", lambda: blocked_add(m, v, (4,), (3,), lambda i: (i,))),
        ("oob_clamp", lambda: blocked_add(m, v, (4,), (2,), lambda i: (i + 2,),
                                          out_shape=(8,), out_map=lambda i: (i,))),
        ("squeezed", lambda: blocked_add(m, v.reshape(2, 5), (None, 5), (2,),
                                         lambda i: (i, 0))),
        ("element", lambda: blocked_add(m, v, (m.pl.Element(4),), (2,), lambda i: (i * 3,),
                                        out_shape=(8,), out_block=(4,),
                                        out_map=lambda i: (i,))),
    ]


@pytest.mark.parametrize("idx", range(10))
def test_docs_programs_match_jax(idx):
    real = _real()
    name, run_jax = _kernels(real)[idx]
    _, run_lite = _kernels(LITE)[idx]
    _same(run_lite(), run_jax(), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("idx", [0, 2, 4, 6, 8])
def test_docs_jaxprs_match_jax(idx):
    real = _real()
    cases = {
        0: lambda m: (functools.partial(add_vectors, m), (np.arange(8, dtype=np.int32),) * 2),
        2: lambda m: (functools.partial(quickstart_matmul, m,
                                        activation=lambda z: m.jnp.maximum(z, 0)),
                      (_rand(8, 4), _rand(4, 6))),
        4: lambda m: (functools.partial(pipelined_add, m), (_rand(8, 4), _rand(8, 4))),
        6: lambda m: (lambda v: blocked_add(m, v, (4,), (3,), lambda i: (i,)),
                      (np.arange(10, dtype=np.float32),)),
        8: lambda m: (lambda v: blocked_add(m, v, (None, 5), (2,), lambda i: (i, 0)),
                      (np.zeros((2, 5), np.float32),)),
    }
    fj, args = cases[idx](real)
    fl, _ = cases[idx](LITE)
    assert str(jaxlite.make_jaxpr(fl)(*args)) == str(real.jax.make_jaxpr(fj)(*args))


def test_kernel_jaxpr_with_control_flow_matches_jax():
    real = _real()

    def build(m):
        pl, jnp = m.pl, m.jnp

        def k(x_ref, o_ref, s_ref):
            i = pl.program_id(0)
            n = pl.num_programs(0)
            v = m.plt.load(x_ref.at[pl.ds(i * 2, 2)], mask=jnp.arange(2) < n, other=0.)
            m.plt.store(o_ref.at[pl.ds(0, 2)], v, mask=jnp.arange(2) < 1)
            o_ref[pl.ds(i, 1)] = x_ref[pl.ds(i, 1)]
            s_ref[...] = x_ref[...]

            @pl.when(i == 0)
            def _():
                o_ref[0] = 3.0

            def body(j, c):
                o_ref[j] = s_ref[j] + c
                return c + 1.
            m.jax.lax.fori_loop(0, 2, body, 0.)
        return pl.pallas_call(k, out_shape=m.jax.ShapeDtypeStruct((4,), jnp.float32),
                              grid=(2,), in_specs=[pl.BlockSpec((4,), lambda i: (0,))],
                              out_specs=pl.BlockSpec((4,), lambda i: (0,)),
                              scratch_shapes=[m.pltpu.VMEM((4,), jnp.float32)],
                              interpret=True)
    a = np.arange(4, dtype=np.float32)
    assert str(jaxlite.make_jaxpr(build(LITE))(a)) == str(real.jax.make_jaxpr(build(real))(a))
    _same(build(LITE)(a), build(real)(a))


# ----------------------------------------------------------------------------- scalar prefetch

def gather_rows(m, idx, x):
    """Scalar prefetch: the index map picks the row block from the prefetched indices."""
    def kernel(idx_ref, x_ref, o_ref):
        o_ref[...] = x_ref[...] * 10 + idx_ref[m.pl.program_id(0)]
    return m.pl.pallas_call(
        kernel, out_shape=m.jax.ShapeDtypeStruct((idx.shape[0], x.shape[1]), x.dtype),
        grid_spec=m.pltpu.PrefetchScalarGridSpec(
            num_scalar_prefetch=1, grid=(idx.shape[0],),
            in_specs=[m.pl.BlockSpec((1, x.shape[1]), lambda i, idx_ref: (idx_ref[i], 0))],
            out_specs=m.pl.BlockSpec((1, x.shape[1]), lambda i, idx_ref: (i, 0))),
        interpret=True)(idx, x)


def test_scalar_prefetch():
    idx = np.array([3, 0, 2, 2], np.int32)
    x = np.arange(12, dtype=np.float32).reshape(4, 3)
    ref = (x[idx] * 10 + idx[:, None]).astype(np.float32)
    _same(gather_rows(LITE, idx, x), ref)
    _same(jaxlite.jit(functools.partial(gather_rows, LITE))(idx, x), ref)
    xs = np.stack([x, x + 1])
    _same(jaxlite.vmap(functools.partial(gather_rows, LITE), in_axes=(None, 0))(idx, xs),
          np.stack([ref, ref + 10]))
    with pytest.raises(NotImplementedError, match="scalar-prefetch"):
        jaxlite.vmap(functools.partial(gather_rows, LITE))(np.stack([idx, idx]), xs)


def test_scalar_prefetch_matches_jax():
    real = _real()
    idx = np.array([3, 0, 2, 2], np.int32)
    x = np.arange(12, dtype=np.float32).reshape(4, 3)
    _same(gather_rows(LITE, idx, x), gather_rows(real, idx, x))
    assert str(jaxlite.make_jaxpr(functools.partial(gather_rows, LITE))(idx, x)) == \
        str(real.jax.make_jaxpr(functools.partial(gather_rows, real))(idx, x))


def _addupdate_program(m, ref_addupdate):
    def kernel(x_ref, o_ref):
        o_ref[...] = x_ref[...]
        ref_addupdate(o_ref, (1,), m.jnp.float32(5.0))
        ref_addupdate(o_ref, None, x_ref[...])
    return m.pl.pallas_call(kernel, out_shape=m.jax.ShapeDtypeStruct((3,), m.jnp.float32),
                            interpret=True)


def test_addupdate():
    from jaxlite._src.prims.state import ref_addupdate
    f = _addupdate_program(LITE, ref_addupdate)
    x = np.arange(3, dtype=np.float32)
    _same(f(x), np.array([0, 7, 4], np.float32))
    text = str(jaxlite.make_jaxpr(f)(x))
    assert "d[1] += 5.0:f32[]" in text and "d[...] += " in text


def test_addupdate_matches_jax():
    real = _real()
    from jax._src.state.primitives import ref_addupdate as jax_addupdate
    from jaxlite._src.prims.state import ref_addupdate
    x = np.arange(3, dtype=np.float32)
    fl, fj = _addupdate_program(LITE, ref_addupdate), _addupdate_program(real, jax_addupdate)
    assert str(jaxlite.make_jaxpr(fl)(x)) == str(real.jax.make_jaxpr(fj)(x))
    _same(fl(x), fj(x))


def _refs_through_control_flow(m):
    lax = m.jax.lax

    def kernel(x_ref, o_ref):
        o_ref[...] = x_ref[...]

        def t(r):
            r[0] = 1.0

        def f(r):
            r[0] = 2.0
        lax.cond(x_ref[0] > 0, t, f, o_ref)          # a ref as an explicit operand
        lax.switch(1, [t, f], o_ref.at[1:])           # a view of a ref

        def body(c, xv):
            o_ref[2] += xv
            return c, None
        lax.scan(body, 0, m.jnp.arange(3.0))

        def wb(i):
            o_ref[i] += 100.0
            return i + 1
        lax.while_loop(lambda i: i < 3, wb, 0)
    return m.pl.pallas_call(kernel, out_shape=m.jax.ShapeDtypeStruct((4,), m.jnp.float32),
                            interpret=True)


def test_refs_and_views_through_control_flow():
    x = np.arange(4, dtype=np.float32)
    _same(_refs_through_control_flow(LITE)(x), np.array([102, 102, 105, 3], np.float32))


def test_refs_through_control_flow_match_jax():
    real = _real()
    x = np.arange(4, dtype=np.float32)
    _same(_refs_through_control_flow(LITE)(x), _refs_through_control_flow(real)(x))


def test_pallas_call_in_shard_map_and_pmap_on_two_devices():
    """Each device runs the grid loop of its shard (the grid state is per thread)."""
    from multidevice import run_snippet
    out = run_snippet("""
        import numpy as np, jaxlite
        from jaxlite.experimental import pallas as pl
        from jaxlite.sharding import Mesh, PartitionSpec as P
        from jaxlite.experimental.shard_map import shard_map

        def k(x_ref, o_ref):
            o_ref[...] = x_ref[...] * 2 + pl.program_id(0)
        f = pl.pallas_call(k, out_shape=jaxlite.ShapeDtypeStruct((4, 3), np.float32),
                           grid=(2,), in_specs=[pl.BlockSpec((2, 3), lambda i: (i, 0))],
                           out_specs=pl.BlockSpec((2, 3), lambda i: (i, 0)))
        x = np.arange(24, dtype=np.float32).reshape(8, 3)
        mesh = Mesh(np.array(jaxlite.devices()), ('x',))
        g = jaxlite.jit(shard_map(f, mesh=mesh, in_specs=P('x'), out_specs=P('x')))
        print(np.asarray(g(x)).tolist())
        print(np.asarray(jaxlite.pmap(f)(x.reshape(2, 4, 3))).reshape(8, 3).tolist())
    """, n=2)
    x = np.arange(24, dtype=np.float32).reshape(8, 3)
    ref = (x * 2 + np.array([0, 0, 1, 1, 0, 0, 1, 1], np.float32)[:, None]).tolist()
    assert out.split("\n")[:2] == [str(ref), str(ref)]


def _manual_dma(m, interpret):
    pl, pltpu, jnp = m.pl, m.pltpu, m.jnp

    def kernel(x_hbm, o_ref, buf, sems):
        i = pl.program_id(0)
        cp = pltpu.make_async_copy(x_hbm.at[pl.ds(i * 2, 2)], buf, sems.at[0])
        cp.start()
        cp.wait()
        buf[...] = buf[...] + 1
        pltpu.async_copy(buf, o_ref, sems.at[1]).wait()
        pltpu.sync_copy(x_hbm.at[pl.ds(0, 1)], o_ref.at[pl.ds(1, 1)])
    return pl.pallas_call(
        kernel, grid=(4,), in_specs=[pl.BlockSpec(memory_space=pl.ANY)],
        out_specs=pl.BlockSpec((2, 128), lambda i: (i, 0)),
        out_shape=m.jax.ShapeDtypeStruct((8, 128), jnp.float32),
        scratch_shapes=[pltpu.VMEM((2, 128), jnp.float32), pltpu.SemaphoreType.DMA((2,))],
        interpret=interpret)


def test_manual_dma_copies():
    """pltpu.make_async_copy/async_copy/sync_copy from a whole (pl.ANY) ref: interpret mode
    copies when the DMA starts; DMA semaphores are placeholder scratch refs."""
    x = np.arange(8 * 128, dtype=np.float32).reshape(8, 128)
    out = _manual_dma(LITE, True)(x)
    ref = x + 1
    ref[1::2] = x[0]
    _same(out, ref)


def test_manual_dma_copies_match_jax():
    real = _real()
    x = np.arange(8 * 128, dtype=np.float32).reshape(8, 128)
    _same(_manual_dma(LITE, True)(x), _manual_dma(real, real.pltpu.InterpretParams())(x))


def test_debug_print_in_kernels(capfd):
    def k(x_ref, o_ref):
        jl_pl.debug_print("step {} x0={}", jl_pl.program_id(0), x_ref[0])
        o_ref[...] = x_ref[...]
    f = jl_pl.pallas_call(k, out_shape=jaxlite.ShapeDtypeStruct((4,), np.float32), grid=(2,))
    jaxlite.block_until_ready(f(jlnp.arange(4.0)))
    jaxlite.effects_barrier()
    assert capfd.readouterr().out.splitlines()[-2:] == ["step 0 x0=0.0", "step 1 x0=0.0"]



# ----------------------------------------------------------------------------- forward mode

def _sin_kernel_call(m):
    def k(x_ref, o_ref):
        o_ref[...] = m.jnp.sin(x_ref[...]) * 2
    return m.pl.pallas_call(k, out_shape=m.jax.ShapeDtypeStruct((4,), m.jnp.float32),
                            grid=(2,), in_specs=[m.pl.BlockSpec((2,), lambda i: (i,))],
                            out_specs=m.pl.BlockSpec((2,), lambda i: (i,)), interpret=True)


def test_jvp_of_pallas_call():
    """Forward mode differentiates the kernel: tangent refs follow their primal's blocks;
    scratch accumulators get tangent scratch."""
    x = np.arange(4, dtype=np.float32)
    p, t = jaxlite.jvp(_sin_kernel_call(LITE), (x,), (np.ones(4, np.float32),))
    _same(p, (np.sin(x) * 2).astype(np.float32), rtol=1e-6)
    _same(t, (np.cos(x) * 2).astype(np.float32), rtol=1e-6)
    _, tv = jaxlite.jvp(jaxlite.jit(jaxlite.vmap(_sin_kernel_call(LITE))),
                        (np.stack([x, x]),), (np.ones((2, 4), np.float32),))
    _same(tv, np.stack([np.cos(x) * 2] * 2).astype(np.float32), rtol=1e-6)

    def k2(x_ref, y_ref, o_ref, acc_ref):
        @jl_pl.when(jl_pl.program_id(0) == 0)
        def _():
            acc_ref[...] = jlnp.zeros_like(acc_ref)
        acc_ref[...] += x_ref[...] * y_ref[...]
        o_ref[...] = acc_ref[...] ** 2
    g = jl_pl.pallas_call(
        k2, out_shape=jaxlite.ShapeDtypeStruct((2, 3), np.float32), grid=(2,),
        in_specs=[jl_pl.BlockSpec((None, 2, 3), lambda i: (i, 0, 0)),
                  jl_pl.BlockSpec((2, 3), lambda i: (0, 0))],
        out_specs=jl_pl.BlockSpec((2, 3), lambda i: (0, 0)),
        scratch_shapes=[jl_pltpu.VMEM((2, 3), np.float32)])
    xs = (np.arange(12, dtype=np.float32) / 10).reshape(2, 2, 3)
    y = np.full((2, 3), 0.5, np.float32)
    s = xs.sum(0)
    p, t = jaxlite.jvp(g, (xs, y), (np.ones_like(xs), np.zeros_like(y)))
    _same(p, (s * y) ** 2, rtol=1e-6)
    _same(t, 2 * (s * y) * (2 * y), rtol=1e-6)
    _same(jaxlite.jacfwd(lambda v: g(xs, v).sum())(y), 2 * y * s ** 2, rtol=1e-6)


def test_jvp_matches_jax():
    real = _real()
    x = np.arange(4, dtype=np.float32)
    tl = jaxlite.jvp(_sin_kernel_call(LITE), (x,), (np.ones(4, np.float32),))
    tj = real.jax.jvp(_sin_kernel_call(real), (x,), (np.ones(4, np.float32),))
    _same(tl[0], tj[0], rtol=1e-6)
    _same(tl[1], tj[1], rtol=1e-6)


def test_loop_with_scoped_and_small_helpers():
    def kernel(x_ref, o_ref):
        o_ref[...] = jl_pl.empty_like(o_ref) * 0

        @jl_pl.loop(0, 8, step=2)
        def _(i):
            o_ref[i] = x_ref[i] * 10

        total = jl_pl.loop(1, 8, step=2, init_carry=jlnp.float32(0))(
            lambda i, c: c + x_ref[i])

        @jl_pl.with_scoped(jl_pltpu.VMEM((8,), np.float32))
        def use(tmp_ref):
            tmp_ref[...] = jl_pl.broadcast_to(jl_pl.reciprocal(x_ref[1]), (8,))
            o_ref[1] = tmp_ref[0] + total
        use()
    x = np.arange(1, 9, dtype=np.float32)
    out = jl_pl.pallas_call(kernel, out_shape=jaxlite.ShapeDtypeStruct((8,), np.float32),
                            in_specs=[jl_pl.BlockSpec((jl_pl.Blocked(8),), lambda: (0,))])(x)
    ref = np.zeros(8, np.float32)
    ref[0::2] = x[0::2] * 10
    ref[1] = 1 / x[1] + x[1::2].sum()
    _same(out, ref)
