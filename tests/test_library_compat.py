"""Behaviours of JAX that equinox's and optax's own test suites rely on (found by running
them on jaxlite: tools/run_equinox_suite.py, tools/run_optax_suite.py), each written from
JAX 0.10.2's behaviour and compared with it when jax is installed."""
from __future__ import annotations

import io
import logging
import subprocess
import sys
import textwrap

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


def test_jvp_keeps_python_scalar_primals_and_jnp_converts_them():
    @jax.custom_jvp
    def g(x):
        return x * 2

    seen = []

    @g.defjvp
    def g_jvp(p, t):
        seen.append((type(p[0]), type(t[0])))
        return g(p[0]), t[0] * 2

    assert jax.jvp(g, (2.0,), (3.0,)) == (4.0, 6.0)     # the rule saw the floats
    assert seen == [(float, float)]
    assert jax.jvp(lambda x: x, (2.0,), (3.0,)) == (2.0, 3.0)
    # jnp's promotion (and asarray) turn them into arrays, primal and tangent alike
    for f in (lambda x: x + 1, lambda x: 1 + x, jnp.asarray, lambda x: jnp.add(x, 1)):
        p, t = jax.jvp(f, (2.0,), (3.0,))
        assert isinstance(p, jax.Array) and isinstance(t, jax.Array), f
    p, t = jax.jvp(lambda x: lax.add(x, 1.0), (2.0,), (3.0,))   # lax keeps the tangent
    assert isinstance(p, jax.Array) and t == 3.0 and type(t) is float


def test_jit_jvp_outputs_independent_of_the_input_are_not_differentiated():
    f = jax.jit(lambda x, y: (x * 2, y * 3))
    seen = {}

    def g(x):
        a, b = f(x, 4.0)
        seen["types"] = type(a).__name__, type(b).__name__
        return a + b
    jax.jvp(g, (1.0,), (1.0,))
    assert seen["types"] == ("JVPTracer", "ArrayImpl")


def test_grad_of_jit_traces_custom_vjp_bwd_once():
    calls = []

    @jax.custom_vjp
    def f(x):
        return x

    def fwd(x):
        return x, None

    def bwd(res, g):
        calls.append(1)
        return (g + 2,)
    f.defvjp(fwd, bwd)
    jf = jax.jit(f)
    x = jnp.array(1.0)
    assert jax.grad(jf)(x) == 3
    assert jax.grad(jf)(x) == 3
    assert len(calls) == 1


def test_copy_is_a_new_buffer():
    a = jnp.ones((2, 3))
    c = jnp.copy(a)
    assert c is not a and c.unsafe_buffer_pointer() != a.unsafe_buffer_pointer()
    jax.jit(lambda x: x + 1, donate_argnums=0)(c)
    assert c.is_deleted() and not a.is_deleted()
    np.testing.assert_array_equal(jnp.array(a), np.ones((2, 3)))


def test_make_jaxpr_consts_are_the_closed_over_arrays():
    w, v = jnp.ones(3), jnp.arange(3.0)
    closed = jax.make_jaxpr(lambda x: x * w + v)(jnp.ones(3))
    assert {id(c) for c in closed.consts} == {id(w), id(v)}
    np.testing.assert_array_equal(jax.jit(jax.core.jaxpr_as_fun(closed))(jnp.ones(3))[0],
                                  [1.0, 2.0, 3.0])


def test_float0_results_of_jit_are_numpy():
    _, fn = jax.vjp(lambda a, b: a * b, 2, 3.0)
    g = jax.jit(lambda: fn(1.0))()
    assert type(g[0]) is np.ndarray and g[0].dtype == jax.dtypes.float0
    assert isinstance(g[1], jax.Array)


def test_compile_options_checked():
    low = jax.jit(lambda x: x * 2).lower(1.0)
    assert low.compile(compiler_options={"xla_cpu_enable_fast_math": True})(2.0) == 4.0
    with pytest.raises(jax.errors.JaxRuntimeError,
                       match="No such compile option: 'not an option'"):
        low.compile(compiler_options={"not an option": "x"})


