"""JAX's extension API on jaxlite: primitives defined with ``jax.extend.core.Primitive`` and
the ``ad`` / ``batching`` / ``mlir`` rule tables trace, jit, differentiate and batch like
built-in ones, and the tables are views onto the primitives' class rules."""
import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import lax
from jaxlite.extend.core import Primitive
from jaxlite.interpreters import ad, batching, mlir
from jaxlite._src.core.primitive import registry


def _make_sin(name="my_sin"):
    p = Primitive(name)
    p.def_impl(lambda x: jnp.sin(x))
    p.def_abstract_eval(lambda x: jax.core.ShapedArray(x.shape, x.dtype))
    ad.defjvp(p, lambda g, x: g * jnp.cos(x))
    batching.primitive_batchers[p] = lambda args, dims: (p.bind(args[0]), dims[0])
    mlir.register_lowering(p, mlir.lower_fun(lambda x: jnp.sin(x), multiple_results=False))
    return p


my_sin_p = _make_sin()


def my_sin(x):
    return my_sin_p.bind(x)


X = np.array([0.1, 0.7, -1.3], np.float32)


def test_eager_jit_and_jaxpr():
    np.testing.assert_allclose(my_sin(X), np.sin(X), rtol=1e-6)
    np.testing.assert_allclose(jax.jit(my_sin)(X), np.sin(X), rtol=1e-6)
    text = str(jax.make_jaxpr(lambda x: my_sin(x) * 2.0)(X))
    assert text == ("{ lambda ; a:f32[3]. let\n    b:f32[3] = my_sin a\n"
                    "    c:f32[3] = mul b 2.0:f32[]\n  in (c,) }")
    assert "my_sin" in jax.jit(my_sin).lower(X).as_text()


def test_grad_jvp_and_higher_order():
    g = jax.grad(lambda x: my_sin(x).sum())(X)
    np.testing.assert_allclose(g, np.cos(X), rtol=1e-6)
    np.testing.assert_allclose(jax.jit(jax.grad(lambda x: my_sin(x).sum()))(X), np.cos(X),
                               rtol=1e-6)
    _, t = jax.jvp(my_sin, (X,), (np.ones(3, np.float32),))
    np.testing.assert_allclose(t, np.cos(X), rtol=1e-6)
    # the JVP rule is written with jnp, so it is itself differentiable
    g2 = jax.grad(lambda x: jax.grad(lambda y: my_sin(y))(x))(0.5)
    np.testing.assert_allclose(g2, -np.sin(0.5), rtol=1e-6)


def test_vmap_uses_the_rule_and_composes():
    xs = np.stack([X, 2 * X])
    np.testing.assert_allclose(jax.vmap(my_sin)(xs), np.sin(xs), rtol=1e-6)
    np.testing.assert_allclose(jax.vmap(my_sin, in_axes=1, out_axes=1)(xs.T), np.sin(xs.T),
                               rtol=1e-6)
    np.testing.assert_allclose(jax.vmap(jax.grad(lambda x: my_sin(x)))(X), np.cos(X),
                               rtol=1e-6)
    jaxpr = str(jax.make_jaxpr(jax.vmap(my_sin))(xs))
    assert "my_sin" in jaxpr and "while" not in jaxpr


def test_multiple_results_and_linear_primitives():
    sincos_p = Primitive("my_sincos")
    sincos_p.multiple_results = True
    sincos_p.def_impl(lambda x: (jnp.sin(x), jnp.cos(x)))
    sincos_p.def_abstract_eval(lambda x: [x, x])

    def jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        s, c = sincos_p.bind(x)
        t = ad.instantiate_zeros(t)
        return [s, c], [c * t, -s * t]
    ad.primitive_jvps[sincos_p] = jvp
    s, c = sincos_p.bind(X)
    np.testing.assert_allclose(np.asarray(s) ** 2 + np.asarray(c) ** 2, 1, rtol=1e-6)
    g = jax.grad(lambda x: sum(sincos_p.bind(x)).sum())(X)
    np.testing.assert_allclose(g, np.cos(X) - np.sin(X), rtol=1e-6)
    # no batching rule: vmap falls back to a loop and stays correct
    out = jax.vmap(lambda x: sincos_p.bind(x)[0])(np.stack([X, X]))
    np.testing.assert_allclose(out, np.sin(np.stack([X, X])), rtol=1e-6)

    double_p = Primitive("my_double")
    double_p.def_impl(lambda x: 2 * x)
    double_p.def_abstract_eval(lambda x: x)
    ad.deflinear(double_p, lambda ct: [2 * ct])
    assert double_p in ad.primitive_transposes
    np.testing.assert_allclose(jax.grad(lambda x: double_p.bind(x).sum())(X), 2.0)
    lt = jax.linear_transpose(lambda x: double_p.bind(x), X)
    np.testing.assert_allclose(lt(np.ones(3, np.float32))[0], 2.0)


