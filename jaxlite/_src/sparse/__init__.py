"""Sparse arrays (``jax.experimental.sparse``): the BCOO format."""
