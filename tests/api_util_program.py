"""A program using jax.api_util's helpers; tests/test_api2_names.py runs it on jaxlite and JAX."""
import sys
if sys.argv[1] == "jax":
    import jax
    from jax import api_util as a
    from jax.extend import linear_util as lu
else:
    import jaxlite as jax
    from jaxlite import api_util as a
    from jaxlite.extend import linear_util as lu
td = jax.tree_util.tree_structure(((1, {"a": 2, "b": 3}), {}))
print(a.flatten_axes("vmap in_axes", td, ((0, {"a": None, "b": 1}), {})))
print(a.flatten_axes("vmap in_axes", td, (0, {})))
try: a.flatten_axes("vmap in_axes", td, ((0, 1, 2), {}))
except ValueError as e: print(e)
print(a.donation_vector((1,), ("k",), jax.tree_util.tree_structure(((1, (2, 3)), {"k": 1, "z": 2}))))
print(a.rebase_donate_argnums((3, 4), (0, 1)), a.rebase_donate_argnums((1, 3), (2,)))
print(a.safe_map(lambda x, y: x + y, [1, 2], [3, 4]))
try: a.safe_map(lambda x, y: x, [1], [1, 2])
except Exception as e: print(type(e).__name__)
f = lu.wrap_init(lambda x, y, z: x * 100 + y * 10 + z, debug_info=None) if sys.argv[1] != "jax" else lu.wrap_init(lambda x, y, z: x * 100 + y * 10 + z, debug_info=a.debug_info("t", lambda x, y, z: 0, (1, 2, 3), {}))
g, dyn = a.argnums_partial(f, (0, 2), (1, 2, 3))
print(dyn, g.call_wrapped(*dyn))
