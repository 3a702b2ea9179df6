"""Run JAX programs on jaxlite: ``python _run_with_jaxlite.py [--json OUT] PROGRAM...``.

Installs an import hook so that ``import jax`` and every ``import jax.<sub>`` (jax.numpy,
jax.lax, jax.random, jax.nn, jax.scipy.*, jax.tree_util, jax.example_libraries.*, ...)
resolve to the jaxlite module of the same dotted path, then runs each program as
``__main__`` (see ``_batch.py``). Real jax is never loaded in such a process: the hook
answers for every name under ``jax``, and the runner checks at exit that neither jax's nor
jaxlib's own modules got imported.
"""
import importlib
import importlib.abc
import importlib.util
import pathlib
import sys


class JaxToJaxlite(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Meta-path finder/loader aliasing ``jax[.x.y]`` to the module ``jaxlite[.x.y]``."""

    def find_spec(self, fullname, path=None, target=None):
        """Answer for ``jax`` and its submodules when jaxlite has the counterpart."""
        if fullname != "jax" and not fullname.startswith("jax."):
            return None
        try:
            found = importlib.util.find_spec("jaxlite" + fullname[3:])
        except ModuleNotFoundError:
            found = None
        if found is None:
            raise ModuleNotFoundError(f"No module named {fullname!r} (jaxlite has no "
                                      f"{'jaxlite' + fullname[3:]!r})", name=fullname)
        return importlib.util.spec_from_loader(fullname, self)

    def create_module(self, spec):
        """The module object is jaxlite's own (shared, not a copy)."""
        return importlib.import_module("jaxlite" + spec.name[3:])

    def exec_module(self, module):
        """Nothing to execute: the jaxlite module is already initialised."""


def _check_no_real_jax():
    # (a copy: device threads may still be importing modules)
    mods = dict(sys.modules)
    real = sorted(m for m in mods
                  if m.startswith("jaxlib") or (m.split(".")[0] == "jax"
                                                and not mods[m].__name__
                                                .startswith("jaxlite")))
    if real:
        raise SystemExit(f"real jax modules were imported: {real}")


if __name__ == "__main__":
    sys.meta_path.insert(0, JaxToJaxlite())
    sys.path[:0] = [str(pathlib.Path(__file__).resolve().parent)]
    from _batch import main
    main(sys.argv, after_all=_check_no_real_jax)
