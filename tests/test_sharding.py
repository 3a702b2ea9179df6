"""Devices, meshes, shardings, sharded arrays and placement against JAX, on 8 simulated devices.

Every snippet of tests/sharding_cases.py runs in a subprocess whose environment sets 8 CPU
devices (this test process keeps its single device): once with jaxlite (``import jax`` resolved
to jaxlite) and, where JAX 0.10.2 is installed, once with JAX; the two outputs must be equal,
except that printed sets of devices are compared as sets. Without JAX (or with another
version) the jaxlite output is compared with JAX's output recorded in tests/goldens/ by
tests/gen_sharding_goldens.py. The ``CASES_04`` snippets (the seeds' PositionalSharding,
removed from current JAX) are compared with jax 0.4.30's recorded output.

``GAPS`` lists snippets on which jaxlite is known to differ; they are strict xfails, so the
day one starts passing the test says so.
"""
import concurrent.futures
import difflib
import json

import pytest

import multidevice
import sharding_cases
from gen_sharding_goldens import GOLDEN_010, GOLDEN_04

ALL = {**sharding_cases.CASES, **sharding_cases.CASES_04}
assert not set(sharding_cases.CASES) & set(sharding_cases.CASES_04)


from multidevice import LIVE_JAX  # noqa: E402


def _golden(path):
    return json.loads(path.read_text(encoding="utf-8"))["outputs"]


@pytest.fixture(scope="module")
def outputs():
    """{'jaxlite': {case: output}, 'jax': {case: output} (live JAX 0.10.2, when installed)}:
    one jaxlite process for all cases and one JAX process, both in flight at once."""
    with concurrent.futures.ThreadPoolExecutor(2) as ex:
        lite = ex.submit(multidevice.run_cases, ALL, "jaxlite")
        jax = ex.submit(multidevice.run_cases, sharding_cases.CASES, "jax") if LIVE_JAX else None
        out = {"jaxlite": lite.result()}
        if jax is not None:
            out["jax"] = jax.result()
    return out


def _reference(name, outputs):
    if name in sharding_cases.CASES_04:
        return _golden(GOLDEN_04)[name], "jax 0.4.30 golden"
    if "jax" in outputs:
        return outputs["jax"][name], "jax 0.10.2"
    return _golden(GOLDEN_010)[name], "jax 0.10.2 golden"


def _diff(ours, theirs, source):
    a, b = multidevice.normalize(theirs), multidevice.normalize(ours)
    if a == b:
        return None
    return "\n".join(difflib.unified_diff(a.splitlines(), b.splitlines(), source, "jaxlite",
                                          lineterm=""))


def _params():
    for name in ALL:
        marks = ()
        if name in sharding_cases.GAPS:
            marks = pytest.mark.xfail(strict=True, reason=sharding_cases.GAPS[name])
        yield pytest.param(name, id=name, marks=marks)


@pytest.mark.parametrize("name", list(_params()))
def test_case_prints_what_jax_prints(name, outputs):
    theirs, source = _reference(name, outputs)
    problem = _diff(outputs["jaxlite"][name], theirs, source)
    assert problem is None, f"{name}: jaxlite differs from {source}:\n{problem}"


def test_goldens_are_what_jax_prints(outputs):
    """The recorded 0.10.2 outputs are what the installed JAX prints (re-record with
    tests/gen_sharding_goldens.py when a case changes)."""
    if "jax" not in outputs:
        pytest.skip("jax 0.10.2 is not installed")
    golden = _golden(GOLDEN_010)
    norm = multidevice.normalize
    stale = [n for n in sharding_cases.CASES
             if norm(golden.get(n, "")) != norm(outputs["jax"][n])]
    assert stale == [], f"stale goldens (run tests/gen_sharding_goldens.py): {stale}"


def test_every_case_has_a_golden():
    assert set(_golden(GOLDEN_010)) == set(sharding_cases.CASES)
    assert set(_golden(GOLDEN_04)) == set(sharding_cases.CASES_04)
    assert set(sharding_cases.GAPS) <= set(sharding_cases.CASES)


def test_no_case_crashes_unexpectedly(outputs):
    """A snippet that stops on an exception prints '!! ...'; with jaxlite that must only
    happen where JAX stops too (else the rest of the snippet would go unchecked)."""
    for name, out in outputs["jaxlite"].items():
        theirs, _ = _reference(name, outputs)
        if "\n!! " in "\n" + out:
            assert "\n!! " in "\n" + theirs, f"{name} stopped early on jaxlite:\n{out}"


def test_normalize_compares_device_sets_as_sets():
    a = "x {CpuDevice(id=3), CpuDevice(id=1)} y"
    assert multidevice.normalize(a) == "x {CpuDevice(id=1), CpuDevice(id=3)} y"
    assert _diff(a, "x {CpuDevice(id=1), CpuDevice(id=3)} y", "jax") is None
    assert _diff(a, "x {CpuDevice(id=1), CpuDevice(id=2)} y", "jax") is not None
    assert _diff("[CpuDevice(id=1), CpuDevice(id=0)]", "[CpuDevice(id=0), CpuDevice(id=1)]",
                 "jax") is not None   # lists keep their order
