"""Sharded jit on 8 simulated devices: values against NumPy, output shardings against JAX,
and the collectives the partitioner inserts (with their reasons).

Each case runs in a subprocess with the device count in its environment.
"""
import importlib.util
import json
import os
import subprocess
import sys
import textwrap

import pytest

from multidevice import run, run_json

CASES = """
mesh = jax.make_mesh((4, 2), ('x', 'y'), axis_types=(AxisType.Auto,) * 2)
S = lambda *spec: NamedSharding(mesh, P(*spec))
rng = np.random.RandomState(0)
a = rng.rand(8, 16).astype(np.float32)
b = rng.rand(16, 4).astype(np.float32)
c = rng.rand(8, 16).astype(np.float32)
cases = {
  'sin':        (lambda a: jnp.sin(a), [(a, S('x', 'y'))]),
  'add_bcast':  (lambda a, v: a + v, [(a, S('x')), (c[0], None)]),
  'mul_mixed':  (lambda a, c: a * c, [(a, S('x', 'y')), (c, S('x'))]),
  'sum_all':    (lambda a: jnp.sum(a), [(a, S('x', 'y'))]),
  'sum_ax0':    (lambda a: jnp.sum(a, 0), [(a, S('x', 'y'))]),
  'max_ax1':    (lambda a: jnp.max(a, 1), [(a, S('x', 'y'))]),
  'transpose':  (lambda a: a.T * 2, [(a, S('x', 'y'))]),
  'matmul_kk':  (lambda a, b: a @ b, [(a, S('x', 'y')), (b, S('y'))]),
  'matmul_rep': (lambda a, b: a @ b, [(a, S('x')), (b, None)]),
  'matmul_mn':  (lambda a, b: a @ b, [(a, S('x')), (b, S(None, 'y'))]),
  'gram':       (lambda a: a @ a.T, [(a, S('x'))]),
  'mlp':        (lambda a, b: jnp.mean(jnp.tanh(a @ b) ** 2), [(a, S('x')), (b, S(None, 'y'))]),
  'reshape':    (lambda a: a.reshape(4, 32).sum(1), [(a, S('x', 'y'))]),
  'argmax':     (lambda a: jnp.argmax(a, axis=1), [(a, S('x'))]),
  'cumsum':     (lambda a: jnp.cumsum(a, axis=0), [(a, S('x'))]),
  'where':      (lambda a: jnp.where(a > 0.5, a, 0.0), [(a, S('x', 'y'))]),
  'reshape_merge': (lambda a: a.reshape(128) * 2, [(a, S('x', 'y'))]),
  'reshape_split': (lambda a: a.reshape(8, 2, 8) * 2, [(a, S('x', 'y'))]),
  'slice_rows': (lambda a: a[2:6] * 2, [(a, S('x', 'y'))]),
  'slice_cols': (lambda a: a[:, 1:9] * 2, [(a, S('x', 'y'))]),
  'concat0':    (lambda a: jnp.concatenate([a, a], 0), [(a, S('x', 'y'))]),
  'concat1':    (lambda a: jnp.concatenate([a, a], 1), [(a, S('x', 'y'))]),
  'pad':        (lambda a: jnp.pad(a, ((1, 1), (0, 0))), [(a, S('x', 'y'))]),
  'rev':        (lambda a: a[::-1] * 2, [(a, S('x', 'y'))]),
  'squeeze':    (lambda a: a[None].squeeze(0) * 2, [(a, S('x', 'y'))]),
  'cumsum_split': (lambda a: jnp.cumsum(a, axis=0), [(a, S('x', 'y'))]),
  'sort0':      (lambda a: jnp.sort(a, 0), [(a, S('x', 'y'))]),
  'sort1':      (lambda a: jnp.sort(a, 1), [(a, S('x'))]),
  'argmax1':    (lambda a: jnp.argmax(a, 1), [(a, S('x'))]),
  'dyn_slice':  (lambda a: jax.lax.dynamic_slice(a, (1, 0), (4, 16)), [(a, S('x'))]),
  'stack':      (lambda a: jnp.stack([a, a]), [(a, S('x', 'y'))]),
  'split':      (lambda a: jnp.split(a, 2, axis=1)[0] * 2, [(a, S('x', 'y'))]),
  'inner_jit':  (lambda a: jnp.sinc(a) + jnp.hypot(a, a), [(a, S('x', 'y'))]),
}
out = {}
for name, (f, args) in cases.items():
    xs = [jax.device_put(v, s) if s is not None else v for v, s in args]
    r = jax.jit(f)(*xs)
    ref = f(*[jnp.asarray(v) for v, _ in args])
    idx = {str(d.id): [[sl.start, sl.stop] for sl in ix]
           for d, ix in r.sharding.devices_indices_map(r.shape).items()}
    out[name] = {'ok': bool(np.allclose(np.asarray(r), np.asarray(ref), rtol=1e-4, atol=1e-4)),
                 'idx': idx, 'shape': list(r.shape)}
print(json.dumps(out))
"""

