"""jit behaviour: caching, statics, side effects, errors, nesting, AOT, generated code."""
import functools
import logging

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import errors


def test_jit_matches_eager():
    def f(x, y):
        return jnp.sin(x) * y + 2.0

    x = jnp.arange(5.0)
    y = jnp.ones(5)
    np.testing.assert_allclose(jax.jit(f)(x, y), f(x, y), rtol=1e-6)


def test_cache_hits_and_misses():
    f = jax.jit(lambda x: x * 2)
    f(jnp.ones(3))
    f(jnp.ones(3))
    assert f._cache_size() == 1
    f(jnp.ones(4))
    assert f._cache_size() == 2
    f(jnp.ones(4, jnp.int32))
    assert f._cache_size() == 3
    f(2.0)            # weak float32 scalar
    f(jnp.float32(2))  # strong float32 scalar: a different key (weak type)
    assert f._cache_size() == 5


def test_side_effects_at_trace_time_only():
    calls = []

    @jax.jit
    def f(x):
        calls.append(1)
        return x + 1

    for _ in range(3):
        f(jnp.ones(2))
    assert len(calls) == 1
    f(jnp.ones(3))
    assert len(calls) == 2


def test_static_argnums_and_names():
    @functools.partial(jax.jit, static_argnums=(1,))
    def f(x, n):
        for _ in range(n):
            x = x * 2
        return x

    assert float(f(jnp.float32(1), 3)) == 8.0
    assert float(f(jnp.float32(1), 4)) == 16.0
    assert f._cache_size() == 2

    g = jax.jit(lambda x, *, mode: x + (1 if mode == "a" else 2), static_argnames="mode")
    assert int(g(jnp.int32(0), mode="a")) == 1
    assert int(g(jnp.int32(0), mode="b")) == 2


def test_unhashable_static_arg_is_clear_error():
    f = jax.jit(lambda x, s: x, static_argnums=1)
    with pytest.raises(ValueError, match="Non-hashable static arguments"):
        f(jnp.ones(2), [1, 2])


def test_static_argnums_and_argnames_resolved_as_jax():
    """JAX's api_util.infer_argnums_and_argnames: the half not given is inferred from the
    signature; with both given each is used as written (a parameter named in
    static_argnames but passed by position stays dynamic: flax's nn.jit does this)."""
    def f(a, b, c=1):
        return a

    both = jax.jit(f, static_argnums=(0,), static_argnames=("b",))
    assert both.static_argnums == (0,) and both.static_argnames == ("b",)
    assert int(both(1, {"x": jnp.float32(1.0)})) == 1     # b positional: dynamic, no hash
    with pytest.raises(ValueError, match="Non-hashable static arguments"):
        both(1, b=[1])                                      # b by name: static
    names = jax.jit(f, static_argnames="a")
    assert names.static_argnums == (0,)
    with pytest.raises(ValueError, match="Non-hashable static arguments"):
        names([1], 2.0)
    nums = jax.jit(f, static_argnums=0)
    assert nums.static_argnames == ("a",)
    with pytest.raises(ValueError, match="Non-hashable static arguments"):
        nums(a=[1], b=2.0)
    # positional-only parameters are never named by a number, nor numbered by a name
    def g(a, /, b):
        return b
    assert jax.jit(g, static_argnums=0).static_argnames == ()
    with pytest.raises(ValueError, match=r"invalid argnames \{'a'\} in static_argnames. "
                                         "These are positional-only"):
        jax.jit(g, static_argnames="a")
    with pytest.raises(ValueError, match=r"Jitted function has static_argnums=\(3,\), but "
                                         "only accepts 3 positional arguments."):
        jax.jit(f, static_argnums=3)
    with pytest.raises(ValueError, match=r"Jitted function has static_argnums=\(-4,\)"):
        jax.jit(f, static_argnums=-4)
    with pytest.raises(ValueError, match=r"invalid argnames \{'zz'\} in static_argnames. "
                                         "Function does not take these args."):
        jax.jit(f, static_argnames="zz")
    # *args / **kwargs take any number / name
    jax.jit(lambda *a: a[0], static_argnums=5)
    jax.jit(lambda x, **kw: x, static_argnames="zz")
    with pytest.raises(ValueError, match="in donate_argnames. Function does not take"):
        jax.jit(f, donate_argnames="zz")


