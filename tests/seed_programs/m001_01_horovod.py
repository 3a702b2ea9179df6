# Seed 001, "Write your own Horovod!", distributed part on 8 simulated devices: the same stax
# MLP and adam, with value_and_grad averaged by lax.pmean inside jax.pmap (in_axes=(None, None,
# 0), out_axes=(None, None)); 60 steps logged every 10, then "Did it learn?".
# compare: close rtol=5e-4 atol=1e-5 -- eigenvalues (LAPACK) and float32 matmuls differ in
#   the last bits from XLA's; adam amplifies these slightly over 60 steps.
import jax
import jax.numpy as jnp
from jax.example_libraries import stax
from jax.example_libraries import optimizers


def randn(rng_key, shape, dtype=float):
    rng_key, subkey = jax.random.split(rng_key)
    rands = jax.random.normal(subkey, shape, dtype=dtype)
    return rng_key, rands


jit_randn = jax.jit(randn, static_argnums=(1, 2))


def jax_spectral_radius(mat):
    eigvals = jnp.linalg.eigvals(mat)
    spectral_radius = jnp.max(jnp.abs(eigvals))
    return spectral_radius


batched_spectral_radius = jax.vmap(jax_spectral_radius)

rng_key = jax.random.PRNGKey(0)
input_shape = (2, 2)


def flatten():
    def init_fun(rng_key, input_shape):
        flattened_size = jnp.prod(jnp.array(list(input_shape)))
        return (flattened_size,), ()

    def apply_fun(params, inputs, **kwargs):
        return inputs.ravel()

    return init_fun, apply_fun


def build_model(rng_key):
    model_init, model = stax.serial(
        flatten(),
        stax.Dense(64), stax.Relu,
        stax.Dense(64), stax.Relu,
        stax.Dense(64), stax.Relu,
        stax.Dense(1),
    )
    # Handle varying batch sizes.
    model = jax.vmap(model, in_axes=(None, 0))
    rng_key, subkey = jax.random.split(rng_key)
    output_shape, params = model_init(subkey, input_shape)
    assert output_shape == (1,)
    return rng_key, params, model


def build_opt(params):
    opt_init, update, get_params = optimizers.adam(3e-4)
    opt_state = opt_init(params)
    return opt_state, update, get_params


rng_key, params, model = build_model(rng_key)
orig_opt_state, opt_update, get_params = build_opt(params)
print(jax.tree_util.tree_map(lambda p: p.shape, params))


def batch_loss(params, batch):
    preds = model(params, batch)
    targets = batched_spectral_radius(batch)
    return jnp.mean(jnp.abs(preds - targets))


def train_batch(step, opt_state, batch):
    params = get_params(opt_state)
    loss, grad = jax.value_and_grad(batch_loss)(params, batch)
    # Conjugate gradient for steepest-descent optimization.
    grad = jax.tree_util.tree_map(jnp.conj, grad)
    opt_state = opt_update(step, grad, opt_state)
    return opt_state, loss


batch_axis = 'batch'


def distributed_train_batch(step, opt_state, batch):
    params = get_params(opt_state)
    loss, grad = jax.value_and_grad(batch_loss)(params, batch)
    # This is the only line we had to add to `train_batch`.
    loss, grad = jax.lax.pmean((loss, grad), batch_axis)
    # Conjugate gradient for steepest-descent optimization.
    grad = jax.tree_util.tree_map(jnp.conj, grad)
    opt_state = opt_update(step, grad, opt_state)
    return opt_state, loss


# `pmap` also `jit`s our function.
pmap_train_batch = jax.pmap(
    distributed_train_batch,
    batch_axis,
    in_axes=(None, None, 0),
    out_axes=(None, None),
)

opt_state = orig_opt_state
batch_size = 64
batch_shape = (batch_size,) + input_shape
steps = 60
log_step_interval = 10
world_size = jax.device_count()
assert batch_size % world_size == 0
local_batch_size = batch_size // world_size
print('Training with', world_size, '(possibly simulated) devices.')
for step in range(steps):
    rng_key, batch = jit_randn(rng_key, batch_shape, dtype=complex)
    batch = batch.reshape((world_size, local_batch_size) + batch.shape[1:])
    opt_state, loss = pmap_train_batch(step, opt_state, batch)
    if step % log_step_interval == 0:
        print('step ', step, '; loss ', loss, sep='')

params = get_params(opt_state)
jit_model = jax.jit(model)
ceig_mat = jnp.array([[1.0, -1.0], [1.0, 1.0]])
batched_ceig_mat = jnp.expand_dims(ceig_mat, 0)
print([
    ['function', 'spectral radius sample'],
    ['jax_spectral_radius', jax_spectral_radius(ceig_mat).item()],
    ['model', jit_model(params, batched_ceig_mat)[0].item()],
])
