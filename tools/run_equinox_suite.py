"""Run equinox's own test suite on jaxlite, and print passed/failed per file.

    python tools/run_equinox_suite.py [--src DIR] [--backend jaxlite|jax] [-j N]
                                      [--timeout S] [--only PATTERN] [--json OUT]

equinox's sdist has no tests, so they come from its GitHub release matching the installed
equinox (``v<version>`` tag): the tarball is downloaded once into
``~/.cache/jaxlite/equinox-<version>-tests`` (or ``--cache DIR``); ``--src DIR`` uses a
checkout already on disk (a directory holding equinox's ``tests/``). The installed equinox
is the one tested. Each file runs in its own process, as tools/run_optax_suite.py runs
optax's (``python -m jaxlite run -m pytest FILE``: ``import jax`` loads jaxlite); the
summary line totals the files.

Requires pytest and equinox's test dependencies (optax, beartype, jaxtyping) in the running
interpreter.
"""
from __future__ import annotations

import argparse
import concurrent.futures
import importlib.metadata
import io
import json
import pathlib
import sys
import tarfile
import urllib.request

from run_optax_suite import run_file

URL = "https://github.com/patrick-kidger/equinox/archive/refs/tags/v{version}.tar.gz"


def fetch_tests(version, cache):
    """The directory holding equinox's ``tests/`` for ``version`` (downloaded once)."""
    dest = cache / f"equinox-{version}-tests"
    if (dest / "tests").is_dir():
        return dest
    url = URL.format(version=version)
    try:
        with urllib.request.urlopen(url, timeout=120) as r:
            data = r.read()
    except OSError as e:
        raise SystemExit(f"could not download {url} ({e}); clone equinox at tag "
                         f"v{version} and pass its directory with --src") from None
    dest.mkdir(parents=True, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(data)) as tf:
        members = []
        for m in tf.getmembers():
            parts = pathlib.PurePosixPath(m.name).parts
            if len(parts) > 1 and parts[1] == "tests":
                m.name = str(pathlib.PurePosixPath(*parts[1:]))
                members.append(m)
        tf.extractall(dest, members=members, filter="data")
    return dest


def main(argv=None):
    """Parse the arguments, run the suite, print the table and the totals."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--src", default=None, help="a directory holding equinox's tests/")
    p.add_argument("--backend", choices=("jaxlite", "jax"), default="jaxlite")
    p.add_argument("-j", "--jobs", type=int, default=1)
    p.add_argument("--timeout", type=float, default=900)
    p.add_argument("--only", default="", help="run only files whose path contains this")
    p.add_argument("--cache", default=str(pathlib.Path.home() / ".cache" / "jaxlite"))
    p.add_argument("--json", default=None, help="write the per-file results here")
    args = p.parse_args(argv)
    version = importlib.metadata.version("equinox")
    src = pathlib.Path(args.src) if args.src else fetch_tests(version,
                                                                 pathlib.Path(args.cache))
    files = sorted(f for f in (src / "tests").glob("test_*.py") if args.only in str(f))
    print(f"equinox {version} test suite on {args.backend}: {len(files)} files", flush=True)
    results = []
    with concurrent.futures.ThreadPoolExecutor(max(1, args.jobs)) as ex:
        futs = [ex.submit(run_file, src, f, args.backend, args.timeout) for f in files]
        for fut in concurrent.futures.as_completed(futs):
            r = fut.result()
            results.append(r)
            flag = "" if r["status"] == "ok" else f"  [{r['status']}]"
            print(f"{r['file']:40s} passed {r['passed']:4d}  failed {r['failed']:4d}  "
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


if __name__ == "__main__":
    sys.exit(main())
