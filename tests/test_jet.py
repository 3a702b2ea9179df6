"""jax.experimental.jet: Taylor-mode series through the common primitives.

Checked against closed-form derivatives (NumPy), against repeated differentiation with
jaxlite's own jvp, and against JAX's jet when JAX is installed (to float32 rounding: JAX
scales by factorials computed as exp(lgamma(k + 1)), so the last bits differ).
"""
from __future__ import annotations

import math

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite.experimental.jet import jet, jet2

X = np.array([0.3, 0.7, 1.2], np.float32)
UNIT = [np.ones(3, np.float32), np.zeros(3, np.float32), np.zeros(3, np.float32),
        np.zeros(3, np.float32)]


def _derivs_along_unit(f, x=X, order=4):
    """The k-th derivatives of f at x along x + t (series [1, 0, 0, ...])."""
    p, terms = jet(f, (x,), (UNIT[:order],))
    return np.asarray(p), [np.asarray(t) for t in terms]


@pytest.mark.parametrize("name,f,derivs", [
    ("exp", jnp.exp, lambda x, k: np.exp(x)),
    ("sin", jnp.sin, lambda x, k: np.sin(x + k * np.pi / 2)),
    ("cos", jnp.cos, lambda x, k: np.cos(x + k * np.pi / 2)),
    ("log", jnp.log, lambda x, k: np.log(x) if k == 0 else
     (-1) ** (k - 1) * math.factorial(k - 1) / x ** k),
    ("sinh", jnp.sinh, lambda x, k: np.sinh(x) if k % 2 == 0 else np.cosh(x)),
    ("cube", lambda x: x ** 3,
     lambda x, k: [x ** 3, 3 * x ** 2, 6 * x, 6 + 0 * x, 0 * x][k]),
    ("recip_sq", lambda x: x ** -2,
     lambda x, k: (-1) ** k * math.factorial(k + 1) / x ** (k + 2)),
    ("pow", lambda x: x ** 2.5,
     lambda x, k: np.prod([2.5 - i for i in range(k)]) * x ** (2.5 - k)),
    ("div", lambda x: 1.0 / x, lambda x, k: (-1) ** k * math.factorial(k) / x ** (k + 1)),
    ("mul", lambda x: x * x, lambda x, k: [x * x, 2 * x, 2 + 0 * x, 0 * x, 0 * x][k]),
])
def test_derivatives_match_closed_forms(name, f, derivs):
    p, terms = _derivs_along_unit(f)
    x = X.astype(np.float64)
    np.testing.assert_allclose(p, derivs(x, 0), rtol=2e-6)
    for k, t in enumerate(terms, 1):
        np.testing.assert_allclose(t, derivs(x, k), rtol=2e-5, atol=1e-5, err_msg=f"order {k}")


def _nth_derivative(f, n):
    for _ in range(n):
        f = jax.grad(f)
    return f


@pytest.mark.parametrize("name,f", [
    ("tanh", jnp.tanh), ("sigmoid", jax.nn.sigmoid),
    ("composite", lambda x: jnp.exp(jnp.sin(x) * x) / (1 + x ** 2)),
    ("softplus", jax.nn.softplus), ("erf", jax.scipy.special.erf),
    ("atan (no rule: nested jvp)", jnp.arctan), ("jit", jax.jit(lambda x: jnp.tanh(x) * 2)),
    ("where", lambda x: jnp.where(x > 0.5, x ** 2, jnp.sin(x))),
])
def test_derivatives_match_repeated_grad(name, f):
    _, terms = _derivs_along_unit(f, order=3)
    for k, t in enumerate(terms, 1):
        ref = [float(_nth_derivative(f, k)(float(v))) for v in X]
        np.testing.assert_allclose(t, ref, rtol=1e-4, atol=1e-5, err_msg=f"order {k}")


def test_general_series_is_faa_di_bruno():
    # f(h(z)) for f = sin, h(z) = z^3 at z = 0.5 (JAX's docstring example)
    h0, h1, h2 = 0.5 ** 3, 3 * 0.5 ** 2, 6 * 0.5
    f0, (f1, f2) = jet(jnp.sin, (h0,), ((h1, h2),))
    np.testing.assert_allclose(float(f0), np.sin(h0), rtol=1e-6)
    np.testing.assert_allclose(float(f1), np.cos(h0) * h1, rtol=1e-6)
    np.testing.assert_allclose(float(f2), -np.sin(h0) * h1 ** 2 + np.cos(h0) * h2, rtol=1e-6)


