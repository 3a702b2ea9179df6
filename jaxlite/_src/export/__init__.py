"""``jax.export``: exporting jitted functions as data (exported.py) in jaxlite's serialized
format (codec.py), with symbolic shapes (shape_poly.py)."""
