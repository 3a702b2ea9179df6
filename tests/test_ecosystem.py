"""JAX's ecosystem runs unmodified on jaxlite: small programs of optax, chex, equinox,
flax.linen, jaxtyping, numpyro and diffrax (tests/ecosystem_programs) run with ``import jax``
answered by jaxlite (``jaxlite.install_as_jax()``, in a subprocess) and print what they print
under the real JAX (tests/ecosystem_goldens.json, written by gen_ecosystem_goldens.py).

Numbers are compared with a float32 tolerance (training loops accumulate rounding
differences), everything else exactly. A program is skipped when a library it needs is not
installed. The install_as_jax hook itself (``import jax`` gives jaxlite, jax.__version__ is
the JAX release jaxlite follows, no real jax module is ever loaded, ``python -m jaxlite run``
passes its arguments on) is tested without any library.
"""
import importlib.util
import json
import os
import pathlib
import re
import subprocess
import sys

import pytest

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent
PROGRAMS = HERE / "ecosystem_programs"
GOLDENS = json.loads((HERE / "ecosystem_goldens.json").read_text())

_RUN = ("import runpy, sys, jaxlite; jaxlite.install_as_jax(); "
        "runpy.run_path(sys.argv[1], run_name='__main__'); "
        "from jaxlite._src.import_hook import _real_jax_modules; "
        "bad = _real_jax_modules(); "
        "sys.exit(f'real jax modules were loaded: {bad}' if bad else 0)")

_NUM = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?|nan|inf")


def _env():
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1")
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT)] + (
        [env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    return env


def _run(args, timeout=600):
    return subprocess.run([sys.executable] + args, capture_output=True, text=True,
                          env=_env(), cwd=PROGRAMS, timeout=timeout)


def _requirements(path):
    for line in path.read_text().splitlines():
        if line.startswith("# requires:"):
            return line.split(":", 1)[1].split()
    return []


def _same_output(got, want, rtol=2e-4, atol=1e-5):
    """None when ``got`` matches ``want`` (numbers within tolerance, text exactly), else a
    description of the first difference."""
    g_lines, w_lines = got.splitlines(), want.splitlines()
    if len(g_lines) != len(w_lines):
        return f"{len(g_lines)} lines printed, JAX printed {len(w_lines)}"
    for k, (g, w) in enumerate(zip(g_lines, w_lines)):
        # NumPy pads printed arrays to the widest number: spacing may differ with the digits
        gn, wn = _NUM.findall(g), _NUM.findall(w)
        if "".join(_NUM.sub("#", g).split()) != "".join(_NUM.sub("#", w).split()) or \
                len(gn) != len(wn):
            return f"line {k + 1}: {g!r} != {w!r}"
        for a, b in zip(gn, wn):
            fa, fb = float(a), float(b)
            if not (fa == fb or abs(fa - fb) <= atol + rtol * abs(fb)):
                return f"line {k + 1}: {a} != {b} (JAX)\n  {g}\n  {w}"
    return None


@pytest.mark.parametrize("name", sorted(p.stem for p in PROGRAMS.glob("*.py")))
def test_program_matches_jax(name):
    prog = PROGRAMS / f"{name}.py"
    for lib in _requirements(prog):
        if importlib.util.find_spec(lib) is None:
            pytest.skip(f"{lib} is not installed")
    if name not in GOLDENS:
        pytest.skip(f"no golden for {name}: run tests/gen_ecosystem_goldens.py")
    proc = _run(["-c", _RUN, str(prog)])
    assert proc.returncode == 0, proc.stderr[-4000:]
    diff = _same_output(proc.stdout, GOLDENS[name]["stdout"])
    assert diff is None, f"{name} on jaxlite differs from JAX: {diff}"


def test_output_comparison_is_strict_enough():
    assert _same_output("loss 1.00001 [1 2]\n", "loss 1.0 [1 2]\n") is None
    assert _same_output("loss 1.01\n", "loss 1.0\n") is not None
    assert _same_output("Array(1, dtype=int32)\n", "Array(1, dtype=float32)\n") is not None
    assert _same_output("a\nb\n", "a\n") is not None
    assert _same_output("[[1.         2.        ]", "[[1.        2.       ]") is None


def test_install_as_jax_hook(tmp_path):
    script = tmp_path / "prog.py"
    script.write_text(
        "import sys, jax, jax.numpy as jnp, jax.extend.core, jax._src.traceback_util\n"
        "import jax._src.interpreters.ad\n"
        "assert issubclass(jax._src.interpreters.ad.CustomVJPException, Exception)\n"
        "import jaxlite\n"
        "from jax.typing import ArrayLike\n"
        "assert jax.numpy is jaxlite.numpy and jax.jit is jaxlite.jit\n"
        "assert jax.__version__ == '0.10.2' and jax.__version_info__ == (0, 10, 2)\n"
        "assert jax.version.__version__ == '0.10.2'\n"
        "print(sys.argv[1:], jax.grad(lambda x: jnp.sin(x))(0.0))\n"
        "try:\n"
        "    import jax.no_such_module\n"
        "except ModuleNotFoundError as e:\n"
        "    print('ModuleNotFoundError', 'jaxlite' in str(e))\n"
        "try:\n"
        "    import jaxlib\n"
        "except ModuleNotFoundError as e:\n"
        "    print('no jaxlib', 'replaces' in str(e))\n")
    proc = _run(["-m", "jaxlite", "run", str(script), "a", "--b"])
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ["['a', '--b'] 1.0", "ModuleNotFoundError True",
                                        "no jaxlib True"]
    # -m form, and the hook refuses to mix with an already imported real jax
    mod = tmp_path / "mymod.py"
    mod.write_text("import jax; print(jax.numpy.arange(3).sum())\n")
    env_path = f"import sys; sys.path.insert(0, {str(tmp_path)!r})"
    proc = _run(["-c", env_path + "; import runpy, sys; sys.argv = ['jaxlite', 'run', '-m', "
                 "'mymod']; from jaxlite._src.import_hook import main; main(sys.argv[1:])"])
    assert proc.returncode == 0 and proc.stdout.strip() == "3", proc.stderr
    proc = _run(["-m", "jaxlite", "frobnicate"])
    assert proc.returncode == 2 and "usage" in proc.stderr


def test_install_as_jax_refuses_a_loaded_real_jax():
    if importlib.util.find_spec("jax") is None:
        pytest.skip("jax is not installed")
    proc = _run(["-c", "import jax, jaxlite\n"
                       "try:\n    jaxlite.install_as_jax()\n"
                       "except RuntimeError as e:\n    print('RuntimeError', 'before' in str(e))"])
    assert proc.stdout.strip() == "RuntimeError True", proc.stderr
