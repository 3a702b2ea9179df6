"""Run equinox's own test suite on jaxlite, and print passed/failed per file.

    python tools/run_equinox_suite.py [--src DIR] [--backend jaxlite|jax] [-j N]
                                      [--timeout S] [--only PATTERN] [--json OUT]

equinox's sdist has no tests, so they come from its GitHub release matching the installed
equinox (``v<version>`` tag): the tarball is downloaded once into
``~/.cache/jaxlite/equinox-<version>-tests`` (or ``--cache DIR``); ``--src DIR`` uses a
checkout already on disk (a directory holding equinox's ``tests/``). The installed equinox
is the one tested. Each file runs in its own process, as tools/run_optax_suite.py runs
optax's (``python -m jaxlite run -m pytest FILE``: ``import jax`` loads jaxlite); the
summary line totals the files. (This is ``tools/run_library_suite.py equinox``.)

Requires pytest and equinox's test dependencies (optax, beartype, jaxtyping) in the running
interpreter.
"""
from __future__ import annotations

import sys

from run_library_suite import main as run_library   # (tools/ is on sys.path)


def main(argv=None):
    """Run equinox's suite: ``run_library_suite.py equinox`` with these arguments."""
    return run_library(["equinox"] + list(sys.argv[1:] if argv is None else argv))


if __name__ == "__main__":
    sys.exit(main())
