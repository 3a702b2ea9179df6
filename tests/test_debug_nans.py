"""jax_debug_nans / jax_debug_infs: the first operation producing a nan (inf) raises
FloatingPointError naming the primitive and the user's line; a jitted function is re-run
without jit to find it, as JAX does. Where the real jax is installed, the first line of each
error is compared with JAX's."""
import os
import subprocess
import sys
import traceback

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite._src.core.trace import ctx

NOTICE = ("Invalid nan value encountered in the output of a jax.jit function. Calling the "
          "de-optimized version.")


@pytest.fixture
def nans():
    with jax.debug_nans(True):
        yield
    assert ctx.trace is None


def f(x):
    y = jnp.sin(x)
    z = jnp.log(y - 2.0)   # the nan comes from here
    return z * 2


def test_eager_op_raises_with_primitive_and_user_line(nans):
    with pytest.raises(FloatingPointError) as info:
        f(1.0)
    first, second = str(info.value).splitlines()
    assert first == "invalid value (nan) encountered in log"
    assert "test_debug_nans.py" in second and "z = jnp.log(y - 2.0)" in second


def test_jit_reruns_the_function_without_jit(nans, capsys):
    with pytest.raises(FloatingPointError) as info:
        jax.jit(f)(1.0)
    assert capsys.readouterr().out == NOTICE + "\n"
    assert str(info.value).splitlines()[0] == "invalid value (nan) encountered in log"
    frames = [fr.name for fr in traceback.extract_tb(info.value.__traceback__)]
    assert "f" in frames          # the traceback goes through the user's function


def test_nested_jit_and_no_false_alarm(nans, capsys):
    g = jax.jit(lambda x: jax.jit(lambda y: jnp.log(y))(x) + 1)
    with pytest.raises(FloatingPointError, match="encountered in log"):
        g(-1.0)
    assert capsys.readouterr().out.count(NOTICE) == 2
    assert float(g(1.0)) == 1.0 and capsys.readouterr().out == ""


def test_deoptimized_run_without_nan(nans, capsys):
    with pytest.raises(FloatingPointError) as info:
        jax.jit(lambda: jnp.nan)()
    assert str(info.value).startswith("('jit(<lambda>)', 'nan'). Because "
                                      "jax_config.debug_nans.value")
    assert capsys.readouterr().out == NOTICE + "\n"


def test_transformations(nans):
    with pytest.raises(FloatingPointError, match="encountered in log"):
        jax.vmap(jnp.log)(jnp.array([1.0, -1.0]))
    with pytest.raises(FloatingPointError, match="encountered in mul"):
        jax.grad(lambda x: jnp.sqrt(x) * 0)(0.0)
    assert float(jax.grad(jnp.sqrt)(0.0)) == np.inf       # inf is not a nan
    with pytest.raises(FloatingPointError, match="encountered in scan"):
        jax.jit(lambda x: jax.lax.scan(lambda c, v: (c + jnp.log(v), c), 0.0, x))(
            jnp.array([1.0, -1.0]))


def test_call_primitives_are_rerun_equation_by_equation(nans):
    @jax.custom_jvp
    def g(x):
        return jnp.log(x) * 2

    g.defjvp(lambda p, t: (g(p[0]), t[0] / p[0]))
    with pytest.raises(FloatingPointError) as info:
        jax.grad(g)(-1.0)
    first, second = str(info.value).splitlines()
    assert first == "invalid value (nan) encountered in log"
    assert "return jnp.log(x) * 2" in second


def test_debug_infs_and_disable_jit(capsys):
    with jax.debug_infs(True):
        with pytest.raises(FloatingPointError, match=r"invalid value \(inf\) encountered in log"):
            jnp.log(0.0)
        with jax.disable_jit():
            with pytest.raises(FloatingPointError, match="encountered in log"):
                jax.jit(lambda x: jnp.log(x) + 1)(0.0)
        assert capsys.readouterr().out == ""      # no jit, no de-optimized re-run
        assert float(jnp.log(-1.0)) != float(jnp.log(-1.0))     # nans pass
    assert ctx.trace is None


