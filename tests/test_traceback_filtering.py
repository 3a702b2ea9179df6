"""jax_traceback_filtering's modes, as JAX's: hidden frames are jaxlite's and those of the
directories libraries register (flax's, through jax._src.traceback_util), also when the
exception leaves the library's own api_boundary."""
import importlib.util
import sys
import traceback

import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite._src.compat import traceback_util as tbu


@pytest.fixture
def library(tmp_path):
    """A library in its own directory: ``call(f, x)`` runs ``f`` under ``jax.jit`` from
    inside two of its own frames, behind its api_boundary; its directory is registered."""
    src = tmp_path / "mylib"
    src.mkdir()
    (src / "core.py").write_text(
        "import jaxlite as jax\n"
        "from jaxlite._src.compat import traceback_util as tbu\n"
        "def _inner(f, x):\n"
        "    return jax.jit(f)(x)\n"
        "def _outer(f, x):\n"
        "    return _inner(f, x)\n"
        "call = tbu.api_boundary(_outer)\n")
    spec = importlib.util.spec_from_file_location("mylib_core", src / "core.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    tbu.register_exclusion(str(src))
    yield mod, str(src)
    if str(src) in tbu._exclude_paths:
        tbu._exclude_paths.remove(str(src))


def _user_fn(x):
    raise ValueError("error here")


def _raise(mod, mode):
    with jax.config.override("jax_traceback_filtering", mode):
        with pytest.raises(ValueError) as info:
            mod.call(_user_fn, jnp.ones(3))
    return info.value


def _files(tb):
    return [f.f_code.co_filename for f, _ in traceback.walk_tb(tb)]


def test_quiet_remove_frames_hides_the_library_and_notes_it(library):
    mod, path = library
    e = _raise(mod, "quiet_remove_frames")
    files = _files(e.__traceback__)
    assert files and all(f == __file__ for f in files), files
    assert any("Set JAX_TRACEBACK_FILTERING=off" in n for n in e.__notes__)
    assert not isinstance(e.__cause__, tbu.UnfilteredStackTrace)


def test_remove_frames_chains_the_whole_traceback(library):
    mod, path = library
    e = _raise(mod, "remove_frames")
    assert all(f == __file__ for f in _files(e.__traceback__))
    cause = e.__cause__
    assert isinstance(cause, tbu.UnfilteredStackTrace)
    whole = _files(cause.__traceback__)
    assert any(f.startswith(path) for f in whole)
    assert any("jaxlite" in f and f != __file__ for f in whole)
    assert "error here" in str(cause) and "excludes jaxlite-internal frames" in str(cause)


def test_tracebackhide_keeps_frames_and_marks_the_hidden_ones(library):
    mod, path = library
    e = _raise(mod, "tracebackhide")
    shown, hidden = [], []
    for f, _ in traceback.walk_tb(e.__traceback__):
        (hidden if "__tracebackhide__" in f.f_locals else shown).append(f.f_code.co_filename)
    assert shown and all(f == __file__ for f in shown)
    assert any(f.startswith(path) for f in hidden)


def test_a_library_shows_its_frames_again_by_leaving_the_list(library):
    mod, path = library
    tbu._exclude_paths.remove(path)
    e = _raise(mod, "quiet_remove_frames")
    assert any(f.startswith(path) for f in _files(e.__traceback__))


def test_off_and_bad_modes():
    f = jax.jit(_user_fn)
    with jax.config.override("jax_traceback_filtering", "off"):
        with pytest.raises(ValueError) as info:
            f(jnp.ones(2))
    assert any("jaxlite" in p and p != __file__ for p in _files(info.value.__traceback__))
    with jax.config.override("jax_traceback_filtering", "sideways"):
        with pytest.raises(ValueError, match="JAX_TRACEBACK_FILTERING=sideways is not a valid"):
            f(jnp.ones(2))


def test_auto_is_quiet_outside_ipython():
    assert "IPython" not in sys.modules or sys.modules["IPython"].get_ipython() is None
    with pytest.raises(ValueError) as info:
        jax.jit(_user_fn)(jnp.ones(2))
    assert any("JAX_TRACEBACK_FILTERING=off" in n for n in info.value.__notes__)
