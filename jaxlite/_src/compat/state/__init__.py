"""``jax._src.state``: mutable array references (``jax.Ref``)."""
