"""``lax.while_loop`` under linearize / partial evaluation, and while/cond under vmap, as JAX
0.10.2 does them.

linearize splits a loop: the carry parts that stay known (the primals) come from a loop of
their own, the tangents from the whole loop staged into the linear function; reverse mode
still raises JAX's error. vmap batches only the carries that need it when the predicate is
unbatched, and cond with an unbatched index batches only the outputs some branch batches
(libraries such as equinox rely on such values staying unbatched).
Checked against finite differences, a Python loop, and real JAX when installed.
"""
from __future__ import annotations

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import lax


def _real_jax():
    real = pytest.importorskip("jax")
    if real.__version__ != "0.10.2":
        pytest.skip("compared with JAX 0.10.2")
    return real


def _loop(jx, x, y):
    """A loop with an integer counter, a carry fed by a body constant, and a carry that
    only depends on its own start."""
    def body(c):
        i, a, b = c
        return i + 1, a * jx.numpy.sin(b) + y, b * 1.1
    return jx.lax.while_loop(lambda c: c[0] < 5, body, (0, x, y))


def _reference(x, y):
    i, a, b = 0, x, y
    while i < 5:
        i, a, b = i + 1, a * np.sin(b) + y, b * 1.1
    return i, a, b


def _fd(f, args, direction, eps=1e-6):
    args = np.asarray(args, np.float64)
    d = np.asarray(direction, np.float64)
    hi, lo = f(*(args + eps * d)), f(*(args - eps * d))
    return [(np.float64(h) - np.float64(l)) / (2 * eps) for h, l in zip(hi, lo)]


LIN_CASES = [
    ("eager", lambda: (lambda x, y: _loop(jax, x, y))),
    ("jit", lambda: jax.jit(lambda x, y: _loop(jax, x, y))),
]


@pytest.mark.parametrize("name,make", LIN_CASES, ids=[c[0] for c in LIN_CASES])
def test_linearize_values_and_linear_function_match_finite_differences(name, make):
    f = make()
    out, lin = jax.linearize(f, 1.0, 0.5)
    want = _reference(1.0, 0.5)
    assert int(out[0]) == 5
    np.testing.assert_allclose([out[1], out[2]], want[1:], rtol=1e-6)
    for direction in ([1.0, 0.0], [0.0, 1.0], [0.3, -2.0]):
        t = lin(*[jnp.float32(d) for d in direction])
        fd = _fd(_reference, [1.0, 0.5], direction)
        assert t[0].dtype == jax.dtypes.float0
        np.testing.assert_allclose([t[1], t[2]], fd[1:], rtol=2e-5, atol=1e-6)
    # the linear function equals jvp, and jvp of the jitted loop
    for direction in ([1.0, 2.0], [-0.5, 0.25]):
        _, jt = jax.jvp(f, (1.0, 0.5), tuple(direction))
        t = lin(*direction)
        np.testing.assert_allclose([t[1], t[2]], [jt[1], jt[2]], rtol=1e-6)


def test_linearize_under_jit_and_nested_loops():
    def inner(a, y):
        return lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, jnp.cos(c[1]) * y),
                              (0, a))[1]

    def f(x, y):
        return lax.while_loop(lambda c: c[0] < 4,
                              lambda c: (c[0] + 1, inner(c[1], y) + c[1]), (0, x))[1]

    def ref(x, y):
        for _ in range(4):
            a = x
            for _ in range(3):
                a = np.cos(a) * y
            x = a + x
        return (x,)
    g = jax.jit(lambda x, y, tx, ty: jax.linearize(f, x, y)[1](tx, ty))
    for direction in ([1.0, 0.0], [0.0, 1.0]):
        got = g(0.3, 0.7, *direction)
        np.testing.assert_allclose(got, _fd(ref, [0.3, 0.7], direction)[0], rtol=1e-4)


def test_loop_whose_carry_stays_known_needs_no_tangent_loop():
    # the differentiated value reaches the loop only through a zero-derivative op: no carry
    # becomes unknown, so only the known loop runs and reverse mode works (as in JAX)
    def f(x):
        k = lax.while_loop(lambda c: c < 10.0, lambda c: c + jnp.floor(x), 1.0)
        return k + x
    assert float(jax.grad(f)(2.5)) == 1.0
    out, lin = jax.linearize(f, 2.5)
    assert float(out) == 13.5 and float(lin(1.0)) == 1.0
    assert "while" not in str(jax.make_jaxpr(lambda t: lin(t))(1.0))


