"""Snippets for tests/test_explicit_sharding.py: sharding in types over Explicit mesh axes
(JAX 0.10.2's default ``jax.make_mesh``), written against ``jax`` and run with 8 devices.

``show(label, fn)`` prints the type of ``fn()`` (``jax.typeof``), or the error class and
the first sentence of its message (jaxlite adds how to fix it after that sentence).
``idx(x)`` is an array's ``devices_indices_map`` as a sorted list; ``same(x, ref)`` whether
its value equals the NumPy reference.
"""

HEAD = """
import jax, jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P, AxisType
lax = jax.lax

def first(msg):
    return msg.split('. ')[0].split('\\n')[0].rstrip('.')

def show(label, fn):
    try:
        r = fn()
    except Exception as e:
        print(label, '!', type(e).__name__, first(str(e)))
    else:
        print(label, jax.typeof(r) if hasattr(r, 'shape') else r)

def idx(x):
    return sorted((d.id, tuple((s.start, s.stop) for s in i))
                  for d, i in x.sharding.devices_indices_map(x.shape).items())

def same(x, ref):
    return bool(np.allclose(np.asarray(x), ref, rtol=1e-5, atol=1e-5))

m = jax.make_mesh((4, 2), ('x', 'y'))
S = lambda *s: NamedSharding(m, P(*s))
v = np.arange(64.).reshape(8, 8).astype(np.float32) / 10
xy = jax.device_put(v, S('x', 'y'))
x_ = jax.device_put(v, S('x', None))
_y = jax.device_put(v, S(None, 'y'))
y_ = jax.device_put(v, S('y', None))
_x = jax.device_put(v, S(None, 'x'))
yx = jax.device_put(v, S('y', 'x'))
r = jax.device_put(v, S())
"""

CASES = {}


def case(name, code):
    CASES[name] = HEAD + code


case("elementwise", """
print(m)
show('add', lambda: xy + x_)
show('add conflict', lambda: xy + yx)
show('add duplicate', lambda: x_ + _x)
show('add mixed', lambda: x_ + _y)
show('add replicated', lambda: xy + r)
show('add numpy', lambda: xy + v)
show('add row', lambda: xy + v[0])
show('scalar', lambda: xy * 2)
show('where', lambda: jnp.where(xy > 3, xy, 0.))
show('where mixed', lambda: jnp.where(x_ > 3, _y, 0.))
show('astype', lambda: xy.astype(jnp.int32))
show('clip', lambda: jnp.clip(xy, 0, 3))
show('tanh', lambda: jnp.tanh(x_))
show('softmax', lambda: jax.nn.softmax(xy, -1))
print(same(xy + x_, v + v), same(jnp.where(x_ > 3, _y, 0.), np.where(v > 3, v, 0.)))
print(idx(xy + x_) == idx(xy), (xy + x_).sharding.spec, (x_ * 2).sharding.spec)
""")

case("reductions", """
show('sum0', lambda: xy.sum(0))
show('sum1', lambda: xy.sum(1))
show('sum', lambda: xy.sum())
show('max0', lambda: xy.max(0))
show('argmax0', lambda: jnp.argmax(xy, 0))
show('mean keepdims', lambda: xy.mean(0, keepdims=True))
show('mean', lambda: jnp.mean(xy, 1))
show('var', lambda: jnp.var(xy, 0))
show('cumsum split', lambda: jnp.cumsum(xy, 0))
show('cumsum', lambda: jnp.cumsum(x_, 1))
show('sort split', lambda: jnp.sort(xy, 0))
show('sort', lambda: jnp.sort(x_, 1))
print(same(xy.sum(0), v.sum(0)), same(jnp.cumsum(x_, 1), np.cumsum(v, 1)))
print(xy.sum(0).sharding.spec, idx(xy.sum(1)))
""")

