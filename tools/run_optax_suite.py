"""Run optax's own test suite (from its sdist) on jaxlite, and print passed/failed per file.

    python tools/run_optax_suite.py [--version 0.2.8] [--backend jaxlite|jax] [-j N]
                                    [--timeout S] [--only PATTERN] [--json OUT]

The sdist is fetched once with ``pip download --no-binary :all: --no-deps optax==VERSION``
into ``~/.cache/jaxlite/optax-VERSION`` (or ``--cache DIR``) and unpacked there. Each test
file runs in its own process: with ``--backend jaxlite`` (the default) as
``python -m jaxlite run -m pytest FILE`` (``import jax`` loads jaxlite, no real jax is
loaded), with ``--backend jax`` under the real jax, for comparison. A small pytest plugin
(tools/_pytest_outcomes.py, recording each test as it finishes) gives the passed/failed/
skipped/error counts of each file, also of a file that times out (reported as such, with the
tests it got through). The summary line totals them.

Requires pytest, absl-py and chex in the running interpreter (optax's test dependencies).
"""
from __future__ import annotations

import os
import pathlib
import subprocess
import sys
import tarfile
import tempfile
import time

from suite_runner import run_and_report, suite_arguments  # (tools/ is on sys.path)

ROOT = pathlib.Path(__file__).resolve().parents[1]


def fetch_sdist(version, cache):
    """Download and unpack optax's sdist; returns the unpacked source directory."""
    cache.mkdir(parents=True, exist_ok=True)
    src = cache / f"optax-{version}"
    if (src / "optax").is_dir():
        return src
    tarball = cache / f"optax-{version}.tar.gz"
    if not tarball.exists():
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-binary", ":all:",
                        "--no-deps", f"optax=={version}", "-d", str(cache)], check=True)
    with tarfile.open(tarball) as tf:
        tf.extractall(cache, filter="data")
    return src


def run_file(src, test_file, backend, timeout):
    """Run one test file; returns a dict of counts (passed, failed, errors, skipped) and a
    status ('ok', 'crashed', 'timeout')."""
    with tempfile.TemporaryDirectory() as tmp:
        outcomes = pathlib.Path(tmp) / "outcomes.txt"
        pytest_args = ["-m", "pytest", "-q", "-p", "no:cacheprovider", "--tb=no",
                       "-p", "_pytest_outcomes", str(test_file)]
        if backend == "jaxlite":
            cmd = [sys.executable, "-m", "jaxlite", "run"] + pytest_args
        else:
            cmd = [sys.executable] + pytest_args
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(
            [str(src), str(ROOT), str(ROOT / "tools")] +
            ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
        env["JAXLITE_OUTCOMES"] = str(outcomes)
        env.setdefault("OPENBLAS_NUM_THREADS", "1")
        t0 = time.perf_counter()
        try:
            proc = subprocess.run(cmd, cwd=src, env=env, capture_output=True, text=True,
                                  timeout=timeout)
            status = "ok"
        except subprocess.TimeoutExpired:
            proc, status = None, "timeout"
        elapsed = time.perf_counter() - t0
        counts = {"passed": 0, "failed": 0, "errors": 0, "skipped": 0}
        failed_ids = []
        # one outcome per test: a test with subtests reports several times, and fails when
        # any of its reports does
        worst = {}
        rank = {"passed": 0, "skipped": 1, "failed": 2, "errors": 3}
        if outcomes.exists():
            for line in outcomes.read_text(encoding="utf-8").splitlines():
                outcome, _, nodeid = line.partition("\t")
                key = {"passed": "passed", "failed": "failed", "skipped": "skipped"}.get(
                    outcome, "errors")
                if rank[key] >= rank.get(worst.get(nodeid), -1):
                    worst[nodeid] = key
        for nodeid, key in worst.items():
            counts[key] += 1
            if key in ("failed", "errors"):
                failed_ids.append(nodeid)
        if status == "ok" and proc.returncode not in (0, 1, 5):   # 5: nothing collected
            status = "crashed" if not any(counts.values()) else f"exit {proc.returncode}"
        tail = "" if proc is None else (proc.stdout + proc.stderr)[-2000:]
        return {"file": str(test_file.relative_to(src)), "status": status,
                "seconds": round(elapsed, 1), **counts, "failed_tests": failed_ids,
                "tail": tail}


def main(argv=None):
    """Parse the arguments, run the suite, print the table and the totals."""
    p = suite_arguments(__doc__.splitlines()[0])
    p.add_argument("--version", default="0.2.8")
    args = p.parse_args(argv)
    src = fetch_sdist(args.version, pathlib.Path(args.cache))
    files = sorted(f for f in (src / "optax").rglob("*_test.py") if args.only in str(f))
    print(f"optax {args.version} test suite on {args.backend}: {len(files)} files", flush=True)
    return run_and_report(files, lambda f: run_file(src, f, args.backend, args.timeout),
                          args, 60)


if __name__ == "__main__":
    sys.exit(main())
