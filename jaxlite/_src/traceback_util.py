"""Traceback filtering, as JAX's: an exception that leaves a jaxlite API (jit, grad, vmap,
the control-flow functions, ...) shows the user's frames, plus the one jaxlite frame the
user's last frame called, instead of the transformation machinery in between.

``JAX_TRACEBACK_FILTERING=off`` (or ``jax.config.update("jax_traceback_filtering", "off")``)
shows every frame. Filtering is idempotent: each API boundary the exception crosses applies
it, and a ``try`` costs nothing until something raises.
"""
from __future__ import annotations

import functools
import types

from jaxlite._src.config import config
from jaxlite._src.core.source_info import _is_internal

__all__ = ["api_boundary", "filter_exception", "filter_traceback", "is_internal_file"]

_NOTE = ("--------------------\nFor simplicity, jaxlite has removed its internal frames from "
         "the traceback of the following exception. Set JAX_TRACEBACK_FILTERING=off to "
         "include these.")


def is_internal_file(filename):
    """Whether a frame of ``filename`` belongs to jaxlite (its package files, the source it
    generates, ``<jaxlite-...>``) or to a library that registered its directory: the same
    test that decides which line an equation's source info names."""
    return _is_internal(filename)


def filter_traceback(tb):
    """``tb`` without jaxlite's frames, keeping the jaxlite frame called by the last user
    frame (the API the user called); None when nothing is left to show."""
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


def filter_exception(e):
    """Filter the traceback of ``e`` in place (unless filtering is off) and note it once.
    Filtering is idempotent, so every API boundary an exception crosses may apply it."""
    if config.jax_traceback_filtering == "off":
        return
    filtered = filter_traceback(e.__traceback__)
    if filtered is None:
        return
    e.__traceback__ = filtered
    if not getattr(e, "_jaxlite_filtered", False):
        try:
            e._jaxlite_filtered = True
            e.add_note(_NOTE)
        except (AttributeError, TypeError):   # exceptions without a __dict__
            pass


def api_boundary(fun):
    """Wrap a public API function so that exceptions leaving it have jaxlite's frames
    filtered out of their traceback (see the module docstring)."""
    @functools.wraps(fun)
    def wrapped(*args, **kwargs):
        try:
            return fun(*args, **kwargs)
        except Exception as e:
            filter_exception(e)
            raise
    return wrapped
