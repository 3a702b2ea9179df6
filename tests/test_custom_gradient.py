"""jax.custom_gradient: a function returning (value, vjp_fn), built on custom_vjp.

References: closed-form derivatives (the custom rules below are deliberately different
from the true derivative where that makes their use observable), vmap against a loop, and
real JAX (values, jaxpr text, error classes) where installed."""
import numpy as np
import pytest

import jaxlite
import jaxlite.numpy as jnp
from jaxlite import custom_gradient


@custom_gradient
def square(x):
    return x ** 2, lambda g: (g * x,)          # half the true derivative


@custom_gradient
def mul(x, y):
    return x * y, lambda g: (g * y, g * x)


@custom_gradient
def clip_grad(x):
    # identity whose gradient is clipped to [-1, 1]
    return x, lambda g: (jnp.clip(g, -1.0, 1.0),)


def test_value_and_grad():
    assert float(square(3.0)) == 9.0
    assert float(jaxlite.grad(square)(3.0)) == 3.0
    gx, gy = jaxlite.grad(mul, argnums=(0, 1))(3.0, 4.0)
    assert (float(gx), float(gy)) == (4.0, 3.0)
    assert float(jaxlite.grad(lambda x: clip_grad(x) * 10.0)(2.0)) == 1.0


def test_also_in_custom_derivatives():
    assert jaxlite.custom_derivatives.custom_gradient is custom_gradient
    assert isinstance(square, jaxlite.custom_vjp)


def test_vjp_and_jit():
    out, pullback = jaxlite.vjp(square, 3.0)
    assert float(out) == 9.0 and float(pullback(2.0)[0]) == 6.0
    assert float(jaxlite.jit(jaxlite.grad(square))(3.0)) == 3.0
    assert float(jaxlite.grad(jaxlite.jit(square))(3.0)) == 3.0
    assert float(jaxlite.jit(square)(3.0)) == 9.0


def test_vmap():
    xs = jnp.arange(4.0)
    np.testing.assert_array_equal(jaxlite.vmap(square)(xs), np.arange(4.0) ** 2)
    np.testing.assert_array_equal(jaxlite.vmap(jaxlite.grad(square))(xs), np.arange(4.0))
    np.testing.assert_array_equal(
        jaxlite.grad(lambda x: jaxlite.vmap(square)(x).sum())(xs), np.arange(4.0))


def test_nested_and_higher_order():
    # grad(square) = g * x, whose derivative is 1
    assert float(jaxlite.grad(jaxlite.grad(square))(3.0)) == 1.0
    assert float(jaxlite.hessian(square)(3.0)) == 1.0

    @custom_gradient
    def outer(x):
        return square(x) * 2.0, lambda g: (g * 100.0,)
    assert float(jaxlite.grad(outer)(3.0)) == 100.0
    assert float(jaxlite.grad(lambda x: square(square(x)))(2.0)) == 4.0 * 2.0


def test_pytree_arguments_and_outputs():
    @custom_gradient
    def f(d):
        return d["a"] * d["b"], lambda g: ({"a": g * d["b"], "b": g * d["a"]},)
    g = jaxlite.grad(f)({"a": 2.0, "b": 5.0})
    assert (float(g["a"]), float(g["b"])) == (5.0, 2.0)

    @custom_gradient
    def pair(x):
        return (x, 2 * x), lambda g: (g[0] + 3 * g[1],)
    assert float(jaxlite.grad(lambda x: sum(pair(x)))(1.0)) == 4.0


def test_rule_shares_forward_work_as_residuals():
    calls = []

    @custom_gradient
    def f(x):
        y = jnp.sin(x)
        calls.append(1)
        return y, lambda g: (g * jnp.cos(x) * y,)
    x = jnp.array([0.3, 1.1])
    np.testing.assert_allclose(jaxlite.grad(lambda x: f(x).sum())(x),
                               np.cos(x) * np.sin(x), rtol=1e-6)
    text = str(jaxlite.make_jaxpr(jaxlite.grad(lambda x: f(x).sum()))(x))
    assert text.count("sin") == 1          # the backward pass reuses the forward's sin


def test_bare_cotangent_and_none():
    @custom_gradient
    def f(x):
        return x ** 2, lambda g: g * x          # bare value for a single argument
    assert float(jaxlite.grad(f)(3.0)) == 3.0

    @custom_gradient
    def power(x, n):
        return x ** n, lambda g: (g * n * x ** (n - 1), None)
    assert float(jaxlite.grad(power)(3.0, 2)) == 6.0

    @custom_gradient
    def zero(x):
        return x ** 2, lambda g: (None,)
    assert float(jaxlite.grad(zero)(3.0)) == 0.0


