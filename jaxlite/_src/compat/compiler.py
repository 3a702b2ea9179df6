"""``jax._src.compiler``, as far as libraries import it: jaxlite compiles jaxprs to Python
(``jaxlite._src.compiler``), not through XLA, so it offers no ``backend_compile`` hook (chex's
``restrict_backends`` reports that it cannot find one)."""