def test_axis_and_fancy_batchers_get_the_axis():
    seen = []
    p = Primitive("my_axis_id")
    p.def_impl(lambda x: x)
    p.def_abstract_eval(lambda x: x)

    def rule(axis_size, axis_name, _, args, dims):
        seen.append((axis_size, axis_name))
        return p.bind(args[0]), dims[0]
    batching.axis_primitive_batchers[p] = rule
    jax.vmap(lambda x: p.bind(x), axis_name="i")(np.ones((4, 2), np.float32))
    assert seen == [(4, "i")]
    q = Primitive("my_fancy_id")
    q.def_impl(lambda x: x)
    q.def_abstract_eval(lambda x: x)
    batching.fancy_primitive_batchers[q] = lambda ad_, args, dims: (
        seen.append(ad_.size) or q.bind(args[0]), dims[0])
    jax.vmap(lambda x: q.bind(x))(np.ones((5, 2), np.float32))
    assert seen[-1] == 5


def _rule_argument_types(jx, Prim, ad_, batching_):
    # which container types a JAX-written rule is handed: rules build pytrees from them
    # (equinox's vprim passes a batch rule's dims to vmap as out_axes of a tuple)
    seen = {}
    p = Prim("my_seen_id")
    p.def_impl(lambda x: x)
    p.def_abstract_eval(lambda x: x)

    def jvp(primals, tangents):
        seen["jvp"] = (type(primals).__name__, type(tangents).__name__)
        return p.bind(primals[0]), tangents[0]

    def batch(args, dims):
        seen["batch"] = (type(args).__name__, type(dims).__name__)
        return p.bind(args[0]), dims[0]

    def fancy(axis_data, args, dims):
        seen["fancy"] = (type(args).__name__, type(dims).__name__)
        return q.bind(args[0]), dims[0]
    ad_.primitive_jvps[p] = jvp
    batching_.primitive_batchers[p] = batch
    q = Prim("my_seen_fancy")
    q.def_impl(lambda x: x)
    q.def_abstract_eval(lambda x: x)
    batching_.fancy_primitive_batchers[q] = fancy
    x = np.ones((3, 2), np.float32)
    jx.jvp(p.bind, (x,), (x,))
    jx.vmap(p.bind)(x)
    jx.vmap(q.bind)(x)
    return seen


def test_rules_get_tuples_as_in_jax():
    seen = _rule_argument_types(jax, Primitive, ad, batching)
    assert seen == {"jvp": ("tuple", "tuple"), "batch": ("tuple", "tuple"),
                    "fancy": ("tuple", "tuple")}
    rjax = pytest.importorskip("jax")
    from jax.extend.core import Primitive as RPrimitive
    from jax.interpreters import ad as rad, batching as rbatching
    assert _rule_argument_types(rjax, RPrimitive, rad, rbatching) == seen


