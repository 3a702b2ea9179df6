"""Structured control flow: values against Python, jit vs eager, grad against finite
differences, vmap against loops, errors, and jaxprs against JAX when installed."""
import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import lax
from jaxlite.test_util import check_grads

RNG = np.random.RandomState(0)


def test_cond_switch_values():
    for p in (True, False):
        assert float(lax.cond(p, jnp.sin, jnp.cos, 1.0)) == pytest.approx(
            np.sin(1.0) if p else np.cos(1.0), rel=1e-6)
    fs = [jnp.sin, jnp.cos, lambda x: x * 2]
    for i in (-3, 0, 1, 2, 7):
        want = fs[min(max(i, 0), 2)](1.0)
        assert float(lax.switch(i, fs, 1.0)) == pytest.approx(float(want), rel=1e-6)
        assert float(jax.jit(lambda i: lax.switch(i, fs, 1.0))(i)) == pytest.approx(
            float(want), rel=1e-6)
    out = lax.cond(True, lambda a, b: {"s": a + b}, lambda a, b: {"s": a - b}, 1.0, 2.0)
    assert float(out["s"]) == 3.0


def test_cond_closure_and_jit():
    w = jnp.array([1.0, 2.0])

    def f(x, p):
        return lax.cond(p, lambda v: v * w, lambda v: v + w, x)
    for p in (True, False):
        np.testing.assert_allclose(jax.jit(f)(jnp.ones(2), p), f(jnp.ones(2), p))


def test_loops_values():
    assert lax.while_loop(lambda c: c[0] < 10, lambda c: (c[0] + 1, c[1] * 2.0),
                          (0, 1.0))[1] == 1024.0
    assert float(lax.fori_loop(0, 5, lambda i, c: c + i, 1.0)) == 11.0
    n = jnp.array(5)
    assert float(jax.jit(lambda n: lax.fori_loop(0, n, lambda i, c: c + i, 1.0))(n)) == 11.0
    c, ys = lax.scan(lambda c, a: (c + a, c * a), 1.0, jnp.arange(3.0))
    assert float(c) == 4.0
    np.testing.assert_allclose(ys, [0.0, 1.0, 4.0])
    c, ys = lax.scan(lambda c, a: (c + a, c * a), 1.0, jnp.arange(3.0), reverse=True)
    np.testing.assert_allclose(ys, [0.0, 3.0, 2.0])
    c, ys = lax.scan(lambda c, _: (c * 2, c), 1.0, None, length=4)
    np.testing.assert_allclose(ys, [1.0, 2.0, 4.0, 8.0])
    carry = {"a": jnp.zeros(2), "n": 0}
    out, _ = lax.scan(lambda c, x: ({"a": c["a"] + x, "n": c["n"] + 1}, None), carry,
                      jnp.ones((3, 2)))
    np.testing.assert_allclose(out["a"], [3.0, 3.0])
    assert int(out["n"]) == 3
    np.testing.assert_allclose(lax.map(lambda x: x ** 2, jnp.arange(5.0)),
                               np.arange(5.0) ** 2)
    np.testing.assert_allclose(lax.map(lambda x: x ** 2, jnp.arange(5.0), batch_size=2),
                               np.arange(5.0) ** 2)


def test_jit_matches_eager():
    def f(x, xs):
        c, ys = lax.scan(lambda c, a: (jnp.tanh(c * a), c + a), x, xs)
        return c + lax.fori_loop(0, 3, lambda i, v: v * 0.5 + i, ys.sum())
    x, xs = 0.3, RNG.randn(4).astype(np.float32)
    np.testing.assert_allclose(jax.jit(f)(x, xs), f(x, xs), rtol=1e-6)


def test_grads_against_finite_differences():
    xs = RNG.rand(4).astype(np.float64) + 0.5
    with jax.enable_x64():
        check_grads(lambda x: lax.scan(lambda c, a: (jnp.sin(c) * a, c * a), x, xs)[1].sum(),
                    (1.2,), 2)
        check_grads(lambda x, xs: lax.scan(lambda c, a: (c * a, jnp.cos(c + a)), x, xs)[1],
                    (1.2, xs), 1)
        check_grads(lambda x: lax.cond(x > 1.0, jnp.sin, lambda v: v ** 3, x), (1.3,), 2)
        check_grads(lambda x: lax.cond(x > 1.0, jnp.sin, lambda v: v ** 3, x), (0.7,), 2)
        check_grads(lambda x: lax.switch(1, [jnp.sin, jnp.exp, jnp.tanh], x), (0.4,), 2)
        check_grads(lambda x: lax.fori_loop(0, 3, lambda i, c: c * jnp.sin(c + i), x),
                    (0.9,), 2)
        check_grads(lambda x: lax.scan(lambda c, a: (c * a, c), x, xs, reverse=True)[0],
                    (0.9,), 1)
        check_grads(lambda x: lax.while_loop(lambda c: c < 10.0, lambda c: c * 1.7, x),
                    (1.0,), 1, modes=("fwd",))


