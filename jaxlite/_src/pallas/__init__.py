"""Pallas (``jax.experimental.pallas``) in interpret mode.

``core.py`` holds block specs, grids and memory spaces; ``primitives.py`` the kernel-side
primitives (program_id, masked loads and stores, atomics, run_scoped); ``helpers.py`` the
functions kernels call; ``pallas_call.py`` the ``pallas_call`` primitive and API;
``interpret.py`` the generated grid loop that runs a kernel on NumPy buffers. Refs and the
``get``/``swap``/``addupdate`` primitives live in ``prims/state.py``.
"""
