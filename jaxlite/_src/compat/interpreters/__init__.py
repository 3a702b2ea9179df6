"""``jax._src.interpreters``: the private interpreter modules libraries import from JAX."""