def test_num_cpu_devices_config():
    code = textwrap.dedent("""
        import jaxlite as jax
        assert jax.config.jax_num_cpu_devices == -1
        jax.config.update("jax_num_cpu_devices", 3)
        print(len(jax.devices()))
        jax.config.update("jax_num_cpu_devices", 3)     # unchanged: fine
        try:
            jax.config.update("jax_num_cpu_devices", 2)
        except RuntimeError as e:
            print(str(e).split(" i.e.")[0])
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=300, env={"PATH": "", "PYTHONPATH": ":".join(sys.path)})
    assert out.stdout.splitlines() == [
        "3", "jax_num_cpu_devices config should be updated before backends are initialized"
    ], out.stderr


def test_reduce_window_identity_in_the_inits_own_type():
    x = jnp.arange(14).reshape(1, 14)
    np.testing.assert_array_equal(lax.reduce_window(x, -jnp.inf, lax.max, (1, 2), (1, 3),
                                                    "VALID"), [[1, 4, 7, 10, 13]])
    with pytest.raises(TypeError, match="inconsistent dtypes"):
        lax.reduce_window(x, 0.5, lax.add, (1, 2), (1, 3), "VALID")


def test_load_bfloat16():
    f = io.BytesIO()
    jnp.save(f, jnp.array([1, 2], jnp.bfloat16))
    f.seek(0)
    y = jnp.load(f)
    assert y.dtype == jnp.bfloat16 and y.tolist() == [1, 2]


def test_callback_failure_logged_under_jaxs_logger_name(caplog):
    def cb(x):
        raise ValueError("boom")
    with caplog.at_level(logging.ERROR, logger="jax._src.callback"):
        with pytest.raises(Exception):
            jax.jit(lambda x: jax.pure_callback(cb, jax.ShapeDtypeStruct((), jnp.float32),
                                                x))(1.0)
    assert [r.getMessage() for r in caplog.records if r.name == "jax._src.callback"] == \
        ["jax.pure_callback failed"]


def test_out_sharding_of_an_unsharded_type_lays_nothing_out():
    x = jnp.ones(3)
    y = jax.random.normal(jax.random.key(1), (3,), out_sharding=jax.typeof(x).sharding)
    np.testing.assert_array_equal(jax.jit(lambda y: y)(y), y)


def test_transformed_callables_keep_what_can_be_copied():
    class Weird:
        __name__ = property(lambda self: 3)   # not a string

        def __call__(self, x):
            return x * 2.0
    for t in (jax.vmap, jax.grad, jax.jacfwd, jax.jacrev, jax.checkpoint):
        w = Weird()
        f = t(w)
        assert f.__wrapped__ is w
    assert jax.vmap(Weird())(jnp.ones(2)).tolist() == [2.0, 2.0]


def test_jax_core_names():
    a = jax.core.ShapedArray((2,), jnp.int32)
    assert a.to_tangent_aval().dtype == jax.dtypes.float0
    assert a.at_least_vspace() == a.to_tangent_aval()
    b = jax.core.ShapedArray((2,), jnp.float32, weak_type=True)
    assert b.to_tangent_aval() == b and b.to_tangent_aval().weak_type
    assert jax.core.Atom is not None
    assert jax.lax.add_p.get_bind_params({"k": 1}) == {"k": 1}
    t = jax.linear_transpose(lambda x: 2.0 * x, jax.ShapeDtypeStruct((), jnp.float32))
    assert t(1.0)[0] == 2.0
    import jaxlite.lib
    assert jaxlite.lib.__version__ == "0.10.2"


def test_compared_with_jax():
    real = _real_jax()
    import jax.numpy as rjnp
    from jax import lax as rlax
    x = np.arange(14, dtype=np.int32).reshape(1, 14)
    np.testing.assert_array_equal(
        lax.reduce_window(x, -np.inf, lax.max, (1, 2), (1, 3), "VALID"),
        rlax.reduce_window(x, -np.inf, rlax.max, (1, 2), (1, 3), "VALID"))
    for f, rf in ((lambda x: x + 1, lambda x: x + 1), (jnp.asarray, rjnp.asarray)):
        mine = jax.jvp(f, (2.0,), (3.0,))
        ref = real.jvp(rf, (2.0,), (3.0,))
        assert [isinstance(v, jax.Array) for v in mine] == \
            [isinstance(v, real.Array) for v in ref]
    assert real.jvp(lambda x: x, (2.0,), (3.0,)) == jax.jvp(lambda x: x, (2.0,), (3.0,))
    a = real.core.ShapedArray((2,), np.int32)
    assert str(a.to_tangent_aval()) == str(jax.core.ShapedArray((2,), jnp.int32)
                                           .to_tangent_aval())


def test_pmap_aot_stages_take_and_return_the_functions_pytrees():
    f = jax.pmap(lambda x, y: {"a": 2 * x + y, "b": (x,)})
    x, y = jnp.array([3.0]), jnp.array([4.0])
    compiled = f.lower(x, y).compile()
    out = compiled(x, y)
    assert set(out) == {"a", "b"} and out["a"].tolist() == [10.0]
    assert out["b"][0].tolist() == [3.0]
    assert "mul" in f.lower(x, y).as_text()


def test_linearize_and_vjp_functions_are_pytrees_of_their_residuals():
    # JAX returns both as pytrees whose leaves are the residuals, so they can be returned
    # from jit and vmap (equinox's checkpointed while_loop tests return linearize's f_jvp)
    def f(x):
        return jnp.sin(x) * 2.0, x.astype(int)
    out, f_jvp = jax.jit(lambda x: jax.linearize(f, x))(1.0)
    np.testing.assert_allclose(out[0], np.sin(1.0) * 2, rtol=1e-6)
    t = f_jvp(1.0)
    np.testing.assert_allclose(t[0], np.cos(1.0) * 2, rtol=1e-6)
    assert t[1].dtype == jax.dtypes.float0
    outs, f_jvps = jax.vmap(lambda x: jax.linearize(f, x))(jnp.arange(2.0))
    leaves = jax.tree_util.tree_leaves(f_jvps)
    assert leaves and all(leaf.shape[:1] == (2,) for leaf in leaves)
    np.testing.assert_allclose(outs[0], np.sin([0.0, 1.0]) * 2, rtol=1e-6)
    with pytest.raises(TypeError, match="inconsistent with the original primal"):
        f_jvp(1.0, 2.0)

    g = lambda x: jnp.sin(x) * x
    _, pull = jax.jit(lambda x: jax.vjp(g, x))(1.5)
    np.testing.assert_allclose(pull(1.0)[0], np.cos(1.5) * 1.5 + np.sin(1.5), rtol=1e-6)
    np.testing.assert_allclose(jax.jit(lambda p, c: p(c))(pull, 2.0)[0],
                               2 * (np.cos(1.5) * 1.5 + np.sin(1.5)), rtol=1e-6)
    pulls = jax.vmap(lambda x: jax.vjp(g, x)[1])(jnp.array([0.5, 1.5]))
    assert all(leaf.shape[:1] == (2,) for leaf in jax.tree_util.tree_leaves(pulls))


def test_linearize_and_vjp_pytrees_match_jax():
    real = _real_jax()
    for jx in (jax, real):
        out, f_jvp = jx.jit(lambda x: jx.linearize(lambda v: jx.numpy.sin(v) * v, x))(1.5)
        _, pull = jx.jit(lambda x: jx.vjp(lambda v: jx.numpy.sin(v) * v, x))(1.5)
        if jx is jax:
            mine = (out, f_jvp(0.5), pull(2.0))
        else:
            theirs = (out, f_jvp(0.5), pull(2.0))
    for m, t in zip(jax.tree_util.tree_leaves(mine), real.tree_util.tree_leaves(theirs)):
        np.testing.assert_allclose(m, t, rtol=1e-6)


def _struct_consts(jx):
    # a ShapeDtypeStruct returned or closed over while tracing (equinox's
    # filter_closure_convert evaluates ``jax.eval_shape(lambda: structs)``): a constant with
    # a type and no value; running it raises TypeError
    s = jx.ShapeDtypeStruct((3,), jx.numpy.float32)
    shapes = jx.eval_shape(lambda x: (s, x, 1.0), jx.numpy.ones(2))
    text = str(jx.make_jaxpr(lambda: s)())
    with pytest.raises(TypeError, match="ShapeDtypeStruct does not have a value"):
        jx.jit(lambda: s)()
    return [(a.shape, str(a.dtype), a.weak_type) for a in shapes], text


def test_shape_dtype_struct_is_a_typed_constant_without_value():
    out = _struct_consts(jax)
    assert out == ([((3,), "float32", False), ((2,), "float32", False),
                    ((), "float32", True)], "{ lambda a:f32[3]; . let  in (a,) }")
    assert _struct_consts(_real_jax()) == out


def _custom_jvp_transposed(jx):
    # a linear custom_jvp function transposed (lineax transposes its linear solves): the
    # body is transposed, as in JAX
    @jx.custom_jvp
    def f(x):
        return 3.0 * x
    f.defjvp(lambda p, t: (f(p[0]), 3.0 * t[0]))
    x = jx.numpy.arange(1.0, 3.0)
    a = jx.linear_transpose(f, 1.0)(2.0)
    b = jx.linear_transpose(lambda v: f(v) + 2 * f(v), x)(x)
    c = jx.jit(jx.linear_transpose(lambda v: jx.numpy.sum(f(v)), x))(1.0)
    return [np.asarray(v[0]).tolist() for v in (a, b, c)]


def test_custom_jvp_function_transposes_through_its_body():
    out = _custom_jvp_transposed(jax)
    assert out == [6.0, [9.0, 18.0], [3.0, 3.0]]
    assert _custom_jvp_transposed(_real_jax()) == out


def _custom_prng_program(jx):
    # jax.enable_custom_prng (numpyro's tests decorate with it): PRNGKey/split/fold_in give
    # typed keys, raw keys passed in warn (FutureWarning)
    import warnings
    out = []
    with jx.enable_custom_prng():
        k = jx.random.PRNGKey(0)
        out.append((str(k.dtype), k.shape, float(jx.random.normal(k))))
        out.append(jx.random.split(jx.random.PRNGKey(0)).shape)
        out.append(str(jx.random.fold_in(jx.random.PRNGKey(0), 3).dtype))
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            jx.random.normal(jx.numpy.zeros(2, jx.numpy.uint32))
        out.append([type(x.message).__name__ for x in w])

    @jx.enable_custom_prng()
    def f():
        return str(jx.random.PRNGKey(1).dtype)
    out.append(f())
    out.append(str(jx.random.PRNGKey(0).dtype))
    out.append(jx.config.jax_enable_custom_prng)
    return out


def test_enable_custom_prng():
    out = _custom_prng_program(jax)
    assert out == [("key<fry>", (), pytest.approx(1.6226422)), (2,), "key<fry>",
                   ["FutureWarning"], "key<fry>", "uint32", False]
    assert _custom_prng_program(_real_jax()) == out


def _fp_errors_program(jx):
    # inf/nan are silent in JAX whatever NumPy's error mode and the warning filters
    # (numpyro's suite runs with filterwarnings = error): eager, jitted, grad and vmap
    import warnings
    jnp_ = jx.numpy
    z, o = jnp_.array([0.0, 1.0]), jnp_.ones(2)
    cases = [lambda: jnp_.log(z), lambda: jnp_.log(z), lambda: o / z, lambda: o / z,
             lambda: jnp_.sqrt(-o), lambda: jnp_.arccos(2 * o), lambda: jnp_.exp(1000 * o),
             lambda: jx.jit(jnp_.log)(z), lambda: jx.jit(lambda a, b: a / b)(o, z),
             lambda: jx.jit(lambda a: jnp_.exp(jnp_.log(a) * 2 + 1))(z),
             lambda: jx.grad(lambda a: jnp_.sum(jnp_.log(a)))(z),
             lambda: jx.vmap(jnp_.log)(z)]
    out = []
    for mode in ("filter", "seterr"):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            old = np.seterr(all="raise") if mode == "seterr" else None
            try:
                out.append([np.asarray(f()).tolist() for f in cases])
                out.append(np.seterr()["divide"])      # the caller's mode is kept
            finally:
                if old is not None:
                    np.seterr(**old)
    return out


def test_floating_point_errors_are_silent_as_in_jax():
    out = _fp_errors_program(jax)
    assert out[1] == "warn" and out[3] == "raise"
    np.testing.assert_array_equal(np.array(out[0]), np.array(out[2]))
    assert out[0][0] == [-np.inf, 0.0] and np.isnan(out[0][4]).all()
    real = _real_jax()
    ref = _fp_errors_program(real)
    np.testing.assert_allclose(np.array(out[0]), np.array(ref[0]), rtol=1e-6)
    assert ref[1::2] == out[1::2]


def _bool_products(jx):
    # a number times a boolean is 0 where the boolean is False, also for inf/nan (XLA rewrites
    # x * convert(p) into select(p, x, 0); numpyro's binary_cross_entropy_with_logits relies
    # on it): eagerly, jitted, in a scan body, under vmap and grad
    jnp_ = jx.numpy
    a, p = jnp_.array([jnp_.inf, jnp_.nan, 2.0]), jnp_.array([False, False, True])
    out = [jnp_.inf * jnp_.array(False), a * p, p * a, jnp_.nan * True,
           jx.jit(lambda u, v: u * v)(a, p), jx.jit(lambda u, v: v * u)(jnp_.inf, p[1:]),
           jx.vmap(lambda u, v: u * v)(a, p),
           jx.grad(lambda u: jnp_.sum(u * p))(jnp_.array([1.0, 2.0, 3.0])),
           jx.lax.scan(lambda c, uv: (c + uv[0] * uv[1], None), 0.0, (a, p))[0]]
    jaxpr = str(jx.make_jaxpr(lambda u, v: u * v)(a, p))
    return [(np.asarray(o).tolist(), bool(getattr(o, "weak_type", False))) for o in out], jaxpr


def _like_weak_types(jx):
    jnp_ = jx.numpy
    w = jx.lax.mul(jnp_.asarray(2.0), jnp_.asarray(3.0))
    fs = (jnp_.zeros_like, jnp_.ones_like, lambda a: jnp_.full_like(a, 7),
          lambda a: jnp_.zeros_like(a, dtype=jnp_.float32), lambda a: jnp_.ones_like(a, shape=(2,)))
    return [[(str(f(v).dtype), f(v).weak_type) for f in fs]
            for v in (w, 1.0, 2, jnp_.ones(3), jnp_.ones(2, jnp_.int8), True)]


def test_bool_products_and_like_weak_types_as_in_jax():
    out, jaxpr = _bool_products(jax)
    assert out[0] == (0.0, True) and out[1] == ([0.0, 0.0, 2.0], False)
    assert out[3][0] != out[3][0]     # nan * True is nan
    assert out[4][0] == [0.0, 0.0, 2.0] and out[8][0] == 2.0
    assert "convert_element_type" in jaxpr and "mul" in jaxpr and "select" not in jaxpr
    like = _like_weak_types(jax)
    assert like[0][0] == ("float32", True) and like[3][0] == ("float32", False)
    real = _real_jax()
    rout, rjaxpr = _bool_products(real)
    assert str(out) == str(rout) and jaxpr == rjaxpr
    assert _like_weak_types(real) == like


def _compile_time_eval_calls_jit(jx):
    # a jitted function (jnp.linalg.eigh) called on a grad/vmap tracer inside
    # ensure_compile_time_eval (numpyro's constraint checks) runs in the tracer's trace
    jnp_ = jx.numpy

    def f(x):
        with jx.ensure_compile_time_eval():
            ok = jnp_.all(jx.jit(jnp_.linalg.eigh)(x)[0] > 0)
            s = jnp_.sum(jnp_.linalg.eigh(jnp_.eye(2))[0])
        return jnp_.sum(x * 2) + ok + s
    x = jnp_.array([[2.0, 0.5], [0.5, 1.0]])
    return [np.asarray(v).tolist() for v in (f(x), jx.grad(f)(x), jx.jit(jx.grad(f))(x),
                                             jx.vmap(f)(jnp_.stack([x, x])))]


def test_jit_call_on_tracers_under_compile_time_eval():
    out = _compile_time_eval_calls_jit(jax)
    assert out == [11.0, [[2.0, 2.0], [2.0, 2.0]], [[2.0, 2.0], [2.0, 2.0]], [11.0, 11.0]]
    assert _compile_time_eval_calls_jit(_real_jax()) == out


def _closure_under_compile_time_eval(jx):
    # eval_shape / jit of a closure over the enclosing jit's tracers inside
    # ensure_compile_time_eval (lineax's diagonal of a Jacobian operator): the tracers are
    # constants of what is traced there, as in JAX, not leaked tracers
    jnp_ = jx.numpy
    shapes = []

    def f(x):
        y = 3 * x
        with jx.ensure_compile_time_eval():
            s = jx.eval_shape(lambda: y)
            shapes.append((s.shape, str(s.dtype)))
            ones = jnp_.ones(s.shape, s.dtype)
            z = jx.jit(lambda: y * 2)()
        return z + ones
    x = jnp_.arange(3.0)
    out = [np.asarray(v).tolist() for v in (
        jx.jit(f)(x), jx.jit(jx.grad(lambda x: f(x).sum()))(x),
        jx.jit(lambda c: jx.linear_transpose(f, x)(c)[0])(x), jx.vmap(f)(x[:, None]))]
    return out, shapes[-1]


def test_closure_over_tracers_under_compile_time_eval():
    out, shape = _closure_under_compile_time_eval(jax)
    assert out == [[1.0, 7.0, 13.0], [6.0, 6.0, 6.0], [0.0, 6.0, 12.0], [[1.0], [7.0], [13.0]]]
    assert shape == ((1,), "float32")
    assert _closure_under_compile_time_eval(_real_jax()) == (out, shape)


def _leak_checks(jx):
    # jax.checking_leaks / jax_check_tracer_leaks (chex's and numpyro's tests run under it):
    # ordinary programs pass, a tracer stored outside the traced function raises
    jnp_ = jx.numpy
    out = []
    with jx.checking_leaks():
        out.append(float(jx.jit(lambda x: x * 2)(1.0)))
        out.append(float(jx.grad(lambda x: jx.lax.scan(lambda c, y: (c * y, None), x,
                                                      jnp_.ones(3))[0])(2.0)))
        out.append(float(jx.vmap(jx.jit(lambda x: x ** 2))(jnp_.ones(2))[0]))
        store = []

        def leaky(x):
            store.append(x)
            return x + 1
        try:
            jx.jit(leaky)(1.0)
            out.append("no error")
        except Exception as e:   # noqa: BLE001 - JAX raises a bare Exception
            out.append(("Leaked trace" in str(e), type(e).__name__))
    out.append(jx.config.jax_check_tracer_leaks)
    return out


def test_checking_leaks():
    out = _leak_checks(jax)
    assert out == [2.0, 1.0, 1.0, (True, "Exception"), False]
    assert _leak_checks(_real_jax()) == out


def test_gc_scans_survive_dead_weakref_proxies():
    """clear_caches and the leak checker walk gc's objects: a weakref proxy whose referent
    died (libraries such as numba keep some) must not make them raise ReferenceError."""
    import weakref

    class Held:
        pass
    h = Held()
    proxy = weakref.proxy(h)
    del h
    jax.clear_caches()
    with jax.checking_leaks():
        jax.jit(lambda x: x + 1)(jnp.ones(2))
    assert proxy is not None


def test_constant_folding_under_jit_never_warns():
    """jit folds operations on constants while compiling; like the ops themselves, that
    emits no NumPy RuntimeWarning (numpyro's pytest.warns checks saw 'invalid value
    encountered in log' from a folded log of a negative constant)."""
    import warnings
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        out = jax.jit(lambda x: x + jnp.log(jnp.float32(-1.0)) + 0 * jnp.float32(np.inf))(1.0)
    assert [str(x.message) for x in w] == []
    assert np.isnan(np.asarray(out))


def _custom_vjp_closure_outcomes(jx):
    """What each way of differentiating a custom_vjp function with respect to a closed-over
    value gives under the library ``jx`` (jaxlite or JAX): the exception's class name, or the
    value when it works."""
    jnp_ = jx.numpy

    def make(c):
        @jx.custom_vjp
        def f(x):
            return x * c

        f.defvjp(lambda x: (x * c, None), lambda r, g: (g * 2.0,))
        return f

    def loss(c):
        return make(c)(3.0)

    def scan_loss(c):
        return jx.lax.scan(lambda s, _: (make(c)(s), None), 1.0, None, length=2)[0]

    cases = [
        lambda: jx.grad(loss)(2.0),                     # bound directly: fwd leaks the tracer
        lambda: jx.jvp(loss, (2.0,), (1.0,)),
        lambda: jx.jit(jx.grad(loss))(2.0),
        lambda: jx.grad(jx.jit(loss))(2.0),             # staged, then differentiated
        lambda: jx.jvp(jx.jit(loss), (2.0,), (1.0,)),
        lambda: jx.linearize(jx.jit(loss), 2.0)[0],
        lambda: jx.grad(lambda c: jx.jit(lambda x: make(c)(x))(3.0))(2.0),
        lambda: jx.vmap(jx.grad(jx.jit(loss)))(jnp_.ones(2)),
        lambda: jx.grad(scan_loss)(2.0),
        lambda: jx.grad(lambda x: make(jnp_.float32(4.0))(x))(2.0),   # constant closure: fine
        lambda: jx.jit(loss)(2.0),
    ]
    out = []
    for case in cases:
        try:
            out.append(float(np.asarray(case())))
        except Exception as e:   # noqa: BLE001 - the class is what is compared
            out.append(type(e).__name__)
    return out


def test_custom_vjp_closure_over_a_differentiated_value():
    """JAX raises jax._src.interpreters.ad.CustomVJPException when a custom_vjp call staged
    into a jaxpr (jit, scan, ...) is differentiated with respect to a value it closed over
    (diffrax's test_closure_errors); bound directly under grad/jvp, fwd leaks the tracer
    (UnexpectedTracerError) instead."""
    from jaxlite._src.compat.interpreters.ad import CustomVJPException
    leak, cvjp = "UnexpectedTracerError", "CustomVJPException"
    assert _custom_vjp_closure_outcomes(jax) == [leak, leak, leak, cvjp, cvjp, cvjp, cvjp,
                                                  cvjp, cvjp, 2.0, 6.0]
    def loss(c):
        f = jax.custom_vjp(lambda x: x * c)
        f.defvjp(lambda x: (x * c, None), lambda r, g: (g,))
        return f(3.0)
    with pytest.raises(CustomVJPException, match="with respect to a closed-over value"):
        jax.grad(jax.jit(loss))(2.0)


def test_custom_vjp_closure_outcomes_match_jax():
    assert _custom_vjp_closure_outcomes(jax) == _custom_vjp_closure_outcomes(_real_jax())
