"""Source information: the user's frame that created a value or an equation.

jaxlite's own frames are skipped, so errors and jaxprs point at the user's code.
"""
from __future__ import annotations

import contextlib
import os
import sys
import threading

_PKG_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_SKIP_PREFIXES = (_PKG_DIR + os.sep,)
_filename_cache: dict[str, bool] = {}


def _under(filename: str, prefixes) -> bool:
    # (jaxlite's tests and tour are user code, though they sit in its tree)
    return filename.startswith(prefixes) and os.sep + "tests" + os.sep not in filename \
        and not filename.endswith("tour.py")


def _is_internal(filename: str) -> bool:
    r = _filename_cache.get(filename)
    if r is None:
        r = _under(filename, _SKIP_PREFIXES) or filename.startswith(("<jaxlite", "<frozen"))
        _filename_cache[filename] = r
    return r


def is_own_file(filename: str) -> bool:
    """Whether ``filename`` is jaxlite's own (its package's modules, the source it
    generates), not counting the libraries that registered their directories."""
    return _under(filename, _SKIP_PREFIXES[0]) or filename.startswith("<jaxlite")


def register_exclusion(path: str):
    """Treat frames of files under ``path`` (a library's directory) as internal: source
    information then names the library's caller (JAX's ``source_info_util`` convention)."""
    global _SKIP_PREFIXES
    path = os.path.abspath(path)
    if path not in _SKIP_PREFIXES:
        _SKIP_PREFIXES = _SKIP_PREFIXES + (path,)
        _filename_cache.clear()


class SourceInfo:
    """Where in user code something happened: file, line and function name."""
    __slots__ = ("filename", "lineno", "function")

    def __init__(self, filename, lineno, function):
        self.filename = filename
        self.lineno = lineno
        self.function = function

    def __str__(self):
        return f"{self.filename}:{self.lineno} ({self.function})"

    __repr__ = __str__

    def line_text(self) -> str:
        """The source line itself, stripped, or '' when unavailable."""
        import linecache
        return linecache.getline(self.filename, self.lineno).strip()


class NotedSourceInfo(SourceInfo):
    """A user line with a note on why the compiler put an equation there (a collective the
    partitioner inserted); the generated code shows the note beside the line."""
    __slots__ = ("note",)

    def __init__(self, src, note):
        super().__init__(src.filename, src.lineno, src.function)
        self.note = note


_override = threading.local()


@contextlib.contextmanager
def source_override(src):
    """Within the block, equations staged take ``src`` as their source (a compiler pass
    rebuilding a program keeps each equation's user line)."""
    prev = getattr(_override, "src", None)
    _override.src = src
    try:
        yield
    finally:
        _override.src = prev


def swap_source_override(src):
    """Set the source equations staged from now on take (None: their user frame); returns
    the previous one (a loop rebuilding many equations sets it per equation with this,
    without a context manager's cost, and restores it at the end)."""
    prev = getattr(_override, "src", None)
    _override.src = src
    return prev


def user_frame(depth: int = 2) -> SourceInfo | None:
    """Return the innermost frame outside jaxlite's own code (None when not found)."""
    o = getattr(_override, "src", None)
    if o is not None:
        return o
    try:
        f = sys._getframe(depth)
    except ValueError:
        return None
    while f is not None:
        code = f.f_code
        if not _is_internal(code.co_filename):
            return SourceInfo(code.co_filename, f.f_lineno, code.co_name)
        f = f.f_back
    return None