def test_reverse_mode_while_errors():
    with pytest.raises(ValueError, match="Reverse-mode differentiation does not work"):
        jax.grad(lambda x: lax.while_loop(lambda c: c < 10.0, lambda c: c * 2.0, x))(1.0)


def test_vmap_of_control_flow():
    xs = jnp.array([-1.0, 0.5, 2.0])
    np.testing.assert_allclose(jax.vmap(lambda x: lax.cond(x > 0, jnp.sin, jnp.cos, x))(xs),
                               np.where(xs > 0, np.sin(xs), np.cos(xs)), rtol=1e-6)
    np.testing.assert_allclose(
        jax.vmap(lambda i: lax.switch(i, [jnp.sin, jnp.cos, jnp.exp], 1.0))(
            jnp.array([0, 2, 1])), [np.sin(1.0), np.exp(1.0), np.cos(1.0)], rtol=1e-6)
    np.testing.assert_allclose(
        jax.vmap(lambda x: lax.while_loop(lambda c: c < 10.0, lambda c: c * 2.0, x))(
            jnp.array([1.0, 3.0, 20.0])), [16.0, 12.0, 20.0])
    c, ys = jax.vmap(lambda x: lax.scan(lambda c, a: (c + a, c * a), x, jnp.arange(3.0)))(
        jnp.array([1.0, 2.0]))
    np.testing.assert_allclose(c, [4.0, 5.0])
    np.testing.assert_allclose(ys, [[0.0, 1.0, 4.0], [0.0, 2.0, 6.0]])
    batched_xs = RNG.randn(2, 5).astype(np.float32)
    got = jax.vmap(lambda v: lax.scan(lambda c, a: (c * 0.5 + a, c), 0.0, v)[1])(batched_xs)
    for k in range(2):
        want = lax.scan(lambda c, a: (c * 0.5 + a, c), 0.0, batched_xs[k])[1]
        np.testing.assert_allclose(got[k], want, rtol=1e-6)
    g = jax.jit(jax.vmap(jax.grad(lambda x: lax.scan(lambda c, a: (c * a, c), x,
                                                     jnp.arange(1.0, 4.0))[0])))
    np.testing.assert_allclose(g(jnp.array([1.0, 2.0])), [6.0, 6.0])


def test_errors():
    with pytest.raises(TypeError, match="cond branches must have equal output types"):
        lax.cond(True, lambda x: x, lambda x: x.astype(jnp.int32), 1.0)
    with pytest.raises(TypeError, match="Pred must be a scalar"):
        lax.cond(jnp.array([True, False]), jnp.sin, jnp.cos, 1.0)
    with pytest.raises(TypeError, match="boolean scalar"):
        lax.while_loop(lambda c: c, lambda c: c + 1.0, 1.0)
    with pytest.raises(TypeError, match="carry input and carry output must have equal types"):
        lax.scan(lambda c, x: (jnp.zeros(2), x), 0.0, jnp.ones(3))
    with pytest.raises(ValueError, match="different leading axis sizes"):
        lax.scan(lambda c, x: (c, x), 0.0, (jnp.ones(3), jnp.ones(4)))
    with pytest.raises(ValueError, match="length"):
        lax.scan(lambda c, x: (c, x), 0.0, None)


