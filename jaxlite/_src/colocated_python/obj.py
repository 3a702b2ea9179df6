"""Colocated Python objects (JAX's ``colocated_python/obj.py``): a wrapper class whose
methods are colocated Python functions running on one shared instance of the wrapped class,
created on the first method call (from a copy of the constructor's arguments) and dropped
with the wrapper."""
from __future__ import annotations

import functools
import inspect
import random
import threading
import weakref

from jaxlite._src import tree_util
from jaxlite._src.colocated_python import func as _func
from jaxlite._src.colocated_python import obj_backend

__all__ = ["wrap_class"]




def _make_method(cls, cls_sourceinfo, uid, init_args, init_kwargs, method_name,
                 original_method):

    class MethodCallerAtBackend:
        def __init__(self):
            self._lock = threading.Lock()

        def __reduce__(self):
            return type(self), ()

        def __call__(self, *args, **kwargs):
            with self._lock:
                if not hasattr(self, "obj"):
                    # (the store is reached through its module: a copy of this class made
                    # by serialization finds the same store)
                    self.obj = obj_backend.SINGLETON_OBJECT_STORE.get_or_create(
                        uid, lambda: cls(*init_args, **init_kwargs))
            return getattr(self.obj, method_name)(*args, **kwargs)

    caller = MethodCallerAtBackend()
    caller.__name__ = method_name
    callable_ = _func.make_callable(caller, cls_sourceinfo, inspect.signature(original_method))

    def make_method_wrapper(c):
        def method_wrapper(*args, **kwargs):
            for x in tree_util.tree_leaves((args, kwargs)):
                _func._get_spec(x)       # (arguments must be arrays, as for functions)
            return c(*args, **kwargs)

        def specialize(*args, **kwargs):
            return make_method_wrapper(c.specialize(*args, **kwargs))
        method_wrapper = functools.wraps(original_method)(method_wrapper)
        method_wrapper.specialize = specialize
        return method_wrapper

    return make_method_wrapper(callable_)


def wrap_class(cls, cls_sourceinfo):
    """The wrapper class of ``cls`` whose methods run colocated with their arguments."""

    class WrappedClass:
        @functools.wraps(cls.__init__)
        def __init__(self, *init_args, **init_kwargs):
            uid = self._colocated_python_uid = random.getrandbits(63)
            weakref.finalize(self, obj_backend.SINGLETON_OBJECT_STORE.remove, uid)
            for attr_name in dir(cls):
                member = getattr(cls, attr_name)
                if not inspect.isfunction(member):
                    continue
                if attr_name in ("__init__", "__del__", "__reduce__", "__reduce_ex__"):
                    continue
                setattr(self, attr_name, _make_method(cls, cls_sourceinfo, uid, init_args,
                                                      init_kwargs, attr_name, member))

    WrappedClass.__name__ = cls.__name__
    WrappedClass.__qualname__ = getattr(cls, "__qualname__", cls.__name__)
    WrappedClass.__doc__ = cls.__doc__
    return WrappedClass
