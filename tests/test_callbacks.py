"""Host callbacks: jax.pure_callback, jax.experimental.io_callback, jax.debug.callback/print.

Values are checked against NumPy/SciPy, call counts and printed text against what JAX
documents (and, where the real jax is installed, against JAX itself: the differential
programs at the end run on both and must print the same lines; where JAX leaves the order
of unordered effects under jit unspecified only the multiset of lines is compared).
"""
import contextlib
import io
import re
import types

import numpy as np
import pytest
import scipy.special

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite.errors import JaxRuntimeError
from jaxlite.experimental import io_callback

F32 = jax.ShapeDtypeStruct((), jnp.float32)


def _counter():
    calls = []

    def cb(x):
        calls.append(np.shape(x))
        return np.sin(np.asarray(x))
    return cb, calls


# ----------------------------------------------------------------------------- pure_callback

def test_pure_callback_eager_and_jit_values():
    cb, calls = _counter()
    x = jnp.arange(4.0)
    sds = jax.ShapeDtypeStruct((4,), jnp.float32)
    eager = jax.pure_callback(cb, sds, x)
    jitted = jax.jit(lambda x: jax.pure_callback(cb, sds, x))(x)
    np.testing.assert_allclose(eager, np.sin(np.arange(4.0, dtype=np.float32)), rtol=1e-6)
    np.testing.assert_array_equal(eager, jitted)
    assert eager.dtype == jitted.dtype == np.float32 and not eager.weak_type
    assert calls == [(4,), (4,)]


def test_pure_callback_receives_arrays_and_pytrees():
    seen = []

    def cb(a, b, *, c):
        seen.append((type(a["x"]), type(b), c))
        return {"s": a["x"] + b, "t": np.int32(c)}
    out = jax.pure_callback(cb, {"s": F32, "t": jax.ShapeDtypeStruct((), jnp.int32)},
                            {"x": 1.0}, 2.0, c=3)
    assert float(out["s"]) == 3.0 and int(out["t"]) == 3 and out["t"].dtype == np.int32
    assert seen[0][0] is type(jnp.zeros(())) and seen[0][2] == 3
    # Python scalars and float64 results are canonicalised, as JAX does
    assert float(jax.jit(lambda x: jax.pure_callback(lambda x: 1.0, F32, x))(0.0)) == 1.0


def test_pure_callback_unused_result_is_removed_under_jit_only():
    cb, calls = _counter()

    def f(x):
        jax.pure_callback(cb, F32, x)
        return x + 1
    jax.jit(f)(1.0)
    assert calls == []
    f(1.0)
    assert calls == [()]


def test_pure_callback_calls_are_not_merged_or_folded():
    cb, calls = _counter()
    g = jax.jit(lambda x: jax.pure_callback(cb, F32, x) + jax.pure_callback(cb, F32, x))
    g(1.0)
    assert len(calls) == 2
    calls.clear()
    h = jax.jit(lambda: jax.pure_callback(cb, F32, 1.0))
    h()
    h()
    assert len(calls) == 2


@pytest.mark.parametrize("ret, text", [
    (lambda x: np.ones(4, np.float32), "Incorrect output shape for return value #0: "
                                       "Expected: (3,), Actual: (4,)"),
    (lambda x: np.ones(3, np.int32), "Incorrect output dtype for return value #0: "
                                     "Expected: float32, Actual: int32"),
    (lambda x: (np.ones(3, np.float32), 1), "Mismatched number of outputs from callback. "
                                            "Expected: 1, Actual: 2"),
])
@pytest.mark.parametrize("jit", [False, True])
def test_pure_callback_result_mismatch_is_jax_runtime_error(ret, text, jit):
    sds = jax.ShapeDtypeStruct((3,), jnp.float32)
    f = lambda x: jax.pure_callback(ret, sds, x)  # noqa: E731
    with pytest.raises(JaxRuntimeError) as info:
        (jax.jit(f) if jit else f)(jnp.zeros(3))
    msg = str(info.value)
    assert msg.startswith("INTERNAL: CpuCallback error calling callback:")
    assert msg.splitlines()[-1] == "RuntimeError: " + text
    notes = "".join(getattr(info.value, "__notes__", []))
    assert "<lambda>" in notes and "result_shape_dtypes" in notes


