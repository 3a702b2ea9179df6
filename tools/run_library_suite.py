"""Run a JAX library's own test suite on jaxlite, and print passed/failed per file.

    python tools/run_library_suite.py LIBRARY [--src DIR] [--version V] [--backend jaxlite|jax]
                                      [-j N] [--timeout S] [--only PATTERN] [--json OUT]
                                      [--pytest-args ARGS]

LIBRARY is one of optax, equinox, chex, diffrax, lineax, numpyro, flax (nnx, linen, core); the
installed version is the one tested. The tests come from the library's sdist (optax, numpyro,
flax: ``pip download``)
or from its GitHub release tarball for that version (the others, whose sdists carry no
tests), fetched once into ``~/.cache/jaxlite`` (``--cache DIR``); ``--src DIR`` uses a
directory already on disk holding the library's test folder (a checkout at the release
tag). Each test file runs in its own process as ``python -m jaxlite run -m pytest FILE``
(``import jax`` loads jaxlite; ``--backend jax`` runs it under the real jax, for
comparison); tools/_pytest_outcomes.py records each test as it finishes, so a file that
times out still reports the tests it ran. The summary line totals the files.

Requires pytest and the library's test dependencies in the running interpreter.
"""
from __future__ import annotations

import importlib.metadata
import pathlib
import shlex
import sys

from suite_runner import (fetch_github_tests, fetch_sdist, run_and_report, run_file,
                          suite_arguments)   # (tools/ is on sys.path)

_GH = "https://github.com/{repo}/archive/refs/tags/{tag}.tar.gz"

# name: (where the tests come from, GitHub repository and tag, test folder, file pattern)
LIBRARIES = {
    "optax": ("sdist", None, None, "optax", "*_test.py"),
    "numpyro": ("sdist", None, None, "test", "test_*.py"),
    # flax: its tests (the sdist ships them): nnx, linen, core and the utilities'
    "flax": ("sdist", None, None, "tests", "*test*.py"),
    "equinox": ("github", "patrick-kidger/equinox", "v{version}", "tests", "test_*.py"),
    "diffrax": ("github", "patrick-kidger/diffrax", "v{version}", "test", "test_*.py"),
    "lineax": ("github", "patrick-kidger/lineax", "v{version}", "tests", "test_*.py"),
    # chex's tests live beside its modules: the release's package folder is fetched (the
    # same code as the installed chex of that version)
    "chex": ("github", "google-deepmind/chex", "v{version}", "chex", "*_test.py"),
}


def test_files(library, src):
    """The test files of ``library`` under ``src`` (sorted)."""
    _, _, _, folder, pattern = LIBRARIES[library]
    return sorted((src / folder).rglob(pattern))


def main(argv=None):
    """Parse the arguments, fetch the tests, run them, print the table and the totals."""
    argv = list(sys.argv[1:] if argv is None else argv)
    p = suite_arguments(__doc__.splitlines()[0])
    p.add_argument("library", choices=sorted(LIBRARIES))
    p.add_argument("--src", default=None, help="a directory holding the library's tests")
    p.add_argument("--version", default=None, help="default: the installed version")
    args = p.parse_args(argv)
    kind, repo, tag, folder, _ = LIBRARIES[args.library]
    version = args.version or importlib.metadata.version(args.library)
    cache = pathlib.Path(args.cache)
    if args.src:
        src = pathlib.Path(args.src)
    elif kind == "sdist":
        src = fetch_sdist(args.library, version, cache)
    else:
        src = fetch_github_tests(_GH.format(repo=repo, tag=tag.format(version=version)),
                                 args.library, version, folder, cache)
    files = [f for f in test_files(args.library, src) if args.only in str(f)]
    extra = shlex.split(args.pytest_args)
    print(f"{args.library} {version} test suite on {args.backend}: {len(files)} files",
          flush=True)
    width = max([len(str(f.relative_to(src))) for f in files] + [30]) + 1
    return run_and_report(files, lambda f: run_file(src, f, args.backend, args.timeout,
                                                    extra), args, width)


if __name__ == "__main__":
    sys.exit(main())
