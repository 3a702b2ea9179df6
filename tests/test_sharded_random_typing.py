"""Random draws and host calls under jit over an Explicit mesh, against JAX 0.10.2 on 8
simulated devices: ``random.*(key, shape, out_sharding=)`` gives the unsharded sample's
values laid out as asked (jaxlite draws it block by block: each device hashes only the
counters of its block, as ``jax_threefry_partitionable`` allows), and ``jax.typeof`` of the
results of the raw key primitives (random_bits, random_wrap, split, fold_in over keys split
over a mesh axis), of ``pure_callback``/``io_callback`` and of ``ffi_call``.

Compared with JAX's output live when JAX 0.10.2 is installed, else with
tests/goldens/sharded_random_typing_jax_0.10.2.json (``python
tests/test_sharded_random_typing.py --record`` records it again).
"""
import json
import pathlib
import sys

import numpy as np
import pytest

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import multidevice  # noqa: E402

GOLDEN = HERE / "goldens" / "sharded_random_typing_jax_0.10.2.json"

HEAD = """
import jax, jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P, AxisType
m = jax.make_mesh((4, 2), ('x', 'y'), axis_types=(AxisType.Explicit,) * 2)
jax.set_mesh(m)
key = jax.random.key(3)
kx = jax.device_put(jax.random.split(key, 8), P('x'))
x = jax.device_put(np.arange(64.).reshape(8, 8).astype(np.float32), P('x', 'y'))
""" + multidevice.SHARD_WHERE + """
def show(label, fn, *args, outs=True):
    def g(*a):
        r = fn(*a)
        for y in (r if isinstance(r, (tuple, list)) else [r]):
            print('  ', label, 'inside', jax.typeof(y))
        return r
    try:
        r = jax.jit(g)(*args)
    except Exception as e:
        if outs:      # (JAX fails to compile the callbacks: only their types are compared)
            print(label, '!', type(e).__name__, str(e).split('\\n')[0])
        return
    if not outs:
        return
    for y in (r if isinstance(r, (tuple, list)) else [r]):
        if jnp.issubdtype(y.dtype, jax.dtypes.prng_key):
            y = jax.random.key_data(y)
        print(label, jax.typeof(y), np.round(np.asarray(y).ravel()[:6], 5).tolist())
        print('  ', where(y))
"""

CASES = {}


def case(name, code):
    CASES[name] = HEAD + code


case("out_sharding", """
for spec in [P('x', 'y'), P('x'), P(None, 'y'), P(('x', 'y'))]:
    show(f'normal {spec}', lambda k: jax.random.normal(k, (8, 6), out_sharding=spec), key)
    show(f'uniform {spec}', lambda k: jax.random.uniform(k, (8, 6), out_sharding=spec), key)
    show(f'bits {spec}', lambda k: jax.random.bits(k, (8, 6), out_sharding=spec), key)
show('normal 3d', lambda k: jax.random.normal(k, (4, 3, 2), out_sharding=P(None, None, 'y')),
     key)
show('normal + 1', lambda k: jax.random.normal(k, (8, 6), out_sharding=P('x', 'y')) + 1, key)
""")

case("auto_mesh_layouts", """
ma = jax.make_mesh((4, 2), ('x', 'y'), axis_types=(AxisType.Auto,) * 2)
jax.set_mesh(ma)
k2 = jax.random.key(3)
s = NamedSharding(ma, P('x', 'y'))
progs = {
    'out_shardings': jax.jit(lambda k: jax.random.normal(k, (8, 6)), out_shardings=s),
    'constraint': jax.jit(lambda k: jax.lax.with_sharding_constraint(
        jax.random.uniform(k, (8, 6)), s) * 2),
    'bits out_shardings': jax.jit(lambda k: jax.random.bits(k, (4, 4)),
                                  out_shardings=NamedSharding(ma, P(None, 'x'))),
}
for name, f in progs.items():
    y = f(k2)
    print(name, jax.typeof(y), np.round(np.asarray(y).ravel()[:6], 5).tolist())
    print('  ', where(y))
""")

