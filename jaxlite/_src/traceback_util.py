"""Traceback filtering, as JAX's: an exception that leaves a jaxlite API (jit, grad, vmap,
the control-flow functions, ...) shows the user's frames, plus the one jaxlite frame the
user's last frame called, instead of the transformation machinery in between. Frames of
the directories libraries register (``jax._src.traceback_util.register_exclusion``, flax's
and equinox's own) are hidden the same way, also from their own API boundaries.

``jax_traceback_filtering`` (``JAX_TRACEBACK_FILTERING``) picks how, as in JAX:
``"quiet_remove_frames"`` (the default outside IPython) removes the hidden frames and adds
a note saying so; ``"remove_frames"`` removes them and chains an ``UnfilteredStackTrace``
holding the whole traceback as the exception's cause; ``"tracebackhide"`` (the default
under IPython) keeps every frame but sets ``__tracebackhide__`` in the hidden ones, for
IPython and pytest to skip; ``"off"`` leaves the traceback alone. Filtering is idempotent:
every API boundary an exception crosses applies it again to the whole traceback, and a
``try`` costs nothing until something raises.
"""
from __future__ import annotations

import functools
import os
import sys
import traceback
import types

from jaxlite._src.config import config
from jaxlite._src.core.source_info import is_own_file
from jaxlite._src.core.source_info import register_exclusion as _skip_in_source_info

__all__ = ["api_boundary", "filter_exception", "filter_traceback", "is_internal_file",
           "register_exclusion", "UnfilteredStackTrace", "include_frame", "include_filename",
           "exclude_paths"]

_SIMPLIFIED = ("For simplicity, jaxlite has removed its internal frames from the traceback "
               "of the following exception. Set JAX_TRACEBACK_FILTERING=off to include these.")
_NOTE = "--------------------\n" + _SIMPLIFIED
_APPENDED = ("The stack trace below excludes jaxlite-internal frames.\n"
             "The preceding is the original exception that occurred, unmodified.\n"
             "\n--------------------")

# the directories whose frames are hidden besides jaxlite's own: libraries register theirs
# (flax edits this list directly to show or hide its frames), as JAX's ``_exclude_paths``
exclude_paths: list[str] = []


class UnfilteredStackTrace(Exception):
    """The cause chained to an exception under ``jax_traceback_filtering="remove_frames"``:
    its traceback is the whole one, jaxlite's and registered libraries' frames included."""


def register_exclusion(path):
    """Hide the frames of files under ``path`` (a library's directory) in tracebacks, and
    skip them when recording an equation's source line (so that names the library's
    caller)."""
    exclude_paths.append(path)
    _skip_in_source_info(path)


def _under(filename, prefix):
    filename, prefix = os.path.abspath(filename), os.path.abspath(prefix)
    return filename == prefix or filename.startswith(prefix.rstrip(os.sep) + os.sep)


def include_filename(filename) -> bool:
    """Whether frames of ``filename`` are shown (not jaxlite's, not a registered library's)."""
    return not is_own_file(filename) and not any(_under(filename, p) for p in exclude_paths)


def include_frame(frame) -> bool:
    """Whether the frame ``frame`` is shown in filtered tracebacks."""
    return include_filename(frame.f_code.co_filename)


def is_internal_file(filename) -> bool:
    """Whether a frame of ``filename`` is hidden: jaxlite's own (its package files, the
    source it generates) or under a registered library directory."""
    return not include_filename(filename)


def filter_traceback(tb):
    """``tb`` without the hidden frames, keeping the one hidden frame the last user frame
    called (the API the user called); None when nothing is left to show."""
    entries = []
    while tb is not None:
        entries.append(tb)
        tb = tb.tb_next
    internal = [is_internal_file(t.tb_frame.f_code.co_filename) for t in entries]
    keep = [t for t, i in zip(entries, internal) if not i]
    if keep:
        last_user = max(k for k, i in enumerate(internal) if not i)
        if last_user + 1 < len(entries):
            keep.append(entries[last_user + 1])
    new = None
    for t in reversed(keep):
        new = types.TracebackType(new, t.tb_frame, t.tb_lasti, t.tb_lineno)
    return new


def _mode():
    mode = config.jax_traceback_filtering
    if mode in (None, "auto"):
        ipython = sys.modules.get("IPython")
        under = ipython is not None and getattr(ipython, "get_ipython", lambda: None)()
        return "tracebackhide" if under else "quiet_remove_frames"
    return mode


def _whole_traceback(e):
    """``e``'s traceback with the frames an earlier boundary filtered out put back: the
    frames added since (above it) followed by the whole traceback it saw."""
    tb = e.__traceback__
    seen = getattr(e, "_jaxlite_tb", None)
    if seen is None:
        return tb
    head, whole = seen
    above = []
    t = tb
    while t is not None and t is not head:
        above.append(t)
        t = t.tb_next
    if t is None:       # (the traceback was replaced since: it is the whole one)
        return tb
    for a in reversed(above):
        whole = types.TracebackType(whole, a.tb_frame, a.tb_lasti, a.tb_lineno)
    return whole


def filter_exception(e):
    """Apply ``jax_traceback_filtering`` to ``e`` in place (see the module docstring)."""
    mode = _mode()
    if mode == "off":
        return
    whole = _whole_traceback(e)
    if mode == "tracebackhide":
        t = whole
        while t is not None:
            f = t.tb_frame
            if not include_frame(f):
                f.f_locals["__tracebackhide__"] = True
            t = t.tb_next
        return
    if mode not in ("quiet_remove_frames", "remove_frames"):
        raise ValueError(f"JAX_TRACEBACK_FILTERING={mode} is not a valid value.")
    filtered = filter_traceback(whole)
    if filtered is None:
        return
    e.__traceback__ = filtered
    try:
        e._jaxlite_tb = (filtered, whole)
    except (AttributeError, TypeError):   # exceptions without a __dict__
        return
    if mode == "quiet_remove_frames":
        if not getattr(e, "_jaxlite_noted", False):
            e._jaxlite_noted = True
            e.add_note(_NOTE)
        return
    cause = e.__cause__
    if not (isinstance(cause, UnfilteredStackTrace) and getattr(cause, "_jaxlite", False)):
        text = "".join(traceback.format_exception_only(type(e), e)).strip()
        cause = UnfilteredStackTrace(f"{text}\n\n{_APPENDED}")
        cause._jaxlite = True
        cause.__cause__, cause.__context__ = e.__cause__, e.__context__
        cause.__suppress_context__ = e.__suppress_context__
        e.__cause__, e.__context__ = cause, None
    cause.__traceback__ = whole


def api_boundary(fun=None, **kwargs):
    """Wrap a public API function so that exceptions leaving it are filtered as
    ``jax_traceback_filtering`` says (see the module docstring); ``repro_api_name`` and
    other keywords of JAX's decorator are accepted and have no effect."""
    if fun is None:
        return functools.partial(api_boundary, **kwargs)

    @functools.wraps(fun)
    def wrapped(*args, **kw):
        try:
            return fun(*args, **kw)
        except Exception as e:
            filter_exception(e)
            raise
    return wrapped
