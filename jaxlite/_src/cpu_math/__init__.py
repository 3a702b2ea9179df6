"""XLA:CPU's elementwise float math, bit for bit: what JAX's compiled programs compute for
``exp``, ``log``, ``tanh``, ``sin``, ... on the CPU, which is not what NumPy computes (XLA
evaluates its own polynomial and rational approximations, with every multiply feeding an
add contracted into a fused multiply-add, and calls the C library for a few functions).

Layout: ``<family>.py`` holds NumPy kernels (``<name>_f32(x)``: a float32 array in, a new
float32 array out, vectorised ufunc calls); ``<family>_nb.py`` holds their numba twins
(scalar ``<name>_f32(x)`` functions giving the same bits, inlined into tier 2's loops and
compiled into eager ufuncs); ``nb_common`` and ``fma`` hold what both sides share.
Nothing here imports the rest of jaxlite, so any layer may use it.
"""
