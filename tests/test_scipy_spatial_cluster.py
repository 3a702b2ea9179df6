"""jax.scipy.spatial.transform (Rotation, Slerp) and jax.scipy.cluster.vq.vq: values vs
SciPy, round trips, derivatives, jit/vmap, errors, and real JAX where installed."""
import itertools

import numpy as np
import pytest
import scipy.cluster.vq as svq
from scipy.spatial.transform import Rotation as SR
from scipy.spatial.transform import Slerp as SSlerp

import jaxlite
import jaxlite.numpy as jnp
from jaxlite.scipy.cluster.vq import vq
from jaxlite.scipy.spatial.transform import Rotation as R
from jaxlite.scipy.spatial.transform import Slerp

SEQS = ["".join(p) for p in itertools.product("xyz", repeat=3) if p[0] != p[1] != p[2]]
SEQS += [s.upper() for s in SEQS]


def _wrap(a):
    return (a + np.pi) % (2 * np.pi) - np.pi


def _quats(n=50, seed=0):
    return np.random.RandomState(seed).randn(n, 4)


def test_public_names_match_jax_dir():
    names = {"apply", "as_euler", "as_matrix", "as_mrp", "as_quat", "as_rotvec",
             "concatenate", "count", "from_euler", "from_matrix", "from_mrp", "from_quat",
             "from_rotvec", "identity", "index", "inv", "magnitude", "mean", "quat", "random",
             "single", "_asdict", "_field_defaults", "_fields", "_make", "_replace"}
    assert {n for n in dir(R) if not n.startswith("__")} == names
    assert {n for n in dir(Slerp) if not n.startswith("__")} == {
        "_asdict", "_field_defaults", "_fields", "_make", "_replace", "count", "index",
        "init", "rotations", "rotvecs", "timedelta", "times"}


def test_conversions_vs_scipy(x64):
    q = _quats()
    r, s = R.from_quat(jnp.asarray(q)), SR.from_quat(q)
    np.testing.assert_allclose(r.as_matrix(), s.as_matrix(), atol=1e-12)
    np.testing.assert_allclose(r.as_rotvec(), s.as_rotvec(), atol=1e-12)
    np.testing.assert_allclose(r.as_rotvec(degrees=True), s.as_rotvec(degrees=True),
                               atol=1e-9)
    np.testing.assert_allclose(r.as_mrp(), s.as_mrp(), atol=1e-12)
    np.testing.assert_allclose(r.magnitude(), s.magnitude(), atol=1e-12)
    np.testing.assert_allclose(r.as_quat(canonical=True), s.as_quat(canonical=True),
                               atol=1e-12)
    np.testing.assert_allclose(r.as_quat(scalar_first=True), s.as_quat(scalar_first=True),
                               atol=1e-12)
    m = s.as_matrix()
    np.testing.assert_allclose(R.from_matrix(jnp.asarray(m)).as_matrix(), m, atol=1e-12)
    rv, mrp = s.as_rotvec(), s.as_mrp()
    np.testing.assert_allclose(R.from_rotvec(jnp.asarray(rv)).as_matrix(), m, atol=1e-12)
    np.testing.assert_allclose(R.from_mrp(jnp.asarray(mrp)).as_matrix(), m, atol=1e-12)
    np.testing.assert_allclose(R.from_rotvec(jnp.asarray(np.rad2deg(rv)), degrees=True)
                               .as_matrix(), m, atol=1e-12)
    small = np.array([[1e-5, -2e-5, 3e-6], [0.0, 0.0, 0.0]])
    np.testing.assert_allclose(R.from_rotvec(jnp.asarray(small)).as_quat(),
                               SR.from_rotvec(small).as_quat(), atol=1e-15)
    np.testing.assert_allclose(R.from_quat(R.from_rotvec(jnp.asarray(small)).quat)
                               .as_rotvec(), small, atol=1e-15)


