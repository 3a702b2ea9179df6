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


API_UTIL_OUT = """[0, None, 1]
[0, 0, 0]
vmap in_axes specification must be a tree prefix of the corresponding value; 
  Mismatch details (1 found):
  pytree structure error: different lengths of tuple at key path
    vmap in_axes[0]
At that key path, the prefix pytree vmap in_axes has a subtree of type tuple of length 3, but the full pytree has a subtree of the same type but of length 2.
(False, True, True, True, False)
(1, 2) (1, 2)
[4, 6]
ValueError
(1, 3) 123
"""   # JAX 0.10.2's output


def _run_api_util(which):
    import os
    import pathlib
    import subprocess
    import sys
    here = pathlib.Path(__file__).resolve().parent
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(here.parent),
                                                        os.environ.get("PYTHONPATH", "")]))
    r = subprocess.run([sys.executable, str(here / "api_util_program.py"), which],
                       capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    return r.stdout


def test_api_util_helpers():
    assert _run_api_util("jaxlite") == API_UTIL_OUT


def test_api_util_helpers_against_jax():
    pytest.importorskip("jax")
    assert _run_api_util("jax") == API_UTIL_OUT


def test_extend_core_names():
    from jaxlite.extend import core
    seen = []

    @jax.jit
    def f(x):
        seen.append((core.unsafe_am_i_under_a_jit_DO_NOT_USE(),
                     core.unsafe_get_axis_names_DO_NOT_USE()))
        return x
    f(1.)
    jax.vmap(lambda x: seen.append((core.unsafe_am_i_under_a_vmap_DO_NOT_USE(),
                                    core.unsafe_get_axis_names_DO_NOT_USE(),
                                    core.nonempty_axis_env_DO_NOT_USE())) or x,
             axis_name="i")(np.ones(2))
    assert seen == [(True, []), (True, ["i"], True)]
    assert not core.unsafe_am_i_under_a_jit_DO_NOT_USE() and not core.nonempty_axis_env_DO_NOT_USE()

    def g(x):
        with core.take_current_trace() as t:
            seen.append(type(t).__name__)
        return x * 2
    jax.jit(g)(1.)
    assert seen[-1] == "StagingTrace"
    assert core.TraceTag() == core.TraceTag() and hash(core.TraceTag()) == hash(core.TraceTag())
    assert core.no_effects == frozenset() and np.ndarray in core.array_types
    from jaxlite.extend import linear_util as lu
    assert core.call_impl(lu.wrap_init(lambda a, b: a - b), 5, 3, name="x") == 2
    assert isinstance(jax.lax.create_token(), core.Token)
    from jaxlite import export
    with pytest.raises(core.InconclusiveDimensionOperation):
        export.symbolic_shape("b")[0] < 3


def test_linalg_algorithm_choices():
    from jaxlite.lax import linalg as L
    x = jax.numpy.array([[2., 1.], [1., 3.]])
    w = np.sort(np.linalg.eigvalsh(np.asarray(x)))
    np.testing.assert_allclose(L.eigh(x, implementation=L.EighImplementation.QR)[1], w,
                               rtol=1e-6)
    with pytest.raises(NotImplementedError, match="Jacobi implementation is not supported on "
                       "CPU"):
        L.eigh(x, implementation=L.EighImplementation.JACOBI)
    with pytest.raises(NotImplementedError, match="QDWH implementation is only supported on "
                       "TPU"):
        L.eigh(x, implementation=L.EighImplementation.QDWH)
    for a in (L.SvdAlgorithm.DEFAULT, L.SvdAlgorithm.QR, L.SvdAlgorithm.DIVIDE_AND_CONQUER):
        np.testing.assert_allclose(L.svd(x, algorithm=a)[1], w[::-1], rtol=1e-6)
    with pytest.raises(NotImplementedError, match="The SVD Jacobi and Polar algorithms are "
                       "not implemented on CPU."):
        jax.jit(lambda x: L.svd(x, algorithm=L.SvdAlgorithm.POLAR))(x)
    with pytest.raises(ValueError, match="Only the lapack implementation is supported on CPU."):
        L.eig(x, implementation=L.EigImplementation.MAGMA)
    np.testing.assert_allclose(np.sort(L.eig(x, implementation=L.EigImplementation.LAPACK)[0]
                                       .real), w, rtol=1e-6)
    # JAX 0.10.2's jaxpr text
    assert "algorithm=SvdAlgorithm.QR" in str(jax.make_jaxpr(
        lambda x: L.svd(x, algorithm=L.SvdAlgorithm.QR))(x))
    assert "algorithm=EighImplementation.QR" in str(jax.make_jaxpr(
        lambda x: L.eigh(x, implementation=L.EighImplementation.QR))(x))


def test_igamma_grad_a():
    from scipy.special import gammainc
    a = np.array([0.1, 0.5, 1., 2.5, 5., 10., 30., 100., 3., 50., 1e3])
    x = np.array([0.3, 2., 1., 0.5, 12., 9., 31., 120., 1e-3, 50., 1010.])
    # stored from JAX 0.10.2 with x64
    want = [-9.21987162e-01, -1.35619335e-01, -4.31729711e-01, -6.88555924e-02,
            -8.23276917e-03, -1.27036512e-01, -7.06864360e-02, -6.21318593e-03,
            -1.35963583e-09, -5.65131275e-02, -1.19457313e-02]
    with jax.enable_x64():
        got = np.asarray(jax.lax.igamma_grad_a(a, x))
    np.testing.assert_allclose(got, want, rtol=1e-8)
    fd = (gammainc(a + 1e-6, x) - gammainc(a - 1e-6, x)) / 2e-6
    np.testing.assert_allclose(got, fd, rtol=1e-5, atol=1e-12)
    g = jax.grad(jax.scipy.special.gammainc)
    np.testing.assert_allclose(g(2.5, 0.5), -0.068855576, rtol=2e-6)
    np.testing.assert_allclose(jax.grad(jax.scipy.special.gammaincc)(2.5, 0.5), 0.068855576,
                               rtol=2e-6)
    np.testing.assert_allclose(jax.vmap(g)(np.array([1., 2.], np.float32),
                                           np.array([1., 3.], np.float32)),
                               [-0.43172967, -0.19742535], rtol=2e-6)
    assert np.isnan(float(jax.lax.igamma_grad_a(-1., 2.)))
    assert float(jax.lax.igamma_grad_a(2., 0.)) == 0.
    with pytest.raises(NotImplementedError, match="Differentiation rule for 'igamma_grad_a'"):
        jax.grad(jax.grad(jax.scipy.special.gammainc))(2.5, 0.5)