case("dot", """
show('xy@_y', lambda: xy @ _y)
show('x_@_y', lambda: x_ @ _y)
show('x_@x_', lambda: x_ @ x_)
show('_y@x_', lambda: _y @ x_)
show('_y@y_', lambda: _y @ y_)
show('x_@xy', lambda: x_ @ xy)
show('xy@r', lambda: xy @ r)
show('r@_y', lambda: r @ _y)
show('_x@_y', lambda: _x @ _y)
show('x_@_x', lambda: x_ @ _x)
show('x_@_x out', lambda: jnp.dot(x_, _x, out_sharding=S('x', None)))
show('_y@y_ out', lambda: jnp.dot(_y, y_, out_sharding=S('x', 'y')))
show('out P no mesh', lambda: jnp.dot(_y, y_, out_sharding=P('x', 'y')))
show('matmul out', lambda: jnp.matmul(_y, y_, out_sharding=S('x')))
show('einsum', lambda: jnp.einsum('ij,jk->ik', x_, _y))
show('einsum out', lambda: jnp.einsum('ij,jk->ik', _y, y_, out_sharding=S('x')))
show('dot_general out', lambda: lax.dot_general(_y, y_, (((1,), (0,)), ((), ())),
                                                out_sharding=S(None, 'x')))
show('lax.dot out', lambda: lax.dot(_y, y_, out_sharding=S(None, 'x')))
show('tensordot out', lambda: jnp.tensordot(_y, y_, 1, out_sharding=S(None, 'x')))
print(same(jnp.dot(_y, y_, out_sharding=S('x', 'y')), v @ v),
      same(jnp.einsum('ij,jk->ik', _y, y_, out_sharding=S('x')), v @ v), same(x_ @ _y, v @ v))
print(idx(jnp.dot(_y, y_, out_sharding=S('x', 'y'))))
print(jnp.einsum('ij,jk->ik', _y, y_, out_sharding=S('x')).sharding.spec)
""")

case("shapes", """
show('T', lambda: xy.T)
show('transpose', lambda: jnp.transpose(xy.reshape(8, 8, 1), (2, 1, 0)))
show('merge', lambda: xy.reshape(64))
show('split', lambda: x_.reshape(4, 2, 8))
show('split2', lambda: xy.reshape(8, 2, 4))
show('split3', lambda: xy.reshape(2, 4, 8))
show('4x16', lambda: x_.reshape(4, 16))
show('16x4', lambda: x_.reshape(16, 4))
xyc = jax.device_put(v.reshape(64), S(('x', 'y')))
show('unmerge', lambda: xyc.reshape(8, 8))
show('reshape out', lambda: jnp.reshape(xy, (64,), out_sharding=S('x')))
show('reshape out2', lambda: jnp.reshape(xy, (4, 16), out_sharding=S('x', None)))
show('ravel out', lambda: jnp.ravel(xy, out_sharding=S('x')))
show('expand', lambda: xy[None])
show('squeeze', lambda: xy.reshape(1, 8, 8).squeeze(0))
show('expand_dims', lambda: jnp.expand_dims(xy, 1))
show('broadcast_to', lambda: jnp.broadcast_to(xy, (3, 8, 8)))
show('concat0', lambda: jnp.concatenate([xy, xy], 0))
show('concat1', lambda: jnp.concatenate([xy, xy], 1))
show('concat mixed', lambda: jnp.concatenate([xy, x_], 1))
show('stack', lambda: jnp.stack([xy, xy]))
show('pad', lambda: jnp.pad(xy, 1))
show('pad cols', lambda: jnp.pad(x_, ((0, 0), (1, 1))))
show('rev', lambda: xy[::-1])
show('fft', lambda: jnp.fft.fft(xy))
show('dyn slice', lambda: lax.dynamic_slice(xy, (0, 0), (4, 4)))
show('dus', lambda: lax.dynamic_update_slice(xy, jnp.ones((2, 2)), (0, 0)))
print(same(xy.reshape(64), v.reshape(64)), same(jnp.reshape(xy, (4, 16), out_sharding=S('x', None)),
      v.reshape(4, 16)), same(jnp.concatenate([xy, xy], 1), np.concatenate([v, v], 1)))
print(idx(xy.reshape(64)) == idx(xyc), idx(xy.reshape(8, 2, 4))[:3])
""")

case("indexing", """
show('slice', lambda: xy[2:6])
show('index0', lambda: xy[0])
show('index col', lambda: xy[:, 0])
show('col of x_', lambda: x_[:, 0])
show('replicated slice', lambda: r[2:6])
show('gather', lambda: xy[jnp.array([1, 2])])
show('take cols', lambda: jnp.take(x_, jnp.array([1, 2]), axis=1))
show('at get', lambda: xy.at[0].get(out_sharding=S('y')))
show('jit slice', lambda: jax.jit(lambda a: a[2:6])(xy))
show('jit index', lambda: jax.jit(lambda a: a[0])(xy))
print(same(xy.at[0].get(out_sharding=S('y')), v[0]), same(x_[:, 1:3], v[:, 1:3]))
""")

