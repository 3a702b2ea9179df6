"""The private ``jax._src`` modules that JAX libraries import, answered by jaxlite.

Libraries such as equinox, flax and lineax reach into a few of JAX's private modules
(``jax._src.traceback_util``, ``jax._src.dtypes``, ``jax._src.ad_util`` ...). With
``jaxlite.install_as_jax()`` those names resolve to the modules of this package, each of
which re-exports the jaxlite objects playing the same part. Only names libraries are seen
to use are provided; anything else raises the usual ImportError/AttributeError.
"""


def __getattr__(name):
    # ``jax._src.<module>`` read as an attribute (``jax._src.xla_bridge._backends``), as JAX's
    # own imports leave these modules loaded: load the compat module of that name
    import importlib
    import importlib.util
    if importlib.util.find_spec(f"{__name__}.{name}") is None:
        raise AttributeError(f"module 'jax._src' (jaxlite) has no attribute {name!r}")
    return importlib.import_module(f"{__name__}.{name}")
