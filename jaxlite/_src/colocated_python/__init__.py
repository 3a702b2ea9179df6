"""``jax.experimental.colocated_python``: running Python functions and objects on the CPU
devices colocated with the arguments' devices (see api.py)."""