def test_static_argnums_and_argnames_match_jax():
    real = pytest.importorskip("jax")

    def f(a, b, c=1):
        return a

    def g(a, /, b, *, k=0):
        return a

    for kw in [{"static_argnums": (0,), "static_argnames": ("b",)},
               {"static_argnums": (1,)}, {"static_argnames": ("b", "c")},
               {"static_argnums": (0, 2)}, {"static_argnums": -1}]:
        ours = jax.jit(f, **kw)
        theirs = real.jit(f, **kw)
        for args, kwargs in [((1, 2), {}), ((1,), {"b": 2}), ((1, 2, 3), {}), ((), {"a": 1, "b": 2})]:
            args = tuple([v] for v in args)     # unhashable: only dynamic arguments pass
            kwargs = {k: [v] for k, v in kwargs.items()}
            outcome = []
            for jit_f in (ours, theirs):
                try:
                    jit_f(*args, **kwargs)
                    outcome.append("ok")
                except ValueError as e:
                    outcome.append("hash" if "Non-hashable" in str(e) else str(e))
            assert outcome[0] == outcome[1], (kw, args, kwargs, outcome)
    for kw in [{"static_argnums": 0}, {"static_argnames": "k"}, {"static_argnames": "b"}]:
        ours, theirs = jax.jit(g, **kw), real.jit(g, **kw)
        assert int(ours(1, 2)) == int(theirs(1, 2))


def test_jit_on_method_with_static_self():
    class Scaler:
        def __init__(self, k):
            self.k = k

        @functools.partial(jax.jit, static_argnums=(0,))
        def apply(self, x):
            return x * self.k

    s = Scaler(3.0)
    np.testing.assert_allclose(s.apply(jnp.arange(3.0)), [0.0, 3.0, 6.0])


def test_pytree_args_and_outputs():
    @jax.jit
    def f(d, t):
        return {"s": d["a"] + t[0], "p": (t[1] * 2,)}

    out = f({"a": jnp.ones(2)}, (jnp.ones(2), jnp.arange(2.0)))
    np.testing.assert_allclose(out["s"], [2.0, 2.0])
    np.testing.assert_allclose(out["p"][0], [0.0, 2.0])


def test_python_scalar_output_becomes_array():
    out = jax.jit(lambda x: 3.0)(jnp.ones(2))
    assert isinstance(out, jax.Array)
    assert out.weak_type and out.dtype == np.float32


def test_bool_conversion_error_names_line_and_arg():
    @jax.jit
    def f(x):
        if x > 0:  # value-dependent control flow
            return x
        return -x

    with pytest.raises(errors.TracerBoolConversionError) as e:
        f(jnp.float32(1))
    msg = str(e.value)
    assert "if x > 0" in msg
    assert "argument x" in msg or "argument 'x'" in msg
    assert "jnp.where" in msg or "lax.cond" in msg
    assert isinstance(e.value, errors.ConcretizationTypeError)


def test_index_and_array_conversion_errors():
    with pytest.raises(errors.TracerIntegerConversionError):
        jax.jit(lambda x: [1, 2, 3][x])(jnp.int32(1))
    with pytest.raises(errors.TracerArrayConversionError):
        jax.jit(lambda x: np.asarray(x))(jnp.ones(2))
    with pytest.raises(errors.ConcretizationTypeError):
        jax.jit(lambda x: float(x))(jnp.float32(1))


def test_leaked_tracer():
    leaked = []

    @jax.jit
    def f(x):
        leaked.append(x)
        return x

    f(jnp.ones(2))
    with pytest.raises(errors.UnexpectedTracerError):
        jnp.sin(leaked[0])


def test_nested_jit_prints_jit_equation():
    inner = jax.jit(lambda x: jnp.sin(x) * 2)

    def outer(x):
        return inner(x) + 1.0

    text = str(jax.make_jaxpr(outer)(jnp.float32(1)))
    assert "jit[" in text and "name=<lambda>" in text
    np.testing.assert_allclose(jax.jit(outer)(jnp.float32(1)), np.sin(1) * 2 + 1, rtol=1e-6)


