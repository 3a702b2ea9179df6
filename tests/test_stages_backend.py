"""jax.stages' ArgInfo/CompilerOptions and jax.extend.backend, from JAX 0.10.2's behaviour
(outputs below stored from JAX)."""
import functools

import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import stages
from jaxlite.extend import backend


def test_args_info_of_each_stage():
    low = jax.jit(lambda x, y: x + y, donate_argnums=1).lower(jnp.ones(3), jnp.ones(3))
    want = ("((ArgInfo(_aval=ShapedArray(float32[3]), donated=False), "
            "ArgInfo(_aval=ShapedArray(float32[3]), donated=True)), {})")
    assert str(low.args_info) == want
    assert str(low.compile().args_info) == want
    assert str(low.in_avals) == "((ShapedArray(float32[3]), ShapedArray(float32[3])), {})"
    assert low.donate_argnums == (1,)
    t = jax.jit(lambda x: x).trace(1.)
    assert str(t.args_info) == \
        "((ArgInfo(_aval=ShapedArray(float32[], weak_type=True), donated=False),), {})"
    a = low.args_info[0][0]
    assert (a.shape, str(a.dtype), a.donated) == ((3,), "float32", False)
    assert isinstance(a, stages.ArgInfo)
    with pytest.raises(Exception):
        a.donated = True   # frozen, as JAX's
    assert str(stages.CompilerOptions) == "dict[str, typing.Union[str, bool]]"


def test_extend_backend():
    bs = backend.backends()
    assert list(bs) == ["cpu"] and bs["cpu"] is backend.get_backend()
    assert backend.get_backend().platform == "cpu"
    assert backend.backend_xla_version() is None
    assert backend.get_default_device() == jax.devices()[0]
    with pytest.raises(RuntimeError):
        backend.get_backend("tpu")


def test_clear_backends_clears_registered_caches_and_jit():
    calls = []

    @functools.lru_cache
    def cached(x):
        calls.append(x)
        return x
    backend.register_backend_cache(cached, "test")
    cached(1), cached(1)
    traces = []

    @jax.jit
    def f(x):
        traces.append(1)
        return x * 2
    f(1.)
    f(1.)
    assert len(traces) == 1 and calls == [1]
    backend.clear_backends()
    cached(1)
    f(1.)
    assert calls == [1, 1] and len(traces) == 2
    with pytest.raises(TypeError, match="cache_clear"):
        backend.register_backend_cache(object(), "x")
    with pytest.raises(NotImplementedError, match="PJRT"):
        backend.register_backend_factory("foo", lambda: None)


def test_against_jax():
    rjax = pytest.importorskip("jax")
    from jax.extend import backend as rb
    assert rb.backend_xla_version() == backend.backend_xla_version()
    assert str(rb.get_default_device()) == str(backend.get_default_device())
    low = rjax.jit(lambda x, y: x + y, donate_argnums=1).lower(rjax.numpy.ones(3),
                                                                 rjax.numpy.ones(3))
    mine = jax.jit(lambda x, y: x + y, donate_argnums=1).lower(jnp.ones(3), jnp.ones(3))
    assert str(low.args_info) == str(mine.args_info)
    assert low.donate_argnums == mine.donate_argnums
