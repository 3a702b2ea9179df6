"""The optional TensorStore import of array serialization, with an error naming the fix."""
from __future__ import annotations

__all__ = ["import_tensorstore"]

_MISSING = ("jax.experimental.array_serialization needs the 'tensorstore' package, which is "
            "not installed: install it with `pip install tensorstore` (orbax-checkpoint "
            "installs it too).")


def import_tensorstore():
    """The ``tensorstore`` module; ModuleNotFoundError with the install command without it."""
    try:
        import tensorstore
    except ModuleNotFoundError as e:
        if e.name != "tensorstore":
            raise
        raise ModuleNotFoundError(_MISSING, name="tensorstore") from None
    return tensorstore
