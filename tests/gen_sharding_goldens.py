"""Record what JAX prints for the sharding snippets (tests/sharding_cases.py), with 8 simulated
devices, into tests/goldens/ so that tests/test_sharding.py checks jaxlite without JAX:

    python tests/gen_sharding_goldens.py                     # CASES with this interpreter's jax
    python tests/gen_sharding_goldens.py --jax04 PYTHON      # also CASES_04 with jax 0.4.30

The jax 0.4.30 interpreter (the seeds' PositionalSharding era) is only a recording tool; it
is never a dependency of jaxlite or of its tests.
"""
import argparse
import json
import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import multidevice  # noqa: E402
import sharding_cases  # noqa: E402

GOLDENS = HERE / "goldens"
GOLDEN_010 = GOLDENS / "sharding_jax_0.10.2.json"
GOLDEN_04 = GOLDENS / "sharding_jax_0.4.30.json"


def record(cases, python, path, want_version):
    out = multidevice.run_cases(cases, "jax", python=python)
    version = out.pop("__version__")
    if version != want_version:
        raise SystemExit(f"{python} has jax {version}; {path.name} needs {want_version}")
    GOLDENS.mkdir(exist_ok=True)
    path.write_text(json.dumps({"jax_version": version, "devices": 8, "outputs": out},
                               indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"recorded {len(out)} outputs of jax {version} in {path.relative_to(HERE.parent)}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jax04", metavar="PYTHON",
                    help="an interpreter with jax 0.4.30 to record CASES_04 with")
    ap.add_argument("--only04", action="store_true", help="record CASES_04 only")
    args = ap.parse_args()
    if not args.only04:
        record(sharding_cases.CASES, sys.executable, GOLDEN_010, "0.10.2")
    if args.jax04:
        record(sharding_cases.CASES_04, args.jax04, GOLDEN_04, "0.4.30")


if __name__ == "__main__":
    main()
