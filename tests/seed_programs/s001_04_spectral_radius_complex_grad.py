# Seed 001, "Differentiating Spectral Radius": eigvals-based spectral radius of real and
# complex matrices and its gradient (JAX's complex convention, then conjugated).
# compare: close rtol=1e-6 atol=1e-6 -- nonsymmetric eigenvalues come from LAPACK geev in
#   float32; the gradient goes through eigenvectors whose last bits depend on the LAPACK
#   build.
import jax
import jax.numpy as jnp
import numpy as np


def round_tree(tree, decimals):
    if isinstance(tree, list):
        return tuple(round_tree(t, decimals) for t in tree)
    if isinstance(tree, complex):
        return complex(round(tree.real, decimals), round(tree.imag, decimals))
    return round(tree, decimals)


def jax_spectral_radius(mat):
    eigvals = jnp.linalg.eigvals(mat)
    spectral_radius = jnp.max(jnp.abs(eigvals))
    return spectral_radius


# Eigenvalues: 1 +- i
ceig_mat = np.array([[1.0, -1.0], [1.0, 1.0]])
jax_mat = jnp.array(ceig_mat)
print(jax_mat.dtype)
print([
    ['function', 'result'],
    ['jax', jax_spectral_radius(jax_mat).item()],
    ['sqrt', np.sqrt(2)],
])

two_f32 = np.array(2, dtype=np.float32)
print([['sqrt_f32', '{:.16f}'.format(np.sqrt(two_f32))]])

jax_grad = jax.grad(jax_spectral_radius)(jax_mat)
print(jax_grad.dtype)
print([['function', 'grad'], ['jax', round_tree(jax_grad.tolist(), 3)]])

complex_mat = np.array([[1 + 1j, -1], [1, 1]])
jax_complex_mat = jnp.array(complex_mat)
print(jax_complex_mat.dtype)
print([['function', 'result'], None,
       ['jax', jax_spectral_radius(jax_complex_mat).item()]])

jax_grad = jax.grad(jax_spectral_radius)(jax_complex_mat)
jax_conj_grad = jax.tree_util.tree_map(jnp.conj, jax_grad)
print(jax_grad.dtype)
print([
    ['type', 'gradient'],
    None,
    ['jax', round_tree(jax_grad.tolist(), 3)],
    ['jax conj', round_tree(jax_conj_grad.tolist(), 3)],
])