case("creation_and_reshard", """
show('zeros device', lambda: jnp.zeros((8, 4), device=S('x')))
show('ones_like', lambda: jnp.ones_like(xy))
show('full_like', lambda: jnp.full_like(x_, 2.))
show('zeros_like shape', lambda: jnp.zeros_like(x_, shape=(3,)))
show('reshard', lambda: jax.sharding.reshard(xy, S(None, 'x')))
show('reshard P no mesh', lambda: jax.sharding.reshard(xy, P(None, 'x')))
show('device_put', lambda: jax.device_put(xy, S('y')))
with jax.set_mesh(m):
    show('zeros', lambda: jnp.zeros((8, 4), out_sharding=P('x')))
    show('arange', lambda: jnp.arange(8, out_sharding=P('x')))
    show('full', lambda: jnp.full((8, 4), 3., out_sharding=P(None, 'y')))
    show('reshard P', lambda: jax.sharding.reshard(xy, P(None, 'x')))
    show('dot out P', lambda: jnp.dot(_y, y_, out_sharding=P('x', 'y')))
    show('einsum out P', lambda: jnp.einsum('ij,jk->ik', _y, y_, out_sharding=P('x')))
    show('normal', lambda: jax.random.normal(jax.random.key(0), (8, 4), out_sharding=P(None, 'y')))
    show('uniform', lambda: jax.random.uniform(jax.random.key(0), (8, 4), out_sharding=P('x')))
    show('bits', lambda: jax.random.bits(jax.random.key(0), (8, 4), out_sharding=P(None, 'y')))
    n = jax.random.normal(jax.random.key(3), (8, 4), out_sharding=P('x'))
    print(np.array_equal(np.asarray(n), np.asarray(jax.random.normal(jax.random.key(3), (8, 4)))))
    print(idx(n), idx(jnp.arange(8, out_sharding=P('x'))), np.asarray(jnp.arange(8, out_sharding=P('x'))).tolist())
    print(jax.sharding.reshard(xy, P(None, 'x')).sharding.spec, same(jax.sharding.reshard(xy, P(None, 'x')), v))
""")

case("jit", """
@jax.jit
def f(a, b):
    print('trace', jax.typeof(a), jax.typeof(b), jax.typeof(a * 2), jax.typeof(a.sum(0)))
    c = jnp.dot(a, b, out_sharding=P('x', None))
    print('c', jax.typeof(c))
    d = jax.sharding.reshard(c, P(None, 'y'))
    print('d', jax.typeof(d))
    return d, c.sum(0), jnp.zeros((8, 4), out_sharding=P('x'))
with jax.set_mesh(m):
    outs = f(_y, y_)
    print([(str(jax.typeof(o)), o.sharding.spec) for o in outs])
    print(same(outs[0], v @ v), same(outs[1], (v @ v).sum(0)), idx(outs[0]))
    outs = f(_y, y_)
    outs = f(x_, y_)
    print([str(jax.typeof(o)) for o in outs])
show('ambiguous in jit', lambda: jax.jit(lambda a: a @ a.T)(xy))
show('jit out', lambda: jax.jit(lambda a, b: a * 2 + b)(xy, x_))
g = jax.jit(lambda a, b: jnp.sin(a) @ b)
print(jax.make_jaxpr(g)(x_, _y))
print(idx(g(x_, _y)), same(g(x_, _y), np.sin(v) @ v))
h = jax.jit(lambda a: (a + 1, a.T))
print([o.sharding.spec for o in h(xy)], [idx(o) == idx(jax.device_put(v, S('y', 'x'))) for o in h(xy)][1])
""")

