"""The AttributeError for a public name JAX removed: JAX's message says what to use instead."""
from __future__ import annotations

__all__ = ["removed_attribute"]


def removed_attribute(module, removed, name):
    """The AttributeError for ``<module>.<name>``: the hint ``removed`` holds for a name JAX
    removed, Python's usual text for any other."""
    msg = removed.get(name)
    return AttributeError(msg if msg is not None else
                          f"module '{module}' has no attribute '{name}'")
