"""jax.debug.breakpoint(): a real pdb session, driven here by scripted input. Under jit it
stops inside the generated code with the traced values bound to the user's names."""
import gc
import io
import os
import re
import subprocess
import sys
import textwrap

import numpy as np

import jaxlite as jax
import jaxlite.numpy as jnp


def _session(fn, commands):
    """Run ``fn(stdin, stdout)`` feeding pdb ``commands``; returns (result, transcript)."""
    stdin, stdout = io.StringIO("\n".join(commands) + "\n"), io.StringIO()
    # No garbage collection while pdb traces: a gc callback (real JAX, imported by other
    # tests in this worker, registers one) would be the next line pdb stops at.
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        result = fn(dict(stdin=stdin, stdout=stdout))
    finally:
        sys.settrace(None)
        if was_enabled:
            gc.enable()
    return result, stdout.getvalue()


def loss(x, params, pdb_io):
    y = jnp.sin(x) * params["w"]
    n = 3
    jax.debug.breakpoint(**pdb_io)   # BREAK-HERE
    return (y + params["b"]).sum()


def test_jit_stops_inside_generated_code_with_user_names():
    x, params = jnp.arange(3.0), {"w": jnp.float32(2.0), "b": jnp.ones(3)}
    f = jax.jit(loss, static_argnums=2)

    def run(pdb_io):
        return f(x, params, _Hashable(pdb_io))
    out, text = _session(run, ["p x", "p y", "p params['b']", "p n", "p type(y).__name__",
                               "ll", "w", "n", "c"])
    np.testing.assert_allclose(out, (np.sin(np.arange(3.0)) * 2 + 1).sum(), rtol=1e-6)
    assert "array([0., 1., 2.], dtype=float32)" in text
    assert "array([0.       , 1.68294" in text   # (2 sin(x): XLA's sin)
    assert "array([1., 1., 1.], dtype=float32)" in text and "\n(Pdb) 3\n" in text
    assert "'ndarray'" in text
    # it stops in the generated code, on a line naming the user's line
    assert re.search(r"> <jaxlite-jit:loss:\d+>\(\d+\)loss\(\)\n-> pass  # .*test_breakpoint"
                     r"\.py:\d+ \(loss\): jax.debug.breakpoint\(\*\*pdb_io\)   # BREAK-HERE",
                     text)
    assert "params = _bp_tree" in text and "x = " in text          # `ll` lists the source
    assert "return f(x, params, _Hashable(pdb_io))" in text       # `w`: the user's call
    assert re.search(r"-> \w+ = np\.add\(.*# test_breakpoint\.py:\d+ \(loss\)", text)  # `n`


class _Hashable(dict):
    __hash__ = object.__hash__


def test_vmap_grad_scan_and_eager():
    def g(x, pdb_io):
        z = x * 2
        jax.debug.breakpoint(**pdb_io)
        return z

    _, text = _session(lambda io_: jax.vmap(lambda x: g(x, io_))(jnp.arange(2.0)),
                       ["p (float(x), float(z))", "c"] * 2)
    assert text.count("Entering jaxlite breakpoint") == 2
    assert "(0.0, 0.0)" in text and "(1.0, 2.0)" in text
    _, text = _session(lambda io_: jax.jit(jax.vmap(lambda x: g(x, io_)))(jnp.arange(2.0)),
                       ["p (float(x), float(z))", "c"] * 2)
    assert "(0.0, 0.0)" in text and "(1.0, 2.0)" in text and "<jaxlite-jit:" in text
    _, text = _session(lambda io_: jax.grad(lambda x: g(x, io_))(1.5),
                       ["p (float(x), float(z))", "c"])
    assert "(1.5, 3.0)" in text            # primal values

    def body(c, x, pdb_io):
        c = c + x
        jax.debug.breakpoint(**pdb_io)
        return c, None
    res, text = _session(lambda io_: jax.jit(lambda xs: jax.lax.scan(
        lambda c, x: body(c, x, io_), 0.0, xs)[0])(jnp.arange(1.0, 4.0)),
        ["p float(c)", "c"] * 3)
    assert float(res) == 6.0
    assert [float(v) for v in re.findall(r"\(Pdb\) (\d+\.\d+)", text)] == [1.0, 3.0, 6.0]
    assert "scan_body" in text
    _, text = _session(lambda io_: g(4.0, io_), ["p z", "c"])
    assert re.search(r"> .*test_breakpoint\.py\(\d+\)g\(\)\n-> return z", text)
    assert "8.0" in text


def test_token_is_returned_and_breakpoint_runs_once():
    def h(x, pdb_io):
        return jax.debug.breakpoint(token=x * 3, **pdb_io) + 1
    res, text = _session(lambda io_: jax.jit(lambda x: h(x, io_))(1.0), ["p float(x)", "c"])
    assert float(res) == 4.0 and text.count("Entering") == 1 and "1.0" in text
    res, text = _session(lambda io_: jax.jit(lambda x: (h(x, io_), x)[1])(1.0), [])
    assert text == ""          # unused token: pruned, as JAX


def test_jaxpr_shows_a_debug_callback_like_jax():
    text = str(jax.make_jaxpr(lambda x: (jax.debug.breakpoint(), x)[1])(1.0))
    assert "debug_callback[\n      callback=<function breakpoint.<locals>._breakpoint_callback" \
        in text and "effect=Debug" in text


def test_real_pdb_session_in_a_subprocess():
    script = textwrap.dedent("""
        import jaxlite as jax, jaxlite.numpy as jnp
        def f(x):
            y = jnp.cos(x)
            jax.debug.breakpoint()
            return y * 2
        print("result", jax.jit(f)(jnp.zeros(2)))
    """)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    proc = subprocess.run([sys.executable, "-c", script], input="p y\nw\nc\n",
                          capture_output=True, text=True, timeout=300, cwd=root,
                          env=dict(os.environ, PYTHONPATH=root))
    out = proc.stdout
    assert "(Pdb) array([1., 1.], dtype=float32)" in out
    assert "-> pass  # <string>:5 (f)" in out and "result [2. 2.]" in out, out + proc.stderr