@pytest.mark.parametrize("seq", SEQS)
def test_euler_vs_scipy(x64, seq):
    q = _quats(40, 1)
    np.testing.assert_allclose(R.from_quat(jnp.asarray(q)).as_euler(seq),
                               SR.from_quat(q).as_euler(seq), atol=1e-10)
    ang = np.random.RandomState(2).uniform(-3, 3, (10, 3))
    np.testing.assert_allclose(R.from_euler(seq, jnp.asarray(ang)).as_matrix(),
                               SR.from_euler(seq, ang).as_matrix(), atol=1e-12)
    np.testing.assert_allclose(R.from_euler(seq, jnp.asarray(np.rad2deg(ang)), degrees=True)
                               .as_matrix(), SR.from_euler(seq, ang).as_matrix(), atol=1e-12)
    # gimbal lock: the middle angle at its limits, the last angle reported as zero
    sym = seq[0].lower() == seq[2].lower()
    for mid in ([0.0, np.pi] if sym else [np.pi / 2, -np.pi / 2]):
        a = ang.copy()
        a[:, 1] = mid
        qq = SR.from_euler(seq, a).as_quat()
        with pytest.warns(UserWarning):
            ref = SR.from_quat(qq).as_euler(seq)
        got = np.asarray(R.from_quat(jnp.asarray(qq)).as_euler(seq))
        # JAX (and jaxlite) report an angle of exactly pi as -pi where SciPy says pi
        np.testing.assert_allclose(_wrap(got - ref), 0, atol=1e-6)


def test_compose_apply_inv_mean(x64):
    q1, q2 = _quats(6, 3), _quats(6, 4)
    r1, r2 = R.from_quat(jnp.asarray(q1)), R.from_quat(jnp.asarray(q2))
    s1, s2 = SR.from_quat(q1), SR.from_quat(q2)
    np.testing.assert_allclose((r1 * r2).as_matrix(), (s1 * s2).as_matrix(), atol=1e-12)
    np.testing.assert_allclose((r1 * r2[0]).as_matrix(), (s1 * s2[0]).as_matrix(),
                               atol=1e-12)
    np.testing.assert_allclose(r1.inv().as_matrix(), s1.inv().as_matrix(), atol=1e-12)
    v = np.random.RandomState(5).randn(6, 3)
    np.testing.assert_allclose(r1.apply(jnp.asarray(v)), s1.apply(v), atol=1e-12)
    np.testing.assert_allclose(r1.apply(jnp.asarray(v), inverse=True),
                               s1.apply(v, inverse=True), atol=1e-12)
    np.testing.assert_allclose(r1[2].apply(jnp.asarray(v[0])), s1[2].apply(v[0]), atol=1e-12)
    w = np.arange(1.0, 7.0)
    np.testing.assert_allclose(r1.mean(jnp.asarray(w)).as_matrix(),
                               s1.mean(w).as_matrix(), atol=1e-10)
    np.testing.assert_allclose(r1.mean().as_matrix(), s1.mean().as_matrix(), atol=1e-10)


def test_container_protocol_and_pytree():
    r = R.from_quat(jnp.asarray(_quats(3), jnp.float32))
    assert len(r) == 3 and not r.single and r[0].single and r[1:].quat.shape == (2, 4)
    assert R.concatenate([r, r[:1]]).quat.shape == (4, 4)
    assert R.identity().quat.tolist() == [0, 0, 0, 1]
    assert R.identity(dtype=jnp.float16).quat.dtype == jnp.float16
    with pytest.raises(TypeError, match="no len"):
        len(r[0])
    with pytest.raises(TypeError, match="not subscriptable"):
        r[0][0]
    with pytest.raises(NotImplementedError):
        R.random(jaxlite.random.PRNGKey(0), 2)
    leaves = jaxlite.tree_util.tree_leaves(r)
    assert len(leaves) == 1 and leaves[0].shape == (3, 4)
    mats = jaxlite.vmap(lambda r: r.as_matrix())(r)
    np.testing.assert_allclose(mats, r.as_matrix(), atol=1e-6)
    e = jaxlite.jit(lambda q: R.from_quat(q).as_euler("zyx"))(r.quat)
    np.testing.assert_allclose(e, r.as_euler("zyx"), atol=1e-6)


