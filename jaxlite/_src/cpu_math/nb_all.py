"""Every numba twin of ``cpu_math.table`` under its lax primitive's name (``_xm.exp``...;
the float64 ones of ``table.F64`` with ``_f64`` appended):
the module tier 2's kernels and the compiled ufuncs import. Imports numba."""
from __future__ import annotations

import importlib

from jaxlite._src.cpu_math import table


def _collect():
    found = {}
    for name, (fam, fn) in table.ALL.items():
        found[name] = getattr(importlib.import_module(f"jaxlite._src.cpu_math.{fam}_nb"), fn)
    for name, (fam, fn) in table.F64.items():
        found[name + "_f64"] = getattr(
            importlib.import_module(f"jaxlite._src.cpu_math.{fam}_nb"), fn)
    return found


globals().update(_collect())
