"""The library never imports jax or jaxlib (only tests may, as a reference)."""
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1] / "jaxlite"


def test_no_import_statements():
    pat = re.compile(r"^\s*(import (jax|jaxlib)\b|from (jax|jaxlib)\b)", re.M)
    offenders = [str(p) for p in ROOT.rglob("*.py") if pat.search(p.read_text())]
    assert offenders == []


def test_importing_jaxlite_loads_no_jax():
    code = ("import sys, jaxlite, jaxlite.numpy as jnp; jnp.ones(3) + 1; "
            "bad = [m for m in sys.modules if m == 'jax' or m.startswith(('jax.', 'jaxlib'))]; "
            "assert not bad, bad")
    subprocess.run([sys.executable, "-c", code], check=True)
