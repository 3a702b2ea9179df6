"""Audit of the autodiff API against JAX (issue 3): aux outputs, Jacobian dtype rules, custom
rules with symbolic zeros, checkpoint policies, linear_transpose, weak types of gradients.
Each behaviour has a JAX-free check; differential checks against real JAX skip without it."""
import re
from collections import Counter

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import lax
from jaxlite.test_util import check_grads


def _rjax():
    return pytest.importorskip("jax")


def _no_tracers(tree):
    from jaxlite._src.core.trace import Tracer
    return not any(isinstance(x, Tracer) for x in jax.tree_util.tree_leaves(tree))


# ----------------------------------------------------------------------------- has_aux
def test_aux_outputs_are_concrete_values():
    x = jnp.arange(3.0)
    out, pull, aux = jax.vjp(lambda v: (jnp.sin(v), {"a": v * 2}), x, has_aux=True)
    assert _no_tracers(aux)
    np.testing.assert_allclose(aux["a"], [0.0, 2.0, 4.0])
    np.testing.assert_allclose(pull(jnp.ones(3))[0], np.cos(np.arange(3.0)), rtol=1e-6)
    (v, aux), g = jax.value_and_grad(lambda a, b: (a * b, b), argnums=1, has_aux=True)(2.0, 3.0)
    assert _no_tracers(aux) and float(aux) == 3.0 and float(g) == 2.0
    out, t, aux = jax.jvp(lambda v: (v * 2, v ** 2), (3.0,), (1.0,), has_aux=True)
    assert _no_tracers(aux) and float(aux) == 9.0
    out, f_jvp, aux = jax.linearize(lambda v: (v * 2, v ** 2), 3.0, has_aux=True)
    assert _no_tracers(aux) and float(aux) == 9.0 and float(f_jvp(1.0)) == 2.0
    for jac in (jax.jacfwd, jax.jacrev):
        j, aux = jac(lambda v: (jnp.sin(v), {"c": v.sum()}), has_aux=True)(x)
        assert _no_tracers(aux) and float(aux["c"]) == 3.0
        np.testing.assert_allclose(j, np.diag(np.cos(np.arange(3.0))), rtol=1e-6, atol=1e-7)
    h, aux = jax.hessian(lambda v: (jnp.sum(v ** 3), v), has_aux=True)(x)
    assert _no_tracers(aux)
    np.testing.assert_allclose(h, np.diag(6 * np.arange(3.0)))
    # under jit the aux is a tracer of jit's trace, and comes out as a value
    g, aux = jax.jit(jax.grad(lambda v: (v * v, v + 1), has_aux=True))(2.0)
    assert float(g) == 4.0 and float(aux) == 3.0


def test_aux_matches_jax():
    rjax = _rjax()
    x = np.arange(3.0, dtype=np.float32)

    def run(J):
        jn = J.numpy
        _, _, a1 = J.vjp(lambda v: (jn.sin(v), {"a": v * 2}), x, has_aux=True)
        (_, a2), _ = J.value_and_grad(lambda a, b: (a * b, b), argnums=1, has_aux=True)(2.0, 3.0)
        _, a3 = J.jacrev(lambda v: (jn.sin(v), {"c": v.sum()}), has_aux=True)(x)
        return [np.asarray(a1["a"]), np.asarray(a2), np.asarray(a3["c"])]
    for a, b in zip(run(jax), run(rjax)):
        np.testing.assert_allclose(a, b)


# ----------------------------------------------------------------------------- Jacobians
def test_jacobian_dtype_rules():
    z = jnp.array([1 + 1j, 2 - 1j], jnp.complex64)
    with pytest.raises(TypeError, match="jacfwd requires real-valued inputs"):
        jax.jacfwd(lambda v: v ** 2)(z)
    with pytest.raises(TypeError, match="jacrev requires real-valued outputs"):
        jax.jacrev(lambda v: v ** 2)(z)
    with pytest.raises(TypeError, match="jacrev requires real-valued outputs.*integer"):
        jax.jacrev(lambda v: (v, jnp.arange(2)))(2.0)
    with pytest.raises(TypeError, match="holomorphic=True requires outputs with complex"):
        jax.jacfwd(lambda v: jnp.abs(v), holomorphic=True)(z)
    np.testing.assert_allclose(jax.jacfwd(lambda v: v ** 2, holomorphic=True)(z),
                               np.diag(2 * np.asarray(z)))
    # integer outputs of jacfwd: zero blocks of the output's dtype (as JAX)
    j = jax.jacfwd(lambda v: (v, jnp.arange(2)))(jnp.ones(3))
    assert j[1].dtype == jnp.int32 and j[1].shape == (2, 3) and not np.any(j[1])
    # jacrev blocks take the dtype/weak type of the input they differentiate
    j = jax.jacrev(lambda a, b: {"o": a * b[0]}, argnums=(0, 1))(jnp.arange(2.0),
                                                                 (jnp.ones(2), 2.0))
    assert j["o"][1][1].weak_type and not j["o"][0].weak_type
    np.testing.assert_allclose(j["o"][1][0], np.diag([0.0, 1.0]))


