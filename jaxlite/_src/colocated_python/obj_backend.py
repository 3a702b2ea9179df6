"""The instances behind colocated Python objects (JAX's ``colocated_python/obj_backend.py``):
JAX keeps them on the hosts of the devices; jaxlite, in this process."""
from __future__ import annotations

import threading

__all__ = ["SINGLETON_OBJECT_STORE"]


class _ObjectStore:
    """The instances of wrapped classes, by wrapper id (JAX keeps them on the hosts of the
    devices; here, in this process)."""

    def __init__(self):
        self._lock = threading.Lock()
        self._objs = {}

    def get_or_create(self, uid, initializer):
        """The instance of ``uid``, made by ``initializer()`` the first time."""
        with self._lock:
            if uid not in self._objs:
                self._objs[uid] = initializer()
            return self._objs[uid]

    def remove(self, uid):
        """Drop the instance of ``uid`` (its wrapper is gone)."""
        with self._lock:
            self._objs.pop(uid, None)


SINGLETON_OBJECT_STORE = _ObjectStore()
