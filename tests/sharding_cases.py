"""Snippets for the differential sharding tests (tests/test_sharding.py).

``CASES`` are written against the JAX 0.10.2 API and run with 8 devices; ``CASES_04`` against
jax 0.4.30 (the seeds' ``PositionalSharding`` era), also with 8 devices. Each is run by
tests/sharding_runner.py with jaxlite and, where available, with JAX; the outputs JAX printed
are stored in tests/goldens/ by tests/gen_sharding_goldens.py. In a snippet, ``err(fn)``
prints ``fn()`` or ``TypeName: message`` of what it raised.

Printed device sets are compared in id order (tests/multidevice.normalize).
"""

_HEAD = """
import jax, jax.numpy as jnp
from jax.sharding import (Mesh, NamedSharding, PartitionSpec as P, SingleDeviceSharding,
                          AxisType, AbstractMesh)
devs = jax.devices()
"""

_HEAD_04 = """
import jax, jax.numpy as jnp
devs = jax.devices()
"""

CASES = {}
CASES_04 = {}


def case(name, code, table=CASES):
    table[name] = (_HEAD_04 if table is CASES_04 else _HEAD) + code


# -- 1. devices ------------------------------------------------------------------------------

case("devices", """
print(devs)
print(jax.local_devices())
print(jax.devices('cpu'))
print(jax.device_count(), jax.local_device_count(), jax.default_backend())
print(jax.process_index(), jax.process_count())
d = devs[5]
print(repr(d), str(d), d.id, d.platform, d.device_kind, d.process_index)
print(d == jax.devices()[5], d != devs[4], hash(d) == hash(jax.devices()[5]))
print(isinstance(d, jax.Device))
print(sorted({devs[3], devs[1], devs[3]}, key=lambda d: d.id))
print(jax.local_devices(process_index=0) == devs, jax.device_count('cpu'))
err(lambda: jax.devices('gpu'), message=False)
""")

case("default_device", """
x = jnp.ones(3)
print(x.devices(), x.committed, x.sharding)
with jax.default_device(devs[3]):
    y = jnp.ones(3)
    z = y + 1
    print(y.devices(), y.committed, y.sharding)
    print(z.devices(), z.committed)
    w = jax.device_put(np.ones(2))
    print(w.devices(), w.committed)
print(jnp.ones(3).devices())
print((y * 2).devices(), (y * 2).committed)
v = jax.device_put(np.arange(3.), devs[6])
with jax.default_device(devs[3]):
    print((v + jnp.ones(3)).devices(), (v + 1).committed)
with jax.default_device('cpu'):
    print(jnp.zeros(2).devices())
print(jax.config.jax_default_device)
jax.config.update('jax_default_device', devs[2])
print(jax.config.jax_default_device)
a = jnp.arange(4)
print(a.devices(), a.committed, (a + 1).devices())
with jax.default_device(devs[7]):
    print(jnp.arange(4).devices())
print(jnp.arange(4).devices())
jax.config.update('jax_default_device', None)
print(jnp.arange(4).devices(), jax.config.jax_default_device)
""")

case("jit_default_device", """
f = jax.jit(lambda a: a * 2 + 1)
with jax.default_device(devs[4]):
    r = f(np.arange(3.0))
    print(r.devices(), r.committed, r)
r = f(jax.device_put(np.arange(3.0), devs[1]))
print(r.devices(), r.committed, r.sharding)
""")

# -- 2. meshes -------------------------------------------------------------------------------

case("make_mesh", """
m = jax.make_mesh((4, 2), ('x', 'y'))
print(repr(m)); print(m)
print(m.axis_names, m.axis_sizes, m.shape, m.size, m.empty, m.axis_types)
print(m.devices)
print(m.device_ids)
print(m.devices.shape, m.devices.dtype)
print(repr(m.abstract_mesh)); print(m.abstract_mesh.axis_types, m.abstract_mesh.size)
print(m.explicit_axes, m.auto_axes, m.manual_axes)
print(m.shape_tuple)
print(m.local_devices == devs, m.is_multi_process)
m2 = jax.make_mesh((2, 2, 2), ('a', 'b', 'c'), axis_types=(AxisType.Auto,) * 3)
print(repr(m2)); print(m2.devices)
m3 = jax.make_mesh((8,), ('i',), axis_types=(AxisType.Explicit,))
print(repr(m3), m3.shape)
m4 = jax.make_mesh((2, 2), ('x', 'y'))
print(m4.devices, m4.size)
m5 = jax.make_mesh((2, 2), ('x', 'y'), devices=devs[4:])
print(m5.devices)
print(jax.make_mesh((1,), ('x',)).devices)
err(lambda: jax.make_mesh((4, 4), ('x', 'y')), message=False)
err(lambda: jax.make_mesh((4, 2), ('x',)), message=False)
""")

case("mesh_ctor", """
import numpy as np
arr = np.array(devs).reshape(2, 4)
m = Mesh(arr, ('a', 'b'))
print(repr(m)); print(m); print(m.axis_types, m.shape)
m1 = Mesh(devs, 'x')
print(repr(m1), m1.axis_names)
mt = Mesh(arr, ('a', 'b'), axis_types=(AxisType.Explicit, AxisType.Auto))
print(mt, mt.explicit_axes, mt.auto_axes)
mr = Mesh(np.array(devs)[::-1].reshape(4, 2), ('x', 'y'))
print(mr.device_ids)
print(m == Mesh(arr, ('a', 'b')), hash(m) == hash(Mesh(arr, ('a', 'b'))))
print(m == Mesh(arr, ('a', 'c')), m == mt, m == Mesh(arr.T, ('b', 'a')))
print(m.size, m.empty)
e = jax.sharding.get_mesh()
print(e, repr(e), e.empty, e.size, e.axis_names, e.shape)
err(lambda: Mesh(np.empty((0,), dtype=object), ()))
err(lambda: Mesh(arr, ('a',)), message=False)
""")

