"""The shared driver of tools/run_*_suite.py: fetch a library's tests (its sdist from PyPI,
or the tests of its GitHub release), run the test files on jaxlite (or JAX), one pytest
process per file, and print passed/failed per file and in total."""
from __future__ import annotations

import argparse
import concurrent.futures
import io
import json
import os
import pathlib
import subprocess
import sys
import tarfile
import tempfile
import time
import urllib.request

ROOT = pathlib.Path(__file__).resolve().parents[1]


def suite_arguments(description):
    """The options every suite runner takes (``--backend``, ``--jobs``, ``--timeout``,
    ``--only``, ``--cache``, ``--json``, ``--pytest-args``)."""
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--backend", choices=("jaxlite", "jax"), default="jaxlite")
    p.add_argument("-j", "--jobs", type=int, default=1)
    p.add_argument("--timeout", type=float, default=900)
    p.add_argument("--only", default="", help="run only files whose path contains this")
    p.add_argument("--cache", default=str(pathlib.Path.home() / ".cache" / "jaxlite"))
    p.add_argument("--json", default=None, help="write the per-file results here")
    p.add_argument("--pytest-args", default="",
                   help="more pytest arguments, e.g. '-x -k \"not slow\"' (split by shlex)")
    return p


def fetch_sdist(package, version, cache):
    """Download (``pip download --no-binary :all: --no-deps``) and unpack ``package``'s
    sdist once into ``cache``; returns the unpacked source directory."""
    cache.mkdir(parents=True, exist_ok=True)
    src = cache / f"{package}-{version}"
    if src.is_dir():
        return src
    tarball = cache / f"{package}-{version}.tar.gz"
    if not tarball.exists():
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-binary", ":all:",
                        "--no-deps", f"{package}=={version}", "-d", str(cache)], check=True)
    with tarfile.open(tarball) as tf:
        tf.extractall(cache, filter="data")
    return src


def fetch_github_tests(url, name, version, tests_dir, cache):
    """The directory holding the ``tests_dir`` folder of a GitHub release tarball (``url``),
    downloaded once into ``cache/<name>-<version>-tests``."""
    dest = cache / f"{name}-{version}-tests"
    if (dest / tests_dir).is_dir():
        return dest
    try:
        with urllib.request.urlopen(url, timeout=120) as r:
            data = r.read()
    except OSError as e:
        raise SystemExit(f"could not download {url} ({e}); clone {name} at its tag for "
                         f"version {version} and pass its directory with --src") from None
    dest.mkdir(parents=True, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(data)) as tf:
        members = []
        for m in tf.getmembers():
            parts = pathlib.PurePosixPath(m.name).parts
            if len(parts) > 1 and parts[1] == tests_dir:
                m.name = str(pathlib.PurePosixPath(*parts[1:]))
                members.append(m)
        tf.extractall(dest, members=members, filter="data")
    return dest


def run_file(src, test_file, backend, timeout, extra_args=()):
    """Run one test file (in ``src``, which goes first on the path); returns a dict of counts
    (passed, failed, errors, skipped), a status ('ok', 'crashed', 'timeout', 'exit N') and
    the ids of the failed tests. With ``backend='jaxlite'`` the file runs as ``python -m
    jaxlite run -m pytest FILE`` (``import jax`` loads jaxlite), else under the real jax."""
    with tempfile.TemporaryDirectory() as tmp:
        outcomes = pathlib.Path(tmp) / "outcomes.txt"
        pytest_args = ["-m", "pytest", "-q", "-p", "no:cacheprovider", "--tb=no",
                       "-p", "_pytest_outcomes", *extra_args, str(test_file)]
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


def run_and_report(files, run_one, args, width):
    """Run ``run_one(file)`` (a result dict: file, status, passed, failed, errors, skipped,
    seconds) over ``files`` on ``args.jobs`` threads, printing each file's line as it ends
    and the totals; writes the results to ``args.json`` when given. Returns 0."""
    results = []
    with concurrent.futures.ThreadPoolExecutor(max(1, args.jobs)) as ex:
        futs = [ex.submit(run_one, f) for f in files]
        for fut in concurrent.futures.as_completed(futs):
            r = fut.result()
            results.append(r)
            flag = "" if r["status"] == "ok" else f"  [{r['status']}]"
            print(f"{r['file']:{width}s} passed {r['passed']:4d}  failed {r['failed']:4d}  "
                  f"errors {r['errors']:3d}  skipped {r['skipped']:3d}  "
                  f"{r['seconds']:7.1f}s{flag}", flush=True)
    tot = {k: sum(r[k] for r in results) for k in ("passed", "failed", "errors", "skipped")}
    green = sum(1 for r in results if r["status"] == "ok" and not r["failed"]
                and not r["errors"])
    print(f"TOTAL passed {tot['passed']}  failed {tot['failed']}  errors {tot['errors']}  "
          f"skipped {tot['skipped']}  files fully passing {green}/{len(results)}")
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(sorted(results, key=lambda r: r["file"]),
                                                      indent=1))
    return 0
