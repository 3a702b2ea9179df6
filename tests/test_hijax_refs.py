"""jax.experimental.hijax and the eager mutable array references (jax.new_ref, jax.Ref,
jax.freeze): what jaxlite supports behaves as JAX 0.10.2 (compared with the real JAX when it
is installed, else with the values JAX gives, written here), and what it does not support
raises NotImplementedError/TypeError saying so where it is used. Refs under transformations
are tested in tests/test_refs_traced.py."""
import math

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite.experimental import hijax as hjx


# ----------------------------------------------------------------------------- refs

def test_ref_read_write_addupdate_freeze():
    r = jax.new_ref(jnp.arange(6.).reshape(2, 3))
    assert isinstance(r, jax.Ref) and not isinstance(jnp.ones(2), jax.Ref)
    assert str(jax.typeof(r)) == "Ref{float32[2,3]}"
    assert isinstance(jax.typeof(r), hjx.AbstractRef)
    assert (r.shape, r.dtype, r.ndim, len(r)) == ((2, 3), np.dtype("float32"), 2, 2)
    np.testing.assert_array_equal(r[1], [3., 4., 5.])
    assert float(r[-1, 0]) == 3.0
    np.testing.assert_array_equal(r[:, 1:], [[1., 2.], [4., 5.]])
    r[0] = jnp.full(3, 7.)
    r[1, 2] = 2.
    r.addupdate(jnp.ones((2, 3)))
    r.addupdate(jnp.ones(3), 0)
    want = [[9., 9., 9.], [4., 5., 3.]]
    np.testing.assert_array_equal(r[...], want)
    v = jax.freeze(r)
    np.testing.assert_array_equal(v, want)
    r[0, 0] = 0.                      # the frozen value is a copy: it does not change
    assert float(v[0, 0]) == 9.0
    np.testing.assert_array_equal(jax.new_ref(3.0)[...], 3.0)


def test_ref_reads_are_copies():
    x = jnp.arange(3.)
    r = jax.new_ref(x)
    a = r[...]
    r[...] = jnp.zeros(3)
    np.testing.assert_array_equal(a, [0., 1., 2.])
    np.testing.assert_array_equal(x, [0., 1., 2.])


@pytest.mark.parametrize("action, msg", [
    (lambda r: r.__setitem__(0, jnp.ones(3, jnp.int32)), "Invalid dtype for `swap`"),
    (lambda r: r.__setitem__(0, 1.), "Invalid shape for `swap`"),
    (lambda r: r.__setitem__((1, 2), 2), "Invalid dtype for `swap`"),
    (lambda r: r.addupdate(1.), "Invalid shape for `addupdate`"),
    (lambda r: r[5], "Out of bound indexer: idx=5, dim=2"),
    (lambda r: r[0, jnp.int32(7)], "Out of bound indexer: idx=7, dim=3"),
])
def test_ref_errors_as_jax(action, msg):
    r = jax.new_ref(jnp.zeros((2, 3)))
    with pytest.raises(ValueError, match=msg.replace("[", r"\[")):
        action(r)


def test_ref_dynamic_and_negative_indices():
    r = jax.new_ref(jnp.zeros(3))
    r[jnp.array(1)] = jnp.float32(5)
    np.testing.assert_array_equal(r[...], [0., 5., 0.])
    ri = jax.new_ref(jnp.arange(3))
    assert int(ri[-1]) == 2 and int(ri[-4]) == 0     # JAX clamps below the start


def test_ref_constructor_and_freed_ref():
    r = jax.new_ref(jnp.ones(3))
    with pytest.raises(TypeError, match="jax.new_ref"):
        jax.Ref(1.0)
    jax.free_ref(r)
    with pytest.raises(RuntimeError, match="freed"):
        r[...]


def test_refs_match_jax():
    real = pytest.importorskip("jax")
    for lib, np_ in ((jax, jnp), (real, real.numpy)):
        r = lib.new_ref(np_.arange(12, dtype=np_.int32).reshape(3, 4))
        r[1:, ::2] = np_.full((2, 2), 7, np_.int32)
        r.addupdate(np_.ones(4, np_.int32), 2)
        out = np.asarray(lib.freeze(r))
        if lib is jax:
            mine, mine_t = out, str(jax.typeof(r))
        else:
            np.testing.assert_array_equal(mine, out)
            assert mine_t == str(real.typeof(r))


