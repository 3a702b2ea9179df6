"""Run named snippets written against ``jax`` in one process and record what each prints:
``python sharding_runner.py {jax|jaxlite} CASES.json OUT.json`` (see tests/multidevice.py).

With ``jaxlite`` an import hook (the one of tests/seed_programs) makes ``import jax`` and every
``jax.<sub>`` resolve to jaxlite; the runner then checks that no real jax module was loaded.
Each snippet runs with fresh globals holding ``np`` and ``err(fn)``, which prints ``fn()``'s
result or ``TypeName: message`` of the exception it raises. An exception escaping a snippet
ends that snippet with the line ``!! TypeName: message``.
"""
import contextlib
import io
import json
import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent


def err(fn, message=True):
    """Print ``fn()`` or, when it raises, the exception's type and (with ``message``) text."""
    try:
        out = fn()
    except Exception as e:  # noqa: BLE001 - printed for comparison
        print(f"{type(e).__name__}: {e}" if message else type(e).__name__)
    else:
        print(out)


def run_case(code):
    import numpy as np
    out = io.StringIO()
    env = {"__name__": "__main__", "np": np, "err": err}
    with contextlib.redirect_stdout(out):
        try:
            exec(compile(code, "<case>", "exec"), env)
        except Exception as e:  # noqa: BLE001 - reported in the output
            print(f"!! {type(e).__name__}: {e}")
    return out.getvalue()


def main():
    backend, src, dst = sys.argv[1:4]
    if backend == "jaxlite":
        sys.path[:0] = [str(HERE / "seed_programs"), str(HERE.parent)]
        from _run_with_jaxlite import JaxToJaxlite, _check_no_real_jax
        sys.meta_path.insert(0, JaxToJaxlite())
    cases = json.loads(pathlib.Path(src).read_text(encoding="utf-8"))
    results = {name: run_case(code) for name, code in cases.items()}
    if backend == "jaxlite":
        _check_no_real_jax()
    else:
        import jax
        results["__version__"] = jax.__version__
    pathlib.Path(dst).write_text(json.dumps(results, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