case("auto_explicit_axes", """
def f(a, b):
    print('inside', jax.typeof(a), jax.typeof(b), jax.sharding.get_abstract_mesh())
    c = a @ b
    print('inside c', jax.typeof(c))
    return c
with jax.set_mesh(m):
    show('auto', lambda: jax.sharding.auto_axes(f, out_sharding=P('x', None))(_y, y_))
    show('auto y', lambda: jax.sharding.auto_axes(f, axes='y', out_sharding=P('x', None))(xy, y_))
    show('auto jit', lambda: jax.jit(jax.sharding.auto_axes(f, out_sharding=P('x', None)))(_y, y_))
    print(same(jax.sharding.auto_axes(f, out_sharding=P('x', None))(_y, y_), v @ v))
show('auto no mesh', lambda: jax.sharding.auto_axes(f, out_sharding=S('x', None))(_y, y_))
ma = jax.make_mesh((4, 2), ('x', 'y'), axis_types=(AxisType.Auto,) * 2)
xa = jax.device_put(v, NamedSharding(ma, P('x', 'y')))
def g(a):
    print('inside g', jax.typeof(a))
    return a * 2
with jax.set_mesh(ma):
    show('explicit', lambda: jax.sharding.explicit_axes(g, in_sharding=P('x', None))(xa))
    print(jax.jit(jax.sharding.explicit_axes(g, in_sharding=P('x', None)))(xa).sharding)
""")

case("control_flow", """
show('cond', lambda: lax.cond(True, lambda a: a + 1, lambda a: a - 1, xy))
show('jit cond', lambda: jax.jit(lambda a: lax.cond(True, lambda a: a + 1, lambda a: a - 1, a))(xy))
show('scan split', lambda: lax.scan(lambda c, a: (c + a, a * 2), jnp.zeros(8), xy)[1])
show('jit scan split', lambda: jax.jit(lambda a: lax.scan(lambda c, r: (c + r, r * 2), jnp.zeros(8), a)[0])(x_))
show('scan', lambda: lax.scan(lambda c, a: (c + a, a * 2), jnp.zeros(8), _y)[1])
show('vmap', lambda: jax.vmap(lambda a: a * 2)(xy))
show('jit grad', lambda: jax.jit(jax.grad(lambda a: jnp.sin(a).sum()))(xy))
print(same(lax.scan(lambda c, a: (c + a, a * 2), jnp.zeros(8), _y)[1], v * 2))
""")

case("shard_map", """
def body(a):
    print('in', jax.typeof(a))
    return a * 2
show('match', lambda: jax.shard_map(body, mesh=m, in_specs=P('x'), out_specs=P('x'))(x_))
print(jax.shard_map(body, mesh=m, in_specs=P('x'), out_specs=P('x'))(x_).sharding)
show('inferred', lambda: jax.shard_map(body, mesh=m, out_specs=P('x', 'y'))(xy))
show('mismatch', lambda: jax.shard_map(body, mesh=m, in_specs=P('x'), out_specs=P('x'))(xy))
show('numpy', lambda: jax.shard_map(body, mesh=m, in_specs=P('x'), out_specs=P('x'))(v))
show('numpy replicated', lambda: jax.shard_map(body, mesh=m, in_specs=P(), out_specs=P())(v))
show('psum', lambda: jax.shard_map(lambda a: lax.psum(a, 'x'), mesh=m, in_specs=P('x'), out_specs=P())(x_))
with jax.set_mesh(m):
    show('context mesh', lambda: jax.shard_map(body, in_specs=P('x'), out_specs=P('x'))(x_))
    f = jax.jit(jax.shard_map(lambda a, b: lax.psum(a @ b, 'y'), in_specs=(P('x', 'y'), P('y')),
                              out_specs=P('x')))
    show('jit', lambda: f(xy, y_))
    print(same(f(xy, y_), v @ v), f(xy, y_).sharding.spec, idx(f(xy, y_)))
""")

case("random_sharded", """
k = jax.random.key(42)
jax.sharding.set_mesh(m)   # (JAX needs the mesh context to place the samples)
for spec in [P('x'), P(None, 'y'), P('x', 'y'), P(('x', 'y')), P('y', 'x'), P()]:
    s = NamedSharding(m, spec)
    for f, kw in [(jax.random.normal, {}), (jax.random.uniform, dict(minval=-2., maxval=3.)),
                  (jax.random.bits, {}), (jax.random.bernoulli, {}), (jax.random.randint, dict(minval=0, maxval=9))]:
        shape = (16, 8)
        if f is jax.random.bernoulli:
            a, b = f(k, 0.3, shape, out_sharding=s), f(k, 0.3, shape)
        elif f is jax.random.randint:
            a, b = f(k, shape, out_sharding=s, **kw), f(k, shape, **kw)
        else:
            a, b = f(k, shape, out_sharding=s, **kw), f(k, shape, **kw)
        print(spec, f.__name__, jax.typeof(a), np.array_equal(np.asarray(a), np.asarray(b)),
              idx(a) == idx(jax.device_put(np.asarray(b), s)))
""")

