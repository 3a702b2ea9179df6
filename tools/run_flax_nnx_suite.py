"""Run flax.nnx's own test suite on jaxlite, and print passed/failed per file.

    python tools/run_flax_nnx_suite.py [--src DIR] [--backend jaxlite|jax] [-j N]
                                       [--timeout S] [--only PATTERN] [--json OUT]

The tests come from flax's sdist matching the installed flax (it ships ``tests/nnx``):
``pip download`` fetches it once into ``~/.cache/jaxlite/flax-<version>`` (or ``--cache
DIR``); ``--src DIR`` uses a directory already on disk that holds flax's ``tests/``. The
installed flax is the one tested. Each file runs in its own process, as
tools/run_optax_suite.py runs optax's (``python -m jaxlite run -m pytest FILE``: ``import
jax`` loads jaxlite); the summary line totals the files.

Requires pytest and flax's test dependencies (absl-py, optax) in the running interpreter.
"""
from __future__ import annotations

import importlib.metadata
import pathlib
import subprocess
import sys
import tarfile

from run_optax_suite import run_file

from suite_runner import run_and_report, suite_arguments  # (tools/ is on sys.path)


def fetch_tests(version, cache):
    """The directory holding flax's ``tests/`` for ``version`` (its sdist, fetched once)."""
    dest = cache / f"flax-{version}"
    if (dest / "tests" / "nnx").is_dir():
        return dest
    cache.mkdir(parents=True, exist_ok=True)
    sdist = cache / f"flax-{version}.tar.gz"
    if not sdist.exists():
        proc = subprocess.run([sys.executable, "-m", "pip", "download", f"flax=={version}",
                               "--no-deps", "--no-binary", ":all:", "-d", str(cache)],
                              capture_output=True, text=True)
        if proc.returncode or not sdist.exists():
            raise SystemExit(f"could not download flax {version}'s sdist:\n"
                             f"{proc.stderr[-1500:]}\npass a directory holding flax's "
                             "tests/ with --src")
    with tarfile.open(sdist) as tf:
        tf.extractall(cache, filter="data")
    return dest


def main(argv=None):
    """Parse the arguments, run the suite, print the table and the totals."""
    p = suite_arguments(__doc__.splitlines()[0])
    p.add_argument("--src", default=None, help="a directory holding flax's tests/")
    args = p.parse_args(argv)
    version = importlib.metadata.version("flax")
    src = pathlib.Path(args.src) if args.src else fetch_tests(version,
                                                                 pathlib.Path(args.cache))
    files = sorted(f for f in (src / "tests" / "nnx").rglob("*test*.py")
                   if args.only in str(f))
    print(f"flax {version} nnx test suite on {args.backend}: {len(files)} files", flush=True)
    return run_and_report(files, lambda f: run_file(src, f, args.backend, args.timeout),
                          args, 44)


if __name__ == "__main__":
    sys.exit(main())
