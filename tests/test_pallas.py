"""Pallas in interpret mode: pallas_call, grids and BlockSpecs, the docs' programs, the
generated grid loop, and jaxprs and values against JAX's interpret mode (when installed;
NumPy references always). Refs, masks, atomics, scratch and forward mode are in
test_pallas_refs.py."""
import functools
import linecache

import numpy as np
import pytest

import jaxlite
import jaxlite.numpy as jlnp
from jaxlite.experimental import pallas as jl_pl
from pallas_programs import (LITE, acc_matmul, add_vectors, blocked_add, iota,
                             pipelined_add, quickstart_matmul)
from pallas_programs import rand as _rand
from pallas_programs import real as _real
from pallas_programs import same as _same


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


def test_breakpoint_in_a_kernel_stops_in_generated_code_inside_the_grid_loop():
    """pdb inside a kernel: the kernel's generated code with the user's names bound, and one
    frame up the generated grid loop with the grid indices."""
    import gc
    import io
    import sys
    stdin = io.StringIO("\n".join(["p x", "w", "up", "p g0", "c", "p x", "c"]) + "\n")
    stdout = io.StringIO()

    def kernel(x_ref, o_ref):
        x = x_ref[...] * 2
        jaxlite.debug.breakpoint(stdin=stdin, stdout=stdout)
        o_ref[...] = x
    f = jl_pl.pallas_call(kernel, out_shape=jaxlite.ShapeDtypeStruct((2,), np.float32),
                          grid=(2,), in_specs=[jl_pl.BlockSpec((1,), lambda i: (i,))],
                          out_specs=jl_pl.BlockSpec((1,), lambda i: (i,)))
    was_enabled = gc.isenabled()
    gc.disable()   # no gc callback may become the next line pdb stops at
    try:
        out = f(np.array([1, 2], np.float32))
    finally:
        sys.settrace(None)
        if was_enabled:
            gc.enable()
    _same(out, np.array([2, 4], np.float32))
    text = stdout.getvalue()
    assert "(Pdb) array([2.], dtype=float32)" in text
    assert "(Pdb) array([4.], dtype=float32)" in text
    assert "<jaxlite-jit:kernel_kernel" in text
    assert "<jaxlite-pallas:pallas_kernel" in text and "-> _kernel(x0[g0:g0 + 1, ...]" in text
    assert "(Pdb) 0\n" in text   # g0, the grid index of the first step


def test_bfloat16_blocks_and_padding():
    """The TPU matmul guide's bfloat16 kernel (f32 accumulator); bf16 padding reads NaN."""
    x = _rand(64, 64).astype(jlnp.bfloat16)
    y = _rand(64, 64, seed=1).astype(jlnp.bfloat16)
    out = acc_matmul(LITE, x, y, 32, 32, 32)
    assert out.dtype == jlnp.bfloat16
    ref = np.maximum(x.astype(np.float32) @ y.astype(np.float32), 0)
    np.testing.assert_allclose(np.asarray(out, np.float32), ref, rtol=2e-2, atol=2e-2)
    v = np.arange(10).astype(jlnp.bfloat16)

    def k(x_ref, o_ref):
        o_ref[...] = jlnp.zeros_like(o_ref) + jlnp.sum(x_ref[...])
    f = jl_pl.pallas_call(k, out_shape=jaxlite.ShapeDtypeStruct((3,), jlnp.bfloat16),
                          grid=(3,), in_specs=[jl_pl.BlockSpec((4,), lambda i: (i,))],
                          out_specs=jl_pl.BlockSpec((1,), lambda i: (i,)))
    out = np.asarray(f(v), np.float32)
    assert out[:2].tolist() == [6, 22] and np.isnan(out[2])


def test_unused_pallas_call_is_dead_code_unless_it_has_real_effects():
    """The kernel's ref writes are the call's own business: jit drops an unused call (as
    JAX does) but keeps one whose kernel prints."""
    def quiet(x_ref, o_ref):
        o_ref[...] = x_ref[...] + 1

    def loud(x_ref, o_ref):
        jl_pl.debug_print("x={}", x_ref[0])
        o_ref[...] = x_ref[...] + 1

    def make(kernel):
        call = jl_pl.pallas_call(kernel, out_shape=jaxlite.ShapeDtypeStruct((2,), np.float32))
        return jaxlite.jit(lambda x: (call(x), x * 2)[1])
    x = np.ones(2, np.float32)
    import re
    call = re.compile(r"= _pallas\d+\(")
    assert not call.search(make(quiet).lower(x).compile().as_text())
    assert call.search(make(loud).lower(x).compile().as_text())