case("grad_scatter_more", """
rng = np.random.RandomState(0)
X = jax.device_put(rng.randn(16, 8).astype(np.float32), S('x'))
W = jax.device_put(rng.randn(8, 4).astype(np.float32), S(None, 'y'))
def loss(w, x):
    return jnp.mean(jnp.tanh(x @ w) ** 2)
with jax.set_mesh(m):
    show('grad w', lambda: jax.grad(loss)(W, X))
    show('grad x', lambda: jax.grad(loss, argnums=1)(W, X))
    show('jit grad w', lambda: jax.jit(jax.grad(loss))(W, X))
    print(same(jax.grad(loss)(W, X), np.asarray(jax.jit(jax.grad(loss))(W, X))),
          jax.grad(loss)(W, X).sharding.spec)
    show('scatter', lambda: xy.at[0].set(1.))
    show('scatter col', lambda: xy.at[:, 0].set(1.))
    show('scatter x_', lambda: X.at[:, 0].set(1.))
    show('add at', lambda: X.at[:, 0].add(1.))
    show('scatter out', lambda: xy.at[0].set(1., out_sharding=P('x', 'y')))
    print(same(X.at[:, 0].add(1.), np.asarray(X) + np.eye(16, 8, dtype=np.float32)[:, :1] * 0
               + np.concatenate([np.ones((16, 1)), np.zeros((16, 7))], 1)))
    show('top_k', lambda: lax.top_k(X, 2)[0])
    show('top_k split', lambda: lax.top_k(_y, 2)[0])
    show('cumsum', lambda: jnp.cumsum(X, 1))
    show('argsort', lambda: jnp.argsort(X, 1))
    show('one_hot', lambda: jax.nn.one_hot(jnp.argmax(X, 1), 4))
    show('logsumexp', lambda: jax.nn.logsumexp(X, 1))
    show('roll', lambda: jnp.roll(X, 1, 1))
    show('select_n', lambda: lax.select(X > 0, X, -X))
    show('integer_pow', lambda: X ** 3)
    show('iota eq', lambda: jnp.arange(8) == X[0])
    show('inv', lambda: jnp.linalg.inv(xy))
    x4 = jax.device_put(np.arange(8 * 8 * 4, dtype=np.float32).reshape(8, 8, 4), S('x'))
    show('reduce_window', lambda: lax.reduce_window(x4, 0., lax.add, (1, 2, 1), (1, 2, 1), 'VALID'))
    show('max_pool', lambda: lax.reduce_window(x4, -np.inf, lax.max, (1, 2, 2), (1, 1, 1), 'SAME'))
    show('window split', lambda: lax.reduce_window(x4, 0., lax.add, (3, 1, 1), (1, 1, 1), 'VALID'))
    print(same(lax.reduce_window(x4, 0., lax.add, (1, 2, 1), (1, 2, 1), 'VALID'),
               np.asarray(x4).reshape(8, 4, 2, 4).sum(2)))
    show('tile', lambda: jnp.tile(x_, (1, 2)))
    show('tile split', lambda: jnp.tile(x_, (2, 1)))
    show('bitcast', lambda: lax.bitcast_convert_type(x_, jnp.int32))
    show('bitcast narrow', lambda: lax.bitcast_convert_type(x_, jnp.uint8))
    show('unstack', lambda: jnp.unstack(x_, axis=1)[0])
    show('unstack split', lambda: jnp.unstack(x_, axis=0)[0])
    show('conv', lambda: jnp.convolve(X[:, 0], jnp.ones(3)))
    x4 = jax.device_put(np.ones((8, 3, 8, 8), np.float32), S('x'))
    show('conv2d', lambda: lax.conv(x4, jnp.ones((4, 3, 3, 3)), (1, 1), 'SAME'))
    show('conv2d split', lambda: lax.conv(x4, jax.device_put(np.ones((4, 3, 3, 3), np.float32), S('x')), (1, 1), 'SAME'))
    show('take_along', lambda: jnp.take_along_axis(X, jnp.zeros((16, 1), jnp.int32), 1))
    print(same(jnp.take_along_axis(X, jnp.ones((16, 1), jnp.int32), 1), np.asarray(X)[:, 1:2]))
    show('inv replicated', lambda: jnp.linalg.inv(r + 8 * jnp.eye(8)))
""")
