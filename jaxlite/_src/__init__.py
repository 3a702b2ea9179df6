"""jaxlite's implementation. The public modules (``jaxlite``, ``jaxlite.numpy``, ...) only
re-export from here, and nothing here imports them.

Packages from the bottom (each imports only its own layer and those below; DESIGN.md's
"Layering, as the code is read", checked by tests/test_layering.py):

  base          config.py, tree_util/ (pytrees)
  core          avals, dtypes, the Primitive class, traces, the IR
  runtime       arrays and devices
  prims         the primitives, one class each, and the helpers their rules use
  interpreters  one per transformation; compiler/: jaxpr passes and code generation
  prims (higher-order: call, control, scan, custom, remat, linear_call): rules that run the
                interpreters on the jaxprs they carry
  api           jit, grad & co, vmap, custom derivatives, checkpoint, make_jaxpr
  library       lax < numpy < random < nn < scipy < image, example_libraries, ...
"""