case("mesh_context", """
m = jax.make_mesh((4, 2), ('x', 'y'))
print(jax.sharding.get_abstract_mesh())
print(jax.sharding.get_abstract_mesh().empty)
with jax.set_mesh(m):
    print(jax.sharding.get_abstract_mesh())
    print(jax.sharding.get_mesh())
    x = jax.device_put(np.arange(16.).reshape(8, 2), P('x'))
    print(x.sharding)
    print(jax.typeof(x))
print(jax.sharding.get_abstract_mesh().empty)
err(lambda: jax.device_put(np.arange(8.), P('x')), message=False)
ma = jax.make_mesh((4, 2), ('x', 'y'), axis_types=(AxisType.Auto,) * 2)
with ma:
    print(jax.sharding.get_abstract_mesh())
    y = jax.device_put(np.arange(8.), P('y'))
    print(y.sharding)
am = AbstractMesh((2, 4), ('p', 'q'))
print(am, am.axis_types, am.size, am.shape)
am2 = AbstractMesh((2, 4), ('p', 'q'), axis_types=(AxisType.Explicit, AxisType.Auto))
print(am2)
print(am == AbstractMesh((2, 4), ('p', 'q')), am == am2)
print(m.abstract_mesh == jax.make_mesh((4, 2), ('x', 'y')).abstract_mesh)
with jax.sharding.use_abstract_mesh(am2):
    print(jax.sharding.get_abstract_mesh())
""")

case("create_device_mesh", """
from jax.experimental import mesh_utils
d = mesh_utils.create_device_mesh((8,))
print(d, d.shape, type(d).__name__)
print(mesh_utils.create_device_mesh((4, 2)))
print(mesh_utils.create_device_mesh((2, 2, 2)))
print(mesh_utils.create_device_mesh((2, 2), devs[:4]))
print(mesh_utils.create_device_mesh((2, 1), devs[6:]))
err(lambda: mesh_utils.create_device_mesh((3, 2)), message=False)
""")

# -- 3. partition specs and shardings --------------------------------------------------------

case("partition_spec", """
print(P(), P('x'), P('x', None), P(None, 'y'), P(('x', 'y'),), P(('x', 'y'), None))
print(repr(P('x', 'y')), str(P('x')), len(P('x', None)), P('x', 'y')[1], tuple(P('x', None)))
print(P('x') == P('x', None), P('x') == P('x', None, None), P(None) == P())
print(hash(P('x')) == hash(P('x', None)), P('x') == P('y'), P(('x',)) == P('x'))
print(P('x') == ('x',), P(('x', 'y')) == P(('y', 'x')))
print(P(P.UNCONSTRAINED, 'x'), P.UNCONSTRAINED)
print(P('x', P.UNCONSTRAINED) == P('x'), P('x', P.UNCONSTRAINED) == P('x', P.UNCONSTRAINED))
print(isinstance(P('x'), tuple))
print(P(('x', 'y'), 'z')[0])
""")

case("named_sharding_2d", """
m = jax.make_mesh((4, 2), ('x', 'y'))
for spec in [P('x', 'y'), P('x'), P(None, 'y'), P('y', 'x'), P(('x', 'y')), P(None, ('y', 'x')),
             P(), P('y'), P(None, 'x')]:
    s = NamedSharding(m, spec)
    print(repr(s))
    print(' spec', s.spec, 'mem', s.memory_kind, 'n', s.num_devices,
          'repl', s.is_fully_replicated, 'addr', s.is_fully_addressable)
    print(' shard_shape', s.shard_shape((8, 8)))
    err(lambda: s.shard_shape((16, 4)))
    print(' dim', s.devices_indices_map((8, 8)))
    err(lambda: s.addressable_devices_indices_map((16, 4)) == s.devices_indices_map((16, 4)))
    print(' set', s.device_set == set(devs), sorted(d.id for d in s.addressable_devices))
""")

case("named_sharding_ranks", """
m = jax.make_mesh((2, 2, 2), ('a', 'b', 'c'))
s = NamedSharding(m, P('a', None, ('b', 'c')))
print(s)
print(s.devices_indices_map((4, 3, 8)))
print(s.shard_shape((4, 3, 8)))
s1 = NamedSharding(m, P('c'))
print(s1.devices_indices_map((6,)))
print(s1.devices_indices_map((6, 2)))
print(NamedSharding(m, P()).devices_indices_map(()))
print(NamedSharding(m, P()).shard_shape(()))
m1 = jax.make_mesh((8,), ('i',))
print(NamedSharding(m1, P('i')).devices_indices_map((16,)))
print(NamedSharding(m1, P(None, 'i')).shard_shape((3, 8)))
print(NamedSharding(m1, P('i', None)).devices_indices_map((8,)))
err(lambda: NamedSharding(m1, P('j')))
err(lambda: NamedSharding(m1, P('i', 'i')))
err(lambda: NamedSharding(m, P(('a', 'b'), 'a')))
err(lambda: NamedSharding(m, P(P.UNCONSTRAINED)))
print(NamedSharding(jax.make_mesh((8,), ('i',), axis_types=(AxisType.Auto,)), P(P.UNCONSTRAINED)))
err(lambda: NamedSharding(m1, P('i'), memory_kind='foo'))
print(NamedSharding(m1, P('i'), memory_kind='pinned_host'))
err(lambda: NamedSharding(m1, P('i')).devices_indices_map((6,)))
err(lambda: NamedSharding(m1, P(None, 'i')).shard_shape((8, 4)))
ab = NamedSharding(m.abstract_mesh, P('a'))
print(ab, ab.num_devices, ab.memory_kind)
err(lambda: ab.device_set)
""")

