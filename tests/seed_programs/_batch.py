"""Run several programs in one interpreter, each with fresh globals, capturing each one's
stdout (shared by ``_run_with_jax.py`` and ``_run_with_jaxlite.py``).

One process per backend amortises the import and the compilation caches of the library
over all programs; every program still runs as ``__main__`` from its own file with its own
module globals, so programs do not see each other's state.
"""
import contextlib
import io
import json
import pathlib
import runpy
import sys
import traceback


def run_program(path):
    """Run ``path`` as ``__main__``; returns (stdout text, traceback text or None)."""
    path = pathlib.Path(path).resolve()
    out = io.StringIO()
    saved_argv, saved_path0 = sys.argv, sys.path[0]
    sys.argv, sys.path[0] = [str(path)], str(path.parent)
    error = None
    try:
        with contextlib.redirect_stdout(out):
            runpy.run_path(str(path), run_name="__main__")
    except BaseException:  # noqa: BLE001 - reported per program, the batch goes on
        error = traceback.format_exc()
    finally:
        sys.argv, sys.path[0] = saved_argv, saved_path0
    return out.getvalue(), error


def main(argv, after_all=None):
    """``[--json OUT] PROGRAM...``: run each program; with --json write {path: [stdout,
    error]} to OUT, else stream the outputs (one program: exactly its stdout)."""
    args = argv[1:]
    out_file = None
    if args[:1] == ["--json"]:
        out_file, args = args[1], args[2:]
    results = {}
    for p in args:
        results[p] = run_program(p)
        if out_file is None:
            sys.stdout.write(results[p][0])
            if results[p][1]:
                sys.stderr.write(results[p][1])
    if after_all is not None:
        after_all()
    if out_file is not None:
        pathlib.Path(out_file).write_text(json.dumps(results), encoding="utf-8")
    elif any(err for _, err in results.values()):
        sys.exit(1)
