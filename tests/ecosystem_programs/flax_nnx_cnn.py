# requires: flax optax
# The flax docs' MNIST tutorial step (a small CNN trained with nnx.Optimizer and nnx.jit,
# metrics with nnx.MultiMetric), on random 28x28 images; LayerNorm and Embed on the side.
from functools import partial
import jax, jax.numpy as jnp, optax, numpy as np
from flax import nnx

class CNN(nnx.Module):
    def __init__(self, *, rngs: nnx.Rngs):
        self.conv1 = nnx.Conv(1, 8, kernel_size=(3, 3), rngs=rngs)
        self.conv2 = nnx.Conv(8, 16, kernel_size=(3, 3), rngs=rngs)
        self.avg_pool = partial(nnx.avg_pool, window_shape=(2, 2), strides=(2, 2))
        self.linear1 = nnx.Linear(16 * 7 * 7, 32, rngs=rngs)
        self.dropout = nnx.Dropout(rate=0.025, rngs=rngs)
        self.ln = nnx.LayerNorm(32, rngs=rngs)
        self.linear2 = nnx.Linear(32, 10, rngs=rngs)

    def __call__(self, x):
        x = self.avg_pool(nnx.relu(self.conv1(x)))
        x = self.avg_pool(nnx.relu(self.conv2(x)))
        x = x.reshape(x.shape[0], -1)
        x = self.ln(self.dropout(nnx.relu(self.linear1(x))))
        return self.linear2(x)

model = CNN(rngs=nnx.Rngs(0))
opt = nnx.Optimizer(model, optax.adamw(5e-3, 0.9), wrt=nnx.Param)
metrics = nnx.MultiMetric(accuracy=nnx.metrics.Accuracy(), loss=nnx.metrics.Average('loss'))
print(nnx.graph.iter_graph is not None, sum(x.size for x in jax.tree.leaves(nnx.state(model, nnx.Param))))

def loss_fn(model, batch):
    logits = model(batch['image'])
    loss = optax.softmax_cross_entropy_with_integer_labels(logits, batch['label']).mean()
    return loss, logits

@nnx.jit
def train_step(model, optimizer, metrics, batch):
    grad_fn = nnx.value_and_grad(loss_fn, has_aux=True)
    (loss, logits), grads = grad_fn(model, batch)
    metrics.update(loss=loss, logits=logits, labels=batch['label'])
    optimizer.update(model, grads)

@nnx.jit
def eval_step(model, metrics, batch):
    loss, logits = loss_fn(model, batch)
    metrics.update(loss=loss, logits=logits, labels=batch['label'])

k = jax.random.key(42)
imgs = jax.random.uniform(k, (64, 28, 28, 1))
labels = (imgs.mean(axis=(1, 2, 3)) * 40).astype(jnp.int32) % 10
for epoch in range(3):
    model.train()
    for s in range(4):
        batch = {'image': imgs[s * 16:(s + 1) * 16], 'label': labels[s * 16:(s + 1) * 16]}
        train_step(model, opt, metrics, batch)
    res = metrics.compute()
    print(epoch, {k: round(float(v), 4) for k, v in res.items()})
    metrics.reset()
    model.eval()
    eval_step(model, metrics, {'image': imgs[:16], 'label': labels[:16]})
    print('eval', {k: round(float(v), 4) for k, v in metrics.compute().items()})
    metrics.reset()
print(np.asarray(model(imgs[:2])).round(4))

emb = nnx.Embed(10, 4, rngs=nnx.Rngs(3))
ids = jnp.array([[1, 2, 9], [0, 0, 3]])
print(np.asarray(emb(ids)).round(5))
print(np.asarray(emb.attend(jnp.ones((2, 4)))).round(5))
