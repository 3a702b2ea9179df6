"""Pallas kernels over refs: indexing forms, masked loads and stores, atomics, control flow
and scratch inside kernels, DMA copies, addupdate and forward-mode differentiation, against
NumPy references and, when installed, JAX's interpret mode."""
import numpy as np
import pytest

import jaxlite
import jaxlite.numpy as jlnp
from jaxlite.experimental import pallas as jl_pl
from jaxlite.experimental.pallas import tpu as jl_pltpu
from jaxlite.experimental.pallas import triton as jl_plt
from pallas_programs import LITE
from pallas_programs import real as _real
from pallas_programs import same as _same


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


def test_aliased_output_is_a_buffer_of_its_own():
    """As JAX's interpret mode: the output starts as the input's values, but writing it does
    not change what the input ref reads."""
    def k(x_ref, o_ref):
        o_ref[0] = 100.0
        o_ref[1] = x_ref[0]
    f = jl_pl.pallas_call(k, out_shape=jaxlite.ShapeDtypeStruct((3,), np.float32),
                          input_output_aliases={0: 0})
    x = np.array([1, 2, 3], np.float32)
    _same(f(x), np.array([100, 1, 3], np.float32))
    _same(jaxlite.jit(f)(x), np.array([100, 1, 3], np.float32))


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


def _scoped_program(m):
    pl, jnp = m.pl, m.jnp

    def kernel(x_ref, o_ref, s_ref):
        s_ref[...] = x_ref[...] * 2
        o_ref[...] = s_ref[...]

        def inner(r):
            r[...] = x_ref[...]
            o_ref[...] += r[...]
        pl.run_scoped(inner, m.pltpu.VMEM((4,), jnp.float32))
        o_ref[0] = jnp.float32(1)
        o_ref[pl.ds(1, 2)] = x_ref[pl.ds(pl.program_id(0), 2)]
    return pl.pallas_call(kernel, out_shape=m.jax.ShapeDtypeStruct((4,), jnp.float32),
                          scratch_shapes=[m.pltpu.VMEM((4,), jnp.float32)], interpret=True,
                          grid=(1,))


def test_run_scoped_jaxpr_matches_jax():
    real = _real()
    x = np.arange(4, dtype=np.float32)
    text = str(jaxlite.make_jaxpr(_scoped_program(LITE))(x))
    assert text == str(real.jax.make_jaxpr(_scoped_program(real))(x))
    assert "jaxpr={ lambda k:Ref<default>{f32[4]} l:Ref<default>{f32[4]}; " \
           "m:Ref<vmem>{f32[4]}. let" in text
    _same(_scoped_program(LITE)(x), _scoped_program(real)(x))