def test_pure_callback_exception_from_callback_keeps_its_frames():
    def cb(x):
        return 1 / 0
    with pytest.raises(JaxRuntimeError) as info:
        jax.jit(lambda x: jax.pure_callback(cb, F32, x))(1.0)
    msg = str(info.value)
    assert msg.splitlines()[-1] == "ZeroDivisionError: division by zero"
    assert "in cb" in msg and "test_callbacks.py" in msg
    assert isinstance(info.value.__cause__, ZeroDivisionError)


def test_pure_callback_vectorized_keyword_goes_to_the_callback_with_a_hint():
    def cb(x):
        return x
    with pytest.raises(JaxRuntimeError) as info:
        jax.pure_callback(cb, F32, 1.0, vectorized=True)
    assert "unexpected keyword argument 'vectorized'" in str(info.value)
    assert "legacy_vectorized" in "".join(info.value.__notes__)


def test_pure_callback_argument_errors():
    with pytest.raises(ValueError, match="cannot specify 64-bit types"):
        jax.pure_callback(lambda x: x, jax.ShapeDtypeStruct((), np.float64), 1.0)
    with pytest.raises(ValueError, match="vmap_method must be on of the allowed methods"):
        jax.pure_callback(lambda x: x, F32, 1.0, vmap_method="foo")
    with pytest.raises(TypeError, match="leaves have `shape` and `dtype`"):
        jax.pure_callback(lambda x: x, "f32", 1.0)


def test_pure_callback_grad_needs_custom_jvp():
    with pytest.raises(ValueError, match="Pure callbacks do not support JVP. Please use "
                                         "`jax.custom_jvp`"):
        jax.grad(lambda x: jax.pure_callback(lambda x: x, F32, x))(1.0)


def _vmap_case(method):
    seen = []

    def cb(x, y):
        seen.append((np.shape(x), np.shape(y)))
        return (np.asarray(x) + np.asarray(y)).astype(np.float32)

    def fun(x, y):
        shape = jnp.broadcast_shapes(jnp.shape(x), jnp.shape(y))
        return jax.pure_callback(cb, jax.ShapeDtypeStruct(shape, jnp.float32), x, y,
                                 vmap_method=method)
    return fun, seen


@pytest.mark.parametrize("method, shapes", [
    ("sequential", [((), ())] * 4),
    ("sequential_unrolled", [((), ())] * 4),
    ("expand_dims", [((4,), (1,))]),
    ("broadcast_all", [((4,), (4,))]),
    ("legacy_vectorized", [((4,), ())]),
])
@pytest.mark.parametrize("jit", [False, True])
def test_pure_callback_vmap_methods(method, shapes, jit):
    fun, seen = _vmap_case(method)
    x = jnp.arange(4.0)
    g = jax.vmap(fun, in_axes=(0, None))
    out = (jax.jit(g) if jit else g)(x, 1.0)
    np.testing.assert_array_equal(out, np.arange(4.0, dtype=np.float32) + 1)
    assert seen == shapes


def test_pure_callback_vmap_on_nonleading_axis_matches_a_loop():
    fun, _ = _vmap_case("sequential")
    x = jnp.arange(6.0).reshape(2, 3)
    out = jax.vmap(fun, in_axes=(1, 0), out_axes=1)(x, jnp.arange(3.0))
    loop = np.stack([np.asarray(x)[:, i] + i for i in range(3)], axis=1)
    np.testing.assert_array_equal(out, loop)