def test_aot_lower_compile():
    def f(x):
        return jnp.cos(x) + x

    lowered = jax.jit(f).lower(jnp.ones(3))
    assert "cos" in lowered.as_text()
    compiled = lowered.compile()
    src = compiled.as_text()
    assert src.startswith("def f(")
    np.testing.assert_allclose(compiled(jnp.ones(3)), np.cos(1) + 1, rtol=1e-6)
    # ShapeDtypeStructs work for lowering
    lowered2 = jax.jit(f).lower(jax.ShapeDtypeStruct((3,), jnp.float32))
    assert lowered2.as_text() == lowered.as_text()


def test_disable_jit():
    seen = []

    @jax.jit
    def f(x):
        seen.append(type(x).__name__)
        return x

    with jax.disable_jit():
        f(jnp.ones(2))
    assert seen == ["ArrayImpl"]


def test_cse_matmul_chain_compiles_f_once():
    w = jnp.ones((8, 8)) / 8

    def f(x):
        for _ in range(10):
            x = x @ w
        return x

    def g(x):
        return (f(x) * f(x) + f(x) * f(x)) / f(x)

    x = jnp.ones((4, 8))
    lowered = jax.jit(g).lower(x)
    assert lowered.as_text().count("dot_general") == 50
    compiled = lowered.compile()
    assert compiled.as_text().count("# test_jit.py") >= 10
    body = [ln for ln in compiled.as_text().splitlines() if "x @ w" in ln or "@" in ln
            or "matmul" in ln or "dot" in ln]
    assert len(body) == 10, compiled.as_text()
    np.testing.assert_allclose(compiled(x), g(x), rtol=1e-5)


def test_generated_code_in_tracebacks():
    import linecache
    compiled = jax.jit(lambda x: x + 1).lower(jnp.ones(2)).compile()
    fn = compiled._compiled
    assert linecache.getline(fn.filename, 1).startswith("def ")


def test_explain_cache_misses(caplog):
    f = jax.jit(lambda x: x + 1)
    with jax.config.override("jax_explain_cache_misses", True):
        with caplog.at_level(logging.WARNING, logger="jaxlite"):
            f(jnp.ones(2))
            f(jnp.ones(3))
    text = caplog.text
    assert "TRACING CACHE MISS" in text
    assert "f32[2]" in text and "f32[3]" in text


def test_x64_changes_cache_key():
    f = jax.jit(lambda x: x + 1)
    f(1.0)
    with jax.enable_x64():
        r = f(1.0)
        assert r.dtype == np.float64
    assert f._cache_size() == 2


def test_eval_shape_and_shape_dtype_struct():
    out = jax.eval_shape(lambda x, y: jnp.dot(x, y), jax.ShapeDtypeStruct((2, 3), jnp.float32),
                         jax.ShapeDtypeStruct((3, 4), jnp.float32))
    assert out.shape == (2, 4) and out.dtype == np.float32


def test_transposed_matmul_gradients_are_row_major():
    # grad of x @ W is transpose(dot_general(g, x)); the compiler swaps the operands so the
    # gradient comes out row-major (a strided view would slow every later elementwise op)
    def loss(W, x):
        return jnp.sum(jnp.tanh(x @ W) ** 2)
    rng = np.random.RandomState(0)
    W = rng.randn(6, 5).astype(np.float32)
    x = rng.randn(4, 6).astype(np.float32)
    g = jax.jit(jax.grad(loss))
    text = g.lower(W, x).compile().as_text()
    assert "np.transpose" not in text
    out = np.asarray(g(W, x))
    assert out.flags["C_CONTIGUOUS"]
    # (compiled, products feeding additions are fused multiply-adds, as XLA's: JAX's own
    # jit and eager gradients differ by ~1e-5 here)
    np.testing.assert_allclose(out, np.asarray(jax.grad(loss)(W, x)), rtol=3e-5)
    t = 1 - np.tanh(x @ W) ** 2
    np.testing.assert_allclose(out, x.T @ (2 * np.tanh(x @ W) * t), rtol=1e-5, atol=1e-6)


