"""Array serialization through TensorStore (``jax.experimental.array_serialization``).

``tensorstore_impl`` writes each array's addressable shards to a TensorStore (zarr3 by
default, optionally inside an OCDBT key-value store) and reads arrays back shard by shard for
a target sharding; ``serialization`` adds the asynchronous checkpoint manager. TensorStore
is an optional dependency (it comes with orbax-checkpoint): ``import jaxlite`` never needs it,
and importing these modules without it raises a ModuleNotFoundError that says so.
"""