case("named_sharding_eq", """
m = jax.make_mesh((4, 2), ('x', 'y'))
a = NamedSharding(m, P('x'))
b = NamedSharding(m, P('x', None))
c = NamedSharding(jax.make_mesh((4, 2), ('x', 'y')), P('x'))
print(a == b, hash(a) == hash(b), a == c, hash(a) == hash(c))
print(a == NamedSharding(m, P('y')), a == NamedSharding(m, P(('x', 'y'))))
print(a.is_equivalent_to(b, 2), a.is_equivalent_to(NamedSharding(m, P('y')), 2))
m2 = Mesh(np.array(devs).reshape(4, 2), ('x', 'y'))
print(a == NamedSharding(m2, P('x')), a.is_equivalent_to(NamedSharding(m2, P('x')), 2))
mt = Mesh(np.array(devs).reshape(8), ('z',))
print(NamedSharding(m, P(('x', 'y'))).is_equivalent_to(NamedSharding(mt, P('z')), 1))
print(NamedSharding(m, P()).is_equivalent_to(NamedSharding(mt, P()), 2))
print(NamedSharding(m, P()).is_equivalent_to(NamedSharding(mt, P('z')), 1))
print(a.update(spec=P('y')))
print(a.update(spec=P(None, ('x', 'y'))).spec, a.update(spec=('x', None)).spec)
print(a.with_memory_kind('device') == a, a.update(memory_kind='pinned_host'))
print(a.mesh is m, a.spec)
print({a: 1}[b])
sd = SingleDeviceSharding(devs[2])
print(sd.is_equivalent_to(NamedSharding(Mesh(np.array(devs[2:3]), ('q',)), P('q')), 1))
print(sd.is_equivalent_to(NamedSharding(Mesh(np.array(devs[1:2]), ('q',)), P('q')), 1))
""")

case("single_device_sharding", """
s = SingleDeviceSharding(devs[3])
print(repr(s)); print(s)
print(s.device_set, s.num_devices, s.is_fully_replicated, s.is_fully_addressable, s.memory_kind)
print(s.devices_indices_map((4, 2)))
print(s.shard_shape((4, 2)), s.addressable_devices_indices_map((3,)))
print(s == SingleDeviceSharding(devs[3]), s == SingleDeviceSharding(devs[2]))
print(hash(s) == hash(SingleDeviceSharding(devs[3])))
print(jax.sharding.make_single_device_sharding(devs[1]) if hasattr(jax.sharding, 'make_single_device_sharding') else None)
""")

# -- 4. arrays -------------------------------------------------------------------------------

case("array_attrs", """
m = jax.make_mesh((4, 2), ('x', 'y'))
s = NamedSharding(m, P('x', 'y'))
v = np.arange(32, dtype=np.float32).reshape(8, 4)
x = jax.device_put(v, s)
print(x.sharding == s, x.committed, x.is_fully_replicated, x.is_fully_addressable)
print(x.devices() == set(devs), len(x.addressable_shards), len(x.global_shards))
print(x.shape, x.dtype, x.size, x.ndim, x.nbytes, x.weak_type)
for sh in x.addressable_shards:
    print(repr(sh.device), sh.index, sh.replica_id, sh.data.shape, sh.data.sharding)
print(x.addressable_shards[5].data)
print(x.addressable_data(2))
print(x.block_until_ready() is x, x.copy_to_host_async())
print(np.asarray(x).tolist() == v.tolist(), np.asarray(x).dtype)
print(x)
print(repr(x))
print(x.sharding.shard_shape(x.shape))
print(x.is_deleted())
x.delete()
print(x.is_deleted())
err(lambda: np.asarray(x))
err(lambda: x + 1, message=False)
""")

case("array_more", """
m = jax.make_mesh((4, 2), ('x', 'y'))
v = np.arange(32, dtype=np.float32).reshape(8, 4)
x = jax.device_put(v, NamedSharding(m, P('x', 'y')))
r = jax.device_put(v, NamedSharding(m, P()))
h = jax.device_put(v, NamedSharding(m, P('x')))
print(x.addressable_shards[3])
print(isinstance(x.addressable_shards[0], jax.Shard))
print(x.addressable_shards is x.addressable_shards, x.global_shards[0] is x.addressable_shards[0])
print(x.device, x.is_ready())
print(x.on_device_size_in_bytes(), r.on_device_size_in_bytes(), h.on_device_size_in_bytes())
err(lambda: x.unsafe_buffer_pointer())
sd = x.addressable_shards[0].data
print(len(sd.addressable_shards), sd.committed, jax.typeof(sd), sd.sharding)
for f in (jnp.asarray, jnp.array, lambda a: a.copy(), jnp.copy):
    print(f(x).sharding.spec, f(r).sharding.spec)
c = jax.device_put(np.arange(4.), devs[2])
print(c.copy().devices(), c.copy().committed, jnp.array(c).devices())
print(float(jnp.sum(x)), x.tolist()[0], list(h)[0].sharding)
d = devs[1]
mem = d.default_memory()
print(repr(mem), mem, mem.kind, mem.process_index, mem.addressable_by_devices())
print(d.addressable_memories(), [k.kind for k in d.addressable_memories()])
print(d.memory('pinned_host'), mem == d.default_memory(), hash(mem) == hash(d.default_memory()))
err(lambda: d.memory('foo'))
""")

case("device_put_identity", """
m = jax.make_mesh((4, 2), ('x', 'y'))
x = jax.device_put(np.arange(32, dtype=np.float32).reshape(8, 4), NamedSharding(m, P('x', 'y')))
c = jax.device_put(np.arange(4.), devs[2])
u = jnp.arange(3.)
print(jax.device_put(c) is c, jax.device_put(c, donate=True) is c,
      jax.device_put(c, devs[2], donate=True) is c)
print(jax.device_put(u) is u, jax.device_put(u, may_alias=False) is u,
      jax.device_put(u, may_alias=True) is u)
print(jax.device_put(x, may_alias=False) is x, jax.device_put(x, x.sharding, may_alias=False) is x,
      jax.device_put(x, x.sharding) is x, jax.device_put(x) is x)
a = jax.device_put(np.arange(4.), devs[2])
b = jax.device_put(a, devs[5], donate=True)
print(a.is_deleted(), b.devices())
y = jax.device_put(np.ones((8, 4), np.float32), NamedSharding(m, P('x')))
z = jax.device_put(y, NamedSharding(m, P('y')), donate=True)
print(y.is_deleted(), z.sharding.spec, np.asarray(z).sum())
""")

case("array_replicated", """
m = jax.make_mesh((4, 2), ('x', 'y'))
r = jax.device_put(np.arange(6.), NamedSharding(m, P()))
print(r.sharding, r.is_fully_replicated)
print([(s.device.id, s.index, s.replica_id) for s in r.addressable_shards])
h = jax.device_put(np.arange(16.).reshape(4, 4), NamedSharding(m, P('y')))
print([(s.device.id, s.index, s.replica_id) for s in h.addressable_shards])
print(h.is_fully_replicated, np.asarray(h)[3].tolist())
for sh in h.global_shards[:3]:
    print(sh.data)
""")