def test_tables_view_builtin_rules_and_errors():
    assert isinstance(lax.sin_p, jax.extend.core.Primitive)
    assert lax.sin_p in ad.primitive_jvps and lax.sin_p in batching.primitive_batchers
    _, t = ad.primitive_jvps[lax.sin_p]((np.float32(0.5),), (np.float32(1.0),))
    np.testing.assert_allclose(t, np.cos(0.5), rtol=1e-6)
    out, d = batching.primitive_batchers[lax.sin_p]([X[:, None]], [0])
    np.testing.assert_allclose(out, np.sin(X[:, None]), rtol=1e-6)
    # a name may be reused; extension primitives stay out of the built-in registry
    again = _make_sin()
    assert again is not my_sin_p and type(again) is not type(my_sin_p)
    assert "my_sin" not in registry
    bare = Primitive("my_bare")
    bare.def_impl(lambda x: x + 1)
    bare.def_abstract_eval(lambda x: x)
    with pytest.raises(NotImplementedError, match="my_bare"):
        jax.grad(lambda x: bare.bind(x))(1.0)
    nothing = Primitive("my_nothing")
    with pytest.raises(NotImplementedError, match="def_abstract_eval"):
        jax.jit(nothing.bind)(X)
    nothing.def_abstract_eval(lambda x: x)
    with pytest.raises(NotImplementedError, match="def_impl"):
        nothing.bind(X)
    with pytest.raises(TypeError, match="primitive"):
        ad.primitive_jvps["not a primitive"] = lambda p, t: (p, t)


def test_lowering_only_primitive_and_core_helpers():
    p = Primitive("my_lowered")
    p.def_abstract_eval(lambda x: x)
    mlir.register_lowering(p, mlir.lower_fun(lambda x: x * 3, multiple_results=False))
    np.testing.assert_allclose(jax.jit(lambda x: p.bind(x))(X), 3 * X, rtol=1e-6)
    from jaxlite.extend import core as jex
    a = jax.core.ShapedArray((4, 3), np.float32)
    assert jex.mapped_aval(4, 0, a).shape == (3,)
    assert jex.unmapped_aval(5, 1, a).shape == (4, 5, 3)
    closed = jax.make_jaxpr(lambda x: jnp.sin(x) + 1)(X)
    np.testing.assert_allclose(jex.jaxpr_as_fun(closed)(X)[0], np.sin(X) + 1, rtol=1e-6,
                               atol=1e-7)   # (XLA's sin, not NumPy's)
    assert jex.primitives.sin_p is lax.sin_p and jex.primitives.pjit_p.name == "jit"


def test_same_primitive_in_real_jax_gives_same_jaxpr_and_values():
    rjax = pytest.importorskip("jax")
    from jax.extend.core import Primitive as RPrimitive
    from jax.interpreters import ad as rad, batching as rbatching, mlir as rmlir
    rp = RPrimitive("my_sin")
    rp.def_impl(lambda x: rjax.numpy.sin(x))
    rp.def_abstract_eval(lambda x: rjax.core.ShapedArray(x.shape, x.dtype))
    rad.defjvp(rp, lambda g, x: g * rjax.numpy.cos(x))
    rbatching.primitive_batchers[rp] = lambda args, dims: (rp.bind(args[0]), dims[0])
    rmlir.register_lowering(rp, rmlir.lower_fun(lambda x: rjax.numpy.sin(x),
                                                multiple_results=False))

    def f(jx, prim):
        return lambda x: jx.grad(lambda y: (prim.bind(y) * 2.0).sum())(x)
    assert str(jax.make_jaxpr(lambda x: my_sin(x) * 2.0)(X)) == \
        str(rjax.make_jaxpr(lambda x: rp.bind(x) * 2.0)(X))
    np.testing.assert_allclose(jax.jit(f(jax, my_sin_p))(X), rjax.jit(f(rjax, rp))(X),
                               rtol=1e-6)
    xs = np.stack([X, -X])
    np.testing.assert_allclose(jax.vmap(my_sin)(xs), rjax.vmap(rp.bind)(xs), rtol=1e-6)


def test_linear_util_api_util_and_partial_eval():
    from jaxlite.extend import linear_util as lu
    from jaxlite.interpreters import partial_eval as pe

    def f(a, b):
        return a * 2, jnp.sin(b) + a
    leaves, tree = jax.tree_util.tree_flatten(((1.0, jnp.ones(2)), {}))
    ff, out_tree = jax.api_util.flatten_fun(lu.wrap_init(f), tree)
    jaxpr, pvals, consts = pe.trace_to_jaxpr_nounits(
        ff, [pe.PartialVal.known(1.0), pe.PartialVal.unknown(jax.core.ShapedArray(
            (2,), np.float32))])
    assert [pv.is_known() for pv in pvals] == [True, False]
    assert float(pvals[0].get_known()) == 2.0 and pvals[1].get_aval().shape == (2,)
    assert out_tree().num_leaves == 2
    assert [e.primitive.name for e in jaxpr.eqns] == ["sin", "add"]
    g, tree2 = jax.api_util.flatten_fun_nokwargs(lu.wrap_init(lambda x: {"y": x + 1}),
                                                  jax.tree_util.tree_structure((0,)))
    assert g.call_wrapped(1.0) == [2.0] and tree2().num_leaves == 1