PRELUDE_LITE = "from jaxlite.sharding import NamedSharding, PartitionSpec as P, AxisType\n"
PRELUDE_JAX = ("import jax, jax.numpy as jnp, numpy as np, json\n"
               "from jax.sharding import NamedSharding, PartitionSpec as P, AxisType\n")


def _jax_json(code):
    pytest.importorskip("jax")
    e = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=8")
    p = subprocess.run([sys.executable, "-c", PRELUDE_JAX + textwrap.dedent(code)],
                       capture_output=True, text=True, env=e, timeout=300)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def lite_cases():
    # JAXLITE_CHECK_PARTITION=1: the partitioner also runs each primitive's type rule on the
    # per-device equations it types from the program, and fails on any difference
    return run_json(PRELUDE_LITE + CASES, env={"JAXLITE_CHECK_PARTITION": "1"})


def test_sharded_jit_values_match_unsharded(lite_cases):
    bad = [k for k, v in lite_cases.items() if not v["ok"]]
    assert bad == []


# Cases where jaxlite's layout choice is the one XLA's partitioner makes.
SAME_AS_JAX = ["sin", "add_bcast", "mul_mixed", "sum_all", "sum_ax0", "max_ax1", "transpose",
               "matmul_kk", "matmul_rep", "matmul_mn", "gram", "mlp", "where",
               "reshape_merge", "reshape_split", "slice_rows", "slice_cols", "concat0",
               "concat1", "pad", "rev", "squeeze", "cumsum_split", "sort0", "sort1",
               "argmax1", "dyn_slice", "stack", "split", "inner_jit", "argmax", "cumsum",
               "reshape"]


def test_sharded_jit_output_shardings_match_jax(lite_cases):
    theirs = _jax_json(CASES)
    diff = {k: (lite_cases[k]["idx"], theirs[k]["idx"]) for k in SAME_AS_JAX
            if lite_cases[k]["idx"] != theirs[k]["idx"]}
    assert diff == {}


def test_explain_sharding_names_user_line_and_reason():
    out = run(PRELUDE_LITE + textwrap.dedent("""
    mesh = jax.make_mesh((4, 2), ('x', 'y'), axis_types=(AxisType.Auto,) * 2)
    a = jax.device_put(np.ones((8, 16), np.float32), NamedSharding(mesh, P('x', 'y')))
    b = jax.device_put(np.ones((16, 4), np.float32), NamedSharding(mesh, P('y')))
    def f(a, b):
        c = a @ b
        return c.sum()
    low = jax.jit(f).lower(a, b)
    print(low.explain_sharding())
    print(low.compile().as_text())
    print(jax.jit(lambda a: jnp.sin(a)).lower(a).explain_sharding())
    """))
    lines = out.splitlines()
    assert lines[0].startswith("<string>:9 (f): psum over ('y',): dot_general reduces a "
                               "dimension split over ('y',)")
    assert lines[1].startswith("<string>:10 (f): psum over ('x',): reduce_sum reduces")
    assert lines[2].startswith("# per-device program: mesh Mesh('x': 4, 'y': 2")
    assert any("_psum_" in ln and "(f)" in ln for ln in lines)
    assert lines[-1] == "no collectives: every device computes its block from its own data"


def test_jit_out_shardings_and_in_shardings():
    out = run(PRELUDE_LITE + textwrap.dedent("""
    mesh = jax.make_mesh((8,), ('d',), axis_types=(AxisType.Auto,))
    x = np.arange(64.0, dtype=np.float32).reshape(8, 8)
    f = jax.jit(lambda a: a * 2, in_shardings=NamedSharding(mesh, P('d')),
                out_shardings=NamedSharding(mesh, P(None, 'd')))
    r = f(x)
    print(r.sharding.spec, np.allclose(r, x * 2))
    print([s.index for s in r.addressable_shards][:2])
    g = jax.jit(lambda a: a + 1, out_shardings=NamedSharding(mesh, P('d')))
    print(g(jnp.ones((8, 2))).sharding.spec)
    """))
    lines = out.splitlines()
    assert lines[0] == "P(None, 'd') True"
    assert lines[1] == ("[(slice(None, None, None), slice(0, 1, None)), "
                        "(slice(None, None, None), slice(1, 2, None))]")
    assert lines[2] == "P('d',)"


