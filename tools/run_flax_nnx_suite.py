"""Run flax.nnx's own test suite on jaxlite, and print passed/failed per file.

    python tools/run_flax_nnx_suite.py [--src DIR] [--backend jaxlite|jax] [-j N]
                                       [--timeout S] [--only PATTERN] [--json OUT]

The tests come from flax's sdist matching the installed flax (it ships ``tests/nnx``),
fetched once into ``~/.cache/jaxlite`` (or ``--cache DIR``); ``--src DIR`` uses a directory
already on disk that holds flax's ``tests/``. Each file runs in its own process (``python -m
jaxlite run -m pytest FILE``: ``import jax`` loads jaxlite); the summary line totals the
files. (This is ``tools/run_library_suite.py flax``.)

Requires pytest and flax's test dependencies (absl-py, optax) in the running interpreter.
"""
from __future__ import annotations

import sys

from run_library_suite import main as run_library   # (tools/ is on sys.path)


def main(argv=None):
    """Run flax's nnx suite: ``run_library_suite.py flax`` with these arguments."""
    return run_library(["flax"] + list(sys.argv[1:] if argv is None else argv))


if __name__ == "__main__":
    sys.exit(main())
