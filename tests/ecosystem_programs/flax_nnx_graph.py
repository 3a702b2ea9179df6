# requires: flax optax
# nnx's functional API and transforms: split/merge/state/update, filters, eval_shape,
# model surgery, nnx.vmap (an ensemble), nnx.scan over stacked layers, nnx.remat, nnx.grad
# with a filter, nnx.cond, nnx.Rngs streams.
import jax, jax.numpy as jnp, numpy as np, optax
from flax import nnx

def show(name, x):
    print(name, np.asarray(x).round(5).tolist())

class Block(nnx.Module):
    def __init__(self, d, *, rngs):
        self.lin = nnx.Linear(d, d, rngs=rngs)
        self.ln = nnx.LayerNorm(d, rngs=rngs)
    def __call__(self, x):
        return x + nnx.gelu(self.ln(self.lin(x)))

rngs = nnx.Rngs(params=0, dropout=1)
m = Block(4, rngs=rngs)
graphdef, params, rest = nnx.split(m, nnx.Param, ...)
print(jax.tree.map(jnp.shape, nnx.to_pure_dict(params)))
x = jnp.linspace(-1., 1., 8).reshape(2, 4)
m2 = nnx.merge(graphdef, params, rest)
show('merge', m2(x))
params2 = jax.tree.map(lambda p: p * 0.5, params)
nnx.update(m2, params2)
show('update', m2(x))
st = nnx.state(m2)
show('state', st['lin']['kernel'][...].sum(0))
# functional call
def f(params, x):
    return nnx.merge(graphdef, params, rest)(x).sum()
show('jax.grad', jax.grad(f)(params, x)['lin']['bias'][...])

# eval_shape
abs_m = nnx.eval_shape(lambda: Block(16, rngs=nnx.Rngs(0)))
print(type(abs_m).__name__, abs_m.lin.kernel.shape, abs_m.lin.kernel.dtype)

# model surgery
class Net(nnx.Module):
    def __init__(self, rngs):
        self.a = nnx.Linear(4, 4, rngs=rngs)
        self.b = nnx.Linear(4, 2, rngs=rngs)
    def __call__(self, x):
        return self.b(nnx.relu(self.a(x)))
net = Net(nnx.Rngs(3))
show('net', net(x))
net.a = Block(4, rngs=nnx.Rngs(5))
show('surgery', net(x))
net.b.kernel[...] = jnp.ones((4, 2))
show('set kernel', net(x))

# nnx.grad with a filter (only 'a')
def loss(net):
    return (net(x) ** 2).mean()
g = nnx.grad(loss, argnums=nnx.DiffState(0, nnx.PathContains('a')))(net)
print(sorted(nnx.to_pure_dict(g).keys()))

# ensemble with nnx.vmap
@nnx.vmap(in_axes=0, out_axes=0)
def create(key):
    return nnx.Linear(4, 3, rngs=nnx.Rngs(key))
ens = create(jax.random.split(jax.random.key(7), 5))
print(ens.kernel.shape)
@nnx.vmap(in_axes=(0, None), out_axes=0)
def fwd(model, x):
    return model(x)
show('ensemble', fwd(ens, x).sum(axis=(1, 2)))

# scan over stacked layers
@nnx.vmap(in_axes=0, out_axes=0)
def make_layers(key):
    return Block(4, rngs=nnx.Rngs(key))
layers = make_layers(jax.random.split(jax.random.key(11), 3))
@nnx.scan(in_axes=(nnx.Carry, 0), out_axes=nnx.Carry)
def run(x, layer):
    return layer(x)
show('scan', run(x, layers))

# remat inside jit + grad
class R(nnx.Module):
    def __init__(self, rngs):
        self.blk = Block(4, rngs=rngs)
    def __call__(self, x):
        return nnx.remat(lambda m, x: m(x))(self.blk, x)
r = R(nnx.Rngs(2))
@nnx.jit
def rl(r, x):
    return nnx.value_and_grad(lambda r: (r(x) ** 2).sum())(r)
l, gr = rl(r, x)
print(round(float(l), 4)); show('remat grad', gr.blk.lin.kernel[...].sum(0))

# cond / rngs streams / dropout
d = nnx.Dropout(0.5, rngs=nnx.Rngs(dropout=4))
show('dropout', d(jnp.ones(8)))
show('dropout2', d(jnp.ones(8)))
rs = nnx.Rngs(0, noise=9)
show('rng', jnp.stack([rs.params.normal(()), rs.noise.uniform(()), rs.normal(())]))
@nnx.jit
def sel(m, x, flag):
    return nnx.cond(flag, lambda m, x: m(x), lambda m, x: -x, m, x)
show('cond', sel(m, x, True) + sel(m, x, False))

# optimizer on a subset + jit with state updates
class Counter(nnx.Module):
    def __init__(self):
        self.count = nnx.BatchStat(jnp.array(0))
        self.w = nnx.Param(jnp.ones(3))
    def __call__(self, x):
        self.count[...] += 1
        return self.w[...] * x
c = Counter()
opt = nnx.Optimizer(c, optax.sgd(0.1), wrt=nnx.Param)
@nnx.jit
def step(c, opt, x):
    l, g = nnx.value_and_grad(lambda c: (c(x) ** 2).sum())(c)
    opt.update(c, g)
    return l
for _ in range(3):
    step(c, opt, jnp.arange(3.))
print(int(c.count[...]), np.asarray(c.w[...]).round(5).tolist())
print(nnx.graph.split(c)[0] is not None, len(jax.tree.leaves(nnx.state(c))))
