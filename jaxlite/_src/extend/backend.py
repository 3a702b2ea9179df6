"""``jax.extend.backend``: the backend (client) objects and their caches.

jaxlite has one backend, the CPU client of ``runtime/devices.py``; there is no XLA, so
``backend_xla_version`` is None (JAX's answer for backends without a PJRT C API version)
and XLA's compile options and backend plugins do not exist.
"""
from __future__ import annotations


from jaxlite._src.runtime import devices as _devices

__all__ = ["backends", "get_backend", "clear_backends", "backend_xla_version",
           "get_default_device", "clear_in_memory_compilation_cache", "get_compile_options",
           "register_backend_factory", "register_backend_cache"]

# Caches registered with register_backend_cache, cleared with the backends.
_caches: list = []


def backends() -> dict:
    """The initialized backends by platform name: ``{'cpu': <client>}``."""
    return {"cpu": _devices.get_backend()}


def get_backend(platform=None):
    """The backend (client) for ``platform`` (None or ``'cpu'``)."""
    return _devices.get_backend(platform)


def backend_xla_version(platform=None):
    """The XLA version of the backend: None (jaxlite runs no XLA)."""
    _devices.get_backend(platform)
    return None


def get_default_device():
    """The device uncommitted computations run on (``jax_default_device`` or the first)."""
    return _devices.default_device()


def clear_in_memory_compilation_cache() -> None:
    """Drop every jitted function's compiled programs (they are rebuilt on next call)."""
    from jaxlite._src.api.misc import clear_caches
    clear_caches()


def clear_backends() -> None:
    """Clear the compilation caches and the caches registered with
    :func:`register_backend_cache`. (jaxlite's CPU client holds no compiled state itself,
    so it is kept: existing arrays stay valid.)"""
    clear_in_memory_compilation_cache()
    for c in list(_caches):
        c.cache_clear()


def register_backend_cache(cache, for_what: str = ""):
    """Register a cache (an object with ``cache_clear()``, such as an ``lru_cache``d
    function) to be cleared by :func:`clear_backends`."""
    if not callable(getattr(cache, "cache_clear", None)):
        raise TypeError(f"register_backend_cache expects an object with cache_clear(), got "
                        f"{cache!r}")
    _caches.append(cache)


def get_compile_options(*args, **kwargs):
    """XLA's ``CompileOptions``: not available, jaxlite compiles jaxprs to Python."""
    raise NotImplementedError("get_compile_options: jaxlite has no XLA compiler; its "
                              "programs are compiled to Python (see Lowered.compile()).")


def register_backend_factory(name, factory, *, priority=0, fail_quietly=True,
                             experimental=False, make_topology=None, c_api=None):
    """Register a PJRT backend plugin: not possible in jaxlite (raises
    NotImplementedError; jaxlite's only backend is its NumPy CPU client)."""
    raise NotImplementedError(f"register_backend_factory({name!r}): jaxlite runs on its own "
                              "NumPy CPU backend and cannot load PJRT plugins.")