def test_reverse_mode_raises_jax_error():
    msg = "Reverse-mode differentiation does not work for lax.while_loop"
    for g in (jax.grad(lambda x: _loop(jax, x, 0.5)[1]),
              jax.grad(jax.jit(lambda x: _loop(jax, x, 0.5)[1])),
              jax.grad(jax.checkpoint(lambda x: _loop(jax, x, 0.5)[1]))):
        with pytest.raises(ValueError, match=msg):
            g(1.0)
    _, pull = jax.vjp(lambda x: _loop(jax, x, 0.5)[1], 1.0)
    with pytest.raises(ValueError, match=msg):
        pull(1.0)


def test_predicate_on_an_unknown_value_stages_the_whole_loop():
    # linearize only ever leaves tangents unknown; partial evaluation of a jaxpr whose
    # predicate reads an unknown carry stages the loop whole
    from jaxlite._src.interpreters.partial_eval import partial_eval_jaxpr
    closed = jax.make_jaxpr(lambda x, n: lax.while_loop(
        lambda c: c[0] < n, lambda c: (c[0] + 1.0, c[1] * 2.0), (0.0, x)))(1.0, 3.0)
    known, unknown, out_unknown, n_res = partial_eval_jaxpr(closed, [False, True])
    assert out_unknown == [True, True]
    assert [e.primitive.name for e in unknown.jaxpr.eqns] == ["while"]
    known, unknown, out_unknown, n_res = partial_eval_jaxpr(closed, [True, False])
    # the counter stays known (its loop runs in the known jaxpr); the other carry is staged
    assert out_unknown == [False, True]
    assert [e.primitive.name for e in known.jaxpr.eqns] == ["while"]
    assert [e.primitive.name for e in unknown.jaxpr.eqns] == ["while"]


def test_linearize_matches_jax():
    real = _real_jax()
    for x, y in ((1.0, 0.5), (-0.3, 1.7)):
        out, lin = jax.linearize(lambda a, b: _loop(jax, a, b), x, y)
        rout, rlin = real.linearize(lambda a, b: _loop(real, a, b), x, y)
        np.testing.assert_allclose([out[1], out[2]], [rout[1], rout[2]], rtol=1e-6)
        for d in ((1.0, 0.0), (0.0, 1.0), (0.5, -1.5)):
            t, rt = lin(*d), rlin(*d)
            np.testing.assert_allclose([t[1], t[2]], [rt[1], rt[2]], rtol=1e-6)


def test_linearize_jaxpr_matches_jax():
    real = _real_jax()

    def text(jx):
        def lin_applied(a, b):
            return jx.linearize(lambda p, q: _loop(jx, p, q), a, b)[1](1.0, 2.0)
        return str(jx.make_jaxpr(lin_applied)(1.0, 0.5))
    assert text(jax) == text(real)


# ----------------------------------------------------------------------------- vmap

def _counting(jx, x, n):
    return jx.lax.while_loop(lambda c: c[0] < n,
                             lambda c: (c[0] + 1, c[1] * 1.5, c[2] + c[0]), (0, x, 2.0))


def test_vmap_keeps_unneeded_carries_unbatched():
    xs = jnp.arange(3.0)
    jaxpr = jax.make_jaxpr(jax.vmap(lambda x, n: _counting(jax, x, n), (0, None)))(xs, 4)
    (eqn,) = [e for e in jaxpr.jaxpr.eqns if e.primitive.name == "while"]
    # the counter and the third carry stay scalars inside the loop
    assert [v.aval.shape for v in eqn.outvars] == [(), (3,), ()]
    got = jax.vmap(lambda x, n: _counting(jax, x, n), (0, None))(xs, 4)
    np.testing.assert_allclose(got[1], np.arange(3.0) * 1.5 ** 4)
    np.testing.assert_array_equal(got[0], [4, 4, 4])
    np.testing.assert_allclose(got[2], [8.0, 8.0, 8.0])
    # a batched predicate batches every carry; members stop at their own iteration
    ns = jnp.array([1, 2, 3])
    got = jax.vmap(lambda x, n: _counting(jax, x, n))(xs, ns)
    np.testing.assert_array_equal(got[0], [1, 2, 3])
    np.testing.assert_allclose(got[1], [0.0, 2.25, 6.75])
    np.testing.assert_allclose(got[2], [2.0, 3.0, 5.0])