case("array_uncommitted", """
x = jnp.arange(4.)
print(x.committed, x.sharding, x.devices(), x.is_fully_replicated, x.is_fully_addressable)
print([(repr(s.device), s.index, s.replica_id) for s in x.addressable_shards])
print(x.addressable_shards[0].data)
y = jax.device_put(x, devs[3])
print(y.committed, y.sharding, y.devices(), x.committed)
print(jax.device_put(x).committed, jax.device_put(y).committed)
print(jax.device_put(y).devices(), jax.device_put(y, None).devices())
z = jax.device_put(y, devs[5])
print(z.devices(), z.sharding, np.asarray(z).tolist())
""")

# -- 5. placement ------------------------------------------------------------------------------

case("device_put_targets", """
m = jax.make_mesh((4, 2), ('x', 'y'))
tree = {'a': np.ones((8, 2), np.float32), 'b': (np.zeros(4), np.arange(4))}
out = jax.device_put(tree, devs[2])
print(jax.tree.map(lambda l: (l.devices(), l.committed, l.dtype), out))
out = jax.device_put(tree, NamedSharding(m, P('x')))
print(jax.tree.map(lambda l: (l.sharding.spec, l.shape, l.dtype, l.weak_type), out))
out = jax.device_put(tree, {'a': NamedSharding(m, P('x', 'y')), 'b': devs[1]})
print(jax.tree.map(lambda l: l.sharding, out))
out = jax.device_put(tree, {'a': NamedSharding(m, P('x', 'y')), 'b': (devs[1], devs[7])})
print(jax.tree.map(lambda l: l.devices(), out))
print(jax.device_put(2.5).dtype, jax.device_put(2.5).weak_type, jax.device_put(True).dtype)
print(jax.device_put(np.arange(3), devs[3]).dtype)
print(jax.device_put([1, 2], devs[3]))
x = jax.device_put(np.arange(8.), devs[4])
print(jax.device_put(x, NamedSharding(m, P('x'))).sharding)
print(jax.device_put(x, donate=True).devices())
print(jax.device_put(x, devs[4], may_alias=True) is x, jax.device_put(x, devs[4], may_alias=False) is x)
print(jax.device_put(x, SingleDeviceSharding(devs[4])) is x, jax.device_put(x, x.sharding) is x)
print(np.asarray(jax.device_put(x, devs[4], may_alias=True)).tolist() == np.asarray(x).tolist())
y = jax.device_put(np.arange(8.), NamedSharding(m, P('x')))
print(jax.device_put(y, devs[6]).sharding, np.asarray(jax.device_put(y, devs[6])).tolist())
print(jax.device_put(y, NamedSharding(m, P('y'))).sharding.spec)
print(jax.device_put(y, NamedSharding(m, P('x'))) is y)
err(lambda: jax.device_put(tree, {'a': devs[0]}), message=False)
err(lambda: jax.device_put(object(), devs[0]), message=False)
""")

case("device_put_errors", """
m = jax.make_mesh((4, 2), ('x', 'y'))
err(lambda: jax.device_put(np.ones((6, 4)), NamedSharding(m, P('x'))))
err(lambda: jax.device_put(np.ones((8, 3)), NamedSharding(m, P('x', 'y'))))
err(lambda: jax.device_put(np.ones((8, 6)), NamedSharding(m, P(None, ('x', 'y')))))
print(jax.device_put(np.ones((4, 4)), NamedSharding(m, P())).shape)
ma = jax.make_mesh((4, 2), ('x', 'y'), axis_types=(AxisType.Auto,) * 2)
err(lambda: jax.device_put(np.ones((6, 4)), NamedSharding(ma, P('x'))))
""")

case("mixed_devices_errors", """
a = jax.device_put(jnp.ones(3), devs[1])
b = jax.device_put(jnp.ones(3), devs[2])
err(lambda: a + b)
err(lambda: jnp.dot(a, b), message=False)
err(lambda: jax.jit(lambda p, q: p * q)(a, b), message=False)
err(lambda: jnp.stack([a, b]), message=False)
m = jax.make_mesh((4, 2), ('x', 'y'))
c = jax.device_put(np.ones((8, 2), np.float32), NamedSharding(m, P('x')))
err(lambda: (c + jax.device_put(np.ones((8, 2), np.float32), devs[0])).sharding, message=False)
print((c + jnp.ones((8, 2))).sharding)
print((a + jnp.ones(3)).devices(), (a + 1).devices(), (jnp.ones(3) * a).committed)
""")

case("mixed_shardings", """
def e(label, f):
    try:
        r = f()
        print(label, r.sharding.spec if hasattr(r.sharding, 'spec') else r.sharding,
              np.asarray(r).sum())
    except Exception as ex:
        print(label, type(ex).__name__, ex)
for types in [None, (AxisType.Auto,) * 2]:
    m = jax.make_mesh((4, 2), ('x', 'y'), axis_types=types)
    m8 = jax.make_mesh((8,), ('i',), axis_types=None if types is None else (AxisType.Auto,))
    v = np.arange(16, dtype=np.float32).reshape(8, 2)
    c = jax.device_put(v, NamedSharding(m, P('x')))
    e('c+d0', lambda: c + jax.device_put(v, devs[0]))
    if types is None:
        e('c+m8', lambda: c + jax.device_put(v, NamedSharding(m8, P('i'))))
    e('c+m8rep', lambda: c + jax.device_put(v, NamedSharding(m8, P())))
    e('c+cy', lambda: c + jax.device_put(v, NamedSharding(m, P(None, 'y'))))
    e('cy*c', lambda: jax.device_put(v, NamedSharding(m, P(None, 'y'))) * c)
    e('c+rep', lambda: c + jax.device_put(v, NamedSharding(m, P())))
    e('c*scalar arr', lambda: c * jnp.float32(2))
    e('c+row', lambda: c + jax.device_put(v[0], NamedSharding(m, P('y'))))
    e('sum all', lambda: c.sum())
    e('sub', lambda: jax.device_put(np.ones((4, 4), np.float32), NamedSharding(m, P('y', 'x'))) + 1)
    mm = jax.make_mesh((2, 2), ('x', 'y'), devices=devs[:4], axis_types=types)
    e('c+4dev', lambda: c + jax.device_put(v, NamedSharding(mm, P('x'))))
""")

