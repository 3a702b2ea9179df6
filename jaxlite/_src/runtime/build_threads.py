"""Background compilations that leave the user's warning state alone.

numba's compiler enters ``warnings.catch_warnings()`` (and sets filters) around every typing
step. On Python before 3.14 that state is the process's, not the thread's: a numba build on
a background thread, entering and leaving it while the user's thread is inside its own
``warnings.catch_warnings()`` (or ``pytest.warns``), restores the user's filters from the
wrong moment, so the user's warnings are lost or shown after all. Threads started here run
their target with numba's ``warnings`` name pointing at a view that, on such a thread, keeps
the process's state untouched: entering ``catch_warnings`` records nothing, filter calls and
warnings of the build are dropped. On every other thread the view is ``warnings`` itself.
"""
from __future__ import annotations

import atexit
import sys
import threading
import types
import warnings
import weakref

__all__ = ["start", "on_build_thread", "shield_numba"]

_local = threading.local()
_running = weakref.WeakSet()      # builds still running


def on_build_thread() -> bool:
    """Whether the calling thread is a background build started by ``start``."""
    return getattr(_local, "on", False)


class _Untouched:
    """``catch_warnings`` on a build thread: touches nothing, records nothing."""

    def __init__(self, record):
        self.record = record

    def __enter__(self):
        return [] if self.record else None

    def __exit__(self, *exc):
        return False


class _WarningsView(types.ModuleType):
    """``warnings`` as numba's modules see it: itself, except on build threads."""

    def __getattr__(self, name):
        return getattr(warnings, name)

    def catch_warnings(self, *args, **kwargs):
        """``warnings.catch_warnings``; a no-op (recording nothing) on a build thread."""
        if on_build_thread():
            return _Untouched(kwargs.get("record", False))
        return warnings.catch_warnings(*args, **kwargs)

    def simplefilter(self, *args, **kwargs):
        """``warnings.simplefilter``; dropped on a build thread."""
        if not on_build_thread():
            warnings.simplefilter(*args, **kwargs)

    def filterwarnings(self, *args, **kwargs):
        """``warnings.filterwarnings``; dropped on a build thread."""
        if not on_build_thread():
            warnings.filterwarnings(*args, **kwargs)

    def warn(self, message, category=None, stacklevel=1, **kwargs):
        """``warnings.warn`` (pointing at the same caller); dropped on a build thread."""
        if not on_build_thread():
            warnings.warn(message, category, stacklevel + 1, **kwargs)

    def warn_explicit(self, *args, **kwargs):
        """``warnings.warn_explicit``; dropped on a build thread."""
        if not on_build_thread():
            warnings.warn_explicit(*args, **kwargs)


_VIEW = _WarningsView("warnings")


def shield_numba():
    """Point the ``warnings`` name of every numba module imported so far at the view (call
    it after importing numba on a build thread)."""
    for name, mod in list(sys.modules.items()):
        if (name == "numba" or name.startswith("numba.")) and \
                getattr(mod, "warnings", None) is warnings:
            mod.warnings = _VIEW


def _run(target, args):
    _local.on = True
    shield_numba()
    try:
        target(*args)
    finally:
        shield_numba()    # (modules the build imported)


def start(target, name, args=()) -> threading.Thread:
    """Run ``target(*args)`` on a daemon thread named ``name`` whose numba compilations
    leave the process's warning state alone; the interpreter waits (30 s at most) for it
    at exit, as numba compiling in a daemon thread at shutdown can crash it."""
    t = threading.Thread(target=_run, args=(target, args), daemon=True, name=name)
    _running.add(t)
    t.start()
    return t


@atexit.register
def _join_builds():
    for t in list(_running):
        t.join(timeout=30)
