# requires: diffrax
import jax, jax.numpy as jnp, diffrax
def f(t, y, args): return -args * y
term = diffrax.ODETerm(f)
sol = diffrax.diffeqsolve(term, diffrax.Tsit5(), t0=0., t1=1., dt0=0.1, y0=jnp.array([1., 2.]), args=0.5,
                          saveat=diffrax.SaveAt(ts=jnp.linspace(0, 1, 3)))
print(sol.ys)
g = jax.grad(lambda a: diffrax.diffeqsolve(term, diffrax.Tsit5(), 0., 1., 0.1, jnp.array([1., 2.]), args=a).ys.sum())(0.5)
print(g)