case("make_array_from", """
m = jax.make_mesh((4, 2), ('x', 'y'))
s = NamedSharding(m, P('x', 'y'))
full = np.arange(64, dtype=np.float32).reshape(8, 8)
seen = []
def cb(idx):
    seen.append(idx)
    return full[idx]
x = jax.make_array_from_callback((8, 8), s, cb)
print(x.sharding == s, x.shape, x.dtype, np.array_equal(np.asarray(x), full), len(seen))
print(sorted(seen, key=str)[:2])
r = jax.make_array_from_callback((4,), NamedSharding(m, P()), lambda idx: np.arange(4.)[idx])
print(r.is_fully_replicated, np.asarray(r).tolist())
for spec in (P(), P('x'), P(None, 'y')):
    calls = []
    a = jax.make_array_from_callback((8, 8), NamedSharding(m, spec),
                                     lambda idx: calls.append(idx) or full[idx])
    print(spec, len(calls), np.array_equal(np.asarray(a), full))
full[0, 0] = -1.0
print(np.asarray(x)[0, 0], np.asarray(a)[0, 0])
shards = [jax.device_put(full[idx], d) for d, idx in s.addressable_devices_indices_map((8, 8)).items()]
y = jax.make_array_from_single_device_arrays((8, 8), s, shards)
print(y.sharding == s, np.array_equal(np.asarray(y), full), y.committed)
z = jax.make_array_from_process_local_data(s, full)
print(z.sharding == s, np.array_equal(np.asarray(z), full))
z2 = jax.make_array_from_process_local_data(s, full, (8, 8))
print(z2.shape)
err(lambda: jax.make_array_from_single_device_arrays((8, 8), s, shards[:1] * 8), message=False)
bad = [jax.device_put(np.zeros((3, 3), np.float32), d) for d in s.addressable_devices_indices_map((8, 8))]
err(lambda: jax.make_array_from_single_device_arrays((8, 8), s, bad), message=False)
""")

case("device_get", """
m = jax.make_mesh((4, 2), ('x', 'y'))
x = jax.device_put(np.arange(16.).reshape(8, 2), NamedSharding(m, P('x')))
g = jax.device_get({'x': x, 'n': 3, 'y': jax.device_put(jnp.ones(2), devs[5])})
print(type(g['x']).__name__, g['x'].dtype, g['x'].shape, g['n'], g['y'])
print(np.array_equal(g['x'], np.arange(16.).reshape(8, 2)))
print(type(jax.device_get(jnp.float32(2))).__name__)
""")

# -- 6. computation follows sharding -----------------------------------------------------------

case("follow_sharding_named", """
m = jax.make_mesh((4, 2), ('x', 'y'))
v = np.linspace(-2, 2, 64, dtype=np.float32).reshape(8, 8)
x = jax.device_put(v, NamedSharding(m, P('x', 'y')))
def show(label, fn):
    try:
        r = fn()
    except Exception as e:
        print(label, type(e).__name__)
    else:
        print(label, r.sharding.spec if hasattr(r.sharding, 'spec') else r.sharding, r.shape,
              r.dtype)
show('sin', lambda: jnp.sin(x))
show('x+1', lambda: x + 1)
show('x*x', lambda: x * x)
show('x+np', lambda: x + v)
show('neg', lambda: -x)
show('exp', lambda: jnp.exp(x))
show('where', lambda: jnp.where(x > 0, x, 0.0))
show('astype', lambda: x.astype(jnp.int32))
show('T', lambda: x.T)
show('sum0', lambda: jnp.sum(x, axis=0))
show('sum1', lambda: jnp.sum(x, axis=1))
show('sum', lambda: jnp.sum(x))
show('max1', lambda: jnp.max(x, axis=1))
show('mean', lambda: x.mean(axis=0))
y = jax.device_put(v, NamedSharding(m, P('x', None)))
z = jax.device_put(v, NamedSharding(m, P(None, 'y')))
show('y+y', lambda: y + y)
show('y*2', lambda: y * 2)
show('sum_y1', lambda: y.sum(axis=1))
show('y.T', lambda: y.T)
show('z+z', lambda: z + z)
show('z.sum0', lambda: z.sum(axis=0))
print(np.allclose(np.asarray(jnp.sin(x)), np.sin(v)), np.allclose(np.asarray(x.sum(0)), v.sum(0)))
print(np.allclose(np.asarray(y @ z), v @ v, rtol=1e-5, atol=1e-5))
""")

case("follow_sharding_auto", """
m = jax.make_mesh((4, 2), ('x', 'y'), axis_types=(AxisType.Auto,) * 2)
v = np.linspace(-2, 2, 64, dtype=np.float32).reshape(8, 8)
x = jax.device_put(v, NamedSharding(m, P('x', 'y')))
def show(label, fn):
    try:
        r = fn()
    except Exception as e:
        print(label, type(e).__name__)
    else:
        print(label, r.sharding.spec if hasattr(r.sharding, 'spec') else r.sharding, r.shape)
show('sin', lambda: jnp.sin(x))
show('x+1', lambda: x + 1)
show('x*x', lambda: x * x)
show('T', lambda: x.T)
show('sum1', lambda: jnp.sum(x, axis=1))
y = jax.device_put(v, NamedSharding(m, P('x', None)))
show('y+y', lambda: y + y)
show('y*2', lambda: y * 2)
show('sum_y1', lambda: y.sum(axis=1))
show('y.T', lambda: y.T)
print(np.allclose(np.asarray(jnp.sin(x)), np.sin(v)))
print(np.allclose(np.asarray(jnp.cos(y) + y), np.cos(v) + v))
""")

