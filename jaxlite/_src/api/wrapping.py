"""``wraps``: give a transformed function the name, docstring and attributes of the function
it transforms, as ``functools.wraps`` does, but tolerating callables whose attributes cannot
be copied (an equinox Module's ``__name__`` is not a string, a callable object may have no
``__dict__``): what cannot be copied is left out, as JAX's transformations do."""
from __future__ import annotations

import functools

__all__ = ["wraps"]


def wraps(wrapped):
    """Decorator: copy ``wrapped``'s metadata onto the decorated function where possible."""
    def decorate(fun):
        for attr in functools.WRAPPER_ASSIGNMENTS:
            try:
                value = getattr(wrapped, attr)
            except Exception:
                continue
            try:
                setattr(fun, attr, value)
            except Exception:
                pass
        try:
            fun.__dict__.update(getattr(wrapped, "__dict__", {}))
        except Exception:
            pass
        fun.__wrapped__ = wrapped
        return fun
    return decorate
