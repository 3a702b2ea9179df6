"""The shared driver of tools/run_*_suite.py: run a library's test files on jaxlite (or JAX),
one pytest process per file, and print passed/failed per file and in total."""
from __future__ import annotations

import argparse
import concurrent.futures
import json
import pathlib


def suite_arguments(description):
    """The options every suite runner takes (``--backend``, ``--jobs``, ``--timeout``,
    ``--only``, ``--cache``, ``--json``)."""
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--backend", choices=("jaxlite", "jax"), default="jaxlite")
    p.add_argument("-j", "--jobs", type=int, default=1)
    p.add_argument("--timeout", type=float, default=900)
    p.add_argument("--only", default="", help="run only files whose path contains this")
    p.add_argument("--cache", default=str(pathlib.Path.home() / ".cache" / "jaxlite"))
    p.add_argument("--json", default=None, help="write the per-file results here")
    return p


def run_and_report(files, run_one, args, width):
    """Run ``run_one(file)`` (a result dict: file, status, passed, failed, errors, skipped,
    seconds) over ``files`` on ``args.jobs`` threads, printing each file's line as it ends
    and the totals; writes the results to ``args.json`` when given. Returns 0."""
    results = []
    with concurrent.futures.ThreadPoolExecutor(max(1, args.jobs)) as ex:
        futs = [ex.submit(run_one, f) for f in files]
        for fut in concurrent.futures.as_completed(futs):
            r = fut.result()
            results.append(r)
            flag = "" if r["status"] == "ok" else f"  [{r['status']}]"
            print(f"{r['file']:{width}s} passed {r['passed']:4d}  failed {r['failed']:4d}  "
                  f"errors {r['errors']:3d}  skipped {r['skipped']:3d}  "
                  f"{r['seconds']:7.1f}s{flag}", flush=True)
    tot = {k: sum(r[k] for r in results) for k in ("passed", "failed", "errors", "skipped")}
    green = sum(1 for r in results if r["status"] == "ok" and not r["failed"]
                and not r["errors"])
    print(f"TOTAL passed {tot['passed']}  failed {tot['failed']}  errors {tot['errors']}  "
          f"skipped {tot['skipped']}  files fully passing {green}/{len(results)}")
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(sorted(results, key=lambda r: r["file"]),
                                                      indent=1))
    return 0