def test_gradients_finite_differences(x64):
    v0 = jnp.array([0.3, -0.2, 0.5])

    def f(v):
        return jnp.sum(R.from_rotvec(v).as_euler("xyz") * jnp.array([1.0, 2.0, 3.0]))
    g = jaxlite.grad(f)(v0)
    eps = 1e-6
    fd = [(f(v0.at[i].add(eps)) - f(v0.at[i].add(-eps))) / (2 * eps) for i in range(3)]
    np.testing.assert_allclose(g, fd, rtol=1e-6)
    h = jaxlite.grad(lambda q: jnp.sum(R.from_quat(q).as_rotvec()))(
        jnp.array([0.1, 0.2, 0.3, 0.9]))
    assert np.all(np.isfinite(np.asarray(h)))


def test_slerp_vs_scipy(x64):
    key = SR.from_euler("zxy", [[90, 0, 0], [0, 45, 0], [0, 0, -30], [10, 20, 30]],
                        degrees=True)
    times = np.array([0.0, 1.0, 2.5, 3.0])
    s = Slerp.init(jnp.asarray(times), R.from_quat(jnp.asarray(key.as_quat())))
    t = np.array([0.0, 0.3, 1.0, 1.7, 2.5, 2.9, 3.0])
    np.testing.assert_allclose(s(jnp.asarray(t)).as_matrix(),
                               SSlerp(times, key)(t).as_matrix(), atol=1e-12)
    assert s(jnp.asarray(0.4)).single
    out = jaxlite.jit(lambda s, t: s(t).quat)(s, jnp.asarray(t))
    np.testing.assert_allclose(out, s(jnp.asarray(t)).quat, atol=1e-12)


def test_rotation_errors():
    r = R.from_quat(jnp.ones((3, 4)))
    with pytest.raises(ValueError, match="Expected axes from `seq`"):
        R.from_euler("xyw", jnp.array([1.0, 2, 3]))
    with pytest.raises(ValueError, match="Expected axes from `seq`"):
        R.from_euler("xYz", jnp.array([1.0, 2, 3]))
    with pytest.raises(ValueError, match="non-empty string of upto 3"):
        R.from_euler("xyzx", jnp.array([1.0, 2, 3, 4]))
    with pytest.raises(ValueError, match="consecutive axes"):
        r.as_euler("xxz")
    with pytest.raises(ValueError):
        R.from_euler("xy", jnp.array([1.0, 2, 3]))
    with pytest.raises(ValueError):
        R.from_matrix(jnp.eye(4))
    with pytest.raises(ValueError):
        r.apply(jnp.ones((2, 3)))
    with pytest.raises(ValueError, match="Incompatible shapes"):
        r * r[:2]
    with pytest.raises(ValueError, match="2 values and 3 rotations"):
        r.mean(jnp.ones(2))
    with pytest.raises(TypeError, match="requires ndarray"):
        R.from_rotvec([0.1, 0.2, 0.3])
    with pytest.raises(ValueError, match="at least 2 rotations"):
        Slerp.init(jnp.array([0.0, 1, 2]), r[0])
    with pytest.raises(ValueError, match="3 rotations and 2 timestamps"):
        Slerp.init(jnp.array([0.0, 1]), r)
    with pytest.raises(ValueError, match="1 dimensional"):
        Slerp.init(jnp.array([[0.0, 1, 2]]), r)


