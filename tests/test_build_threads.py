"""Background kernel builds leave the user's warning state alone: numba enters
``warnings.catch_warnings`` while typing, which (before Python 3.14) is process-wide, so a
build racing the user's own ``catch_warnings`` / ``pytest.warns`` used to lose their warnings."""
import threading
import time
import warnings

import numpy as np
import pytest

from jaxlite._src.runtime import build_threads

numba = pytest.importorskip("numba")


def _compile_some(n):
    for k in range(n):
        src = ("def f(x):\n    s = 0.0\n" +
               "".join(f"    s += np.sin(x[{i}]) * {i + k}\n" for i in range(30)) +
               "    return s\n")
        ns = {"np": np}
        exec(src, ns)
        numba.njit(ns["f"])(np.ones(40))


def test_user_catch_warnings_survives_a_background_build():
    t = build_threads.start(_compile_some, "jaxlite-test-build", args=(4,))
    lost = tries = 0
    deadline = time.monotonic() + 240
    while (t.is_alive() or tries == 0) and time.monotonic() < deadline:
        with warnings.catch_warnings(record=True) as got:
            warnings.simplefilter("always")
            warnings.warn("mine", UserWarning)
        tries += 1
        lost += not got
    t.join(timeout=60)
    assert not t.is_alive()
    assert tries > 1000 and lost == 0, (tries, lost)
    # the user's filters are the same afterwards
    before = list(warnings.filters)
    build_threads.start(_compile_some, "jaxlite-test-build", args=(1,)).join(timeout=120)
    assert warnings.filters == before


def test_the_view_is_warnings_itself_off_build_threads():
    from numba.core import errors
    t = build_threads.start(lambda: None, "jaxlite-test-build")
    t.join()
    assert errors.warnings.catch_warnings is not warnings.catch_warnings   # (shielded)
    assert not build_threads.on_build_thread()
    with pytest.warns(UserWarning, match="through the view"):
        errors.warnings.warn("through the view", UserWarning)
    with errors.warnings.catch_warnings(record=True) as got:
        errors.warnings.simplefilter("always")
        warnings.warn("recorded", RuntimeWarning)
    assert [str(w.message) for w in got] == ["recorded"]
    seen = []
    plain = threading.Thread(target=lambda: seen.append(build_threads.on_build_thread()))
    plain.start()
    plain.join(timeout=60)
    build_threads.start(lambda: seen.append(build_threads.on_build_thread()),
                        "jaxlite-test-build").join(timeout=60)
    assert sorted(seen) == [False, True]
