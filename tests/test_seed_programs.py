"""The seed tutorials' single-device programs print on jaxlite what they print on JAX.

Each ``tests/seed_programs/s*.py`` is one snippet (or a few cells that share state) of a seed
notebook, written against ``import jax``. It runs twice, in subprocesses: with real jax
(``_run_with_jax.py``), and with jaxlite (``_run_with_jaxlite.py``, an import hook that
resolves ``jax`` and every ``jax.<sub>`` to the jaxlite module of the same path). Each
backend runs the programs in two batch processes, one program after another with fresh
globals and its own captured stdout (``_batch.py``), which keeps the file well under a
minute on two cores. Outputs must agree. Without jax the
jaxlite output is compared with ``<program>.expected``, the output recorded from JAX
(``python tests/test_seed_programs.py --record`` re-records it; the version is in
``seed_programs/JAX_VERSION``).

A program's ``# compare:`` header says how: ``exact`` (byte-identical stdout: used where the
computation is deterministic and jaxlite reproduces JAX's bits: threefry PRNG, elementwise
math, small reductions, jaxpr text, reprs) or ``close rtol=R atol=A -- reason`` (numbers are
parsed and compared within the tolerance, the text between them must match up to
whitespace, since NumPy's column padding follows the digits). ``close`` is only for results
whose last bits depend on the order of a long float32 sum (BLAS vs XLA matmuls) or on
LAPACK (nonsymmetric eigenvalues); each program says why.
"""
import concurrent.futures
import difflib
import importlib.util
import json
import os
import pathlib
import re
import subprocess
import sys
import tempfile

import pytest

HERE = pathlib.Path(__file__).resolve().parent
PROGRAMS_DIR = HERE / "seed_programs"
RUNNER = PROGRAMS_DIR / "_run_with_jaxlite.py"
JAX_RUNNER = PROGRAMS_DIR / "_run_with_jax.py"
# s*.py run on one CPU device; m*.py (the seeds' multi-device cells) on 8 simulated devices
SINGLE = sorted(PROGRAMS_DIR.glob("s[0-9]*.py"))
MULTI = sorted(PROGRAMS_DIR.glob("m[0-9]*.py"))
PROGRAMS = SINGLE + MULTI


def _have_jax():
    try:
        return importlib.util.find_spec("jax") is not None
    except (ImportError, ValueError):  # e.g. sys.modules["jax"] = None blocks it
        return False


HAVE_JAX = _have_jax()
TIMEOUT = 600

_NUMBER = re.compile(r"[-+]?(?:\d+\.\d*(?:[eE][-+]?\d+)?|\.\d+(?:[eE][-+]?\d+)?"
                     r"|\d+[eE][-+]?\d+|\d+)|[-+]?\b(?:nan|inf)\b")


def _env(devices=None):
    env = dict(os.environ)
    env.pop("XLA_FLAGS", None)
    env.pop("JAXLITE_NUM_CPU_DEVICES", None)
    if devices:
        env["XLA_FLAGS"] = f"--xla_force_host_platform_device_count={devices}"
    env.update(JAX_PLATFORMS="cpu", PYTHONHASHSEED="0", PYTHONIOENCODING="utf-8",
               TF_CPP_MIN_LOG_LEVEL="3")
    # the jaxlite of this checkout (not whichever one an editable install points at)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(HERE.parent), env.get("PYTHONPATH"))
                                        if p)
    return env


def _batches(programs):
    """(programs, device count) batches: the single-device programs in two halves, the
    multi-device ones in a process of their own."""
    single = [p for p in programs if p.name.startswith("s")]
    multi = [p for p in programs if p.name.startswith("m")]
    out = [(single[0::2], None), (single[1::2], None)]
    if multi:
        out.append((multi, 8))
    return out