def test_vmap_carry_batched_by_the_body_only():
    # the carry starts unbatched and a batched body constant makes it batched (a fixpoint)
    ys = jnp.array([1.0, 2.0])
    f = jax.vmap(lambda y: lax.while_loop(lambda c: c[0] < 3,
                                          lambda c: (c[0] + 1, c[1] + y, c[1]), (0, 0.0, 0.0)))
    got = f(ys)
    np.testing.assert_allclose(got[1], [3.0, 6.0])
    np.testing.assert_allclose(got[2], [2.0, 4.0])


def test_vmap_jaxpr_matches_jax():
    real = _real_jax()
    xs = np.arange(3.0, dtype=np.float32)
    for axes in ((0, None), (None, 0), (0, 0)):
        n = 4 if axes[1] is None else np.array([1, 2, 3], np.int32)
        x = 1.0 if axes[0] is None else xs
        mine = jax.vmap(lambda a, b: _counting(jax, a, b), axes)(x, n)
        theirs = real.vmap(lambda a, b: _counting(real, a, b), axes)(x, n)
        for m, t in zip(mine, theirs):
            assert m.dtype == t.dtype and m.shape == t.shape and \
                m.weak_type == t.weak_type
            np.testing.assert_allclose(m, t, rtol=1e-6)
    assert str(jax.make_jaxpr(jax.vmap(lambda a, b: _counting(jax, a, b), (0, None)))(
        xs, 4)) == str(real.make_jaxpr(real.vmap(lambda a, b: _counting(real, a, b),
                                                 (0, None)))(xs, 4))


# ----------------------------------------------------------------------------- cond

def _branches(jx, p, x, n):
    return jx.lax.cond(p, lambda x, n: (x * 2, n + 1, n * 2.0),
                       lambda x, n: (x - 1, n, 3.0), x, n)


def test_vmap_cond_with_unbatched_index_keeps_unbatched_outputs():
    xs = jnp.arange(3.0)
    jaxpr = jax.make_jaxpr(jax.vmap(lambda x: _branches(jax, True, x, 4)))(xs)
    (eqn,) = [e for e in jaxpr.jaxpr.eqns if e.primitive.name == "cond"]
    assert [v.aval.shape for v in eqn.outvars] == [(3,), (), ()]
    got = jax.vmap(lambda x: _branches(jax, True, x, 4))(xs)
    np.testing.assert_allclose(got[0], [0.0, 2.0, 4.0])
    np.testing.assert_array_equal(got[1], [5, 5, 5])
    np.testing.assert_allclose(got[2], [8.0, 8.0, 8.0])
    # an output batched by one branch only is batched (the other branch broadcasts)
    got = jax.vmap(lambda n: _branches(jax, False, 1.0, n))(jnp.array([1, 2, 3]))
    np.testing.assert_allclose(got[0], [0.0, 0.0, 0.0])
    np.testing.assert_array_equal(got[1], [1, 2, 3])
    np.testing.assert_allclose(got[2], [3.0, 3.0, 3.0])


def test_vmap_cond_matches_jax():
    real = _real_jax()
    xs = np.arange(3.0, dtype=np.float32)
    ns = np.array([1, 2, 3], np.int32)
    ps = np.array([True, False, True])
    for axes, args in (((None, 0, None), (True, xs, 4)), ((None, None, 0), (False, 1.0, ns)),
                       ((0, None, None), (ps, 1.0, 3)), ((0, 0, 0), (ps, xs, ns))):
        mine = jax.vmap(lambda *a: _branches(jax, *a), axes)(*args)
        theirs = real.vmap(lambda *a: _branches(real, *a), axes)(*args)
        for m, t in zip(mine, theirs):
            assert (m.dtype, m.shape, m.weak_type) == (t.dtype, t.shape, t.weak_type)
            np.testing.assert_allclose(m, t, rtol=1e-6)
    assert str(jax.make_jaxpr(jax.vmap(lambda *a: _branches(jax, *a), (None, 0, None)))(
        True, xs, 4)) == str(real.make_jaxpr(
            real.vmap(lambda *a: _branches(real, *a), (None, 0, None)))(True, xs, 4))