def _lowering_program(jx, mlir_mod, core_mod):
    """Counts when JAX runs a primitive's lowerings: a lower_fun function once per
    compilation, an MLIR rule's Python callback on every call of the compiled code, the
    impl only eagerly."""
    counts = {"lower": 0, "impl": 0, "cb": 0}
    p = core_mod.Primitive("twice_lowered")

    def impl(x):
        counts["impl"] += 1
        return x * 2

    def lowered(x):
        counts["lower"] += 1
        return x * 2
    p.def_impl(impl)
    p.def_abstract_eval(lambda a: a)
    mlir_mod.register_lowering(p, mlir_mod.lower_fun(lowered, multiple_results=False))
    f = jx.jit(lambda x: p.bind(x) + 1)
    got = [float(f(np.float32(i))) for i in range(3)]
    seen = [dict(counts)]
    got.append(float(p.bind(np.float32(3.0))))
    seen.append(dict(counts))

    q = core_mod.Primitive("thrice_by_callback")
    q.multiple_results = True
    q.def_impl(lambda x: [impl(x)])
    q.def_abstract_eval(lambda a: [a])

    def cb(x):
        counts["cb"] += 1
        assert isinstance(x, np.ndarray)
        return (x * 3,)

    def rule(ctx, x):
        res, _, keep = mlir_mod.emit_python_callback(
            ctx, cb, None, [x], ctx.avals_in, ctx.avals_out, has_side_effect=False)
        ctx.module_context.add_keepalive(keep)
        return res
    mlir_mod.register_lowering(q, rule)
    g = jx.jit(lambda x: q.bind(x)[0] + 1)
    got += [float(g(np.float32(i))) for i in range(3)]
    got += np.asarray(jx.jit(lambda x: q.bind(x)[0])(np.arange(3, dtype=np.float32))).tolist()
    seen.append(dict(counts))
    return got, seen


def test_lowerings_run_when_jax_runs_them():
    got, seen = _lowering_program(jax, mlir, __import__("jaxlite.extend.core").extend.core)
    assert got == [1.0, 3.0, 5.0, 6.0, 1.0, 4.0, 7.0, 0.0, 3.0, 6.0]
    assert seen == [{"lower": 1, "impl": 0, "cb": 0}, {"lower": 1, "impl": 1, "cb": 0},
                    {"lower": 1, "impl": 1, "cb": 4}]
    with pytest.raises(NotImplementedError, match="emit_python_callback"):
        mlir.emit_python_callback(None, lambda x: x, None, [1.0], [], [],
                                  has_side_effect=False)


def test_lowerings_run_when_jax_runs_them_as_jax():
    real = pytest.importorskip("jax")
    import jax.extend.core as real_core
    from jax.interpreters import mlir as real_mlir
    assert _lowering_program(real, real_mlir, real_core) == _lowering_program(
        jax, mlir, __import__("jaxlite.extend.core").extend.core)


def _rebind_eval(jx, closed, *args):
    # a jaxpr interpreter as libraries write it (equinox's finalise_jaxpr): re-bind every
    # equation with get_bind_params, or call a custom_jvp_call's primal function
    env = dict(zip(closed.jaxpr.invars, args))
    env.update(zip(closed.jaxpr.constvars, closed.consts))
    kinds = []
    for eqn in closed.jaxpr.eqns:
        params = eqn.primitive.get_bind_params(eqn.params)
        kinds.append((eqn.primitive.name, type(params).__name__, sorted(params)))
        ins = [env[v] if not hasattr(v, "val") else v.val for v in eqn.invars]
        if eqn.primitive.name == "custom_jvp_call":
            fun, jvp = params["subfuns"]
            outs = fun.call_wrapped(*ins)
            t = jvp.call_wrapped(*ins, *[jx.numpy.ones_like(x) for x in ins])
            assert len(t) == 2 * len(outs)
            again = eqn.primitive.bind(*ins, **params)   # the round trip binds too
            np.testing.assert_allclose(np.asarray(again[0]), np.asarray(outs[0]), rtol=1e-6)
        else:
            outs = eqn.primitive.bind(*ins, **params)
        if not eqn.primitive.multiple_results:
            outs = [outs]
        env.update(zip(eqn.outvars, outs))
    return [env[v] for v in closed.jaxpr.outvars], kinds


