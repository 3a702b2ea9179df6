"""jax.experimental.colocated_python: every jaxlite device is a CPU device of this process, so
colocated CPU devices are the devices themselves and a colocated function runs here on the
argument arrays (as JAX's CPU backend runs it), on a serialized copy, with JAX's
specialization API and errors. The same snippet runs on jaxlite and, when installed, on the
real JAX (its output is compared); both need cloudpickle, as JAX's colocated Python does."""
import pathlib
import subprocess
import sys
import tempfile
import textwrap

import pytest

from multidevice import device_env, normalize

pytest.importorskip("cloudpickle")

SNIPPET = r'''
import numpy as np
import jax, jax.numpy as jnp
from jax.experimental import colocated_python as cp
from jax.sharding import NamedSharding, PartitionSpec as P
devs = jax.devices()
assert len(devs) == 4
print("cpu devices", cp.colocated_cpu_devices(devs[:2]), cp.colocated_cpu_devices(devs[2:]))
mesh = jax.make_mesh((2, 2), ('a', 'b'))
cm = cp.colocated_cpu_devices(mesh)
print("mesh", cm == mesh, cm.axis_names, cm.devices.shape)
seen = []

@cp.colocated_python
def add_one(x):
    seen.append(1)           # (runs on a copy of the function: the caller's list stays empty)
    return x + 1

x = jax.device_put(np.arange(8.), NamedSharding(mesh, P('a')))
y = add_one(x)
print("out", y, y.sharding, y.committed, seen)
print("again", add_one(x), seen, add_one.__name__)
print("uncommitted", add_one(jnp.arange(3.)).sharding)
for name, call in [("scalar", lambda: add_one(1.0)),
                   ("mixed", lambda: add_one(x, jax.device_put(np.ones(2), devs[1]))),
                   ("twice", lambda: add_one.specialize(devices=devs[:1]).specialize(
                       devices=devs[:1])),
                   ("out twice", lambda: add_one.specialize(out_specs_fn=len).specialize(
                       out_specs_fn=len)),
                   ("in twice", lambda: add_one.specialize(in_specs=((), {})).specialize(
                       in_specs=((), {})))]:
    try:
        call()
        print(name, "no error")
    except Exception as e:
        print(name, type(e).__name__, str(e).split(": {")[0])

@cp.colocated_python
def noarg():
    return jnp.ones(2)
try:
    noarg()
except ValueError as e:
    print("noarg", e)

@cp.colocated_python
def bad(x):
    return 3
try:
    bad(x)
except ValueError as e:
    print("bad", e)
spec = jax.ShapeDtypeStruct((8,), jnp.float32, sharding=x.sharding)
print("out_specs_fn", add_one.specialize(out_specs_fn=lambda a: a)(x))
print("in_specs", add_one.specialize(in_specs=((spec,), {}))(x))

@cp.colocated_python
def split(k):
    a, b = jax.random.split(k)
    return a, jax.random.uniform(b, (2,))
a, u = split(jax.random.key(1))
print("keys", a.dtype, a.shape, jax.random.key_data(a), u.shape)

@cp.colocated_python_class
class Acc:
    def __init__(self, start):
        self.total = start

    def add(self, x):
        self.total = self.total + x
        return self.total

acc = Acc(1.0)
x0 = jax.device_put(np.ones(3, np.float32), devs[0])
print("acc", type(acc).__name__, acc.add(x0), acc.add(x0))
try:
    acc.add(3.0)
except ValueError as e:
    print("acc bad", e)
'''


_OUT = {}


def _run_script(backend):
    """The snippet's normalized output on ``backend`` ("jaxlite" or "jax"), run once."""
    if backend not in _OUT:
        with tempfile.TemporaryDirectory() as tmp:
            script = pathlib.Path(tmp) / "colocated.py"
            script.write_text(textwrap.dedent(SNIPPET), encoding="utf-8")
            cmd = [sys.executable, str(script)] if backend == "jax" else \
                [sys.executable, "-m", "jaxlite", "run", str(script)]
            proc = subprocess.run(cmd, capture_output=True, text=True, env=device_env(4),
                                  timeout=300)
        assert proc.returncode == 0, proc.stderr[-3000:]
        _OUT[backend] = normalize(proc.stdout)
    return _OUT[backend]


def test_colocated_python_on_jaxlite():
    out = _run_script("jaxlite")
    assert "out [1. 2. 3. 4. 5. 6. 7. 8.]" in out and "True []" in out, out
    assert "scalar AttributeError 'float' object has no attribute 'dtype'" in out
    assert "mixed ValueError All arguments must use the same device list, but got multiple " \
           "device lists" in out
    assert "twice ValueError devices already specified" in out
    assert "out twice ValueError out_specs_fn already specified" in out
    assert "in twice ValueError in_specs already specified" in out
    assert "noarg No devices found. colocated_python function without input arguments must " \
           "be first specialized with devices." in out
    assert "bad colocated_python only supports jax.Array as input and output, but got " \
           "<class 'int'>." in out
    assert "acc Acc [2. 2. 2.] [3. 3. 3.]" in out


def test_colocated_python_matches_jax():
    pytest.importorskip("jax")
    assert _run_script("jaxlite") == _run_script("jax")