def test_spatial_vs_jax():
    jax = pytest.importorskip("jax")
    from jax.scipy.spatial.transform import Rotation as JR
    from jax.scipy.spatial.transform import Slerp as JSlerp
    q = _quats(8, 7).astype(np.float32)
    jr, lr = JR.from_quat(q), R.from_quat(jnp.asarray(q))
    for name, args in [("as_matrix", ()), ("as_rotvec", ()), ("as_mrp", ()),
                       ("magnitude", ()), ("as_quat", (True, True)), ("as_euler", ("zxz",)),
                       ("as_euler", ("XYZ",))]:
        a, b = getattr(jr, name)(*args), getattr(lr, name)(*args)
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_allclose(b, a, atol=2e-5, err_msg=name)
    np.testing.assert_allclose((lr * lr[0]).quat, (jr * jr[0]).quat, atol=1e-6)
    np.testing.assert_allclose(lr.apply(jnp.ones(3)), jr.apply(jax.numpy.ones(3)), atol=1e-5)
    np.testing.assert_allclose(R.from_matrix(jnp.asarray(q[:3, :3] * 1.3)).quat,
                               JR.from_matrix(q[:3, :3] * 1.3).quat, atol=1e-6)
    np.testing.assert_allclose(abs(np.dot(lr.mean().quat, jr.mean().quat)), 1, atol=1e-5)
    t = np.array([3.5, -1.0, 0.0, 0.3, 1.0, 1.7, 2.0], np.float32)
    js = JSlerp.init(np.array([0.0, 1, 2], np.float32), jr[:3])
    ls = Slerp.init(jnp.array([0.0, 1, 2]), lr[:3])
    np.testing.assert_allclose(ls(jnp.asarray(t)).quat, js(t).quat, atol=2e-6)
    np.testing.assert_allclose(ls.rotvecs, js.rotvecs, atol=2e-6)


# ----------------------------------------------------------------------------- vq
def test_vq_vs_scipy():
    rng = np.random.RandomState(0)
    obs, book = rng.randn(30, 3), rng.randn(5, 3)
    code, dist = vq(jnp.asarray(obs, jnp.float32), jnp.asarray(book, jnp.float32))
    rc, rd = svq.vq(obs, book)
    np.testing.assert_array_equal(code, rc)
    np.testing.assert_allclose(dist, rd, rtol=1e-5)
    assert code.dtype == np.int32 and dist.dtype == np.float32
    code1, dist1 = vq(jnp.asarray(obs[:, 0]), jnp.asarray(book[:, 0]))
    rc1, rd1 = svq.vq(obs[:, :1], book[:, :1])
    np.testing.assert_array_equal(code1, rc1)
    np.testing.assert_allclose(dist1, rd1, rtol=1e-5)
    # ties pick the first code; integers are promoted
    c, d = vq(jnp.array([[1, 1]]), jnp.array([[0, 0], [2, 2]]))
    assert int(c[0]) == 0 and d.dtype == np.float32
    with pytest.raises(ValueError, match="same rank"):
        vq(jnp.ones(3), jnp.ones((2, 2)))
    cs, ds = jaxlite.vmap(vq, in_axes=(0, None))(jnp.stack([jnp.asarray(obs)] * 2),
                                               jnp.asarray(book))
    np.testing.assert_array_equal(cs[1], rc)
    g = jaxlite.grad(lambda o: vq(o, jnp.asarray(book))[1].sum())(jnp.asarray(obs))
    diff = obs - book[rc]
    np.testing.assert_allclose(g, diff / np.linalg.norm(diff, axis=1, keepdims=True),
                               rtol=1e-5)


def test_vq_vs_jax():
    pytest.importorskip("jax")
    from jax.scipy.cluster.vq import vq as jvq
    rng = np.random.RandomState(1)
    obs, book = rng.randn(20, 4).astype(np.float32), rng.randn(6, 4).astype(np.float32)
    for a, b in zip(vq(obs, book), jvq(obs, book)):
        assert a.dtype == b.dtype
        np.testing.assert_allclose(a, b, rtol=1e-6)


def test_public_names_vs_jax():
    pytest.importorskip("jax")
    import importlib
    mods = ("scipy.spatial.transform", "scipy.cluster.vq", "scipy.spatial", "scipy.cluster")
    for mod in mods:
        a = importlib.import_module("jax." + mod)
        b = importlib.import_module("jaxlite." + mod)
        assert ({n for n in dir(a) if not n.startswith("_")}
                == {n for n in dir(b) if not n.startswith("_")}), mod
    from jax.scipy.spatial.transform import Rotation as JR
    assert ({n for n in dir(JR) if not n.startswith("__")}
            == {n for n in dir(R) if not n.startswith("__")})
