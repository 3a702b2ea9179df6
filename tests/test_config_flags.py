"""Every config flag of JAX 0.10.2 exists in jaxlite with JAX's default; the flags with an
effect on CPU have JAX's effect (errors and values written from JAX 0.10.2's behaviour)."""
import enum
import logging
import warnings

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite._src.config import _NOOPS, _EFFECTIVE


def test_every_jax_flag_exists_with_jax_default():
    rjax = pytest.importorskip("jax")
    differ = {}
    for name, holder in rjax.config._value_holders.items():
        v = holder.value
        if isinstance(v, enum.Enum):
            v = v.value if isinstance(v.value, str) else v.name.lower()
        w = jax.config.read(name)   # (raises AttributeError when missing)
        if v != w:
            differ[name] = (v, w)
    # jaxlite names its one platform where JAX leaves the choice open
    assert differ == {"jax_platforms": (None, "cpu"), "jax_platform_name": ("", "cpu")}


def test_flag_table_is_documented():
    names = [n for n, *_ in _EFFECTIVE] + [n for fl in _NOOPS.values() for n, _ in fl]
    assert len(names) == len(set(names))
    for n in names:
        doc = jax.config._flags[n].doc
        assert doc and ("no effect" in doc or n in dict((e[0], 1) for e in _EFFECTIVE)), n


def test_noop_flags_accept_values_and_check_types():
    with jax.config.override("jax_compilation_cache_dir", "/tmp/x"):
        assert jax.config.jax_compilation_cache_dir == "/tmp/x"
        assert float(jnp.sum(jnp.ones(3))) == 3.0
    with pytest.raises(TypeError, match="expects a bool"):
        jax.config.update("jax_enable_pgle", "yes")
    with pytest.raises(ValueError, match=r"new enum value must be None or in \['NOTSET'"):
        jax.config.update("jax_logging_level", "foo")
    with pytest.raises(ValueError, match="Unrecognized value 'foo' for jax_legacy_prng_key"):
        jax.config.update("jax_legacy_prng_key", "foo")


def test_allow_f16_reductions():
    msg = r"reduce_sum on operand f16\[3\] is not allowed when jax_allow_f16_reductions=False"
    with jax.allow_f16_reductions(False):
        with pytest.raises(ValueError, match=msg):
            jax.lax.reduce_sum(jnp.ones(3, jnp.float16), (0,))
        with pytest.raises(ValueError, match=msg):
            jax.jit(lambda x: jax.lax.reduce_sum(x, (0,)))(jnp.ones(3, jnp.float16))
        # jnp.sum accumulates in float32 (as JAX), and size-1 sums are allowed
        assert float(jnp.ones(3, jnp.bfloat16).sum()) == 3.0
        assert float(jax.lax.reduce_sum(jnp.ones(1, jnp.float16), (0,))) == 1.0
    assert float(jax.lax.reduce_sum(jnp.ones(3, jnp.float16), (0,))) == 3.0


def test_legacy_prng_key():
    msg = "Legacy uint32 key array passed as key to jax.random function"
    raw = jax.random.PRNGKey(0)
    with jax.legacy_prng_key("error"):
        with pytest.raises(ValueError, match=msg):
            jax.random.normal(raw)
        jax.random.normal(jax.random.key(0))   # typed keys are fine
    with jax.legacy_prng_key("warn"):
        with pytest.warns(UserWarning, match=msg):
            jax.random.normal(raw)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        jax.random.normal(raw)


def test_random_seed_offset():
    base = np.asarray(jax.random.key_data(jax.random.key(7)))
    with jax.config.override("jax_random_seed_offset", 7):
        assert np.asarray(jax.random.key_data(jax.random.key(0))).tolist() == base.tolist()
        assert np.asarray(jax.random.PRNGKey(0)).tolist() == base.tolist()
    assert np.asarray(jax.random.key_data(jax.random.key(0))).tolist() == [0, 0]


def test_high_dynamic_range_gumbel():
    k = jax.random.key(0)
    high = jax.random.gumbel(k, (4,), mode="high")
    with jax.config.override("jax_high_dynamic_range_gumbel", True):
        np.testing.assert_array_equal(jax.random.gumbel(k, (4,)), high)
    np.testing.assert_array_equal(jax.random.gumbel(k, (4,)),
                                  jax.random.gumbel(k, (4,), mode="low"))


def test_check_static_indices():
    x = jnp.arange(10)
    assert int(x[11]) == 9   # clamped by default
    with jax.config.override("jax_check_static_indices", True):
        for f, k, ax, n in [(lambda: x[11], 11, 0, 10), (lambda: x[-11], -11, 0, 10),
                            (lambda: jnp.ones((2, 3))[None, 1, 5], 5, 1, 3),
                            (lambda: jax.jit(lambda x: x[12])(x), 12, 0, 10),
                            (lambda: x.at[11].get(), 11, 0, 10)]:
            with pytest.raises(IndexError, match=rf"index {k} out of bounds for axis {ax} "
                               rf"with size {n} \(normalize_indices=True\)"):
                f()
        assert int(x.at[11].get(mode="clip")) == 9
        assert x[2:20].shape == (8,)


def test_disallow_mesh_context_manager():
    mesh = jax.make_mesh((1,), ("x",))
    with jax.config.override("jax_disallow_mesh_context_manager", True):
        with pytest.raises(RuntimeError, match="Mesh context manager is disabled."):
            with mesh:
                pass


def test_logging_flags():
    log = logging.getLogger("jaxlite")
    old = log.level
    try:
        with jax.config.override("jax_logging_level", "ERROR"):
            assert log.level == logging.ERROR
        assert log.level == logging.NOTSET
        with jax.config.override("jax_debug_log_modules", "jax._src.dispatch"):
            assert logging.getLogger("jaxlite._src.dispatch").level == logging.DEBUG
    finally:
        log.setLevel(old)
        logging.getLogger("jaxlite._src.dispatch").setLevel(logging.NOTSET)


def test_export_calling_convention_version():
    f = jax.jit(jnp.sin)
    with jax.config.override("jax_export_calling_convention_version", 9):
        assert jax.export.export(f)(1.).calling_convention_version == 9
    with jax.config.override("jax_export_calling_convention_version", 3):
        with pytest.raises(ValueError, match=r"The requested export calling convention "
                           r"version 3 is outside the range of supported versions \[9..10\]"):
            jax.export.export(f)(1.)


def test_make_user_context_is_part_of_the_jit_key():
    traces = []

    @jax.jit
    def f(x):
        traces.append(1)
        return x * 2
    ctx = jax.make_user_context(default_value=None)
    with ctx(1):
        f(1.)
        assert ctx.value == 1
    with ctx(2):
        f(1.)
    with ctx(1):
        f(1.)
    f(1.)
    assert len(traces) == 3 and ctx.value is None


def test_ds():
    assert str(jax.ds(1, 2)) == "Slice(start=1, size=2, stride=1)"
    assert jax.ds(None) == slice(None)