def test_with_sharding_constraint_eager_jit_grad():
    out = run(PRELUDE_LITE + textwrap.dedent("""
    mesh = jax.make_mesh((8,), ('d',), axis_types=(AxisType.Auto,))
    s = NamedSharding(mesh, P('d'))
    x = jnp.arange(8.0)
    print(lax.with_sharding_constraint(x, s).sharding.spec)
    f = jax.jit(lambda v: lax.with_sharding_constraint(v * 2, s) + 1)
    r = f(x)
    print(r.sharding.spec, np.asarray(r).tolist())
    print(f.lower(x).explain_sharding())
    g = jax.grad(lambda v: jnp.sum(lax.with_sharding_constraint(v * v, s)))(x)
    print(np.asarray(g).tolist())
    print(jax.make_jaxpr(lambda v: lax.with_sharding_constraint(v, s))(x).eqns[0].primitive)
    """))
    lines = out.splitlines()
    assert lines[0] == "P('d',)"
    assert lines[1] == "P('d',) [1.0, 3.0, 5.0, 7.0, 9.0, 11.0, 13.0, 15.0]"
    assert lines[2] == "no collectives: every device computes its block from its own data"
    assert lines[3] == [0.0, 2.0, 4.0, 6.0, 8.0, 10.0, 12.0, 14.0].__str__()
    assert lines[4] == "sharding_constraint"


def test_compiled_as_text_is_the_per_device_program():
    """``jit(f).lower(...).compile().as_text()`` is the per-device program's source, with
    each inserted collective's reason on its line, for arguments placed by Arrays, by
    ``in_shardings`` and by ShapeDtypeStructs; an unsharded program shows its plain source."""
    out = run(PRELUDE_LITE + textwrap.dedent("""
    mesh = jax.make_mesh((4, 2), ('x', 'y'), axis_types=(AxisType.Auto,) * 2)
    S = NamedSharding(mesh, P('x', 'y'))
    a_np = np.arange(128, dtype=np.float32).reshape(8, 16)
    a = jax.device_put(a_np, S)
    def f(a):
        return jnp.cumsum(a, axis=0).sum(1)
    texts = [jax.jit(f).lower(a).compile().as_text(),
             jax.jit(f, in_shardings=S).lower(a_np).compile().as_text(),
             jax.jit(f).lower(jax.ShapeDtypeStruct((8, 16), jnp.float32, sharding=S))
                .compile().as_text()]
    print(json.dumps(texts))
    c = jax.jit(f, in_shardings=S).lower(a_np).compile()
    r = c(a)
    print(json.dumps([np.asarray(r).tolist(), np.cumsum(a_np, 0).sum(1).tolist(),
                      str(r.sharding.spec)]))
    print(json.dumps(jax.jit(f).lower(a_np).compile().as_text()))
    """))
    texts, (got, want, spec), plain = [json.loads(ln) for ln in out.splitlines()]
    assert got == want and spec == "P('x',)"
    for text in texts:
        assert text == texts[0]
        lines = text.splitlines()
        assert lines[0].startswith("# per-device program: mesh Mesh('x': 4, 'y': 2")
        assert "inputs (P('x', 'y'),)" in lines[0]
        gathers = [ln for ln in lines if "= _all_gather" in ln]
        psums = [ln for ln in lines if "= _psum" in ln]
        # cumsum needs dimension 0 whole; the sum over dimension 1 (split over 'y') is a
        # local sum plus a psum, each explained on its line
        assert len(gathers) == 1 and "(f): all_gather dimension 0 over ('x',): cumsum" in \
            gathers[0], gathers
        assert len(psums) == 1 and "(f): psum over ('y',): reduce_sum reduces" in psums[0]
    assert plain.startswith("def f(") and "_psum" not in plain and "per-device" not in plain


# What JAX 0.10.2 prints for the snippet below (checked live too when JAX is installed).
_UNUSED = """
m = jax.make_mesh((4, 2), ('x', 'y'), axis_types=(AxisType.Auto,) * 2)
x = jax.device_put(np.ones((8, 16), np.float32), NamedSharding(m, P('x', 'y')))
y = np.ones(4, np.float32)
print(jax.jit(lambda a, b: b * 2)(x, y).sharding)
print(jax.jit(lambda a, b: b * 2, keep_unused=True)(x, y).sharding)
"""
_UNUSED_JAX = ["SingleDeviceSharding(device=CpuDevice(id=0), memory_kind=device)",
               "NamedSharding(mesh=Mesh('x': 4, 'y': 2, axis_types=(Auto, Auto)), spec=P(), "
               "memory_kind=device)"]


def test_unused_sharded_argument_does_not_place_the_result():
    """An argument the program does not read is pruned (``keep_unused=False``), so its
    sharding does not decide where the result lives, as in JAX."""
    out = run(PRELUDE_LITE + textwrap.dedent(_UNUSED)).splitlines()
    assert out == _UNUSED_JAX
    if importlib.util.find_spec("jax") is not None:
        e = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=8")
        p = subprocess.run([sys.executable, "-c", PRELUDE_JAX + textwrap.dedent(_UNUSED)],
                           capture_output=True, text=True, env=e, timeout=300)
        assert p.stdout.splitlines() == _UNUSED_JAX, p.stderr
