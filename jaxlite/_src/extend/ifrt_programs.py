"""JAX's ``ifrt_programs`` (``jax.extend.ifrt_programs.ifrt_programs``): constructors of
programs for XLA's IFRT runtime (``make_hlo_program``, ``make_plugin_program``,
``make_colocated_python_program`` and their compile options), compiled by an IFRT client
such as Pathways'. jaxlite runs on NumPy with no IFRT client, so none of them exists here;
asking for one raises AttributeError saying why. Libraries import this module for code paths
that only run on such a runtime (orbax-checkpoint's Pathways support)."""

__all__ = []

_IFRT_ONLY = {
    "make_hlo_program", "make_plugin_program", "make_colocated_python_program",
    "make_xla_compile_options", "make_plugin_compile_options",
    "make_colocated_python_compile_options",
}


def __getattr__(name):
    if name in _IFRT_ONLY:
        raise AttributeError(
            f"ifrt_programs.{name} builds a program for XLA's IFRT runtime (e.g. Pathways), "
            "which jaxlite does not have: jaxlite runs programs on NumPy in this process, "
            "with no IFRT client to compile them.")
    raise AttributeError(f"module 'ifrt_programs' (jaxlite) has no attribute {name!r}")