case("ops_follow", """
rng = np.random.default_rng(2)
v = rng.standard_normal((8, 8)).astype(np.float32)
w = rng.standard_normal((8, 4)).astype(np.float32)
OPS = {
    'keepdims': lambda a: a - a.mean(1, keepdims=True),
    'outer': lambda a: a[:, :, None] * a[:, None, :],
    'einsum': lambda a: jnp.einsum('ij,jk->ik', a, a.T),
    'matmul_w': lambda a: a @ w,
    'logsumexp': lambda a: jax.nn.logsumexp(a, 1),
    'expand': lambda a: jnp.expand_dims(a, 0),
    'expand2': lambda a: a[:, None],
    'bcast': lambda a: jnp.broadcast_to(a, (2, 8, 8)),
    'slice': lambda a: a[2:6, ::2],
    'max0': lambda a: a.max(0),
    'softmax': lambda a: jax.nn.softmax(a, -1),
    'where_row': lambda a: jnp.where(a > 0, a, w[:, :1]),
    'astype': lambda a: a.astype(jnp.bfloat16),
    'argmax0': lambda a: jnp.argmax(a, 0),
    'argmax1': lambda a: jnp.argmax(a, 1),
    'sort1': lambda a: jnp.sort(a, 1),
    'concat1': lambda a: jnp.concatenate([a, a * 2], 1),
    'concat0': lambda a: jnp.concatenate([a, a * 2], 0),
    'stack': lambda a: jnp.stack([a, a]),
    'gather': lambda a: a[jnp.array([3, 1, 7])],
    'reshape': lambda a: a.reshape(4, 16),
    'reshape2': lambda a: a.reshape(8, 2, 4),
    'flatten': lambda a: a.ravel(),
    'squeeze': lambda a: a[None].squeeze(0),
    'rows': lambda a: a[:4],
    'pad': lambda a: jnp.pad(a, 1),
    'rev': lambda a: a[::-1],
    'cumsum0': lambda a: jnp.cumsum(a, 0),
}
def run_ops(names, types):
    m = jax.make_mesh((4, 2), ('x', 'y'), axis_types=types)
    for spec in [P('x', 'y'), P('x'), P(None, 'y')]:
        x = jax.device_put(v, NamedSharding(m, spec))
        for name in names:
            try:
                r = OPS[name](x)
            except Exception as e:
                print(spec, name, type(e).__name__)
            else:
                print(spec, name, r.sharding.spec, r.shape, r.dtype)

run_ops(['astype', 'bcast', 'einsum', 'expand', 'expand2', 'keepdims', 'logsumexp', 'matmul_w',
         'max0', 'outer', 'slice', 'softmax', 'where_row'], (AxisType.Auto,) * 2)
run_ops(['astype', 'bcast', 'expand', 'expand2', 'keepdims', 'logsumexp', 'matmul_w', 'max0',
         'softmax', 'where_row'], None)
""")

case("follow_device", """
x = jax.device_put(np.arange(6.).reshape(2, 3), devs[3])
for r in [jnp.sin(x), x + 1, x @ x.T, x.sum(), x[0], jnp.concatenate([x, x]), x.reshape(3, 2)]:
    print(r.devices(), r.committed, r.sharding, r.shape)
print(jax.jit(lambda a: a * 2)(x).devices())
print(jax.jit(lambda a: a.sum())(x).committed)
k = jax.device_put(jax.random.key(0), devs[5])
print(jax.random.normal(k, (2,)).devices())
""")

case("jit_shardings", """
m = jax.make_mesh((4, 2), ('x', 'y'))
x = jax.device_put(np.arange(32, dtype=np.float32).reshape(8, 4), NamedSharding(m, P('x', 'y')))
f = jax.jit(lambda a: jnp.sin(a) * 2)
r = f(x)
print(r.sharding, np.allclose(np.asarray(r), np.sin(np.arange(32).reshape(8, 4)) * 2))
g = jax.jit(lambda a: a + 1, out_shardings=NamedSharding(m, P('x')))
print(g(x).sharding)
print(g(np.ones((8, 2), np.float32)).sharding)
h = jax.jit(lambda a: a * 2, in_shardings=NamedSharding(m, P(None, 'y')))
print(h(np.ones((4, 4), np.float32)).sharding)
""")

# -- 7. types --------------------------------------------------------------------------------

case("typeof", """
m = jax.make_mesh((4, 2), ('x', 'y'))
x = jax.device_put(np.ones((8, 4), np.float32), NamedSharding(m, P('x')))
print(jax.typeof(x)); print(repr(jax.typeof(x)))
print(jax.typeof(jax.device_put(np.ones((8, 4), np.float32), NamedSharding(m, P('x', 'y')))))
print(jax.typeof(jax.device_put(np.ones((8, 4), np.float32), NamedSharding(m, P(('x', 'y'))))))
print(jax.typeof(jax.device_put(np.ones((8, 4), np.float32), NamedSharding(m, P(None, 'y')))))
print(jax.typeof(jax.device_put(np.ones((8, 4), np.float32), NamedSharding(m, P()))))
print(jax.typeof(jnp.sin(x)), jax.typeof(x.sum(axis=1)))
print(jax.typeof(x).sharding)
ma = jax.make_mesh((4, 2), ('x', 'y'), axis_types=(AxisType.Auto,) * 2)
xa = jax.device_put(np.ones((8, 4), np.float32), NamedSharding(ma, P('x')))
print(jax.typeof(xa), repr(jax.typeof(xa)))
mm = jax.make_mesh((4, 2), ('x', 'y'), axis_types=(AxisType.Explicit, AxisType.Auto))
print(jax.typeof(jax.device_put(np.ones((8, 4), np.float32), NamedSharding(mm, P('x', 'y')))))
print(jax.typeof(jnp.ones((3, 4)))); print(jax.typeof(1.0)); print(jax.typeof(jnp.float32(1)))
print(str(jax.typeof(jnp.ones((3, 4))))); print(repr(jax.typeof(2)))
print(jax.typeof(jax.device_put(jnp.ones(3), devs[2])))
print(jax.typeof(np.arange(3)))
""")

# -- 8. the seed cells -------------------------------------------------------------------------

