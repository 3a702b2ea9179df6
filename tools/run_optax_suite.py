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
tests it got through). The summary line totals them. (tools/run_library_suite.py runs the
other libraries' suites the same way.)

Requires pytest, absl-py and chex in the running interpreter (optax's test dependencies).
"""
from __future__ import annotations

import sys

from run_library_suite import main as run_library   # (tools/ is on sys.path)


def main(argv=None):
    """Run optax's suite: ``run_library_suite.py optax`` with these arguments."""
    return run_library(["optax"] + list(sys.argv[1:] if argv is None else argv))


if __name__ == "__main__":
    sys.exit(main())
