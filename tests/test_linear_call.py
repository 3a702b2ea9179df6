"""jax.custom_derivatives.linear_call: a linear function whose transpose is user-given.

References: closed-form values (the user's transpose is deliberately *not* the true
transpose in some tests, so that using it is observable), finite differences, vmap against a
Python loop, and real JAX (jaxpr text, values) where installed."""
import re
from functools import partial

import numpy as np
import pytest

import jaxlite
import jaxlite.numpy as jnp
from jaxlite.custom_derivatives import linear_call


def _div(r, x):
    return x / r


def _div_t(r, ct):
    return ct / r


def div_add(x, denom):
    return x + linear_call(_div, _div_t, denom, x)


def custom_id(x):
    # identity whose "transpose" is the constant 7: only a linear_call can make the
    # transposition observable like this
    return linear_call(lambda _, x: x, lambda _, t: 7.0 * jnp.ones_like(t), (), x)


def transpose(f, x_example):
    def transposed(y):
        x, = jaxlite.linear_transpose(f, x_example)(y)
        return x
    return transposed


def test_forward_value():
    out = div_add(9.0, 3.0)
    assert float(out) == 12.0 and out.dtype == jnp.float32
    np.testing.assert_allclose(jaxlite.jit(div_add)(9.0, 3.0), 12.0)


def test_transpose_uses_user_rule():
    assert float(transpose(partial(div_add, denom=3.0), 1.0)(18.0)) == 24.0
    assert float(transpose(custom_id, 1.0)(1.0)) == 7.0


def test_transpose_twice_gives_back_original():
    assert float(transpose(transpose(custom_id, 1.0), 1.0)(1.0)) == 1.0
    assert float(transpose(transpose(transpose(custom_id, 1.0), 1.0), 1.0)(1.0)) == 7.0


def test_grad_and_vjp_call_the_transpose():
    assert float(jaxlite.grad(custom_id)(3.0)) == 7.0
    np.testing.assert_allclose(jaxlite.grad(div_add)(9.0, 3.0), 1 + 1 / 3, rtol=1e-6)
    np.testing.assert_allclose(jaxlite.jit(jaxlite.grad(div_add))(9.0, 3.0), 1 + 1 / 3,
                               rtol=1e-6)
    np.testing.assert_allclose(jaxlite.grad(jaxlite.jit(div_add))(9.0, 3.0), 1 + 1 / 3,
                               rtol=1e-6)
    out, pullback = jaxlite.vjp(custom_id, jnp.arange(3.0))
    np.testing.assert_array_equal(pullback(jnp.ones(3))[0], [7.0, 7.0, 7.0])


def test_jvp_pushes_linear_tangents_through_fun():
    out, t = jaxlite.jvp(lambda x: div_add(x, 4.0), (8.0,), (2.0,))
    assert float(out) == 10.0 and float(t) == 2.5


def test_residual_tangent_differentiates_fun():
    # JAX 0.10.2 raises AssertionError here; jaxlite differentiates fun in the residual
    fd = (div_add(9.0, 3.0 + 1e-3) - div_add(9.0, 3.0 - 1e-3)) / 2e-3
    g = jaxlite.grad(div_add, argnums=1)(9.0, 3.0)
    np.testing.assert_allclose(g, -1.0, rtol=1e-5)
    np.testing.assert_allclose(g, fd, rtol=1e-2)
    _, t = jaxlite.jvp(div_add, (9.0, 3.0), (1.0, 1.0))
    np.testing.assert_allclose(t, 1 + 1 / 3 - 1.0, rtol=1e-6)


def test_pytree_arguments_and_outputs():
    def f(r, xs):
        return {"a": xs[0] * r["s"], "b": xs[1]}

    def t(r, ct):
        return (ct["a"] * r["s"], 2.0 * ct["b"])   # deliberately not the true transpose

    def g(x, y):
        o = linear_call(f, t, {"s": 2.0}, (x, y))
        return o["a"] + o["b"].sum()

    gx, gy = jaxlite.grad(g, argnums=(0, 1))(1.0, jnp.ones(3))
    assert float(gx) == 2.0
    np.testing.assert_array_equal(gy, [2.0, 2.0, 2.0])


def test_closed_over_values_become_callee_consts():
    c = jnp.arange(3.0)

    def h(x, c):
        return linear_call(lambda r, x: x * c, lambda r, t: t * c, (), x)

    text = str(jaxlite.make_jaxpr(h)(jnp.ones(3), c))
    assert "num_callee_consts=1" in text and "num_res=0" in text
    np.testing.assert_array_equal(jaxlite.jit(h)(jnp.ones(3), c), c)
    np.testing.assert_array_equal(
        jaxlite.grad(lambda x: h(x, c).sum())(jnp.ones(3)), np.arange(3.0))