JAXPRS = {
    "cond": (lambda jx, jn, lx: (lambda p, x: lx.cond(p, jn.sin, jn.cos, x)), (True, 1.0)),
    "switch": (lambda jx, jn, lx: (lambda i, x: lx.switch(i, [jn.sin, jn.cos], x)), (1, 1.0)),
    "while": (lambda jx, jn, lx: (lambda x: lx.while_loop(
        lambda c: c[0] < 10, lambda c: (c[0] + 1, c[1] * 2.0), (0, x))), (1.0,)),
    "fori": (lambda jx, jn, lx: (lambda x: lx.fori_loop(0, 5, lambda i, c: c + i, x)), (1.0,)),
    "scan": (lambda jx, jn, lx: (lambda x, xs: lx.scan(lambda c, a: (c + a, c * a), x, xs)),
             (1.0, np.ones(3, np.float32))),
    "grad_scan": (lambda jx, jn, lx: jx.grad(lambda x: lx.scan(
        lambda c, a: (jn.sin(c) * a, c), x, np.arange(3.0, dtype=np.float32))[0]), (1.0,)),
}


@pytest.mark.parametrize("name", sorted(JAXPRS))
def test_jaxpr_matches_jax(name):
    rjax = pytest.importorskip("jax")
    mk, args = JAXPRS[name]
    ours = str(jax.make_jaxpr(mk(jax, jnp, lax))(*args))
    theirs = str(rjax.make_jaxpr(mk(rjax, rjax.numpy, rjax.lax))(*args))
    assert ours == theirs


@pytest.mark.parametrize("n", [1, 2, 5, 8, 9])
def test_associative_scan(n):
    x = np.arange(1.0, n + 1, dtype=np.float32)
    np.testing.assert_allclose(lax.associative_scan(jnp.add, x), np.cumsum(x))
    np.testing.assert_allclose(lax.associative_scan(jnp.multiply, x, reverse=True),
                               np.cumprod(x[::-1])[::-1], rtol=1e-6)
    m = RNG.randn(2, n).astype(np.float32)
    got = lax.associative_scan(lambda a, b: (a[0] + b[0], jnp.maximum(a[1], b[1])),
                               (jnp.ones((2, n)), m), axis=1)
    np.testing.assert_allclose(got[1], np.maximum.accumulate(m, axis=1))
    np.testing.assert_allclose(jax.jit(lambda v: lax.associative_scan(jnp.add, v))(x),
                               np.cumsum(x))


def test_piecewise():
    x = np.linspace(-2.5, 2.5, 6).astype(np.float32)
    fs = [lambda v: -v, lambda v: v ** 2]
    np.testing.assert_allclose(jnp.piecewise(x, [x < 0, x > 0], fs),
                               np.piecewise(x, [x < 0, x > 0], fs), rtol=1e-6)
    np.testing.assert_allclose(jnp.piecewise(x, [x < 0], [-1, 1]),
                               np.piecewise(x, [x < 0], [-1, 1]))
    g = jax.grad(lambda v: jnp.sum(jnp.piecewise(v, [v < 0, v > 0], fs)))(x)
    np.testing.assert_allclose(g, np.where(x < 0, -1.0, 2 * x), rtol=1e-5)


def test_cond_result_weak_types_are_the_first_branch():
    """cond/switch results take the types of the first branch (JAX's abstract eval: the
    false branch of cond), weak types included, eagerly and under jit; under disable_jit
    the chosen branch runs as Python and keeps its own types (diffrax's solution.direction
    stays weak through equinox's error_if cond)."""
    w = jnp.where(jnp.array(0.5) < 1, 1, -1)      # weak int32
    s = jnp.int32(2)                              # strong int32
    assert jax.typeof(w).weak_type and not jax.typeof(s).weak_type
    for p in (True, False):
        assert jax.typeof(lax.cond(p, lambda: s, lambda: w)).weak_type
        assert not jax.typeof(lax.cond(p, lambda: w, lambda: s)).weak_type
        assert jax.typeof(jax.jit(lambda p: lax.cond(p, lambda: s, lambda: w))(p)).weak_type
        assert not jax.typeof(lax.switch(int(p), [lambda: s, lambda: w])).weak_type
        assert jax.typeof(lax.switch(int(p), [lambda: w, lambda: s])).weak_type
        with jax.disable_jit():
            assert jax.typeof(lax.cond(p, lambda: s, lambda: w)).weak_type is (not p)
            assert jax.typeof(lax.switch(int(p), [lambda: s, lambda: w])).weak_type is p
    # so a Python float times it still promotes (strict mode, as JAX)
    with jax.numpy_dtype_promotion("strict"):
        y = jax.jit(lambda p: 0.5 * lax.cond(p, lambda: s, lambda: w))(True)
    assert y.dtype == np.float32