# ----------------------------------------------------------------------------- hijax

def test_hijax_names_exist_as_in_jax():
    for name in ["Zero", "AbstractValue", "AvalQDD", "ShapedArray", "aval_method",
                 "aval_property", "AvalMutableQDD", "instantiate_zeros",
                 "is_undefined_primal", "control_flow_allowed_effects", "HiPrimitive",
                 "HiPspec", "HiType", "MutableHiType", "VJPHiPrimitive", "register_hitype",
                 "AbstractRef", "TransformedRef"]:
        assert hasattr(hjx, name), name
    assert isinstance(jax.typeof(jnp.ones(2)), hjx.AbstractValue)
    assert issubclass(hjx.AbstractRef, hjx.AbstractValue)
    assert issubclass(hjx.MutableHiType, hjx.AbstractValue) and hjx.MutableHiType.has_qdd
    assert not hjx.ShapedArray((2,), np.float32).is_high


def test_aval_property_and_method_reach_tracers():
    hjx.ShapedArray.twice_rows = hjx.aval_property(lambda t: t.shape[0] * 2)
    hjx.ShapedArray.plus = hjx.aval_method(lambda t, y: t + y)
    try:
        f = jax.jit(lambda x: x.plus(x.twice_rows))
        np.testing.assert_array_equal(f(jnp.ones(3)), [7., 7., 7.])
        with pytest.raises(AttributeError, match="no attribute 'nothing_here'"):
            jax.jit(lambda x: x.nothing_here)(1.)
    finally:
        del hjx.ShapedArray.twice_rows, hjx.ShapedArray.plus


def test_effect_type_set():
    from jaxlite.extend.core import Effect

    class MyEffect(Effect):
        pass

    s = hjx.control_flow_allowed_effects
    assert not s.contains(MyEffect())
    s.add_type(MyEffect)
    e = MyEffect()
    assert s.contains(e) and s.filter_in([e, 1]) == [e] and s.filter_not_in([e, 1]) == [1]


def test_zero_helpers():
    z = hjx.Zero(jax.typeof(jnp.ones((2,))))
    np.testing.assert_array_equal(hjx.instantiate_zeros(z), [0., 0.])
    x = jnp.ones(2)
    assert hjx.instantiate_zeros(x) is x
    assert not hjx.is_undefined_primal(x)


class _Counter:
    def __init__(self, n):
        self.n = n


class _CounterTy(hjx.HiType):
    def __eq__(self, other):
        return type(other) is _CounterTy

    def __hash__(self):
        return hash(_CounterTy)

    def str_short(self, short_dtypes=False, mesh_axis_types=False):
        return "Counter"


class _Bump(hjx.HiPrimitive):
    def impl(self, c, *, by):
        return _Counter(c.n + by)

    def abstract_eval(self, c, *, by):
        return c


def test_register_hitype_and_eager_hiprimitive():
    hjx.register_hitype(_Counter, lambda c: _CounterTy())
    bump = _Bump("bump")
    c = bump.bind(_Counter(1), by=2)
    assert c.n == 3 and repr(bump) == "bump"
    assert jax.typeof(c) == _CounterTy()
    # under a transformation a hijax primitive runs its to_lojax, and a hijax argument is
    # lowered to its arrays (tests/test_hijax_traced.py): this type defines neither
    with pytest.raises(NotImplementedError, match="must override to_lojax"):
        jax.jit(lambda x: bump.bind(_Counter(1), by=1) and x)(1.)
    with pytest.raises(NotImplementedError, match="must override lo_ty"):
        jax.jit(lambda c: c)(c)
    with pytest.raises(NotImplementedError, match="must override to_lojax"):
        bump.to_lojax(c, by=1)
    with pytest.raises(NotImplementedError, match="must override lo_ty"):
        _CounterTy().lo_ty()


class _Cube(hjx.VJPHiPrimitive):
    """x ** 3 whose reverse-mode rule is (deliberately) 1 * g: shows which rule ran."""

    def __init__(self, aval, custom):
        self.in_avals, self.out_aval, self.params = (aval,), aval, {"custom": custom}
        super().__init__()

    def expand(self, x):
        return x ** 3


class _CubeVJP(_Cube):
    def vjp_fwd(self, nzs_in, x):
        return x ** 3, x

    def vjp_bwd_retval(self, res, g):
        return (g,)


