"""lax.custom_linear_solve and lax.custom_root (issue 20): forward values, implicit
gradients (reverse and forward mode, under jit), vmap, has_aux, and JAX's errors; checked
against NumPy's closed forms and, when installed, real JAX."""
import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import lax

rng = np.random.default_rng(0)
A0 = (rng.standard_normal((3, 3)) + 3 * np.eye(3)).astype(np.float32)
b0 = rng.standard_normal(3).astype(np.float32)


def jacobi(matvec, b):
    """A while-loop solver (not differentiable: the derivatives must be implicit)."""
    def body(c):
        i, x = c
        return i + 1, x + 0.5 * (b - matvec(x)) / 3.0
    return lax.while_loop(lambda c: c[0] < 300, body, (0, jnp.zeros_like(b)))[1]


def loss(A, b):
    x = lax.custom_linear_solve(lambda v: A @ v, b, solve=jacobi, transpose_solve=jacobi)
    return jnp.sum(jnp.sin(x))


def loss_np(A, b):
    return np.sum(np.sin(np.linalg.solve(A, b)))


def test_linear_solve_value_and_gradients():
    A, b = A0.astype(np.float64), b0.astype(np.float64)
    x = np.linalg.solve(A, b)
    np.testing.assert_allclose(lax.custom_linear_solve(lambda v: A0 @ v, b0, jacobi,
                                                       jacobi), x, rtol=1e-5, atol=1e-6)
    # d/db sum(sin(A^-1 b)) = A^-T cos(x); d/dA = -(A^-T cos(x)) x^T
    gb = np.linalg.solve(A.T, np.cos(x))
    gA = -np.outer(gb, x)
    g = jax.grad(loss, argnums=(0, 1))(A0, b0)
    np.testing.assert_allclose(g[0], gA, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(g[1], gb, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(jax.jit(jax.grad(loss))(A0, b0), gA, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(jax.jacfwd(loss, argnums=1)(A0, b0), gb, rtol=1e-4, atol=1e-5)


def test_linear_solve_finite_differences():
    A, b = A0.astype(np.float64), b0.astype(np.float64)
    g = np.asarray(jax.grad(loss, argnums=1)(A0, b0))
    eps = 1e-5
    fd = [(loss_np(A, b + eps * e) - loss_np(A, b - eps * e)) / (2 * eps) for e in np.eye(3)]
    np.testing.assert_allclose(g, fd, rtol=1e-3, atol=1e-4)


def test_linear_solve_vmap_aux_and_errors():
    bs = np.stack([b0, 2 * b0])
    out = jax.vmap(lambda bb: lax.custom_linear_solve(lambda v: A0 @ v, bb, jacobi,
                                                      symmetric=True))(bs)
    np.testing.assert_allclose(out, np.linalg.solve(A0, bs.T).T, rtol=1e-4, atol=1e-5)

    def aux_solve(mv, b):
        return jnp.linalg.solve(A0, b), jnp.int32(3)
    x, aux = lax.custom_linear_solve(lambda v: A0 @ v, b0, aux_solve, aux_solve, has_aux=True)
    np.testing.assert_allclose(x, np.linalg.solve(A0, b0), rtol=1e-5)
    assert int(aux) == 3
    with pytest.raises(TypeError, match="transpose_solve required for backwards mode"):
        jax.grad(lambda b: lax.custom_linear_solve(lambda v: A0 @ v, b, jacobi).sum())(b0)
    with pytest.raises(ValueError, match="solve\\(\\) output shapes must match b"):
        lax.custom_linear_solve(lambda v: A0 @ v, b0, lambda mv, b: b[:2])
    # a pytree right-hand side
    tree = {"u": b0, "v": 2 * b0}
    out = lax.custom_linear_solve(lambda t: {"u": A0 @ t["u"], "v": A0 @ t["v"]}, tree,
                                  lambda mv, t: {k: jnp.linalg.solve(A0, t[k]) for k in t})
    np.testing.assert_allclose(out["v"], np.linalg.solve(A0, 2 * b0), rtol=1e-5)


def newton(f, x0):
    return lax.while_loop(lambda c: c[0] < 30,
                          lambda c: (c[0] + 1, c[1] - f(c[1]) / (2 * c[1])), (0, x0))[1]


def sqrt_cr(a):
    return lax.custom_root(lambda x: x ** 2 - a, 1.0, newton, lambda g, y: y / g(1.0))


def test_custom_root():
    assert abs(float(sqrt_cr(2.0)) - np.sqrt(2)) < 1e-6
    assert abs(float(jax.grad(sqrt_cr)(2.0)) - 0.5 / np.sqrt(2)) < 1e-6
    assert abs(float(jax.jit(jax.grad(sqrt_cr))(4.0)) - 0.25) < 1e-7
    assert abs(float(jax.grad(jax.grad(sqrt_cr))(4.0)) + 0.03125) < 1e-6
    np.testing.assert_allclose(jax.vmap(jax.grad(sqrt_cr))(jnp.array([1., 4., 9.])),
                               [0.5, 0.25, 1 / 6], rtol=1e-6)
    np.testing.assert_allclose(jax.jacfwd(sqrt_cr)(9.0), 1 / 6, rtol=1e-6)


def test_custom_root_vector_and_aux():
    A = jnp.asarray(A0)

    def solve_vec(f, x0):
        return x0 - jnp.linalg.solve(A, f(x0)), jnp.float32(0.)   # one Newton step (linear f)

    def root(b):
        x, aux = lax.custom_root(lambda x: A @ x - b, jnp.zeros(3), solve_vec,
                                 lambda g, y: jnp.linalg.solve(jax.jacfwd(g)(y), y),
                                 has_aux=True)
        return x
    np.testing.assert_allclose(root(b0), np.linalg.solve(A0, b0), rtol=1e-5, atol=1e-6)
    J = jax.jacrev(root)(b0)
    np.testing.assert_allclose(J, np.linalg.inv(A0), rtol=1e-4, atol=1e-5)


def test_vs_jax():
    jr = pytest.importorskip("jax")

    def jloss(A, b):
        def jjacobi(matvec, b):
            def body(c):
                i, x = c
                return i + 1, x + 0.5 * (b - matvec(x)) / 3.0
            return jr.lax.while_loop(lambda c: c[0] < 300, body,
                                     (0, jr.numpy.zeros_like(b)))[1]
        x = jr.lax.custom_linear_solve(lambda v: A @ v, b, jjacobi, jjacobi)
        return jr.numpy.sum(jr.numpy.sin(x))
    for i in (0, 1):
        np.testing.assert_allclose(jax.grad(loss, i)(A0, b0), jr.grad(jloss, i)(A0, b0),
                                   rtol=2e-5, atol=1e-6)