def test_flags_via_config_update_and_restored():
    assert not jax.config.jax_debug_nans and not jax.debug_nans.value
    jax.config.update("jax_debug_nans", True)
    try:
        assert jax.debug_nans.value
        with pytest.raises(FloatingPointError):
            jnp.array([0.0]) / 0.0
        with jax.debug_nans(False):
            assert np.isnan(jnp.array([0.0]) / 0.0).all()
        with pytest.raises(FloatingPointError):
            jnp.array([0.0]) / 0.0
    finally:
        jax.config.update("jax_debug_nans", False)
    assert ctx.trace is None
    assert np.isnan(jnp.log(-1.0))


def test_environment_variable():
    code = ("import jaxlite.numpy as jnp\n"
            "try:\n    jnp.log(-1.0)\nexcept FloatingPointError as e:\n    print(e)\n")
    env = dict(os.environ, JAX_DEBUG_NANS="1")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=env, cwd=os.path.dirname(os.path.dirname(__file__)), timeout=300)
    assert out.stdout.startswith("invalid value (nan) encountered in log"), out.stderr


_CASES = [
    "f(1.0)",
    "jax.jit(f)(1.0)",
    "jax.vmap(jnp.log)(jnp.array([1.0, -1.0]))",
    "jax.grad(lambda x: jnp.sqrt(x) * 0)(0.0)",
    "jnp.array([0.0]) / 0.0",
    "jax.jit(lambda: jnp.nan)()",
    "jax.jit(lambda x: jax.lax.scan(lambda c, v: (c + jnp.log(v), c), 0.0, x))("
    "jnp.array([1.0, -1.0]))",
]


def _first_line(expr, mods):
    env = dict(mods, f=lambda x: mods["jnp"].log(mods["jnp"].sin(x) - 2.0) * 2)
    try:
        eval(expr, env)
    except FloatingPointError as e:
        return str(e).splitlines()[0]
    return None


@pytest.mark.parametrize("expr", _CASES)
def test_first_line_matches_jax(expr, capsys):
    real = pytest.importorskip("jax")
    with real.debug_nans(True):
        theirs = _first_line(expr, {"jax": real, "jnp": real.numpy})
    with jax.debug_nans(True):
        ours = _first_line(expr, {"jax": jax, "jnp": jnp})
    assert theirs is not None and ours == theirs


def _inf_nan_ops():
    x = jnp.array([-1.0, 0.0, 2.0])
    return [jnp.log(x), x / 0.0, x / jnp.zeros(3), jnp.sqrt(x), jnp.arccos(x * 3), x ** 0.5,
            jnp.exp(x * 1e3), x * 1e38 * 1e38, jnp.float32(1e38) * 10, jnp.log(-1.0),
            jnp.sum(jnp.array([1e38, 1e38])), jax.jit(jnp.log)(x), -x % 0.0]


def test_inf_and_nan_are_silent_as_in_jax():
    """Without jax_debug_nans, an op giving inf/nan neither warns nor raises (XLA has no
    floating-point exceptions), eagerly or jitted: not even when the caller records every
    warning (pytest.warns, catch_warnings) or raises on them; the caller's own NumPy error
    state is left as it was."""
    import warnings

    from jaxlite._src.config import config
    with warnings.catch_warnings(record=True) as seen, \
            config.override("jaxlite_check_eager_avals", False):   # (the eager fast paths)
        warnings.simplefilter("always")
        vals = _inf_nan_ops()
    assert [str(w.message) for w in seen] == []
    assert np.isnan(np.asarray(vals[0])[0]) and np.isinf(np.asarray(vals[1])[0])
    with warnings.catch_warnings(), config.override("jaxlite_check_eager_avals", False):
        warnings.simplefilter("error")
        with np.errstate(all="raise"):
            _inf_nan_ops()
            with pytest.raises(FloatingPointError):    # NumPy itself still raises here
                np.log(np.array([-1.0]))
    with pytest.warns(RuntimeWarning):               # and warns by default
        np.log(np.array([-1.0]))