case("seed002_transfer", """
x = jnp.ones((8, 8))
print("global devices:", jax.devices())
print("local devices:", jax.local_devices())
print("cpu devices:", jax.devices("cpu"))
print("x devices:", x.devices())
y = jax.device_put(x, jax.devices("cpu")[1])
z = jax.device_get(y)
print("x devices:", x.devices())
print("y devices:", y.devices())
print("z type:", type(z))
""")

case("seed000_sin_sharded", """
from jax.experimental import mesh_utils
mesh = Mesh(mesh_utils.create_device_mesh((4, 2)), ('a', 'b'))
x = jax.random.normal(jax.random.PRNGKey(0), (64, 64))
x = jax.device_put(x, NamedSharding(mesh, P('a', 'b')))
y = jnp.sin(x)
print(y.sharding)
print(sorted((s.device.id, s.index) for s in y.addressable_shards)[:3])
print(np.allclose(np.asarray(y), np.sin(np.asarray(x))))
""")

# -- known gaps (tests/test_sharding.py expects these to differ from JAX: strict xfails) -----

GAPS = {
    "gap_uncommitted_device": "an uncommitted array does not remember the default device it "
                              "was made under (it reports the current default device)",
    "gap_jit_shardings": "jit does not check out_shardings against the arguments' devices",
    "gap_auto_xla_choice": "over Auto axes XLA may pick the more finely split operand's layout "
                           "for the result; jaxlite keeps the first operand's mesh",
}

case("gap_uncommitted_device", """
with jax.default_device(devs[3]):
    y = jnp.ones(3)
    r = jax.jit(lambda a: a * 2 + 1)(np.arange(3.0))
print(y.devices(), r.devices())
""")

case("explicit_rules_eager", """
m = jax.make_mesh((4, 2), ('x', 'y'))
v = np.linspace(-2, 2, 64, dtype=np.float32).reshape(8, 8)
x = jax.device_put(v, NamedSharding(m, P('x', 'y')))
y = jax.device_put(v, NamedSharding(m, P('x', None)))
def show(label, fn):
    try:
        r = fn()
    except Exception as e:
        print(label, type(e).__name__)
    else:
        print(label, r.sharding.spec, r.shape)
show('cumsum', lambda: jnp.cumsum(x, axis=1))
show('reshape', lambda: y.reshape(8, 2, 4))
show('y[0]', lambda: y[0])
show('y[:, 0]', lambda: y[:, 0])
show('y[2:6]', lambda: y[2:6])
""")

case("structural_rules", """
rng = np.random.default_rng(2)
v = rng.standard_normal((8, 8)).astype(np.float32)
w = rng.standard_normal((8, 4)).astype(np.float32)
OPS = {
    'keepdims': lambda a: a - a.mean(1, keepdims=True),
    'outer': lambda a: a[:, :, None] * a[:, None, :],
    'einsum': lambda a: jnp.einsum('ij,jk->ik', a, a.T),
    'matmul_w': lambda a: a @ w,
    'logsumexp': lambda a: jax.nn.logsumexp(a, 1),
    'expand': lambda a: jnp.expand_dims(a, 0),
    'expand2': lambda a: a[:, None],
    'bcast': lambda a: jnp.broadcast_to(a, (2, 8, 8)),
    'slice': lambda a: a[2:6, ::2],
    'max0': lambda a: a.max(0),
    'softmax': lambda a: jax.nn.softmax(a, -1),
    'where_row': lambda a: jnp.where(a > 0, a, w[:, :1]),
    'astype': lambda a: a.astype(jnp.bfloat16),
    'argmax0': lambda a: jnp.argmax(a, 0),
    'argmax1': lambda a: jnp.argmax(a, 1),
    'sort1': lambda a: jnp.sort(a, 1),
    'concat1': lambda a: jnp.concatenate([a, a * 2], 1),
    'concat0': lambda a: jnp.concatenate([a, a * 2], 0),
    'stack': lambda a: jnp.stack([a, a]),
    'gather': lambda a: a[jnp.array([3, 1, 7])],
    'reshape': lambda a: a.reshape(4, 16),
    'reshape2': lambda a: a.reshape(8, 2, 4),
    'flatten': lambda a: a.ravel(),
    'squeeze': lambda a: a[None].squeeze(0),
    'rows': lambda a: a[:4],
    'pad': lambda a: jnp.pad(a, 1),
    'rev': lambda a: a[::-1],
    'cumsum0': lambda a: jnp.cumsum(a, 0),
}
def run_ops(names, types):
    m = jax.make_mesh((4, 2), ('x', 'y'), axis_types=types)
    for spec in [P('x', 'y'), P('x'), P(None, 'y')]:
        x = jax.device_put(v, NamedSharding(m, spec))
        for name in names:
            try:
                r = OPS[name](x)
            except Exception as e:
                print(spec, name, type(e).__name__)
            else:
                print(spec, name, r.sharding.spec, r.shape, r.dtype)

run_ops(['argmax0', 'argmax1', 'sort1', 'concat1', 'concat0', 'stack', 'gather', 'reshape',
         'reshape2', 'flatten', 'squeeze', 'rows', 'pad', 'rev', 'cumsum0'],
        (AxisType.Auto,) * 2)
""")

case("gap_auto_xla_choice", """
m = jax.make_mesh((4, 2), ('x', 'y'), axis_types=(AxisType.Auto,) * 2)
m8 = jax.make_mesh((8,), ('i',), axis_types=(AxisType.Auto,))
v = np.ones((8, 2), np.float32)
c = jax.device_put(v, NamedSharding(m, P('x')))
print((c + jax.device_put(v, NamedSharding(m8, P('i')))).sharding)
""")

case("gap_jit_shardings", """
m = jax.make_mesh((4, 2), ('x', 'y'))
x = jax.device_put(np.ones((8, 4), np.float32), NamedSharding(m, P('x', 'y')))
k = jax.jit(lambda a: a, out_shardings=SingleDeviceSharding(devs[6]))
err(lambda: k(x).sharding)
""")

# -- jax 0.4.30: PositionalSharding ------------------------------------------------------------

