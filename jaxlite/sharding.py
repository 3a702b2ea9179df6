"""jaxlite.sharding (mirrors ``jax.sharding``). Re-exports only."""
from jaxlite._src.sharding.mesh import (  # noqa: F401
    AxisType, Mesh, AbstractMesh, AbstractDevice, set_mesh, use_mesh, get_abstract_mesh,
    get_mesh, use_abstract_mesh)
from jaxlite._src.sharding.partition_spec import PartitionSpec  # noqa: F401
from jaxlite._src.sharding.shardings import (  # noqa: F401
    Sharding, SingleDeviceSharding, NamedSharding, PositionalSharding)
from jaxlite._src.api.placement import make_single_device_sharding  # noqa: F401
from jaxlite._src.api.sharding_types import reshard, auto_axes, explicit_axes  # noqa: F401