def test_keyword_arguments_bind_to_positions():
    assert float(square(x=3.0)) == 9.0
    assert float(jaxlite.grad(lambda x: square(x=x))(3.0)) == 3.0


def test_forward_mode_raises():
    with pytest.raises(TypeError, match="forward-mode"):
        jaxlite.jvp(square, (3.0,), (1.0,))
    with pytest.raises(TypeError, match="forward-mode"):
        jaxlite.jacfwd(square)(3.0)


def test_errors():
    @custom_gradient
    def not_pair(x):
        return x ** 2
    with pytest.raises(TypeError, match="pair"):
        not_pair(3.0)
    with pytest.raises(TypeError, match="pair"):
        jaxlite.grad(not_pair)(3.0)

    @custom_gradient
    def not_callable(x):
        return x * 2.0, 5
    assert float(not_callable(1.0)) == 2.0     # only differentiation needs the rule
    with pytest.raises(TypeError, match="callable"):
        jaxlite.grad(not_callable)(1.0)

    @custom_gradient
    def wrong_len(x, y):
        return x * y, lambda g: (g * y,)
    with pytest.raises(TypeError, match="tuple of length equal"):
        jaxlite.grad(wrong_len)(3.0, 4.0)

    @custom_gradient
    def wrong_shape(x):
        return x ** 2, lambda g: (jnp.ones(3),)
    with pytest.raises(ValueError, match="shape"):
        jaxlite.grad(wrong_shape)(3.0)

    @custom_gradient
    def branches(x):
        def vjp(g):
            return (g,) if g > 0 else (-g,)
        return jnp.sin(x), vjp
    with pytest.raises(jaxlite.errors.TracerBoolConversionError):
        jaxlite.grad(branches)(3.0)


# --------------------------------------------------------------------- against real JAX

def _cases(api, np_):
    cg = api.custom_gradient

    @cg
    def f(x):
        y = np_.tanh(x)
        return y * x, lambda g: (g * (1 - y ** 2) * 3.0,)

    @cg
    def h(x, y):
        return (x * y).sum(), lambda g: (g * y, g * x * 2.0)
    x = np.linspace(-1, 1, 5).astype(np.float32)
    y = np.arange(5, dtype=np.float32)
    return [
        f(x),
        api.grad(lambda x: f(x).sum())(x),
        api.jit(api.grad(lambda x: f(x).sum()))(x),
        api.vmap(api.grad(lambda x: f(x)))(x),
        api.grad(h, argnums=(0, 1))(x, y),
        api.hessian(lambda x: f(x).sum())(x[:3]),
    ]


def test_values_match_jax():
    jax = pytest.importorskip("jax")
    ours = jax.tree_util.tree_leaves(_cases(jaxlite, jnp))
    theirs = jax.tree_util.tree_leaves(_cases(jax, jax.numpy))
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        assert np.shape(a) == np.shape(b)
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=2e-6, atol=1e-7)


@pytest.mark.parametrize("which", ["plain", "grad", "jit", "vmap"])
def test_jaxpr_text_matches_jax(which):
    jax = pytest.importorskip("jax")

    def text(api):
        @api.custom_gradient
        def f(x):
            return x ** 2, lambda g: (g * x,)
        fn = {"plain": f, "grad": api.grad(f), "jit": api.jit(f), "vmap": api.vmap(f)}[which]
        arg = np.ones(3, np.float32) if which == "vmap" else 3.0
        return str(api.make_jaxpr(fn)(arg))
    assert text(jaxlite) == text(jax)


def test_error_classes_match_jax():
    jax = pytest.importorskip("jax")

    def errs(api):
        out = []

        @api.custom_gradient
        def wrong_len(x, y):
            return x * y, lambda g: (g * y,)

        @api.custom_gradient
        def wrong_shape(x):
            return x ** 2, lambda g: (api.numpy.ones(3),)

        @api.custom_gradient
        def sq(x):
            return x ** 2, lambda g: (g * x,)
        for fn in [lambda: api.grad(wrong_len)(3.0, 4.0), lambda: api.grad(wrong_shape)(3.0),
                   lambda: api.jvp(sq, (3.0,), (1.0,))]:
            try:
                fn()
                out.append(None)
            except Exception as e:      # noqa: BLE001
                out.append(type(e).__name__)
        return out
    assert errs(jaxlite) == errs(jax)