def test_transpose_of_shared_or_batched_dot_is_kept():
    # the swap only applies when the transpose is the product's only use and exactly swaps
    # the free dimensions; otherwise the program is left as written
    def shared(a, b):
        p = jnp.dot(a, b)
        return p.T, p
    a = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    b = np.arange(12.0, dtype=np.float32).reshape(3, 4)
    pt, p = jax.jit(shared)(a, b)
    np.testing.assert_array_equal(np.asarray(pt), (a @ b).T)
    assert "np.transpose" in jax.jit(shared).lower(a, b).compile().as_text()

    def batched(a, b):
        return jnp.transpose(jnp.einsum("bij,bjk->bik", a, b), (1, 0, 2))
    a3 = np.arange(24.0, dtype=np.float32).reshape(2, 3, 4)
    b3 = np.arange(40.0, dtype=np.float32).reshape(2, 4, 5)
    np.testing.assert_array_equal(np.asarray(jax.jit(batched)(a3, b3)),
                                  np.transpose(a3 @ b3, (1, 0, 2)))

    def swap_batched(a, b):
        return jnp.swapaxes(jnp.einsum("bij,bjk->bik", a, b), 1, 2)
    np.testing.assert_array_equal(np.asarray(jax.jit(swap_batched)(a3, b3)),
                                  np.swapaxes(a3 @ b3, 1, 2))
    assert "np.transpose" not in jax.jit(swap_batched).lower(a3, b3).compile().as_text()


def test_host_allocator_tuning_can_be_turned_off():
    import subprocess
    import sys
    code = ("import jaxlite, sys; from jaxlite._src.runtime.allocator import allocator_tuned;"
            "print(allocator_tuned())")
    import os
    env = dict(os.environ, JAXLITE_HEAP_RETAIN_MB="0")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert out.stdout.strip() == "False", out.stderr
    env["JAXLITE_HEAP_RETAIN_MB"] = "lots"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert "JAXLITE_HEAP_RETAIN_MB must be an integer" in out.stderr


def test_jit_of_the_same_function_shares_its_cache():
    # As JAX (seed 001): jit(f) twice traces f once; different options trace anew.
    traces = []

    def f(x):
        traces.append(1)
        return x * 2

    jax.jit(f)(1.0)
    jitted = jax.jit(f)
    assert float(jitted(3.0)) == 6.0 and jitted(4.0) is not None
    assert len(traces) == 1 and jitted._cache_size() == 1
    jax.jit(f, static_argnums=0)(3.0)
    assert len(traces) == 2
    jax.jit(f)(jnp.ones(2))
    assert len(traces) == 3

    class Counter:
        count = 0

        @functools.partial(jax.jit, static_argnums=(0,))
        def inc(self):
            self.count += 1

    a, b = Counter(), Counter()
    a.inc(), a.inc(), b.inc()
    assert (a.count, b.count) == (1, 1)


def test_tracing_by_type_accepts_shaped_arrays_and_shape_dtype_objects():
    """As JAX's ``shaped_abstractify``: eval_shape, make_jaxpr and jit(f).lower take a
    ShapedArray or any non-array object with ``shape`` and ``dtype`` (flax's ConvLocal
    passes a ShapedArray to eval_shape); calling a jitted function with one is an error."""
    from jaxlite.core import ShapedArray

    class Spec:
        shape, dtype = (2, 3), np.dtype("float64")
    f = lambda x: x * 2     # noqa: E731
    for arg in (ShapedArray((2, 3), jnp.float32), Spec()):
        out = jax.eval_shape(f, arg)
        assert (out.shape, out.dtype) == ((2, 3), jnp.float32)   # (float64 canonicalized)
        assert str(jax.make_jaxpr(f)(arg)).startswith("{ lambda ; a:f32[2,3]. let")
        assert jax.jit(f).lower(arg).out_info.shape == (2, 3)
    with pytest.raises(TypeError):
        jax.jit(f)(ShapedArray((2, 3), jnp.float32))
    with pytest.raises(TypeError):
        jax.eval_shape(f, object())