case("key_primitives", """
show('key_data', lambda: jax.random.key_data(kx))
show('wrap', lambda: jax.random.wrap_key_data(jax.random.key_data(kx)))
show('bits', lambda: jax.vmap(lambda k: jax.random.bits(k, (3,)))(kx))
show('split', lambda: jax.vmap(lambda k: jax.random.split(k))(kx))
show('fold_in', lambda: jax.vmap(lambda k: jax.random.fold_in(k, 3))(kx))
show('normal', lambda: jax.vmap(lambda k: jax.random.normal(k, (3,)))(kx))
show('uniform arg', lambda k: jax.vmap(lambda k: jax.random.uniform(k, (2,)))(k), kx)
""")

case("callbacks", """
sds = jax.ShapeDtypeStruct((8, 8), jnp.float32)
from jax.experimental import io_callback
# (JAX types these and then fails to compile them; jaxlite runs them: see below)
show('pure_callback', lambda: jax.pure_callback(lambda a: a * 2, sds, x), outs=False)
show('pure_callback sharded sds', lambda: jax.pure_callback(
    lambda a: a * 2, jax.ShapeDtypeStruct((8, 8), jnp.float32,
                                          sharding=NamedSharding(m, P('x'))), x), outs=False)
show('io_callback', lambda: io_callback(lambda a: a * 2, sds, x), outs=False)
show('io_callback ordered', lambda: io_callback(lambda a: a * 2, sds, x, ordered=True),
     outs=False)
""")


@pytest.fixture(scope="module")
def outputs():
    return multidevice.outputs_beside_jax(CASES)


@pytest.mark.parametrize("name", list(CASES))
def test_case_matches_jax(name, outputs):
    multidevice.assert_case_matches_jax(outputs, GOLDEN, name)


def test_golden_is_current():
    multidevice.assert_golden_current(GOLDEN, CASES)


def test_sharded_draws_are_drawn_by_blocks_and_callbacks_run():
    """The per-device program draws a block (``threefry_sample_block``), never the whole
    sample (asked by ``out_sharding=``, or by the program's ``out_shardings``); callbacks over split operands run on whole values (beyond JAX, whose compiler
    rejects them)."""
    out = multidevice.run("""
    from jaxlite.sharding import PartitionSpec as P, AxisType, NamedSharding
    from jaxlite._src.compiler.partition import partition
    m = jax.make_mesh((4, 2), ('x', 'y'), axis_types=(AxisType.Explicit,) * 2)
    jax.set_mesh(m)
    key = jax.random.key(0)
    f = lambda k: jax.random.normal(k, (8, 6), out_sharding=P('x', 'y'))
    part = partition(jax.make_jaxpr(f)(key), [None])
    body = str(part.body)
    u = lambda k: jax.random.uniform(k, (8, 6))
    part2 = partition(jax.make_jaxpr(u)(key), [None], [NamedSharding(m, P('x', 'y'))])
    body2 = str(part2.body)
    x = jax.device_put(np.arange(64.).reshape(8, 8).astype(np.float32), P('x', 'y'))
    sds = jax.ShapeDtypeStruct((8, 8), jnp.float32)
    calls = []
    def host(a):
        calls.append(a.shape)
        return np.asarray(a) * 2
    y = jax.jit(lambda: jax.pure_callback(host, sds, x))()
    print(json.dumps(['threefry_sample_block' in body and 'threefry_sample_block' in body2,
                      'threefry_sample[' in body + body2,
                      np.asarray(y).tolist(), sorted(set(calls))]))
    """).strip().splitlines()[-1]
    block, whole, y, calls = json.loads(out)
    assert block and not whole
    np.testing.assert_array_equal(y, 2 * np.arange(64.).reshape(8, 8))
    assert calls == [[8, 8]]


if __name__ == "__main__":
    multidevice.golden_cli(CASES, GOLDEN, __file__)
