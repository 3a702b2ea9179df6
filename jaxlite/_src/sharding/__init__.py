"""Shardings and meshes: which device holds which slice of an array (jax.sharding)."""
