"""Names of JAX 0.10.2 added for issue 20 (outputs stored from JAX 0.10.2)."""
import numpy as np
import pytest

import jaxlite as jax
from jaxlite.experimental import mesh_utils, multihost_utils


class _Dev:
    def __init__(self, i, s):
        self.id, self.slice_index, self.process_index = i, s, 0
        self.device_kind, self.platform = "cpu", "cpu"

    def __repr__(self):
        return f"d{self.id}"


def test_create_hybrid_device_mesh():
    devs = jax.devices()
    m = mesh_utils.create_hybrid_device_mesh((1,), (1,), devices=devs[:1],
                                             process_is_granule=True)
    assert m.shape == (1,) and m[0] == devs[0]
    with pytest.raises(ValueError, match="Number of slices 1 must equal the product of "
                       r"dcn_mesh_shape \(2,\)"):
        mesh_utils.create_hybrid_device_mesh((1,), (2,), devices=devs[:1],
                                             process_is_granule=True)
    with pytest.raises(ValueError, match="does not have attribute slice_index. See "
                       "`process_is_granule` option."):
        mesh_utils.create_hybrid_device_mesh((1,), (1,), devices=devs[:1])
    # two slices of two devices: each slice is one block of the dcn grid
    fake = [_Dev(i, i // 2) for i in range(4)]
    assert str(mesh_utils.create_hybrid_device_mesh((2,), (2,), devices=fake).tolist()) == \
        "[d0, d1, d2, d3]"
    assert str(mesh_utils.create_hybrid_device_mesh((1, 2), (2, 1), devices=fake).tolist()) \
        == "[[d0, d1], [d2, d3]]"
    assert str(mesh_utils.create_hybrid_device_mesh((2, 1), (1, 2), devices=fake).tolist()) \
        == "[[d0, d2], [d1, d3]]"


def test_multihost_utils_names():
    assert multihost_utils.reached_preemption_sync_point(3) is False
    with pytest.raises(RuntimeError, match="Distributed JAX not initialized."):
        with multihost_utils.live_devices(jax.devices()):
            pass
    assert issubclass(multihost_utils.ProcessFailureError, Exception)


def test_abstract_device():
    d = jax.sharding.AbstractDevice("cpu", None, "cpu")
    m = jax.sharding.AbstractMesh((2,), ("x",), abstract_device=d)
    assert repr(m) == ("AbstractMesh('x': 2, axis_types=(Auto,), device_kind=cpu, "
                       "num_cores=None, platform=cpu)")
    assert repr(d) == "AbstractDevice(device_kind=cpu, num_cores=None, platform=cpu)"


def test_against_jax():
    rjax = pytest.importorskip("jax")
    from jax.experimental import mesh_utils as rmu
    fake = [_Dev(i, i // 2) for i in range(4)]
    for shapes in [((2,), (2,)), ((1, 2), (2, 1)), ((2, 1), (1, 2))]:
        assert str(rmu.create_hybrid_device_mesh(*shapes, devices=fake).tolist()) == \
            str(mesh_utils.create_hybrid_device_mesh(*shapes, devices=fake).tolist())
    assert np.asarray(rjax.numpy.ones(1)).tolist() == [1.0]
