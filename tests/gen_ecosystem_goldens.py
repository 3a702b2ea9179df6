"""Record what the programs of tests/ecosystem_programs print under the real JAX:
``python tests/gen_ecosystem_goldens.py [name ...]`` (needs jax and the libraries installed)
writes tests/ecosystem_goldens.json (only the named programs' entries when names are given), {program: {"stdout": ..., "versions": {...}}}, which
test_ecosystem.py compares jaxlite's output with."""
import importlib.metadata
import json
import os
import pathlib
import subprocess
import sys

HERE = pathlib.Path(__file__).resolve().parent
PROGRAMS = HERE / "ecosystem_programs"
OUT = HERE / "ecosystem_goldens.json"


def requirements(path):
    """The libraries a program names on its ``# requires:`` line."""
    for line in path.read_text().splitlines():
        if line.startswith("# requires:"):
            return line.split(":", 1)[1].split()
    return []


def main():
    """Run every program under real JAX and store its stdout with the versions used."""
    goldens = json.loads(OUT.read_text()) if OUT.exists() else {}
    only = set(sys.argv[1:])
    for prog in sorted(PROGRAMS.glob("*.py")):
        if only and prog.stem not in only:
            continue
        libs = requirements(prog) + ["jax"]
        try:
            versions = {lib: importlib.metadata.version(lib) for lib in libs}
        except importlib.metadata.PackageNotFoundError as e:
            print(f"skip {prog.name}: {e.name} is not installed")
            continue
        env = dict(os.environ, OPENBLAS_NUM_THREADS="1")
        proc = subprocess.run([sys.executable, str(prog)], capture_output=True, text=True,
                              env=env, cwd=PROGRAMS, timeout=900)
        if proc.returncode:
            raise SystemExit(f"{prog.name} failed under JAX:\n{proc.stderr[-3000:]}")
        goldens[prog.stem] = {"stdout": proc.stdout, "versions": versions}
        print(f"{prog.name}: {len(proc.stdout.splitlines())} lines")
    OUT.write_text(json.dumps(goldens, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
