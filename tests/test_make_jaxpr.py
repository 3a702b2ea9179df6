"""make_jaxpr output in JAX's text format (golden strings taken from JAX 0.10.2)."""
import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp


def l1_distance(x, y):
    assert x.ndim == y.ndim == 1
    return jnp.sum(jnp.abs(x - y))


GOLDEN = {
    "l1": """{ lambda ; a:f32[3] b:f32[3]. let
    c:f32[3] = sub a b
    d:f32[3] = abs c
    e:f32[] = reduce_sum[axes=(0,) out_sharding=None] d
  in (e,) }""",
    "ones": """{ lambda ; a:f32[3]. let
    b:f32[3] = mul a 2.0:f32[]
    c:f32[3] = broadcast_in_dim 1.0:f32[]
    d:f32[3] = add b c
  in (d,) }""",
    "closure": "{ lambda a:f32[3]; b:f32[3]. let c:f32[3] = add b a in (c,) }",
    "shared": """let lambda = { lambda ; a:f32[]. let
    b:f32[] = sin a
    c:f32[] = mul b 2.0:f32[]
  in (c,) } in
{ lambda ; d:f32[]. let
    e:f32[] = jit[name=<lambda> jaxpr=lambda] d
    f:f32[] = jit[name=<lambda> jaxpr=lambda] d
    g:f32[] = add e f
  in (g,) }""",
    "astype": """{ lambda ; a:f32[3]. let
    b:i32[3] = convert_element_type[new_dtype=int32 weak_type=False] a
    c:i32[3] = add b 1:i32[]
  in (c,) }""",
}


def test_l1_distance():
    xs = jnp.ones(3)
    assert str(jax.make_jaxpr(l1_distance)(xs, xs)) == GOLDEN["l1"]


def test_literals_and_broadcast():
    assert str(jax.make_jaxpr(lambda x: x * 2. + jnp.ones(3))(jnp.ones(3))) == GOLDEN["ones"]


def test_closure_constant():
    c = jnp.arange(3.)
    assert str(jax.make_jaxpr(lambda x: x + c)(jnp.ones(3))) == GOLDEN["closure"]


def test_shared_jit_jaxpr_hoisted():
    f = jax.jit(lambda x: jnp.sin(x) * 2)
    assert str(jax.make_jaxpr(lambda x: f(x) + f(x))(1.)) == GOLDEN["shared"]


def test_astype():
    text = str(jax.make_jaxpr(lambda x: x.astype(jnp.int32) + 1)(jnp.ones(3)))
    assert text == GOLDEN["astype"]


def test_static_argnums_and_return_shape():
    f = lambda x, n: x * n  # noqa: E731
    jaxpr, shape = jax.make_jaxpr(f, static_argnums=1, return_shape=True)(jnp.ones(2), 3)
    assert "mul a 3:i32[]" in str(jaxpr) or "mul" in str(jaxpr)
    assert shape.shape == (2,)


def test_typecheck_of_traced_jaxpr():
    from jaxlite._src.core.ir import typecheck
    closed = jax.make_jaxpr(l1_distance)(jnp.ones(3), jnp.ones(3))
    typecheck(closed.jaxpr)


FUNCS = {
    "l1": (l1_distance, lambda: (np.ones(3, np.float32), np.ones(3, np.float32))),
    "poly": (lambda x: 3 * x ** 2 + 2 * x + 1, lambda: (np.ones(4, np.float32),)),
    "mixed": (lambda x, i: x * i + (i > 2), lambda: (np.ones(3, np.float32),
                                                     np.arange(3, dtype=np.int32))),
    "reduce": (lambda x: jnp.max(x, axis=1) - jnp.mean(x), lambda: (np.ones((2, 3),
                                                                          np.float32),)),
    "vdot": (lambda x, y: jnp.vdot(x, y), lambda: (np.ones((2, 3), np.float32),
                                                  np.ones((2, 3), np.float32))),
    "matmul": (lambda x: x @ x.T, lambda: (np.ones((2, 3), np.float32),)),
}


@pytest.mark.parametrize("name", sorted(FUNCS))
def test_jaxpr_text_matches_jax(name):
    real = pytest.importorskip("jax")
    fn, args = FUNCS[name]
    a = args()
    assert str(jax.make_jaxpr(fn)(*a)) == str(real.make_jaxpr(fn.__wrapped__ if hasattr(
        fn, "__wrapped__") else _with_real_jnp(fn))(*a))


def _with_real_jnp(fn):
    """Run ``fn`` with this module's ``jnp`` bound to real jax.numpy."""
    import jax.numpy as real_jnp
    g = dict(fn.__globals__)
    g["jnp"] = real_jnp
    import types
    return types.FunctionType(fn.__code__, g, fn.__name__, fn.__defaults__, fn.__closure__)