def test_jacobian_errors_and_weak_types_match_jax():
    rjax = _rjax()
    z = np.array([1 + 1j, 2 - 1j], np.complex64)
    for name, call in [("jacfwd_c", lambda J: J.jacfwd(lambda v: v ** 2)(z)),
                       ("jacrev_c", lambda J: J.jacrev(lambda v: v ** 2)(z)),
                       ("jacrev_int", lambda J: J.jacrev(lambda v: (v, J.numpy.arange(2)))(2.0))]:
        errs = []
        for J in (jax, rjax):
            with pytest.raises(TypeError) as e:
                call(J)
            errs.append(str(e.value))
        assert errs[0] == errs[1], name
    a = np.arange(2.0, dtype=np.float32)
    for J in (jax, rjax):
        j = J.jacrev(lambda x, y: {"o": x * y[0]}, argnums=(0, 1))(a, (np.ones(2, np.float32), 2.0))
        assert j["o"][1][1].weak_type
        j = J.jacfwd(lambda v: (v, J.numpy.arange(2)))(np.ones(3, np.float32))
        assert j[1].dtype == np.int32


def test_vjp_cotangent_structure_error():
    _, pull = jax.vjp(lambda x: {"p": x, "q": x}, 1.0)
    with pytest.raises(ValueError, match="unexpected tree structure"):
        pull({"p": 1.0})


# ----------------------------------------------------------------------------- custom rules
def _sym_jvp_fn(J):
    seen = []

    @J.custom_jvp
    def f(x, y):
        return x * y

    def f_jvp(primals, tangents):
        (x, y), (tx, ty) = primals, tangents
        seen.append(type(ty).__name__)
        out = f(x, y)
        SZ = J.custom_derivatives.SymbolicZero
        if type(ty) is SZ:
            assert ty.shape == () and ty.dtype == np.float32
            return out, tx * y
        return out, x * ty if type(tx) is SZ else tx * y + x * ty
    f.defjvp(f_jvp, symbolic_zeros=True)
    return f, seen


def test_custom_jvp_symbolic_zeros():
    f, seen = _sym_jvp_fn(jax)
    assert float(jax.jvp(lambda x: f(x, 2.0), (3.0,), (1.0,))[1]) == 2.0
    assert float(jax.grad(f)(3.0, 2.0)) == 2.0
    assert float(jax.jit(jax.grad(f))(3.0, 2.0)) == 2.0
    assert float(jax.grad(f, 1)(3.0, 2.0)) == 3.0
    assert seen == ["SymbolicZero"] * 3 + ["JVPTracer"] or seen[3] != "SymbolicZero"

    # a rule may return a symbolic zero tangent for an output
    @jax.custom_jvp
    def g(x):
        return x * 2, x * 3

    def g_jvp(p, t):
        return g(*p), (t[0] * 2, jax.custom_derivatives.SymbolicZero.from_primal_value(p[0]))
    g.defjvp(g_jvp, symbolic_zeros=True)
    out, tan = jax.jvp(g, (3.0,), (1.0,))
    assert float(tan[0]) == 2.0 and float(tan[1]) == 0.0
    assert float(jax.grad(lambda x: g(x)[0] + g(x)[1])(1.0)) == 2.0
    # without symbolic_zeros, the rule sees instantiated zeros
    @jax.custom_jvp
    def h(x, y):
        return x * y
    kinds = []

    @h.defjvp
    def h_jvp(p, t):
        kinds.append(type(t[1]).__name__)
        return h(*p), t[0] * p[1] + p[0] * t[1]
    assert float(jax.grad(h)(3.0, 2.0)) == 2.0 and "SymbolicZero" not in kinds


