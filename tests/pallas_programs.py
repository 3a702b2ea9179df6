"""Shared pieces of the Pallas tests: the namespaces kernels are written against (``LITE``
for jaxlite, ``real()`` for JAX when installed), comparison helpers, and the docs' programs
written once against a namespace ``m`` (``m.jax``, ``m.jnp``, ``m.pl``, ``m.plt``,
``m.pltpu``)."""
import functools
import types

import numpy as np
import pytest

import jaxlite
import jaxlite.numpy as jlnp
from jaxlite.experimental import pallas as jl_pl
from jaxlite.experimental.pallas import tpu as jl_pltpu
from jaxlite.experimental.pallas import triton as jl_plt

LITE = types.SimpleNamespace(jax=jaxlite, jnp=jlnp, pl=jl_pl, pltpu=jl_pltpu, plt=jl_plt)


def real():
    jax = pytest.importorskip("jax")
    import jax.numpy as jnp
    from jax.experimental import pallas as pl
    from jax.experimental.pallas import tpu as pltpu
    from jax.experimental.pallas import triton as plt
    from jax_print_compat import use_numpy1_scalar_repr
    use_numpy1_scalar_repr()
    return types.SimpleNamespace(jax=jax, jnp=jnp, pl=pl, pltpu=pltpu, plt=plt)


def same(a, b, **kw):
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape and a.dtype == b.dtype, (a.dtype, a.shape, b.dtype, b.shape)
    np.testing.assert_allclose(a, b, equal_nan=True, **kw)


def rand(*shape, seed=0):
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