# closing over a 0-d value (JAX 0.10.2's text): a jax.Array made outside the trace is a
# constant input (constvar), even 0-d; NumPy and Python scalars, and arrays made while
# tracing, are inlined as literals
CLOSED_SCALAR_GOLDEN = {
    "jnp.float32": """{ lambda a:f32[]; b:f32[]. let
    c:f32[] = convert_element_type[new_dtype=float32 weak_type=False] b
    d:f32[] = mul c a
  in (d,) }""",
    "np.float32": """{ lambda ; a:f32[]. let
    b:f32[] = convert_element_type[new_dtype=float32 weak_type=False] a
    c:f32[] = mul b 2.0:f32[]
  in (c,) }""",
    "jnp.array": "{ lambda a:f32[]; b:f32[]. let c:f32[] = mul b a in (c,) }",
    "float": "{ lambda ; a:f32[]. let b:f32[] = mul a 2.0:f32[] in (b,) }",
    "jnp.int32": """{ lambda a:i32[]; b:f32[]. let
    c:f32[] = convert_element_type[new_dtype=float32 weak_type=True] a
    d:f32[] = mul b c
  in (d,) }""",
    "np.asarray": """{ lambda ; a:f32[]. let
    b:f32[] = convert_element_type[new_dtype=float32 weak_type=False] a
    c:f32[] = mul b 2.0:f32[]
  in (c,) }""",
}


def _closed_scalars():
    return {"jnp.float32": jnp.float32(2), "np.float32": np.float32(2),
            "jnp.array": jnp.array(2.), "float": 2.0, "jnp.int32": jnp.int32(2),
            "np.asarray": np.asarray(2.)}


@pytest.mark.parametrize("name", sorted(CLOSED_SCALAR_GOLDEN))
def test_closed_over_scalar_constvar_or_literal(name):
    c = _closed_scalars()[name]
    f = lambda x: x * c
    assert str(jax.make_jaxpr(f)(1.0)) == CLOSED_SCALAR_GOLDEN[name]
    # the numbers do not change with where the value lands
    assert float(jax.jit(f)(3.0)) == 6.0
    assert float(jax.grad(f)(3.0)) == 2.0
    np.testing.assert_allclose(jax.vmap(f)(jnp.arange(3.)), [0., 2., 4.])


def test_scalars_made_while_tracing_are_literals():
    f = lambda x: x * jnp.array(5.) + jnp.float32(1.)
    assert str(jax.make_jaxpr(f)(1.0)) == """{ lambda ; a:f32[]. let
    b:f32[] = mul a 5.0:f32[]
    c:f32[] = convert_element_type[new_dtype=float32 weak_type=False] b
    d:f32[] = add c 1.0:f32[]
  in (d,) }"""
    c = jnp.array(2.)
    g = jax.jit(lambda x: x * c)
    assert str(jax.make_jaxpr(g)(1.0)) == """{ lambda ; a:f32[]. let
    b:f32[] = jit[
      name=<lambda>
      jaxpr={ lambda c:f32[]; a:f32[]. let b:f32[] = mul a c in (b,) }
    ] a
  in (b,) }"""


def test_closed_over_scalar_in_loops():
    c = jnp.array(0.5)

    def body(carry, _):
        return carry * c + 1.0, carry

    out, ys = jax.lax.scan(body, 1.0, None, length=3)
    assert float(out) == 1.875 and ys.tolist() == [1.0, 1.5, 1.75]
    n = jax.lax.while_loop(lambda v: v < 10.0, lambda v: v + c * 4.0, 0.0)
    assert float(n) == 10.0
    assert float(jax.jit(lambda x: jax.lax.scan(body, x, None, length=3)[0])(1.0)) == 1.875


def test_linearize_and_vjp_residuals_are_arrays():
    # as JAX: the residual leaves of linearize's and vjp's functions are jax.Arrays, which
    # a function closing over them takes as constants (NumPy values would be inlined)
    c = jnp.arange(3.)
    f = lambda x: jnp.sin(x) * c + jnp.cos(x)
    _, f_jvp = jax.linearize(f, 1.0)
    _, f_vjp = jax.vjp(f, 1.0)
    for fn in (f_jvp, f_vjp):
        leaves = jax.tree_util.tree_leaves(fn)
        assert leaves and all(isinstance(v, jax.Array) for v in leaves)
    s = [v for v in jax.tree_util.tree_leaves(f_jvp) if v.ndim == 0]
    assert s and jax.make_jaxpr(lambda t: t * s[0])(1.0).jaxpr.constvars
    np.testing.assert_allclose(f_jvp(1.0), np.cos(1.0) * np.arange(3.) - np.sin(1.0),
                               rtol=1e-6)
