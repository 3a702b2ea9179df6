"""A pytest plugin for tools/run_optax_suite.py: appends ``outcome<TAB>test id`` for every
test as soon as it finishes to the file named by ``$JAXLITE_OUTCOMES``, so that a file that
times out still reports the tests it ran."""
import os


def pytest_runtest_logreport(report):
    """Record the outcome of a test (its call phase; setup errors and skips too)."""
    path = os.environ.get("JAXLITE_OUTCOMES")
    if not path:
        return
    if report.when == "call" or (report.when == "setup" and not report.passed):
        outcome = "error" if report.when == "setup" and report.failed else report.outcome
        with open(path, "a", encoding="utf-8") as f:
            f.write(f"{outcome}\t{report.nodeid}\n")
