"""jax.debug's implementation: host callbacks, printing, breakpoints, sharding visualisation."""
