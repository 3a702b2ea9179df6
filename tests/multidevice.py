"""Helpers for tests that need several devices: everything multi-device runs in a subprocess
whose environment sets the device count, so the test process itself (and every other test
file) keeps its single device.

- ``run_snippet(code, n)``: run a Python snippet with ``n`` CPU devices and return its stdout
  (jaxlite is importable as in the test process; ``import jax`` is left alone).
- ``run_cases(cases, backend, n)``: run many named snippets written against ``jax`` in one
  process (``tests/sharding_runner.py``) with jaxlite (an import hook resolves ``jax`` to
  jaxlite) or with a real JAX interpreter; returns {name: output}.
- ``normalize``: canonical text for comparisons (Python sets of devices print in hash order).
- ``SHOW_PRELUDE`` / ``shown_results`` / ``assert_shown``: snippets that ``show(name, y)``
  values and shardings on a (4, 2) Auto mesh, compared with stored JAX goldens.
"""
import json
import os
import pathlib
import re
import subprocess
import sys
import tempfile
import textwrap

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent
RUNNER = HERE / "sharding_runner.py"
TIMEOUT = 300


def device_env(n, extra=None):
    """The environment of a subprocess with ``n`` simulated CPU devices (for JAX and jaxlite
    alike; None: no device count at all); any device count of the parent is dropped."""
    env = dict(os.environ)
    env.pop("JAXLITE_NUM_CPU_DEVICES", None)
    env.pop("XLA_FLAGS", None)
    if n is not None:
        env["XLA_FLAGS"] = f"--xla_force_host_platform_device_count={n}"
    env.update(JAX_PLATFORMS="cpu",
               PYTHONHASHSEED="0", PYTHONIOENCODING="utf-8", TF_CPP_MIN_LOG_LEVEL="3",
               PYTHONPATH=os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]).rstrip(
                   os.pathsep))
    if extra:
        env.update(extra)
    return env


def run_snippet(code, n=8, timeout=TIMEOUT, python=None, env=None):
    """Run ``code`` (dedented) with ``n`` devices in a fresh interpreter; return its stdout
    (raises AssertionError with stdout and stderr when it fails)."""
    code = textwrap.dedent(code)
    proc = subprocess.run([python or sys.executable, "-c", code], capture_output=True,
                          text=True, env=device_env(n, env), cwd=str(ROOT), timeout=timeout)
    if proc.returncode != 0:
        raise AssertionError(f"snippet failed (exit {proc.returncode}):\n--- stdout\n"
                             f"{proc.stdout}\n--- stderr\n{proc.stderr}")
    return proc.stdout