def test_custom_jvp_symbolic_zeros_matches_jax():
    rjax = _rjax()
    res = []
    for J in (jax, rjax):
        f, seen = _sym_jvp_fn(J)
        res.append((float(J.grad(f)(3.0, 2.0)), float(J.jit(J.grad(f))(3.0, 2.0)),
                    float(J.jvp(lambda x: f(x, 2.0), (3.0,), (1.0,))[1]), seen))
    assert res[0] == res[1]


def test_custom_vjp_symbolic_zeros():
    @jax.custom_vjp
    def f(x, y):
        return x * y

    seen, cts = [], []

    def fwd(x, y):
        seen.append((type(x).__name__, x.perturbed, y.perturbed))
        return f(x.value, y.value), (x.value, y.value)

    def bwd(res, g):
        cts.append(type(g).__name__)
        return g * res[1], jax.custom_derivatives.SymbolicZero.from_primal_value(res[0])
    f.defvjp(fwd, bwd, symbolic_zeros=True)
    assert float(jax.grad(f)(2.0, 3.0)) == 3.0
    assert seen == [("CustomVJPPrimal", True, False)]
    assert float(jax.grad(f, 1)(2.0, 3.0)) == 0.0     # bwd returned a symbolic zero for y
    np.testing.assert_allclose(jax.jit(jax.grad(f))(2.0, 3.0), 3.0)
    # an unused output's cotangent arrives as a SymbolicZero
    @jax.custom_vjp
    def two(x):
        return x * 2, x * 3
    got = []

    def two_bwd(res, g):
        got.append([type(c).__name__ for c in g])
        return (0.0 if type(g[0]).__name__ == "SymbolicZero" else g[0] * 2,)
    two.defvjp(lambda x: (two(x.value), None), two_bwd, symbolic_zeros=True)
    assert float(jax.grad(lambda x: two(x)[0])(1.0)) == 2.0
    assert got == [["ArrayImpl", "SymbolicZero"]]


def test_custom_vjp_symbolic_zeros_matches_jax():
    rjax = _rjax()
    res = []
    for J in (jax, rjax):
        @J.custom_vjp
        def f(x, y):
            return x * y
        seen = []

        def fwd(x, y):
            seen.append((type(x).__name__, x.perturbed, y.perturbed))
            return f(x.value, y.value), (x.value, y.value)
        f.defvjp(fwd, lambda r, g: (g * r[1], g * r[0]), symbolic_zeros=True)
        res.append((float(J.grad(f)(2.0, 3.0)), float(J.grad(f, (0, 1))(2.0, 3.0)[1]), seen))
    assert res[0] == res[1]


def test_custom_derivatives_module():
    import jaxlite.custom_derivatives as cd
    assert cd.custom_jvp is jax.custom_jvp and cd.custom_vjp is jax.custom_vjp
    z = cd.zero_from_primal({"a": jnp.ones(2), "n": 3}, symbolic_zeros=True)
    assert type(z["a"]) is cd.SymbolicZero and z["a"].shape == (2,)
    assert z["n"].dtype == jax.dtypes.float0
    z = cd.zero_from_primal(jnp.ones(2))
    np.testing.assert_array_equal(z, [0.0, 0.0])
    with pytest.raises(TypeError, match="unexpected leaf type"):
        cd.custom_vjp_primal_tree_values([1.0])


# ----------------------------------------------------------------------------- checkpoint
def _ckpt_loss(J, jnp_):
    import importlib
    cn = importlib.import_module(J.__name__ + ".ad_checkpoint").checkpoint_name

    def f(W, x):
        y = cn(jnp_.sin(x @ W), "y")
        z = cn(jnp_.einsum("bi,bj->bij", y, y), "z")
        return jnp_.sum(jnp_.cos(z.sum(0) @ W))
    return f


def _policies(P):
    return {
        "none": None, "nothing": P.nothing_saveable, "everything": P.everything_saveable,
        "dots": P.dots_saveable, "dots_nb": P.dots_with_no_batch_dims_saveable,
        "checkpoint_dots": P.checkpoint_dots,
        "checkpoint_dots_nb": P.checkpoint_dots_with_no_batch_dims,
        "names_y": P.save_only_these_names("y"), "names_yz": P.save_only_these_names("y", "z"),
        "but_y": P.save_any_names_but_these("y"),
        "except_y": P.save_anything_except_these_names("y"),
        "both": P.save_from_both_policies(P.dots_saveable, P.save_only_these_names("y")),
        "offload_dots": P.offload_dot_with_no_batch_dims("device", "pinned_host"),
        "offload_names": P.save_and_offload_only_these_names(
            names_which_can_be_saved=["y"], names_which_can_be_offloaded=["z"],
            offload_src="device", offload_dst="pinned_host"),
    }


