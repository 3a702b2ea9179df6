"""Run a snippet with jaxlite on N simulated CPU devices, in a subprocess (the device count is
set in that process's environment only, so the rest of the suite keeps one device)."""
import json
import os
import subprocess
import sys
import textwrap

TIMEOUT = 240


def run(code, devices=8, env=None, timeout=TIMEOUT):
    """Run ``code`` with jaxlite on ``devices`` CPU devices; returns its stdout."""
    e = dict(os.environ)
    e.pop("JAXLITE_NUM_CPU_DEVICES", None)
    e["XLA_FLAGS"] = f"--xla_force_host_platform_device_count={devices}"
    e.update(env or {})
    prelude = "import jaxlite as jax, jaxlite.numpy as jnp, numpy as np, json\n" \
              "from jaxlite import lax\n"
    p = subprocess.run([sys.executable, "-c", prelude + textwrap.dedent(code)],
                       capture_output=True, text=True, env=e, timeout=timeout)
    if p.returncode:
        raise AssertionError(f"subprocess failed:\n{p.stdout}\n{p.stderr}")
    return p.stdout


def run_json(code, **kw):
    return json.loads(run(code, **kw).strip().splitlines()[-1])