def run_batch(runner, programs, devices=None):
    """{program path: (stdout, traceback or None)} of ``programs`` run by ``runner``."""
    if not programs:
        return {}
    with tempfile.TemporaryDirectory() as tmp:
        out = pathlib.Path(tmp) / "out.json"
        proc = subprocess.run([sys.executable, str(runner), "--json", str(out),
                               *map(str, programs)], capture_output=True, text=True,
                              env=_env(devices), cwd=str(PROGRAMS_DIR), timeout=TIMEOUT)
        if proc.returncode != 0 or not out.exists():
            raise AssertionError(f"{runner.name} failed (exit {proc.returncode}):\n"
                                 f"{proc.stdout}\n{proc.stderr}")
        return {pathlib.Path(k): tuple(v) for k, v in json.loads(out.read_text()).items()}


def _output(results, program, backend):
    out, error = results[program]
    assert error is None, f"{program.name} raised with {backend}:\n{error}"
    return out


@pytest.fixture(scope="module")
def runs():
    """Each backend runs the programs in two interleaved batches (two processes in flight:
    the machine has two cores); returns {backend: {program: (stdout, error)}}."""
    jobs = [("jaxlite", RUNNER)] + ([("jax", JAX_RUNNER)] if HAVE_JAX else [])
    with concurrent.futures.ThreadPoolExecutor(2) as ex:
        futures = [(name, ex.submit(run_batch, runner,
                                    [p for p in progs if name == "jaxlite" or
                                     not golden_only(p)], devs))
                   for progs, devs in _batches(PROGRAMS) for name, runner in jobs]
        results = {name: {} for name, _ in jobs}
        for name, fut in futures:
            results[name].update(fut.result())
    return results


def golden_only(program):
    """Programs of seed-era APIs that current JAX removed (``# golden: jax 0.4.30``) are
    compared with their recorded output only; they are recorded with that release."""
    return any(re.match(r"#\s*golden:", line)
               for line in pathlib.Path(program).read_text().splitlines())


def compare_mode(program):
    """``("exact", None)`` or ``("close", (rtol, atol))`` from the program's header."""
    for line in pathlib.Path(program).read_text().splitlines():
        m = re.match(r"#\s*compare:\s*(\w+)(.*)", line)
        if m:
            if m.group(1) == "exact":
                return "exact", None
            if m.group(1) == "close":
                tol = dict(re.findall(r"(rtol|atol)=([0-9.eE+-]+)", m.group(2)))
                assert "--" in m.group(2), f"{program}: 'close' needs a '-- reason'"
                return "close", (float(tol["rtol"]), float(tol["atol"]))
            raise ValueError(f"{program}: unknown compare mode {m.group(1)!r}")
    raise ValueError(f"{program}: no '# compare:' header")


def _split_numbers(text):
    """(text pieces with whitespace removed, numbers) of ``text``."""
    pieces, numbers, pos = [], [], 0
    for m in _NUMBER.finditer(text):
        pieces.append("".join(text[pos:m.start()].split()))
        numbers.append(float(m.group()))
        pos = m.end()
    pieces.append("".join(text[pos:].split()))
    return pieces, numbers


_DEVICE_SET = re.compile(r"\{(?:CpuDevice\(id=\d+\)(?:, )?)+\}")


def canonical_device_sets(text):
    """``text`` with each printed set of devices in id order: a set prints in the order of
    its elements' hashes, which differ between JAX and jaxlite (so such lines are compared
    as sets)."""
    def canon(m):
        ids = sorted(int(i) for i in re.findall(r"id=(\d+)", m.group()))
        return "{" + ", ".join(f"CpuDevice(id={i})" for i in ids) + "}"
    return _DEVICE_SET.sub(canon, text)


def outputs_differ(ours, theirs, mode, tol):
    """A description of how ``ours`` differs from ``theirs`` (None when they agree)."""
    ours, theirs = canonical_device_sets(ours), canonical_device_sets(theirs)
    if ours == theirs:
        return None
    diff = "\n".join(difflib.unified_diff(theirs.splitlines(), ours.splitlines(),
                                          "jax", "jaxlite", lineterm=""))
    if mode == "exact":
        return "outputs differ:\n" + diff
    (t_ours, n_ours), (t_theirs, n_theirs) = _split_numbers(ours), _split_numbers(theirs)
    if t_ours != t_theirs or len(n_ours) != len(n_theirs):
        return "outputs differ beyond numbers:\n" + diff
    rtol, atol = tol
    bad = [(i, a, b) for i, (a, b) in enumerate(zip(n_ours, n_theirs))
           if not (a == b or abs(a - b) <= atol + rtol * abs(b))]
    if bad:
        i, a, b = max(bad, key=lambda t: abs(t[1] - t[2]) / (atol + rtol * abs(t[2])))
        return (f"{len(bad)} numbers differ beyond rtol={rtol} atol={atol}; worst: number "
                f"#{i} jaxlite {a!r} vs jax {b!r}\n{diff}")
    return None


