"""``jax.extend.linear_util`` and ``jax.api_util``: wrapped functions with transformations
stacked on them, and the flattening wrappers libraries build with them."""
from __future__ import annotations

import inspect

from jaxlite._src.interpreters.staging import DebugInfo
from jaxlite._src.interpreters.wrapped_fun import WrappedFun, wrap_init  # noqa: F401
from jaxlite._src.tree_util import tree_flatten, tree_unflatten

__all__ = ["WrappedFun", "wrap_init", "Store", "flatten_fun", "flatten_fun_nokwargs",
           "debug_info", "fun_signature", "merge_linear_aux"]


class Store:
    """A slot a transformation fills while the wrapped function runs (e.g. the output
    tree); read it with ``store.val`` or by calling the thunk, after the call."""
    __slots__ = ("_val",)
    _EMPTY = object()

    def __init__(self):
        self._val = Store._EMPTY

    def store(self, val):
        """Record ``val`` (once)."""
        if self._val is not Store._EMPTY:
            raise RuntimeError("Store occupied: the wrapped function ran twice")
        self._val = val

    @property
    def val(self):
        """The recorded value (ValueError before the wrapped function ran)."""
        if self._val is Store._EMPTY:
            raise ValueError("Store empty: call the wrapped function first")
        return self._val

    def __call__(self):
        return self.val

    def __bool__(self):
        return self._val is not Store._EMPTY


def flatten_fun(f, in_tree):
    """A WrappedFun taking flat leaves of ``(args, kwargs)`` (structure ``in_tree``) and
    returning flat leaves, and a thunk giving the output tree after a call."""
    store = Store()

    def wrapper(call, *flat):
        args, kwargs = tree_unflatten(in_tree, flat)
        out = call(*args, **kwargs)
        leaves, tree = tree_flatten(out)
        store.store(tree)
        return leaves
    return f.wrap(wrapper), store


def flatten_fun_nokwargs(f, in_tree):
    """As ``flatten_fun`` for a function with positional arguments only (``in_tree`` is the
    structure of the argument tuple)."""
    store = Store()

    def wrapper(call, *flat):
        args = tree_unflatten(in_tree, flat)
        out = call(*args)
        leaves, tree = tree_flatten(out)
        store.store(tree)
        return leaves
    return f.wrap(wrapper), store


def fun_signature(fun):
    """``inspect.signature(fun)``, or None when it has none."""
    try:
        return inspect.signature(fun)
    except (ValueError, TypeError):
        return None


def debug_info(traced_for, fun, args, kwargs, *, static_argnums=(), static_argnames=(),
               result_paths_thunk=None, sourceinfo=None, signature=None):
    """The DebugInfo of tracing ``fun`` for ``traced_for`` (its name, source and argument
    names)."""
    sig = signature if signature is not None else fun_signature(fun)
    names = tuple(sig.parameters) if sig is not None else ()
    return DebugInfo.from_function(fun, names, traced_for)


def merge_linear_aux(aux1, aux2):
    """The one of two stores that was filled (the other must be empty)."""
    if aux1 and aux2:
        raise ValueError("both auxiliary stores were filled")
    return aux1() if aux1 else aux2()
