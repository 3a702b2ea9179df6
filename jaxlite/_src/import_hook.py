"""Run unmodified JAX programs and libraries on jaxlite: ``install_as_jax()`` and the
``python -m jaxlite run`` command.

``install_as_jax()`` puts an import hook at the front of ``sys.meta_path``: from then on
``import jax`` and every ``import jax.<sub>`` resolve to the jaxlite module of the same dotted
path (``jax.numpy`` is ``jaxlite.numpy``), and the private ``jax._src.<name>`` modules that
libraries reach into resolve to the small modules of ``jaxlite._src.compat``. A real jax is
never loaded by these names. The top-level ``jax`` module is a thin view of ``jaxlite`` that
reports the JAX version whose semantics jaxlite follows (``jax.__version__ == "0.10.2"``), since
libraries compare it with the releases they support.
"""
from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import runpy
import sys
import types

__all__ = ["install_as_jax", "uninstall_as_jax", "main", "JAX_API_VERSION"]

# The JAX release whose public API and semantics jaxlite follows.
JAX_API_VERSION = "0.10.2"

# Names under ``jax`` whose jaxlite counterpart lives at another path.
_RENAMES = {
    "jax.version": "jaxlite._src.compat.version",
    "jax._src": "jaxlite._src.compat",
}


def _target(fullname):
    """The jaxlite module name answering for the jax module ``fullname``."""
    for src, dst in _RENAMES.items():
        if fullname == src or fullname.startswith(src + "."):
            return dst + fullname[len(src):]
    return "jaxlite" + fullname[len("jax"):]


class _JaxView(types.ModuleType):
    """The top-level ``jax`` module: jaxlite's namespace, with JAX's version numbers."""

    def __getattr__(self, name):
        import jaxlite
        try:
            return getattr(jaxlite, name)
        except AttributeError:
            raise AttributeError(f"module 'jax' has no attribute {name!r} (jaxlite, which "
                                 f"answers for jax here, has no {name!r})") from None

    def __dir__(self):
        import jaxlite
        return sorted(set(dir(jaxlite)) | set(self.__dict__))

    def __reduce__(self):
        # pickled by name, as a module is (cloudpickle pickles a function's globals, and
        # ``jax`` is one of them in every program)
        return importlib.import_module, ("jax",)


def _make_jax_view():
    import jaxlite
    mod = _JaxView("jax", jaxlite.__doc__)
    for k, v in vars(jaxlite).items():
        if k not in ("__name__", "__spec__", "__loader__", "__path__", "__file__",
                     "__package__", "__getattr__", "__dir__"):
            setattr(mod, k, v)
    mod.__version__ = JAX_API_VERSION
    mod.__version_info__ = tuple(int(p) for p in JAX_API_VERSION.split("."))
    mod.__path__ = []
    mod.__file__ = jaxlite.__file__
    mod.__jaxlite__ = jaxlite
    # ``jax._src`` read as an attribute (``jax._src.distributed.global_state``) is the same
    # module ``import jax._src`` gives, jaxlite's compat package (not jaxlite's own _src)
    mod._src = importlib.import_module(_RENAMES["jax._src"])
    # ``jax.version`` is a submodule JAX imports eagerly (libraries read it as an attribute)
    mod.version = importlib.import_module(_RENAMES["jax.version"])
    return mod


class JaxFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Meta-path finder and loader aliasing ``jax[.x.y]`` to jaxlite (and refusing
    ``jaxlib``, XLA's runtime, which jaxlite replaces)."""

    def find_spec(self, fullname, path=None, target=None):
        """Answer for ``jax`` and its submodules (refuse ``jaxlib``); others pass through."""
        top = fullname.partition(".")[0]
        if top not in ("jax", "jaxlib"):
            return None
        if fullname == "jax":
            return importlib.machinery.ModuleSpec("jax", self, is_package=True)
        if top == "jaxlib":
            # XLA's runtime: nothing of it exists in jaxlite, and a real one must not load
            raise ModuleNotFoundError(
                f"No module named {fullname!r}: jaxlib is XLA's runtime, which jaxlite "
                "(installed as jax) replaces; nothing in it can be imported here.",
                name=fullname)
        name = _target(fullname)
        try:
            found = importlib.util.find_spec(name)
        except ModuleNotFoundError:
            found = None
        if found is None:
            raise ModuleNotFoundError(
                f"No module named {fullname!r}: jaxlite, installed as jax, has no "
                f"counterpart {name!r}. This part of JAX is not implemented by jaxlite.",
                name=fullname)
        return importlib.machinery.ModuleSpec(
            fullname, self, is_package=found.submodule_search_locations is not None)

    def create_module(self, spec):
        """The module object is jaxlite's own (shared, not a copy)."""
        if spec.name == "jax":
            return _make_jax_view()
        return importlib.import_module(_target(spec.name))

    def exec_module(self, module):
        """Nothing to execute: the jaxlite module is already initialised."""


_finder = JaxFinder()


def install_as_jax():
    """Make ``import jax`` (and ``jax.*``) load jaxlite, so that unmodified JAX programs and
    libraries (optax, chex, equinox, flax, ...) run on it (``import jaxlib`` then fails). Call it before anything imports jax. Idempotent; returns the ``jax`` module.

    Raises RuntimeError when a real jax is already imported in this process: the two cannot
    share one interpreter (objects of one would reach the other).
    """
    real = _real_jax_modules()
    if real:
        raise RuntimeError(
            f"install_as_jax(): the real jax is already imported ({', '.join(real[:3])}"
            f"{', ...' if len(real) > 3 else ''}). Call jaxlite.install_as_jax() before "
            "anything imports jax (first lines of the program), or run the program with "
            "`python -m jaxlite run script.py`.")
    if _finder not in sys.meta_path:
        sys.meta_path.insert(0, _finder)
    return importlib.import_module("jax")


def uninstall_as_jax():
    """Remove the import hook and forget the ``jax`` modules it created (modules that
    already hold a reference to them keep it)."""
    if _finder in sys.meta_path:
        sys.meta_path.remove(_finder)
    for name in list(sys.modules):
        top = name.partition(".")[0]
        if top in ("jax", "jaxlib") and isinstance(sys.modules[name].__spec__,
                                                   importlib.machinery.ModuleSpec) \
                and sys.modules[name].__spec__.loader is _finder:
            del sys.modules[name]


def _real_jax_modules():
    """Names of imported modules that belong to a real jax or jaxlib."""
    out = []
    for name, mod in list(sys.modules.items()):
        if name.partition(".")[0] not in ("jax", "jaxlib") or mod is None:
            continue
        spec = getattr(mod, "__spec__", None)
        if getattr(spec, "loader", None) is _finder or \
                getattr(mod, "__name__", "").startswith("jaxlite"):
            continue
        out.append(name)
    return sorted(out)


_USAGE = """usage: python -m jaxlite run script.py [args...]
       python -m jaxlite run -m module [args...]

Runs a JAX program unmodified on jaxlite: `import jax` inside it loads jaxlite."""


def main(argv=None):
    """Entry point of ``python -m jaxlite``: ``run script.py [args]`` runs the script as
    ``python script.py [args]`` would, with ``install_as_jax()`` in effect; ``run -m module
    [args]`` does the same for ``python -m module`` (e.g. ``-m pytest``)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        print(_USAGE)
        return 0
    if argv[0] != "run" or len(argv) < 2:
        print(f"python -m jaxlite: unknown command {' '.join(argv)!r}\n\n{_USAGE}",
              file=sys.stderr)
        return 2
    install_as_jax()
    if argv[1] == "-m":
        if len(argv) < 3:
            print(_USAGE, file=sys.stderr)
            return 2
        sys.argv = [argv[2]] + argv[3:]
        runpy.run_module(argv[2], run_name="__main__", alter_sys=True)
        return 0
    import os
    script = argv[1]
    sys.argv = [script] + argv[2:]
    sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
    runpy.run_path(script, run_name="__main__")
    return 0