def _custom_program(jx):
    @jx.custom_jvp
    def f(x):
        return jx.numpy.sin(x) * 2.0

    @f.defjvp
    def f_jvp(p, t):
        return f(p[0]), 2.0 * jx.numpy.cos(p[0]) * t[0]
    return lambda x: f(x) + 1.0


def test_get_bind_params_rebinds_and_hands_custom_jvp_bodies_as_jax():
    closed = jax.make_jaxpr(_custom_program(jax))(X)
    outs, kinds = _rebind_eval(jax, closed, X)
    np.testing.assert_allclose(np.asarray(outs[0]), 2 * np.sin(X) + 1, rtol=1e-6)
    assert kinds[0][:2] == ("custom_jvp_call", "dict") and "subfuns" in kinds[0][2]
    assert "call_jaxpr" not in kinds[0][2] and kinds[1][1] == "dict"
    rjax = pytest.importorskip("jax")
    rclosed = rjax.make_jaxpr(_custom_program(rjax))(X)
    routs, rkinds = _rebind_eval(rjax, rclosed, X)
    np.testing.assert_allclose(np.asarray(outs[0]), np.asarray(routs[0]), rtol=1e-6)
    assert [(k[0], k[1]) for k in kinds] == [(k[0], k[1]) for k in rkinds]


def test_zero_and_undefined_primal_are_childless_pytrees():
    """As in JAX, ``ad.Zero`` and ``ad.UndefinedPrimal`` are pytree nodes with no leaves (the
    aval is the node data): a symbolic-zero tangent crosses ``vmap`` unchanged, in (any
    in_axes) and out (any out_axes), as equinox's vprim JVP rules rely on."""
    z = ad.Zero(jax.core.ShapedArray((), jax.dtypes.float0))
    leaves, tree = jax.tree_util.tree_flatten(z)
    assert leaves == []
    back = jax.tree_util.tree_unflatten(tree, [])
    assert type(back) is ad.Zero and back.aval == z.aval
    u = ad.UndefinedPrimal(jax.core.ShapedArray((2,), np.float32))
    assert jax.tree_util.tree_leaves(u) == []
    assert jax.tree_util.tree_unflatten(jax.tree_util.tree_structure(u), []).aval == u.aval
    out = jax.vmap(lambda x, t: (x * 2, t), in_axes=(0, None))(jnp.ones(3), z)
    np.testing.assert_array_equal(out[0], 2 * np.ones(3, np.float32))
    assert type(out[1]) is ad.Zero and out[1].aval == z.aval
    out = jax.vmap(lambda x: (x * 2, z))(jnp.ones(3))
    assert type(out[1]) is ad.Zero


def test_zero_pytree_matches_jax():
    rj = pytest.importorskip("jax")
    from jax.interpreters import ad as jad
    zj = jad.Zero(rj.core.ShapedArray((2,), rj.dtypes.float0))
    z = ad.Zero(jax.core.ShapedArray((2,), jax.dtypes.float0))
    assert rj.tree_util.tree_leaves(zj) == jax.tree_util.tree_leaves(z) == []
    assert (rj.tree_util.tree_structure(zj).num_leaves
            == jax.tree_util.tree_structure(z).num_leaves == 0)
    oj = rj.vmap(lambda x: (x * 2, zj))(rj.numpy.ones(3))
    o = jax.vmap(lambda x: (x * 2, z))(jnp.ones(3))
    assert type(oj[1]).__name__ == type(o[1]).__name__ == "Zero"