def test_pure_callback_vmap_without_method_raises():
    with pytest.raises(NotImplementedError, match="Got vmap_method=None"):
        jax.vmap(lambda x: jax.pure_callback(lambda x: x, F32, x))(jnp.arange(3.0))


def test_pure_callback_vmap_jaxprs():
    x = jnp.arange(3.0)
    text = str(jax.make_jaxpr(jax.vmap(_vmap_case("expand_dims")[0], in_axes=(0, None)))(
        x, 1.0))
    assert "c:f32[1] = broadcast_in_dim" in text and "vmap_method=expand_dims\n    ] a c" in text
    text = str(jax.make_jaxpr(jax.vmap(_vmap_case("sequential_unrolled")[0],
                                       in_axes=(0, None)))(x, 1.0))
    assert re.search(r"scan\[.*unroll=3", text, re.S) and "num_consts=1" in text


# JAX's documentation example: scipy.special.jv behind a custom_jvp
def _scipy_jv(v, z):
    return scipy.special.jv(v, z).astype(np.asarray(z).dtype)


@jax.custom_jvp
def jv(v, z):
    v, z = jnp.asarray(v), jnp.asarray(z)
    sds = jax.ShapeDtypeStruct(jnp.broadcast_shapes(v.shape, z.shape), z.dtype)
    return jax.pure_callback(_scipy_jv, sds, v, z, vmap_method="broadcast_all")


@jv.defjvp
def _jv_jvp(primals, tangents):
    v, z = primals
    _, z_dot = tangents
    djv_dz = jnp.where(v == 0, -jv(v + 1, z), 0.5 * (jv(v - 1, z) - jv(v + 1, z)))
    return jv(v, z), z_dot * djv_dz