def test_vmap_matches_loop():
    xs, ds = jnp.array([1.0, 2.0, 6.0]), jnp.array([1.0, 2.0, 3.0])
    got = jaxlite.vmap(div_add)(xs, ds)
    np.testing.assert_allclose(got, [float(div_add(x, d)) for x, d in zip(xs, ds)])
    got = jaxlite.vmap(div_add, in_axes=(0, None))(xs, 2.0)
    np.testing.assert_allclose(got, np.asarray(xs) * 1.5)


def test_vmap_of_grad_and_grad_of_vmap():
    ds = jnp.array([1.0, 2.0, 4.0])
    g = jaxlite.vmap(jaxlite.grad(div_add), in_axes=(None, 0))(3.0, ds)
    np.testing.assert_allclose(g, 1 + 1 / np.asarray(ds), rtol=1e-6)
    # unbatched linear input: its cotangent sums the user transpose over the batch
    g = jaxlite.grad(lambda x: jaxlite.vmap(div_add, in_axes=(None, 0))(x, ds).sum())(3.0)
    np.testing.assert_allclose(g, np.sum(1 + 1 / np.asarray(ds)), rtol=1e-6)
    g = jaxlite.grad(lambda x: jaxlite.vmap(custom_id)(x).sum())(jnp.ones(4))
    np.testing.assert_array_equal(g, [7.0] * 4)


def test_hessian_through_linear_call():
    f = lambda x: div_add(x, 2.0) * x          # 1.5 x^2
    np.testing.assert_allclose(jaxlite.hessian(f)(3.0), 3.0, rtol=1e-6)


def test_jaxpr_format():
    text = str(jaxlite.make_jaxpr(div_add)(9.0, 3.0))
    assert re.search(r"linear_call\[\s+callee=\{ lambda ; d:f32\[\] e:f32\[\]\. let f:f32\[\] "
                     r"= div e d in \(f,\) \}\s+num_callee_consts=0\s+num_res=1\s+"
                     r"transpose_thunk=<function [\w.<>]+ at 0xX+>\s+\] b a", text), text


def test_wrong_transpose_structure_raises():
    bad = lambda x: linear_call(lambda r, xs: xs[0] + xs[1], lambda r, ct: ct, (), (x, x))
    with pytest.raises(TypeError, match="structure of linear_args"):
        jaxlite.grad(bad)(1.0)


def test_wrong_transpose_shape_raises():
    bad = lambda x: linear_call(lambda r, x: x, lambda r, ct: jnp.ones(2), (), x)
    with pytest.raises(ValueError, match="shape"):
        jaxlite.grad(bad)(1.0)


def test_transposing_through_residual_raises():
    f = lambda x: linear_call(_div, _div_t, x, 2.0)
    with pytest.raises(TypeError, match="linear_args"):
        jaxlite.linear_transpose(f, 1.0)(1.0)


def test_non_array_argument_raises():
    with pytest.raises(TypeError, match="linear_call"):
        linear_call(_div, _div_t, 2.0, "x")


# --------------------------------------------------------------------- against real JAX

def _mask_thunks(s):
    return re.sub(r"transpose_thunk=<function .*? at 0xX+>", "transpose_thunk=<fn>", s)


@pytest.mark.parametrize("case", ["fwd", "grad", "transpose", "closure"])
def test_jaxpr_text_matches_jax(case):
    jax = pytest.importorskip("jax")
    from jax.custom_derivatives import linear_call as jlc

    def build(api, np_, lc):
        def da(x, d):
            return x + lc(_div, _div_t, d, x)

        def h(x):
            c = np_.arange(3.0)
            return lc(lambda r, x: x * c, lambda r, t: t * c, (), x)
        if case == "fwd":
            return api.make_jaxpr(da)(9.0, 3.0)
        if case == "grad":
            return api.make_jaxpr(api.grad(da))(9.0, 3.0)
        if case == "transpose":
            return api.make_jaxpr(lambda y: api.linear_transpose(
                partial(da, d=3.0), 1.0)(y))(18.0)
        return api.make_jaxpr(lambda x: api.linear_transpose(h, np_.ones(3))(x))(
            np.ones(3, np.float32))

    ours = _mask_thunks(str(build(jaxlite, jnp, linear_call)))
    theirs = _mask_thunks(str(build(jax, jax.numpy, jlc)))
    assert ours == theirs


def test_values_match_jax():
    jax = pytest.importorskip("jax")
    from jax.custom_derivatives import linear_call as jlc

    def run(api, np_, lc):
        def f(r, xs):
            return {"a": xs[0] * r, "b": np_.sin(r) * xs[1]}

        def t(r, ct):
            return (ct["a"] * r, ct["b"] * 0.5)

        def g(x, y):
            o = lc(f, t, 2.0, (x, y))
            return o["a"] + (o["b"] ** 2).sum()
        x, y = 1.5, np.arange(3, dtype=np.float32)
        return g(x, y), api.grad(g, argnums=(0, 1))(x, y), api.jit(
            api.grad(g, argnums=(0, 1)))(x, y)

    for a, b in zip(jax.tree_util.tree_leaves(run(jaxlite, jnp, linear_call)),
                    jax.tree_util.tree_leaves(run(jax, jax.numpy, jlc))):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-6)
