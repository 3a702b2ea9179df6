"""Wrapped functions (JAX's ``linear_util.WrappedFun``): a function with fixed keyword
parameters and a stack of wrappers, as ``jax.extend.linear_util`` exposes them and as
call primitives hand their bodies to libraries (``Primitive.get_bind_params``'s
``subfuns``)."""
from __future__ import annotations

__all__ = ["WrappedFun", "wrap_init"]


class WrappedFun:
    """A function with fixed keyword parameters and a stack of wrappers applied on
    ``call_wrapped``."""
    __slots__ = ("f", "params", "wrappers", "debug_info")

    def __init__(self, f, params=(), wrappers=(), debug_info=None):
        self.f = f
        self.params = tuple(params)
        self.wrappers = tuple(wrappers)
        self.debug_info = debug_info

    @property
    def __name__(self):
        return getattr(self.f, "__name__", type(self.f).__name__)

    def wrap(self, wrapper):
        """A new WrappedFun with ``wrapper(call, *args)`` applied outermost."""
        return WrappedFun(self.f, self.params, self.wrappers + (wrapper,), self.debug_info)

    def call_wrapped(self, *args, **kwargs):
        """Call the function through its wrappers."""
        def base(*a, **k):
            return self.f(*a, **dict(self.params), **k)
        call = base
        for w in self.wrappers:
            call = _bind_wrapper(w, call)
        return call(*args, **kwargs)

    __call__ = call_wrapped

    def __repr__(self):
        return f"Wrapped function: {self.__name__}"


def _bind_wrapper(w, inner):
    def call(*a, **k):
        return w(inner, *a, **k)
    return call


def wrap_init(f, params=None, *, debug_info=None):
    """Wrap ``f`` (with keyword ``params`` fixed) as a WrappedFun."""
    return WrappedFun(f, tuple(sorted((params or {}).items())), (), debug_info)