def test_docs_jv_grad_hessian_vmap():
    z = np.linspace(0.5, 4.0, 5).astype(np.float32)
    d1 = 0.5 * (scipy.special.jv(0, z) - scipy.special.jv(2, z))
    d2 = 0.25 * (scipy.special.jv(-1, z) - 2 * scipy.special.jv(1, z) + scipy.special.jv(3, z))
    g = jax.vmap(jax.grad(jv, argnums=1), in_axes=(None, 0))(1, z)
    np.testing.assert_allclose(g, d1, rtol=1e-5, atol=1e-6)
    for h in (jax.hessian(jv, argnums=1), jax.jit(jax.hessian(jv, argnums=1))):
        np.testing.assert_allclose([h(1, float(t)) for t in z], d2, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(jax.jit(jv)(1, z), scipy.special.jv(1, z), rtol=1e-6)


# ----------------------------------------------------------------------------- io_callback

def test_io_callback_is_never_removed():
    calls = []

    def f(x):
        io_callback(lambda a: (calls.append(float(a)), np.float32(a))[1], F32, x)
        return x
    jax.jit(f)(2.0)
    assert calls == [2.0]


def test_ordered_io_callback_in_scan_keeps_program_order():
    log = []

    def body(c, x):
        io_callback(lambda a, b: log.append(("a", float(a), float(b))), None, c, x,
                    ordered=True)
        io_callback(lambda a: log.append(("b", float(a))), None, x, ordered=True)
        return c + x, None
    out = jax.jit(lambda xs: jax.lax.scan(body, 0.0, xs)[0])(jnp.arange(3.0))
    assert float(out) == 3.0
    assert log == [("a", 0.0, 0.0), ("b", 0.0), ("a", 0.0, 1.0), ("b", 1.0),
                   ("a", 1.0, 2.0), ("b", 2.0)]


def test_io_callback_results_and_vmap():
    seen = []

    def cb(a):
        seen.append(float(a))
        return np.float32(a * 10)
    out = jax.vmap(lambda x: io_callback(cb, F32, x))(jnp.arange(3.0))
    np.testing.assert_array_equal(out, [0.0, 10.0, 20.0])
    assert seen == [0.0, 1.0, 2.0]


@pytest.mark.parametrize("case, exc, text", [
    ("vmap_ordered", ValueError, "Cannot `vmap` ordered IO callback."),
    ("grad", ValueError, "IO callbacks do not support JVP."),
    ("jvp", ValueError, "IO callbacks do not support JVP."),
    ("vmap_cond", NotImplementedError, "IO effect not supported in vmap-of-cond."),
    ("vmap_while_ordered", Exception, "Ordered IO effects not supported in vmap."),
    ("vmap_while_batched_pred", Exception,
     "Unordered IO effects not supported in while_loop with batched predicate"),
])
def test_io_callback_transformation_errors(case, exc, text):
    def io(x, ordered=False):
        return io_callback(lambda a: np.float32(a), F32, x, ordered=ordered)

    def wl(ordered):
        def body(v):
            io(v, ordered)
            return v + 1
        return lambda x: jax.lax.while_loop(lambda v: v < 3, body, x)
    xs = jnp.arange(3.0)
    run = {
        "vmap_ordered": lambda: jax.vmap(lambda x: io(x, True))(xs),
        "grad": lambda: jax.grad(io)(1.0),
        "jvp": lambda: jax.jvp(io, (1.0,), (1.0,)),
        "vmap_cond": lambda: jax.vmap(lambda x: jax.lax.cond(x > 1, io, lambda x: x, x))(xs),
        "vmap_while_ordered": lambda: jax.vmap(wl(True))(xs),
        "vmap_while_batched_pred": lambda: jax.vmap(wl(False))(xs),
    }[case]
    with pytest.raises(exc, match=re.escape(text)):
        run()


def test_io_callback_in_while_with_unbatched_predicate_vmaps():
    seen = []

    def body(c):
        i, v = c
        io_callback(lambda a: seen.append(np.asarray(a).tolist()), None, v)
        return i + 1, v * 2
    out = jax.vmap(lambda v: jax.lax.while_loop(lambda c: c[0] < 2, body, (0, v))[1])(
        jnp.arange(3.0))
    np.testing.assert_array_equal(out, [0.0, 4.0, 8.0])
    assert sorted(seen) == sorted([0.0, 1.0, 2.0, 0.0, 2.0, 4.0])


# ----------------------------------------------------------------------------- jax.debug

def _stdout(fn):
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        fn()
        jax.effects_barrier()
    return buf.getvalue()


def test_debug_print_format_fields_and_specs():
    def f(x):
        jax.debug.print("x = {}", x)
        jax.debug.print("x0 = {x:.3f} y={y} {s}", x=x[0], y=x, s="static")
        jax.debug.print("no fields")
    x = jnp.array([0.5, 1.0, 2.0])
    want = "x = [0.5 1.  2. ]\nx0 = 0.500 y=[0.5 1.  2. ] static\nno fields\n"
    assert _stdout(lambda: f(x)) == want
    assert _stdout(lambda: jax.jit(f)(x)) == want


def test_debug_print_follows_numpy_print_options_at_trace_time():
    f = jax.jit(lambda x: jax.debug.print("{}", x))
    with np.printoptions(precision=2):
        out = _stdout(lambda: f(jnp.array([1 / 3])))
    assert out == "[0.33]\n"


def test_debug_print_under_vmap_grad_and_loops():
    xs = jnp.arange(3.0)
    assert _stdout(lambda: jax.vmap(lambda x: jax.debug.print("v {}", x))(xs)) == \
        "v 0.0\nv 1.0\nv 2.0\n"
    assert _stdout(lambda: jax.grad(lambda x: (jax.debug.print("g {}", x),
                                               jnp.sin(x))[1])(1.0)) == "g 1.0\n"

    def body(c, x):
        jax.debug.print("c={} x={}", c, x)
        return c * x, None
    want = "c=1.0 x=0.0\nc=0.0 x=1.0\nc=0.0 x=2.0\n"
    g = jax.grad(lambda xs: jax.lax.scan(body, 1.0, xs)[0])
    assert _stdout(lambda: g(xs)) == want                # once: primal values only
    assert _stdout(lambda: jax.jit(g)(xs)) == want

    def wbody(v):
        jax.debug.print("w {}", v)
        return v * 2
    assert _stdout(lambda: jax.jit(lambda: jax.lax.while_loop(
        lambda v: v < 5, wbody, 1.0))()) == "w 1.0\nw 2.0\nw 4.0\n"
    cond = jax.jit(lambda x: jax.lax.cond(x > 0, lambda: jax.debug.print("pos {}", x),
                                          lambda: jax.debug.print("neg {}", x)))
    assert _stdout(lambda: cond(2.0)) + _stdout(lambda: cond(-2.0)) == "pos 2.0\nneg -2.0\n"


def test_debug_print_under_checkpoint_prints_again_in_the_backward_pass():
    f = jax.checkpoint(lambda x: (jax.debug.print("r {}", x), jnp.sin(x))[1])
    assert _stdout(lambda: jax.grad(f)(1.0)) == "r 1.0\nr 1.0\n"


def test_debug_print_is_kept_in_jit_and_runs_every_call():
    f = jax.jit(lambda x: (jax.debug.print("hi {}", x), x + 1)[1])
    assert _stdout(lambda: (f(1.0), f(2.0))) == "hi 1.0\nhi 2.0\n"
    g = jax.jit(lambda x: jax.debug.print("only {}", x))
    assert _stdout(lambda: g(3.0)) == "only 3.0\n"


def test_debug_print_argument_errors():
    with pytest.raises(ValueError, match="Unused positional arguments"):
        jax.debug.print("{}", 1.0, 2.0)
    with pytest.raises(ValueError, match="f-string"):
        jax.debug.print("x", x=1.0)
    with pytest.raises(KeyError):
        jax.debug.print("{x}", 1.0)
    with pytest.raises(ValueError, match="Unknown format code 'd'"):
        jax.debug.print("{:d}", 1.0)
    with pytest.raises(JaxRuntimeError, match="Unknown format code 'd'"):
        jax.jit(lambda x: jax.debug.print("{:d}", x))(1.0)
    with pytest.raises(TypeError, match="two-call form"):
        jax.debug.print(None, 1.0)


def test_debug_print_two_call_form_and_ordered():
    out = _stdout(lambda: jax.jit(lambda x: (jax.debug.print(ordered=True)("a {}", x),
                                             jax.debug.print("b {}", x, ordered=True)))(1.0))
    assert out == "a 1.0\nb 1.0\n"


def test_debug_callback_static_and_pytree_arguments():
    got = []

    def cb(tree, tag, *, k):
        got.append((type(tree["a"]).__name__, float(tree["b"][0]), tag, k))
    f = jax.jit(lambda x: jax.debug.callback(cb, {"a": x, "b": (x * 2,)}, "tag", k=None))
    f(1.5)
    jax.debug.callback(cb, {"a": 1.0, "b": (3.0,)}, "eager", k=1)
    assert got == [("ArrayImpl", 3.0, "tag", None), ("ArrayImpl", 3.0, "eager", 1)]
    with pytest.raises(TypeError, match="must be callable"):
        jax.debug.callback(3)


def test_debug_callback_exceptions():
    def bad(x):
        raise KeyError("boom")
    with pytest.raises(KeyError):
        jax.debug.callback(bad, 1.0)
    with pytest.raises(JaxRuntimeError) as info:
        jax.jit(lambda x: jax.debug.callback(bad, x))(1.0)
    assert str(info.value).splitlines()[-1] == "KeyError: 'boom'"


def test_debug_log_goes_to_logging(caplog):
    import logging
    with caplog.at_level(logging.INFO, logger="jaxlite._src.debugging"):
        jax.jit(lambda x: jax.debug.log("logged {}", x))(2.0)
    rec = [r for r in caplog.records if r.getMessage() == "logged 2.0"]
    assert rec and rec[0].pathname.endswith("test_callbacks.py")


def test_jaxpr_text_and_effects():
    def f(x):
        jax.debug.print("x = {}", x)
        jax.debug.callback(lambda a: None, x)
        io_callback(lambda a: None, None, x, ordered=True)
        return x * 2
    closed = jax.make_jaxpr(f)(jnp.ones(3))
    text = str(closed)
    assert "    debug_print[\n      fmt=x = {}\n      has_placeholders=True\n" in text
    assert "debug_callback.<locals>._debug_callback.<locals>._flat_callback at 0xX" in text
    assert "effect=Debug" in text and "ordered=True\n      result_avals=()" in text
    assert sorted(str(e) for e in closed.effects) == ["Debug", "OrderedIO"]
    assert jax.make_jaxpr(lambda x: x + 1)(1.0).effects == set()
    assert {str(e) for e in jax.make_jaxpr(lambda x: jax.lax.scan(
        lambda c, x: (jax.debug.print("{}", x), (c, None))[1], 0.0, x))(
            jnp.ones(2)).effects} == {"Debug"}


def test_effectful_control_flow_survives_dce():
    calls = []

    def f(x):
        jax.lax.scan(lambda c, x: (io_callback(lambda a: calls.append(float(a)), None, x),
                                   (c, x))[1], 0.0, x)
        return x
    jax.jit(f)(jnp.arange(2.0))
    assert calls == [0.0, 1.0]


def test_effects_barrier_and_public_names():
    assert jax.effects_barrier() is None
    assert str(jax.debug.DebugEffect()) == "Debug"
    assert str(jax.debug.OrderedDebugEffect()) == "OrderedDebug"
    for fn in (jax.pure_callback, io_callback, jax.debug.print, jax.debug.callback,
               jax.debug.log, jax.effects_barrier):
        assert fn.__doc__


# ----------------------------------------------------------------------------- vs JAX

def _prog_basic(jax, jnp, io_callback):
    x = jnp.arange(3.0)

    def f(x):
        jax.debug.print("x = {}", x)
        jax.debug.print("x0 = {x:.3f} y={y}", x=x[0], y=x)
        jax.debug.callback(lambda a, b: print("cb", a, b), x, 2)
        io_callback(lambda a: print("io", a), None, x, ordered=True)
        return x * 2
    print(f(x))
    print(jax.jit(f)(x))
    jax.effects_barrier()


def _prog_transforms(jax, jnp, io_callback):
    x = jnp.arange(3.0)
    print(jax.vmap(lambda x: (jax.debug.print("v {}", x), x)[1])(x))
    print(jax.grad(lambda x: (jax.debug.print("g {}", x), jnp.sin(x))[1])(1.0))
    print(jax.vmap(lambda x: jax.lax.cond(
        x > 1, lambda x: (jax.debug.print("true {}", x), x)[1],
        lambda x: (jax.debug.print("false {}", x), -x)[1], x))(x))

    def w(x):
        def body(v):
            jax.debug.print("while {}", v)
            return v + 1
        return jax.lax.while_loop(lambda v: v < 3, body, x)
    print(jax.vmap(w)(x))
    g = jax.checkpoint(lambda x: (jax.debug.print("remat {}", x), jnp.sin(x))[1])
    print(jax.jit(jax.grad(g))(1.0))
    jax.effects_barrier()


def _prog_ordered(jax, jnp, io_callback):
    def body(c, x):
        jax.debug.print("c={} x={}", c, x, ordered=True)
        io_callback(lambda a: print("io", a), None, x, ordered=True)
        return c + x, c
    print(jax.jit(lambda x: jax.lax.scan(body, 0.0, x))(jnp.arange(3.0)))
    jax.effects_barrier()


def _prog_callbacks(jax, jnp, io_callback):
    for m in ["sequential", "sequential_unrolled", "expand_dims", "broadcast_all",
              "legacy_vectorized"]:
        def cb(x, y, m=m):
            print(m, np.shape(x), np.shape(y))
            return (np.asarray(x) + np.asarray(y)).astype(np.float32)

        def fun(x, y, m=m, cb=cb):
            shape = jnp.broadcast_shapes(jnp.shape(x), jnp.shape(y))
            return jax.pure_callback(cb, jax.ShapeDtypeStruct(shape, jnp.float32), x, y,
                                     vmap_method=m)
        print(jax.vmap(fun, in_axes=(0, None))(jnp.arange(3.0), 1.0))
        print(jax.make_jaxpr(jax.vmap(fun, in_axes=(0, None)))(jnp.arange(3.0), 1.0))
    print(jax.make_jaxpr(jax.vmap(lambda x, y: jax.debug.callback(print, x, y),
                                  in_axes=(1, None)))(jnp.ones((2, 2)), 1.0))
    print(jax.make_jaxpr(lambda x: jax.lax.scan(
        lambda c, x: (jax.debug.print("{} {}", c, x), io_callback(print, None, x,
                                                                  ordered=True),
                      (c + x, c))[2], 0.0, x))(jnp.arange(3.0)))


_PROGRAMS = {"basic": (_prog_basic, "multiset"), "transforms": (_prog_transforms, "exact"),
             "ordered": (_prog_ordered, "per_effect"), "callbacks": (_prog_callbacks, "exact")}


def _run(prog, mods):
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        prog(*mods)
    return buf.getvalue()


@pytest.mark.parametrize("name", sorted(_PROGRAMS))
def test_prints_what_jax_prints(name):
    real = pytest.importorskip("jax")
    import jax.experimental as jex
    prog, mode = _PROGRAMS[name]
    theirs = _run(prog, (real, real.numpy, jex.io_callback))
    ours = _run(prog, (jax, jnp, io_callback))
    if mode == "multiset":   # unordered effects under jit: JAX does not fix their order
        assert sorted(ours.splitlines()) == sorted(theirs.splitlines())
    elif mode == "per_effect":   # each ordered effect (OrderedIO, OrderedDebug) has its order
        for prefix in ("io", "c="):
            assert [ln for ln in ours.splitlines() if ln.startswith(prefix)] == \
                [ln for ln in theirs.splitlines() if ln.startswith(prefix)]
        assert sorted(ours.splitlines()) == sorted(theirs.splitlines())
    else:
        assert ours == theirs


def test_unordered_prints_under_jit_keep_program_order():
    """Where JAX leaves the order open, jaxlite runs effects in program order."""
    out = _run(_prog_basic, (jax, jnp, io_callback))
    lines = out.splitlines()
    assert lines[:4] == ["x = [0. 1. 2.]", "x0 = 0.000 y=[0. 1. 2.]", "cb [0. 1. 2.] 2",
                         "io [0. 1. 2.]"]
    assert lines[5:9] == lines[:4]


def test_modules_namespace_is_complete():
    assert isinstance(jax.debug, types.ModuleType)
    assert {"print", "callback", "log", "DebugEffect", "OrderedDebugEffect"} <= set(
        dir(jax.debug))


def test_shape_dtype_struct_like_and_update():
    S = jax.ShapeDtypeStruct
    assert S.like(jnp.float32(1.0)) == S((), np.float32)
    assert S.like(1.0) == S((), np.float32, weak_type=True)
    assert S.like(np.ones(3)) == S((3,), np.float32)          # canonicalised, as JAX
    assert S.like(S((2,), np.int8, weak_type=True)) == S((2,), np.int8, weak_type=True)
    assert S((2,), np.float32).update(shape=(4,)) == S((4,), np.float32)
    with pytest.raises(TypeError, match="unexpected fields"):
        S((2,), np.float32).update(shap=(4,))
    out = jax.jit(lambda x: jax.pure_callback(np.cos, S.like(x), x))(jnp.zeros(2))
    np.testing.assert_array_equal(out, [1.0, 1.0])
