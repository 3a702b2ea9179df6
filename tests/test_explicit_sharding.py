"""Sharding in types (Explicit mesh axes, JAX 0.10.2's default ``jax.make_mesh``) against JAX,
on 8 simulated devices.

The snippets of tests/explicit_cases.py print ``jax.typeof`` of results, the first sentence of
the errors JAX raises (ShardingTypeError where the result sharding is ambiguous or
conflicting), ``devices_indices_map`` of results and whether values equal the NumPy
reference. They run in one subprocess with jaxlite (``import jax`` resolved to jaxlite) and
are compared with JAX's output: live when JAX 0.10.2 is installed, else as recorded in
tests/goldens/explicit_jax_0.10.2.json (``python tests/test_explicit_sharding.py --record``
records it again). ``GAPS`` lists the lines where jaxlite knowingly differs.
"""
import pathlib
import sys

import pytest

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import explicit_cases  # noqa: E402
import multidevice  # noqa: E402

GOLDEN = HERE / "goldens" / "explicit_jax_0.10.2.json"




def _canon(text):
    """Output lines to compare: device sets in id order, JAX's ``ctx_mesh`` jaxpr parameter
    (jaxlite does not record the context mesh in jit equations) dropped."""
    lines = multidevice.normalize(text).splitlines()
    return [ln for ln in lines if not ln.strip().startswith("ctx_mesh=")]


@pytest.fixture(scope="module")
def outputs():
    return multidevice.outputs_beside_jax(explicit_cases.CASES)


@pytest.mark.parametrize("name", list(explicit_cases.CASES))
def test_explicit_case_matches_jax(name, outputs):
    multidevice.assert_case_matches_jax(outputs, GOLDEN, name, canon=_canon)


def test_golden_is_current():
    """The recorded goldens cover every case (re-record after adding one)."""
    multidevice.assert_golden_current(GOLDEN, explicit_cases.CASES)


def test_values_equal_unsharded_run(outputs):
    """Every ``same(...)`` check printed by the snippets is True (values never depend on
    the sharding)."""
    for name, text in outputs["jaxlite"].items():
        for ln in text.splitlines():
            words = ln.split()
            if words and all(w in ("True", "False") for w in words):
                assert "False" not in words, (name, ln)


def _record():
    multidevice.record_goldens(explicit_cases.CASES, GOLDEN)


if __name__ == "__main__":
    if sys.argv[1:] == ["--record"]:
        _record()
    else:
        raise SystemExit("usage: python tests/test_explicit_sharding.py --record")
