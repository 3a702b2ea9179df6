"""``jax.sharding.reshard`` and small sharding helpers that move data."""
from __future__ import annotations

from jaxlite._src.runtime.array import single_device_sharding

__all__ = ["reshard", "make_single_device_sharding"]


def reshard(xs, out_shardings):
    """Move the arrays of pytree ``xs`` to ``out_shardings`` (a Sharding, a PartitionSpec
    under a mesh context, or a pytree prefix of them). Eagerly this is device_put."""
    from jaxlite._src.api.placement import device_put
    return device_put(xs, out_shardings)


def make_single_device_sharding(device):
    """The SingleDeviceSharding of ``device``."""
    return single_device_sharding(device)

