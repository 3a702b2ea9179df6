"""``jax.extend.source_info_util``: where staged equations come from, and the name stack.

jaxlite records the user's frame (``SourceInfo``) for every equation; libraries register
their own directories with ``register_exclusion`` so that frame is their caller's. Name
stacks (``jax.named_scope``) are not kept by jaxlite: the functions that manage them are
context managers that change nothing.
"""
from __future__ import annotations

import contextlib

from jaxlite._src.core.source_info import SourceInfo, register_exclusion, user_frame

__all__ = ["SourceInfo", "register_exclusion", "current", "new_source_info", "summarize",
           "user_context", "NameStack", "new_name_stack", "current_name_stack",
           "extend_name_stack", "set_name_stack", "reset_name_stack", "transform_name_stack"]


def current():
    """The SourceInfo of the user frame running now (None when there is none)."""
    return user_frame(2)


def new_source_info():
    """An empty source information."""
    return None


def summarize(source_info, num_frames=1):
    """``file:line (function)`` of ``source_info``."""
    return "unknown" if source_info is None else str(source_info)


@contextlib.contextmanager
def user_context(c, *, name_stack=None):
    """Run the block with equations attributed to the traceback ``c`` (jaxlite keeps the
    frame it finds itself)."""
    yield


class NameStack(tuple):
    """A stack of scope names (jaxlite does not annotate equations with it)."""

    def extend(self, name):
        """A new stack with ``name`` (a string or tuple of strings) pushed."""
        return NameStack(self + ((name,) if isinstance(name, str) else tuple(name)))

    def __str__(self):
        return "/".join(self)


def new_name_stack(name=""):
    """A name stack holding ``name`` (empty for "")."""
    return NameStack((name,) if name else ())


def current_name_stack():
    """The current name stack (always empty in jaxlite)."""
    return NameStack()


@contextlib.contextmanager
def extend_name_stack(name):
    """Context manager pushing ``name`` (yields the extended stack)."""
    yield NameStack((name,))


@contextlib.contextmanager
def set_name_stack(name_stack):
    """Context manager setting the name stack."""
    yield name_stack


@contextlib.contextmanager
def reset_name_stack():
    """Context manager clearing the name stack."""
    yield NameStack()


@contextlib.contextmanager
def transform_name_stack(name):
    """Context manager marking a transformation in the name stack."""
    yield NameStack()
