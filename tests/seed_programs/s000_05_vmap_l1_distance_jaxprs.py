# Seed 000, "Batching with vmap": l1 distances by a Python loop and by vmap, and the jaxprs
# of l1_distance, vmap(l1_distance) and the doubly-vmapped pairwise distances.
# compare: exact
import jax.numpy as jnp
from jax import random, vmap, make_jaxpr


def l1_distance(x, y):
    assert x.ndim == y.ndim == 1
    return jnp.sum(jnp.abs(x - y))


xs = random.normal(random.PRNGKey(0), (20, 3))
ys = random.normal(random.PRNGKey(1), (20, 3))

dists = jnp.stack([l1_distance(x, y) for x, y in zip(xs, ys)])
print(dists)

dists = vmap(l1_distance)(xs, ys)
print(dists)

print(make_jaxpr(l1_distance)(xs[0], ys[0]))
print(make_jaxpr(vmap(l1_distance))(xs, ys))


def pairwise_distances(xs, ys):
    return vmap(vmap(l1_distance, (0, None)), (None, 0))(xs, ys)


print(make_jaxpr(pairwise_distances)(xs, ys))
print(pairwise_distances(xs, ys)[:2, :4])
