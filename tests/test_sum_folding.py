"""The compiler folds a sum over a product's batch dimensions into the product
(compiler/passes.py absorb_sums), and dot_general hands BLAS transposed views instead of
transposed copies: values must equal NumPy's (float64 references, exact for integers),
eager must equal jit bit for bit, and the generated code must show one product."""
from __future__ import annotations

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import lax
from jaxlite._src.compiler.passes import keep_sum_order, optimize
from jaxlite._src.prims.reductions import reduce_sum_p

R = np.random.RandomState(0)


def _text(f, *args):
    return jax.jit(f).lower(*args).compile().as_text()


def _prims(f, *args):
    closed = optimize(jax.make_jaxpr(f)(*args))
    return [e.primitive.name for e in closed.jaxpr.eqns]


CASES = [
    # (einsum of the batched product, summed batch axes, lhs shape, rhs shape)
    ("bij,bjk->bik", (0,), (3, 5, 4), (3, 4, 6)),
    ("bri,brj->bij", (0,), (2, 16, 7), (2, 16, 9)),        # a pmap's weight gradient
    ("abij,abjk->abik", (0, 1), (2, 3, 5, 4), (2, 3, 4, 6)),
    ("abij,abjk->abik", (1,), (2, 3, 5, 4), (2, 3, 4, 6)),
    ("abij,abjk->abik", (0,), (2, 3, 5, 4), (2, 3, 4, 6)),
]


@pytest.mark.parametrize("spec,axes,ls,rs", CASES)
def test_sum_of_batched_product_is_one_product(spec, axes, ls, rs):
    a = R.randn(*ls).astype(np.float32)
    b = R.randn(*rs).astype(np.float32)

    def f(a, b):
        return reduce_sum_p.bind(jnp.einsum(spec, a, b), axes=axes)
    names = _prims(f, a, b)
    assert names.count("dot_general") == 1 and "reduce_sum" not in names, names
    want = np.sum(np.einsum(spec, a.astype(np.float64), b.astype(np.float64)), axis=axes)
    got = jax.jit(f)(a, b)
    assert got.dtype == np.float32 and got.shape == want.shape
    np.testing.assert_allclose(np.asarray(got), want, rtol=2e-6, atol=2e-5)


def test_integer_sum_is_exact():
    a = R.randint(-50, 50, (4, 6, 5)).astype(np.int32)
    b = R.randint(-50, 50, (4, 5, 3)).astype(np.int32)

    def f(a, b):
        return jnp.sum(jnp.einsum("bij,bjk->bik", a, b), axis=0)
    np.testing.assert_array_equal(jax.jit(f)(a, b), np.einsum("bij,bjk->ik", a, b))


def test_not_folded_when_the_product_has_other_uses_or_sum_is_not_over_batch():
    a = R.randn(3, 5, 4).astype(np.float32)
    b = R.randn(3, 4, 6).astype(np.float32)

    def twice(a, b):
        p = jnp.einsum("bij,bjk->bik", a, b)
        return jnp.sum(p, axis=0), p
    assert "reduce_sum" in _prims(twice, a, b)

    def free_axis(a, b):        # summing a free dimension is not a contraction here
        return jnp.sum(jnp.einsum("bij,bjk->bik", a, b), axis=1)
    assert "reduce_sum" in _prims(free_axis, a, b)
    s, p = jax.jit(twice)(a, b)
    np.testing.assert_allclose(np.asarray(s), np.asarray(p).sum(0), rtol=1e-5, atol=1e-5)


def test_keep_sum_order_turns_the_folding_off():
    a = R.randn(3, 5, 4).astype(np.float32)
    b = R.randn(3, 4, 6).astype(np.float32)

    def f(a, b):
        return jnp.sum(jnp.einsum("bij,bjk->bik", a, b), axis=0)
    with keep_sum_order():
        names = _prims(f, a, b)
    assert "reduce_sum" in names
    assert "reduce_sum" not in _prims(f, a, b)


def test_per_example_gradient_sum():
    """vmap(grad) summed over the examples: the usual source of the pattern."""
    w = R.randn(7, 3).astype(np.float32)
    x = R.randn(32, 7).astype(np.float32)

    def total(w, x):
        per = jax.vmap(jax.grad(lambda w, xi: jnp.sum(jnp.tanh(xi @ w) ** 2)),
                       in_axes=(None, 0))(w, x)
        return jnp.sum(per, axis=0)
    want = jax.grad(lambda w: jnp.sum(jnp.tanh(x @ w) ** 2))(w)
    np.testing.assert_allclose(np.asarray(jax.jit(total)(w, x)), np.asarray(want),
                               rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dn,ls,rs", [
    ((((0,), (0,)), ((), ())), (6, 4), (6, 5)),          # a.T @ b
    ((((1,), (1,)), ((), ())), (4, 6), (5, 6)),          # a @ b.T
    ((((0,), (1,)), ((), ())), (6, 4), (5, 6)),          # a.T @ b.T
    ((((0, 1), (0, 1)), ((), ())), (2, 3, 4), (2, 3, 5)),  # (2*3, 4).T @ (2*3, 5)
    ((((1,), (1,)), ((0,), (0,))), (3, 6, 4), (3, 6, 5)),  # batched a.T @ b
    ((((2,), (2,)), ((0,), (0,))), (3, 4, 6), (3, 5, 6)),  # batched a @ b.T
])
def test_transposed_views_give_eager_bits(dn, ls, rs):
    a = R.randn(*ls).astype(np.float32)
    b = R.randn(*rs).astype(np.float32)

    def f(a, b):
        return lax.dot_general(a, b, dn)
    eager = np.asarray(f(jnp.asarray(a), jnp.asarray(b)))
    jitted = np.asarray(jax.jit(f)(a, b))
    np.testing.assert_array_equal(jitted, eager)
    (lc, rc), (lb, rb) = dn
    ref = np.asarray(lax.dot_general(a.astype(np.float64), b.astype(np.float64), dn))
    np.testing.assert_allclose(jitted, ref, rtol=1e-5, atol=1e-5)
    assert "transpose(" not in _text(f, a, b).split("def ", 1)[1] or lb


def test_gradient_product_uses_a_view():
    """The weight gradient of x @ w (x (batch, rows, in)) is one product of reshaped
    operands, with no transposed copy of x."""
    x = R.randn(2, 16, 7).astype(np.float32)
    g = R.randn(2, 16, 9).astype(np.float32)

    def f(x, g):
        return jnp.sum(jnp.einsum("bri,brj->bij", x, g), axis=0)
    src = _text(f, x, g)
    assert "reshape((32, 7)).T" in src, src


def test_sum_over_inserted_unit_axes_is_an_add():
    """(compiler/passes.py unit_sums) autodiff's transpose of ``b[None]`` sums over the
    inserted axis: it becomes ``b + 0``, which gives the sum's bits (-0.0 too)."""
    b = np.array([-0.0, 1.5, -2.0], np.float32)

    def f(b):
        return jnp.sum(jnp.broadcast_to(b[None], (1, 3)), axis=0), jnp.sum(b.reshape(1, 3, 1),
                                                                          axis=(0, 2))
    names = _prims(f, b)
    assert "reduce_sum" not in names and names.count("add") == 2, names
    got = jax.jit(f)(b)
    want = f(jnp.asarray(b))          # eager: the reductions themselves
    for g, w in zip(got, want):
        np.testing.assert_array_equal(np.asarray(g), np.asarray(w))
        assert np.signbit(np.asarray(g)).tolist() == np.signbit(np.asarray(w)).tolist()
