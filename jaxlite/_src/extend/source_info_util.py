"""``jax.extend.source_info_util``: where staged equations come from.

jaxlite records the user's frame (``SourceInfo``) for every equation; libraries register
their own directories with ``register_exclusion`` so that frame is their caller's. (JAX's
name stacks are not kept by jaxlite, so their functions are not offered.)
"""
from __future__ import annotations

from jaxlite._src.core.source_info import SourceInfo, register_exclusion, user_frame

__all__ = ["SourceInfo", "register_exclusion", "current", "summarize"]


def current():
    """The SourceInfo of the innermost user frame running now (None when there is none)."""
    return user_frame(2)


def summarize(source_info, num_frames=1):
    """``file:line (function)`` of ``source_info`` ("unknown" for None)."""
    return "unknown" if source_info is None else str(source_info)