def _expected_path(program):
    return program.with_suffix(".expected")


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.stem)
def test_seed_program_prints_what_jax_prints(program, runs):
    mode, tol = compare_mode(program)
    ours = _output(runs["jaxlite"], program, "jaxlite")
    if "jax" in runs and not golden_only(program):
        theirs, source = _output(runs["jax"], program, "jax"), "jax"
    else:
        theirs, source = _expected_path(program).read_text(encoding="utf-8"), "golden"
    problem = outputs_differ(ours, theirs, mode, tol)
    assert problem is None, f"{program.name} (vs {source}): {problem}"


def test_goldens_match_installed_jax(runs):
    """The recorded outputs are what the installed JAX prints (same version only)."""
    jax = pytest.importorskip("jax")
    recorded = (PROGRAMS_DIR / "JAX_VERSION").read_text().strip()
    if jax.__version__ != recorded:
        pytest.skip(f"goldens recorded with jax {recorded}, installed {jax.__version__}")
    for program in PROGRAMS:
        if golden_only(program):
            continue
        mode, tol = compare_mode(program)
        golden = _expected_path(program).read_text(encoding="utf-8")
        problem = outputs_differ(_output(runs["jax"], program, "jax"), golden, mode, tol)
        assert problem is None, f"{program.name}: golden is stale: {problem}"


def test_every_program_has_a_golden():
    assert PROGRAMS, "no seed programs found"
    missing = [p.name for p in PROGRAMS if not _expected_path(p).exists()]
    assert missing == []


def test_number_comparison_catches_differences():
    assert outputs_differ("[1.0 2.0]", "[1.0  2.0]", "close", (1e-6, 0)) is None
    assert outputs_differ("[1.0000001 2.]", "[1. 2.]", "close", (1e-6, 0)) is None
    assert outputs_differ("[1.0001 2.]", "[1. 2.]", "close", (1e-6, 0)) is not None
    assert outputs_differ("a:f32[3]", "a:f64[3]", "close", (1e-6, 0)) is not None
    assert outputs_differ("Array(1., dtype=float32)", "Array(1., dtype=int32)", "close",
                          (1e-6, 0)) is not None
    assert outputs_differ("[1. 2.]", "[1.  2.]", "exact", None) is not None
    a = "{CpuDevice(id=1), CpuDevice(id=0)}"
    assert outputs_differ(a, "{CpuDevice(id=0), CpuDevice(id=1)}", "exact", None) is None
    assert outputs_differ(a, "{CpuDevice(id=0), CpuDevice(id=2)}", "exact", None) is not None
    assert outputs_differ(a, "{CpuDevice(id=0)}", "exact", None) is not None


def _record():
    """Record every program's JAX output as its golden ``.expected`` file."""
    import jax
    with concurrent.futures.ThreadPoolExecutor(2) as ex:
        parts = list(ex.map(lambda b: run_batch(JAX_RUNNER, *b),
                            _batches([p for p in PROGRAMS if not golden_only(p)])))
    results = {k: v for part in parts for k, v in part.items()}
    for program in results:
        _expected_path(program).write_text(_output(results, program, "jax"), encoding="utf-8")
    (PROGRAMS_DIR / "JAX_VERSION").write_text(jax.__version__ + "\n")
    print(f"recorded {len(PROGRAMS)} goldens with jax {jax.__version__}")


if __name__ == "__main__":
    if sys.argv[1:] == ["--record"]:
        _record()
    else:
        sys.exit("usage: python tests/test_seed_programs.py --record")