case("positional_basics", """
from jax.experimental import mesh_utils
from jax.sharding import PositionalSharding
devices = mesh_utils.create_device_mesh((8,))
sharding = PositionalSharding(devices)
print(repr(sharding)); print(sharding)
print(sharding.shape, sharding.ndim)
print(sharding.reshape(8, 1))
print(sharding.reshape(4, 2))
print(sharding.reshape((2, 4)))
print(sharding.reshape(1, 8))
print(sharding.reshape(2, 2, 2))
r = sharding.reshape(4, 2)
print(r.replicate(axis=0, keepdims=True))
print(r.replicate(0).shape, r.replicate(1).shape)
print(r.replicate(1))
print(r.replicate())
print(r.replicate(0, keepdims=False))
print(r.replicate(1, keepdims=False).shape)
print(r.T)
print(r.transpose())
print(r.replicate(0).T)
print(sharding.reshape(2, 2, 2).replicate((0, 2)))
print(sharding.reshape(2, 2, 2).transpose(1, 0, 2))
print(PositionalSharding(jax.devices()[:1]))
print(PositionalSharding(jax.devices()[2:6]).reshape(2, 2))
print(PositionalSharding(np.array(jax.devices()).reshape(2, 4)))
""", CASES_04)

case("positional_queries", """
from jax.sharding import PositionalSharding
s = PositionalSharding(jax.devices())
r = s.reshape(4, 2)
print(sorted(r.device_set, key=lambda d: d.id) == jax.devices(), len(r.device_set))
print(r.is_fully_replicated, r.replicate().is_fully_replicated, r.is_fully_addressable)
print(r.devices_indices_map((8, 4)))
print(r.replicate(1).devices_indices_map((8, 4)))
print(r.replicate(0).devices_indices_map((8, 4)))
print(r.addressable_devices_indices_map((4, 2)))
print(r.shard_shape((8, 4)), r.replicate(0).shard_shape((8, 4)), r.replicate().shard_shape((8, 4)))
print(s.devices_indices_map((16,)))
print(r == s.reshape(4, 2), hash(r) == hash(s.reshape(4, 2)), r == r.T, r == s)
print(r.is_equivalent_to(s.reshape(4, 2), 2), r.replicate(0) == r.replicate(0))
print(r.replicate() == s.reshape(1, 8).replicate(), r.replicate().is_equivalent_to(s.replicate(), 2))
print(r.memory_kind)
""", CASES_04)

case("positional_arrays", """
from jax.sharding import PositionalSharding
s = PositionalSharding(jax.devices()).reshape(4, 2)
x = jnp.arange(32.).reshape(8, 4)
y = jax.device_put(x, s)
print(y.sharding)
print(y.sharding.shape, y.is_fully_replicated, y.is_fully_addressable)
print([(repr(sh.device), sh.index, sh.replica_id, sh.data.shape) for sh in y.addressable_shards][:3])
print(jnp.sin(y).sharding)
a = jax.device_put(x, s.replicate(1))
b = jax.device_put(x.T, s.replicate(0))
print(a.sharding); print(b.sharding)
print([(repr(sh.device), sh.index, sh.replica_id) for sh in a.addressable_shards])
w = jnp.dot(a, b)
print(w.sharding)
print(np.allclose(np.asarray(w), np.asarray(x) @ np.asarray(x).T))
print((a + 1).sharding)
print(jnp.sum(y).sharding)
print(jnp.sum(y, axis=0).sharding)
print(jnp.sum(y, axis=1).sharding)
print(jax.device_put(x, s.replicate()).sharding)
print(jax.jit(jnp.sin)(y).sharding)
print(jax.jit(lambda v: v * 2)(a).sharding)
print(np.allclose(np.asarray(jnp.sin(y)), np.sin(np.asarray(x))))
""", CASES_04)

case("positional_errors", """
from jax.sharding import PositionalSharding
s = PositionalSharding(jax.devices()).reshape(4, 2)
err(lambda: jax.device_put(jnp.ones((7, 4)), s))
err(lambda: jax.device_put(jnp.ones((8, 3)), s))
err(lambda: jax.device_put(jnp.ones((8,)), s))
err(lambda: jax.device_put(jnp.ones((8, 4, 2)), s))
err(lambda: s.reshape(3, 3), message=False)
print(jax.device_put(jnp.ones((8, 2)), s.replicate()).sharding)
""", CASES_04)

case("seed000_positional", """
from jax.experimental import mesh_utils
from jax.sharding import PositionalSharding
x = jax.random.normal(jax.random.PRNGKey(0), (64, 64))
sharding = PositionalSharding(mesh_utils.create_device_mesh((8,)))
x = jax.device_put(x, sharding.reshape(4, 2))
y = jnp.sin(x)
print(y.sharding)
y = jax.device_put(x, sharding.reshape(4, 2).replicate(1))
z = jax.device_put(x, sharding.reshape(4, 2).replicate(0))
w = jnp.dot(y, z)
print(w.sharding)
x_single = jax.device_put(x, jax.devices()[0])
print(x_single.devices())
print(np.allclose(jnp.dot(x_single, x_single), jnp.dot(y, z), atol=1e-3))
sharding = PositionalSharding(jax.devices()).reshape(8, 1)
batch = jax.device_put((jnp.ones((16, 4)), jnp.zeros((16, 2))), sharding)
params = jax.device_put([(jnp.ones((4, 2)), jnp.ones((1, 2)))], sharding.replicate())
print(batch[0].sharding)
print(params[0][0].sharding)
print(params[0][1].sharding)
""", CASES_04)

case("seed_era_api", """
from jax.lib import xla_bridge
b = xla_bridge.get_backend()
print(b.platform, b.device_count(), xla_bridge.get_backend('cpu').platform)
d = jax.devices()
x = jax.device_put_sharded([jnp.ones(3) * i for i in range(4)], d[:4])
print(x)
print(x.shape, sorted(dd.id for dd in x.devices()))
y = jax.device_put_replicated(jnp.arange(3.), d[2:5])
print(y, y.shape, sorted(dd.id for dd in y.devices()))
print(jax.device_put_sharded([{'a': np.ones(2)}, {'a': np.zeros(2)}], d[:2]))
err(lambda: jax.device_put_sharded([jnp.ones(2)], d[:2]), message=False)
""", CASES_04)