def run_cases(cases, backend, n=8, python=None, timeout=TIMEOUT):
    """{name: output} of the snippets ``cases`` ({name: code}) run one after another in one
    process with ``n`` devices. ``backend``: 'jaxlite' (``import jax`` gives jaxlite) or
    'jax' (the real JAX of ``python``, default this interpreter)."""
    with tempfile.TemporaryDirectory() as tmp:
        src = pathlib.Path(tmp) / "cases.json"
        out = pathlib.Path(tmp) / "out.json"
        src.write_text(json.dumps(cases), encoding="utf-8")
        proc = subprocess.run([python or sys.executable, str(RUNNER), backend, str(src),
                               str(out)], capture_output=True, text=True,
                              env=device_env(n), cwd=str(HERE), timeout=timeout)
        if proc.returncode != 0 or not out.exists():
            raise AssertionError(f"sharding_runner ({backend}) failed (exit "
                                 f"{proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
        return json.loads(out.read_text(encoding="utf-8"))


_DEVICE_SET = re.compile(r"\{(?:CpuDevice\(id=\d+\)(?:, )?)+\}")


def normalize(text):
    """``text`` with every printed set of devices ({CpuDevice(id=3), CpuDevice(id=1)}) listed
    in id order: a set's print order depends on hashing, not on what it holds."""
    def canon(m):
        ids = sorted(int(i) for i in re.findall(r"id=(\d+)", m.group()))
        return "{" + ", ".join(f"CpuDevice(id={i})" for i in ids) + "}"
    return _DEVICE_SET.sub(canon, text)


_PRELUDE = ("import jaxlite as jax, jaxlite.numpy as jnp, numpy as np, json\n"
            "from jaxlite import lax\n")


def run(code, devices=8, env=None, timeout=TIMEOUT):
    """``run_snippet`` of ``code`` after jaxlite's usual imports (jax, jnp, np, json, lax)."""
    return run_snippet(_PRELUDE + textwrap.dedent(code), devices, timeout=timeout, env=env)


def run_json(code, **kw):
    """``run`` whose last printed line is JSON; returns it decoded."""
    return json.loads(run(code, **kw).strip().splitlines()[-1])


# The start of a snippet on a (4, 2) mesh of Auto axes ('x', 'y') whose ``show(name, y)``
# records the first values of ``y`` and its sharding's spec; ``shown_results`` runs it.
SHOW_PRELUDE = """
import json, numpy as np, jaxlite as jax, jaxlite.numpy as jnp
from jaxlite import lax
from functools import partial
out = {}
P = jax.sharding.PartitionSpec
NS = jax.sharding.NamedSharding
mesh = jax.make_mesh((4, 2), ("x", "y"), axis_types=(jax.sharding.AxisType.Auto,) * 2)
def show(name, y, n=6):
    out[name] = [np.round(np.asarray(y), 3).ravel()[:n].tolist(), str(y.sharding.spec)]
"""


def shown_results(body, n=8):
    """Run ``SHOW_PRELUDE + body`` with ``n`` devices; returns {name: [values, spec]}."""
    code = SHOW_PRELUDE + textwrap.dedent(body) + "\nprint(json.dumps(out))\n"
    return json.loads(run_snippet(code, n=n).strip().splitlines()[-1])


def assert_shown(got, want, atol=2e-3):
    """A ``show`` record equals JAX's stored [values, spec] (values within ``atol``)."""
    import numpy as np
    vals, spec = got
    np.testing.assert_allclose(vals, want[0], atol=atol)
    assert spec == want[1]


def jax_version():
    """The installed JAX's version (None without JAX): live comparisons need 0.10.2."""
    import importlib.util
    try:
        if importlib.util.find_spec("jax") is None:
            return None
    except (ImportError, ValueError):
        return None
    from importlib.metadata import version
    return version("jax")


LIVE_JAX = jax_version() == "0.10.2"


def outputs_beside_jax(cases):
    """Run the snippets ``cases`` on jaxlite and, when JAX 0.10.2 is installed, on JAX at
    the same time: {"jaxlite": outputs, "jax": outputs (only with JAX)}."""
    import concurrent.futures
    with concurrent.futures.ThreadPoolExecutor(2) as ex:
        lite = ex.submit(run_cases, cases, "jaxlite")
        jax = ex.submit(run_cases, cases, "jax") if LIVE_JAX else None
        out = {"jaxlite": lite.result()}
        if jax is not None:
            out["jax"] = jax.result()
    return out


def assert_case_matches_jax(outputs, golden, name, canon=str.splitlines):
    """The output of case ``name`` equals JAX's (live, or the golden file ``golden``),
    line by line after ``canon``; a diff otherwise."""
    import difflib
    ours = outputs["jaxlite"][name]
    if "jax" in outputs:
        theirs, source = outputs["jax"][name], "jax 0.10.2"
    else:
        theirs = json.loads(golden.read_text(encoding="utf-8"))["outputs"][name]
        source = "jax 0.10.2 golden"
    assert "!! " not in ours, ours
    a, b = canon(theirs), canon(ours)
    assert a == b, "\n".join(difflib.unified_diff(a, b, source, "jaxlite", lineterm=""))


def assert_golden_current(golden, cases):
    """The recorded goldens are JAX 0.10.2's and cover every case (re-record after adding
    one)."""
    recorded = json.loads(golden.read_text(encoding="utf-8"))
    assert recorded["jax_version"] == "0.10.2"
    assert set(recorded["outputs"]) == set(cases)


# A snippet's ``where(r)``: the (device id, index ranges) of each shard of ``r``, sorted.
SHARD_WHERE = '''
def where(r):
    mp = r.sharding.devices_indices_map(r.shape)
    return sorted((d.id, tuple((s.start, s.stop) for s in idx)) for d, idx in mp.items())
'''


def golden_cli(cases, golden, test_file):
    """A sharding test file run as a script: ``--record`` records its goldens with JAX."""
    if sys.argv[1:] == ["--record"]:
        record_goldens(cases, golden)
    else:
        raise SystemExit(f"usage: python tests/{os.path.basename(test_file)} --record")


def record_goldens(cases, golden):
    """Run ``cases`` on JAX 0.10.2 and store the outputs in ``golden`` (a test file's
    ``--record``)."""
    out = run_cases(cases, "jax")
    version = out.pop("__version__")
    if version != "0.10.2":
        raise SystemExit(f"this interpreter has jax {version}; the goldens need 0.10.2")
    golden.write_text(json.dumps({"jax_version": version, "devices": 8, "outputs": out},
                                 indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"recorded {len(out)} outputs in {golden}")
