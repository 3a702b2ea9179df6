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

import importlib.metadata
import io
import pathlib
import sys
import tarfile
import urllib.request

from run_optax_suite import run_file

from suite_runner import run_and_report, suite_arguments  # (tools/ is on sys.path)

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
    p = suite_arguments(__doc__.splitlines()[0])
    p.add_argument("--src", default=None, help="a directory holding equinox's tests/")
    args = p.parse_args(argv)
    version = importlib.metadata.version("equinox")
    src = pathlib.Path(args.src) if args.src else fetch_tests(version,
                                                                 pathlib.Path(args.cache))
    files = sorted(f for f in (src / "tests").glob("test_*.py") if args.only in str(f))
    print(f"equinox {version} test suite on {args.backend}: {len(files)} files", flush=True)
    return run_and_report(files, lambda f: run_file(src, f, args.backend, args.timeout),
                          args, 40)


if __name__ == "__main__":
    sys.exit(main())