W = np.random.RandomState(0).randn(3, 3).astype(np.float32)
X = np.random.RandomState(1).randn(2, 3).astype(np.float32)


@pytest.mark.parametrize("pol", sorted(_policies(jax.checkpoint_policies)))
def test_checkpoint_policies_values(pol):
    f = _ckpt_loss(jax, jnp)
    policy = _policies(jax.checkpoint_policies)[pol]
    want = jax.grad(f)(W, X)
    np.testing.assert_allclose(jax.grad(jax.checkpoint(f, policy=policy))(W, X), want,
                               rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(jax.jit(jax.grad(jax.checkpoint(f, policy=policy)))(W, X),
                               want, rtol=1e-5, atol=1e-6)


def _residual_count(text):
    """The number of operands of the outer (backward) remat2 equation."""
    return len(re.findall(r"\] ([^\n]*)\n  in \(\w+,\) }$", text)[0].split())


def _prim_counts(text):
    text = "\n".join(l for l in text.splitlines() if "reduce_precision" not in l)
    return Counter(re.findall(r"= ([a-z_0-9]+)[\[ ]", text))


def test_checkpoint_saves_what_the_policy_says():
    P = jax.checkpoint_policies
    f = _ckpt_loss(jax, jnp)
    counts = {}
    for name, pol in _policies(P).items():
        counts[name] = _residual_count(str(jax.make_jaxpr(jax.grad(jax.checkpoint(
            f, policy=pol)))(W, X)))
    # inputs W, x and the output cotangent are always operands; residuals come on top
    assert counts["none"] == counts["nothing"] == 3
    assert counts["names_y"] == 4 and counts["names_yz"] == 5 and counts["but_y"] == 4
    assert counts["dots"] == 6 and counts["dots_nb"] == 5 and counts["everything"] == 7
    assert counts["offload_dots"] == counts["dots_nb"]
    assert counts["offload_names"] == counts["names_yz"]
    with pytest.raises(ValueError, match="should not intersect"):
        P.save_and_offload_only_these_names(
            names_which_can_be_saved=["y"], names_which_can_be_offloaded=["y"],
            offload_src="device", offload_dst="pinned_host")


@pytest.mark.parametrize("pol", sorted(set(_policies(jax.checkpoint_policies)) -
                                       {"offload_dots", "offload_names"}))
def test_checkpoint_jaxprs_match_jax(pol):
    # JAX 0.10 wraps saved residuals in reduce_precision (a no-op barrier for XLA) and
    # prints some broadcast dimensions as np.int64: compare equations and residuals.
    rjax = _rjax()
    ours = str(jax.make_jaxpr(jax.grad(jax.checkpoint(
        _ckpt_loss(jax, jnp), policy=_policies(jax.checkpoint_policies)[pol])))(W, X))
    theirs = str(rjax.make_jaxpr(rjax.grad(rjax.checkpoint(
        _ckpt_loss(rjax, rjax.numpy), policy=_policies(rjax.checkpoint_policies)[pol])))(W, X))
    assert _prim_counts(ours) == _prim_counts(theirs)
    assert _residual_count(ours) == _residual_count(theirs)


def test_checkpoint_drops_unused_known_inputs():
    text = str(jax.make_jaxpr(jax.grad(jax.checkpoint(lambda x: x * 3.0)))(2.0))
    assert text.rstrip().endswith("] 1.0:f32[]\n  in (b,) }") or "] 1.0:f32[]" in text
    assert "] a 1.0" not in text
    assert float(jax.grad(jax.checkpoint(lambda x, y: x * 2.0), argnums=(0, 1))(2.0, 3.0)[0]) \
        == 2.0


def test_checkpoint_linear_jaxpr_matches_jax():
    rjax = _rjax()
    for mk in (lambda m: (lambda x: x * 3.0), lambda m: (lambda x, y: m.sin(x) * y + x)):
        args = (2.0,) if mk(jnp).__code__.co_argcount == 1 else (2.0, 3.0)
        ours = str(jax.make_jaxpr(jax.grad(jax.checkpoint(mk(jnp))))(*args))
        theirs = str(rjax.make_jaxpr(rjax.grad(rjax.checkpoint(mk(rjax.numpy))))(*args))
        assert ours == theirs


# ----------------------------------------------------------------------------- linear_transpose
def test_linear_transpose_integers_and_scalars():
    ft = jax.linear_transpose(lambda x: x * 2, 1)
    (g,) = ft(3)
    assert g.dtype == jnp.int32 and int(g) == 6
    with pytest.raises(TypeError, match="integer -> integer"):
        jax.linear_transpose(lambda x: x.astype(jnp.float32), 1)
    (g,) = jax.linear_transpose(lambda x: x + 1.0, 1.0)(1.0)
    assert g.dtype == jnp.float32 and float(g) == 1.0
    ft = jax.linear_transpose(lambda d: {"o": d["a"] * 2 + d["b"].sum()},
                              {"a": jnp.ones(3), "b": jnp.ones(2)})
    (g,) = ft({"o": jnp.arange(3.0)})
    np.testing.assert_allclose(g["a"], [0.0, 2.0, 4.0])
    np.testing.assert_allclose(g["b"], [3.0, 3.0])
    # <f x, y> == <x, f^T y> for a random linear map
    A = np.random.RandomState(2).randn(4, 3).astype(np.float32)
    x, y = np.ones(3, np.float32), np.arange(4.0, dtype=np.float32)
    (xt,) = jax.linear_transpose(lambda v: jnp.cumsum(A @ v)[::-1], x)(y)
    np.testing.assert_allclose(np.dot(np.cumsum(A @ x)[::-1], y), np.dot(x, xt), rtol=1e-5)


def test_linear_transpose_matches_jax():
    rjax = _rjax()
    for J in (jax, rjax):
        (g,) = J.linear_transpose(lambda x: x * 2, 1)(3)
        assert int(g) == 6 and g.dtype == np.int32
        (g,) = J.linear_transpose(lambda x: x + 1.0, 1.0)(1.0)
        assert np.asarray(g).dtype == np.float32


# ----------------------------------------------------------------------------- weak types
WEAK = {
    "pow3": lambda m, l: (lambda x: x ** 3), "sin": lambda m, l: m.sin,
    "tanh": lambda m, l: m.tanh, "rsqrt": lambda m, l: l.rsqrt,
    "pow25": lambda m, l: (lambda x: x ** 2.5), "logistic": lambda m, l: l.logistic,
    "abs": lambda m, l: m.abs, "max": lambda m, l: (lambda x: m.maximum(x, 0.1)),
    "clip": lambda m, l: (lambda x: m.clip(x, 0.0, 0.3)), "square": lambda m, l: m.square,
    "div": lambda m, l: (lambda x: 1.0 / x), "log1p": lambda m, l: m.log1p,
}


def test_gradient_weak_types_follow_the_input():
    # Python-scalar inputs are weakly typed; their derivatives stay weak (as in JAX), except
    # through pow with a non-integer exponent, which casts to the strong result type
    for name, mk in WEAK.items():
        f = mk(jnp, lax)
        assert jax.grad(f)(0.4).weak_type == (name != "pow25"), name
        assert jax.jit(jax.grad(f))(0.4).weak_type == (name != "pow25"), name
        assert not jax.grad(f)(jnp.float32(0.4)).weak_type, name


@pytest.mark.parametrize("name", sorted(WEAK))
def test_gradient_weak_types_and_jaxprs_match_jax(name):
    rjax = _rjax()
    ours, theirs = WEAK[name](jnp, lax), WEAK[name](rjax.numpy, rjax.lax)
    for order in (1, 2):
        g, rg = ours, theirs
        for _ in range(order):
            g, rg = jax.grad(g), rjax.grad(rg)
        a, b = g(0.4), rg(0.4)
        assert a.weak_type == b.weak_type
        np.testing.assert_allclose(a, b, rtol=1e-5)
    if name != "clip":    # jnp.clip is a jitted function in JAX (a pjit equation)
        assert str(jax.make_jaxpr(jax.grad(ours))(0.4)) == \
            str(rjax.make_jaxpr(rjax.grad(theirs))(0.4))


def test_weak_float_literals_print_as_written():
    text = str(jax.make_jaxpr(lambda x: jnp.maximum(x, 0.1) * 1e-8 + 1e8)(1.0))
    assert "0.1:f32[]" in text and "1e-08:f32[]" in text and "100000000.0:f32[]" in text
    # strong float32 constants print their exact value, as JAX does
    assert "0.10000000149011612" in str(jax.make_jaxpr(lambda x: x * np.float32(0.1))(1.0))


def test_check_grads_modes_and_orders():
    f = lambda x, y: jnp.sin(x) * jnp.exp(y)  # noqa: E731
    with jax.enable_x64():
        args = (np.array([0.3, 0.7]), np.array([0.1, -0.2]))
        for modes in (("fwd",), ("rev",), ("fwd", "rev")):
            for order in (1, 2, 3):
                check_grads(f, args, order, modes=modes)
        with pytest.raises(AssertionError):
            check_grads(_wrong_grad, (np.array([0.3, 0.7]),), 1, modes=("rev",))
        with pytest.raises(AssertionError):
            check_grads(_wrong_grad, (np.array([0.3, 0.7]),), 1, modes=("fwd",))


@jax.custom_jvp
def _wrong_grad(x):
    return jnp.sin(x)


@_wrong_grad.defjvp
def _wrong_grad_jvp(p, t):
    return _wrong_grad(p[0]), 2.0 * t[0]


def test_float0_tangents_through_api():
    f = lambda x, n: x * n  # noqa: E731
    p, t = jax.jvp(f, (2.0, 3), (1.0, np.zeros((), jax.dtypes.float0)))
    assert float(t) == 3.0
    with pytest.raises(TypeError, match="float0"):
        jax.jvp(f, (2.0, 3), (1.0, 0))
    g = jax.grad(lambda d: d["x"] * d["n"], allow_int=True)({"x": 2.0, "n": 3})
    assert g["n"].dtype == jax.dtypes.float0 and float(g["x"]) == 3.0
    _, t = jax.jvp(lambda x: (x, jnp.arange(2)), (2.0,), (1.0,))
    assert t[1].dtype == jax.dtypes.float0 and t[1].shape == (2,)
    (gx,) = jax.vjp(lambda x: (x * 2, jnp.arange(2)), 2.0)[1](
        (1.0, np.zeros(2, jax.dtypes.float0)))
    assert float(gx) == 2.0


def test_custom_derivative_nondiff_argnum_left_to_its_default():
    """A defaulted parameter named in nondiff_argnums and not passed takes its default,
    as in JAX (which binds the call to the signature even without keywords)."""
    from functools import partial

    @partial(jax.custom_jvp, nondiff_argnums=(1, 2))
    def f(x, scale=2.0, shift=None):
        return x * scale + (0.0 if shift is None else shift)

    @f.defjvp
    def f_jvp(scale, shift, primals, tangents):
        return f(primals[0], scale, shift), tangents[0] * scale

    @partial(jax.custom_vjp, nondiff_argnums=(1,))
    def g(x, scale=3.0):
        return x * scale

    g.defvjp(lambda x, scale: (x * scale, None), lambda scale, _, ct: (ct * scale,))

    assert float(jax.jit(f)(1.5)) == 3.0
    assert float(jax.grad(f)(1.5)) == 2.0
    assert float(jax.jit(g)(1.5)) == 4.5
    assert float(jax.grad(g)(1.5)) == 3.0


def test_custom_vjp_bwd_runs_on_zero_cotangents():
    # as JAX, whose backward pass transposes every equation of the (DCE'd) linearized
    # jaxpr: a custom_vjp's bwd runs even when its outputs get only zero cotangents (here
    # from another custom_vjp whose bwd returns None), and the cotangents it returns count
    # (flax's fp8 in_q returns new scales this way); when nothing uses its outputs (stop_
    # gradient) it is gone and bwd does not run (numbers from JAX 0.10.2)
    from functools import partial

    @partial(jax.custom_vjp, nondiff_argnums=(0,))
    def f(c, x, s):
        return x * s, s + c

    f.defvjp(lambda c, x, s: (f(c, x, s), (x, s)),
             lambda c, res, g: (None, res[1] * 10.0 + c))

    @jax.custom_vjp
    def h(y, t):
        return jnp.sum(y) * t

    h.defvjp(lambda y, t: (h(y, t), None), lambda res, g: (None, None))

    def used(x, s):
        return h(*f(1.0, x, s)) + s

    def unused(x, s):
        y, t = f(1.0, x, s)
        return jnp.sum(lax.stop_gradient(y)) + lax.stop_gradient(t) + s

    for loss, want in ((used, 22.0), (unused, 1.0)):
        for fn in (jax.grad(loss, (0, 1)), jax.jit(jax.grad(loss, (0, 1)))):
            gx, gs = fn(jnp.ones(3), jnp.float32(2.0))
            assert np.asarray(gx).tolist() == [0.0, 0.0, 0.0] and float(gs) == want