def test_jet2_is_unscaled_and_structure_follows_the_output():
    s = [np.ones(3, np.float32), np.full(3, 0.5, np.float32)]
    p1, t1 = jet(jnp.exp, (X,), (s,))
    p2, t2 = jet2(jnp.exp, (X,), ([s[0], s[1] / 2],))
    np.testing.assert_allclose(np.asarray(t2[1]) * 2, np.asarray(t1[1]), rtol=1e-6)
    out, terms = jet(lambda x, y: {"a": x * y, "b": (jnp.sum(x), x)}, (X, X),
                     ([X, X], [X, X]))
    assert set(out) == {"a", "b"} and len(terms["a"]) == 2
    assert isinstance(terms["b"], tuple) and len(terms["b"][1]) == 2
    # an output that does not depend on the inputs gets zero terms
    _, t = jet(lambda x: jnp.ones(2), (X,), ([X],))
    np.testing.assert_array_equal(np.asarray(t[0]), np.zeros(2))


def test_reductions_dot_and_linear_ops():
    W = np.arange(12, dtype=np.float32).reshape(3, 4) / 10
    s = [np.array([1.0, 0.5, -0.2], np.float32), np.array([0.1, -0.3, 0.2], np.float32)]
    p, t = jet(lambda x: jnp.dot(x, W), (X,), (s,))
    np.testing.assert_allclose(np.asarray(t[0]), s[0] @ W, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(t[1]), s[1] @ W, rtol=1e-6)
    p, t = jet(lambda x: jnp.max(x), (X,), (s,))
    np.testing.assert_allclose(np.asarray(t[0]), s[0][2])
    p, t = jet(lambda x: jnp.sum(x.reshape(3, 1) * 2, axis=0), (X,), (s,))
    np.testing.assert_allclose(np.asarray(t[1]), [2 * s[1].sum()], rtol=1e-6)


def test_bad_input_raises():
    with pytest.raises(ValueError, match="inconsistent lengths"):
        jet(jnp.sin, (X, X), ([X], [X, X]))
    with pytest.raises(ValueError, match="not an array"):
        jet(jnp.sin, ((X, X),), ([X],))
    with pytest.raises(ValueError, match="shape"):
        jet(jnp.sin, (X,), ([X[:2]],))


def test_matches_jax():
    jax_ = pytest.importorskip("jax")
    from jax.experimental.jet import jet as jax_jet
    s = [np.array([1.0, 0.5, -0.2], np.float32), np.array([0.1, -0.3, 0.2], np.float32),
         np.array([0.2, 0.1, 0.05], np.float32)]
    W = np.arange(12, dtype=np.float32).reshape(3, 4) / 10
    cases = {
        "exp": lambda m: m.numpy.exp, "log": lambda m: m.numpy.log,
        "sin": lambda m: m.numpy.sin, "cos": lambda m: m.numpy.cos,
        "tanh": lambda m: m.numpy.tanh, "sigmoid": lambda m: m.nn.sigmoid,
        "mul": lambda m: (lambda x: x * x * 3.0), "div": lambda m: (lambda x: 1.0 / (x + 2.0)),
        "pow": lambda m: (lambda x: x ** 2.5), "ipow": lambda m: (lambda x: x ** 3),
        "ipow_neg": lambda m: (lambda x: x ** -2),
        "powxx": lambda m: (lambda x: m.numpy.power(x, x)),
        "dot": lambda m: (lambda x: m.numpy.dot(x, W)),
        "sum": lambda m: (lambda x: m.numpy.sum(m.numpy.sin(x))),
        "max": lambda m: (lambda x: m.numpy.max(x * x)),
        "sqrt": lambda m: m.numpy.sqrt,
        "composite": lambda m: (lambda x: m.numpy.exp(m.numpy.sin(x) * x) / (1 + x ** 2)),
        "jit": lambda m: m.jit(lambda x: m.numpy.tanh(x) * 2),
        "where": lambda m: (lambda x: m.numpy.where(x > 0.5, x ** 2, m.numpy.sin(x))),
    }
    for name, make in cases.items():
        p, t = jet(make(jax), (X,), (s,))
        pj, tj = jax_jet(make(jax_), (X,), (s,))
        np.testing.assert_allclose(np.asarray(p), np.asarray(pj), rtol=1e-6, err_msg=name)
        for a, b in zip(t, tj):
            np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-5, atol=2e-6,
                                       err_msg=name)