def test_vjp_hiprimitive():
    aval = jax.typeof(jnp.float32(2.))
    plain, custom = _Cube(aval, False), _CubeVJP(aval, True)
    assert float(plain(jnp.float32(2.))) == 8.0
    assert float(jax.jit(custom)(jnp.float32(2.))) == 8.0
    assert float(jax.grad(plain)(jnp.float32(2.))) == 12.0      # expand's derivative
    assert float(jax.grad(custom)(jnp.float32(2.))) == 1.0      # the primitive's own rule
    np.testing.assert_array_equal(jax.vmap(custom)(jnp.arange(3.)), [0., 1., 8.])
    assert plain == _Cube(aval, False) and plain != _Cube(aval, True)
    with pytest.raises(AttributeError, match="self.params"):
        class Bad(hjx.VJPHiPrimitive):
            def __init__(self):
                self.in_avals, self.out_aval = (), None
                super().__init__()
        Bad()


# ----------------------------------------------------------------------------- fans

@pytest.mark.parametrize("shape, in_axis, out_axis", [
    ((10, 4), -2, 0), ((10, 4), -2, -1), ((3, 3, 2, 5), -2, -1), ((4, 6, 8), (0, 1), 2),
    ((7,), 0, 0)])
@pytest.mark.parametrize("mode", ["fan_in", "fan_out", "fan_avg"])
def test_variance_scaling_fans(shape, in_axis, out_axis, mode):
    """nnx.Embed's default init (in_axis=-2, out_axis=0 on a 2-D table) reads both axes as
    given, as JAX does: its standard deviation is sqrt(1 / (prod / out))."""
    init = jax.nn.initializers.variance_scaling(2.0, mode, "normal", in_axis, out_axis)
    w = np.asarray(init(jax.random.key(0), shape))
    size = lambda ax: math.prod(shape[a] for a in ((ax,) if isinstance(ax, int) else ax))
    rf = math.prod(shape) / size(in_axis) / size(out_axis)
    fan = {"fan_in": size(in_axis) * rf, "fan_out": size(out_axis) * rf,
           "fan_avg": (size(in_axis) + size(out_axis)) * rf / 2}[mode]
    z = np.asarray(jax.random.normal(jax.random.key(0), shape))
    np.testing.assert_allclose(w, z * np.sqrt(2.0 / fan), rtol=1e-5, atol=1e-6)
    real = pytest.importorskip("jax")
    ref = real.nn.initializers.variance_scaling(2.0, mode, "normal", in_axis, out_axis)(
        real.random.key(0), shape)
    np.testing.assert_allclose(w, np.asarray(ref), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("distribution", ["truncated_normal", "normal", "uniform"])
@pytest.mark.parametrize("mode", ["fan_in", "fan_geo_avg"])
def test_variance_scaling_complex_and_geo_avg(distribution, mode):
    """A complex dtype samples JAX's truncated complex normal / uniform disk (flax's
    Dense(param_dtype=complex64)); fan_geo_avg is sqrt(fan_in * fan_out); a bad mode is
    reported when sampling, as JAX."""
    init = jax.nn.initializers.variance_scaling(2.0, mode, distribution)
    w = np.asarray(init(jax.random.key(3), (30, 40), jnp.complex64))
    assert w.dtype == np.complex64 and np.abs(w.imag).max() > 0
    fan = 30 if mode == "fan_in" else (30 * 40) ** 0.5
    assert abs(np.mean(np.abs(w) ** 2) - 2.0 / fan) < 0.25 * 2.0 / fan   # variance scale/n
    if distribution == "truncated_normal":
        assert np.abs(w).max() <= 2 * np.sqrt(2.0 / fan) / 0.95311164380491208 + 1e-6
    bad = jax.nn.initializers.variance_scaling(1.0, "bad", distribution)
    with pytest.raises(ValueError, match="invalid mode for variance scaling initializer"):
        bad(jax.random.key(0), (2, 2))
    real = pytest.importorskip("jax")
    ref = real.nn.initializers.variance_scaling(2.0, mode, distribution)(
        real.random.key(3), (30, 40), np.complex64)
    np.testing.assert_allclose(w, np.asarray(ref), rtol=1e-5, atol=1e-6)


def test_default_in_axis_needs_2d():
    with pytest.raises(ValueError, match="at least 2D"):
        jax.nn.initializers.glorot_uniform()(jax.random.key(0), (5,))
