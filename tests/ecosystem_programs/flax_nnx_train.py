# requires: flax optax
# nnx.Linear/BatchNorm/Dropout trained with nnx.Optimizer(adam) in an nnx.jit step using
# nnx.value_and_grad, then evaluated (running statistics, deterministic dropout).
import jax, jax.numpy as jnp, optax
from flax import nnx

class MLP(nnx.Module):
    def __init__(self, din, dh, dout, *, rngs):
        self.l1 = nnx.Linear(din, dh, use_bias=False, rngs=rngs)
        self.bn = nnx.BatchNorm(dh, rngs=rngs)
        self.drop = nnx.Dropout(0.2, rngs=rngs)
        self.l2 = nnx.Linear(dh, dout, rngs=rngs)
    def __call__(self, x):
        return self.l2(self.drop(nnx.relu(self.bn(self.l1(x)))))

model = MLP(4, 16, 3, rngs=nnx.Rngs(0))
print(model.l1.kernel.value.shape, float(model.l1.kernel.value.sum()))
opt = nnx.Optimizer(model, optax.adam(1e-2), wrt=nnx.Param)
X = jax.random.normal(jax.random.key(1), (32, 4))
y = jax.random.randint(jax.random.key(2), (32,), 0, 3)

@nnx.jit
def train_step(model, opt, x, y):
    def loss_fn(model):
        logits = model(x)
        return optax.softmax_cross_entropy_with_integer_labels(logits, y).mean(), logits
    (loss, logits), grads = nnx.value_and_grad(loss_fn, has_aux=True)(model)
    opt.update(model, grads)
    return loss, (logits.argmax(-1) == y).mean()

for i in range(10):
    loss, acc = train_step(model, opt, X, y)
    print(i, float(loss), float(acc))
model.eval()
print(model(X[:2]))
print(opt.step[...])
import numpy as np
print(np.asarray(model.bn.mean[...])[:5].round(5), np.asarray(model.bn.var[...])[:5].round(5))
print(np.asarray(model.l2.kernel[...])[:2].round(5))
print(model.drop.deterministic, model.bn.use_running_average)
