"""Gaps found by running flax.nnx's own test suite on jaxlite (tools/run_flax_nnx_suite.py),
each checked here without flax: against the real JAX when it is installed, and against the
values JAX gives, written out, so the file means something without it."""
import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite._src.core.trace import ctx


def _real():
    return pytest.importorskip("jax")


# ----------------------------------------------------------------------------- has_aux

class _Node:
    """A pytree node that records the trace current when it is rebuilt (as an nnx
    Variable records its trace state)."""

    def __init__(self, v):
        self.v, self.trace = v, ctx.trace


jax.tree_util.register_pytree_node(_Node, lambda n: ((n.v,), None), lambda _, c: _Node(c[0]))


@pytest.mark.parametrize("how", ["grad", "value_and_grad", "vjp", "jvp", "linearize"])
def test_aux_is_rebuilt_in_the_callers_trace(how):
    def f(x):
        return x * 2., _Node(x * 3.)
    x = jnp.float32(1.)
    if how == "grad":
        _, aux = jax.grad(f, has_aux=True)(x)
    elif how == "value_and_grad":
        (_, aux), _ = jax.value_and_grad(f, has_aux=True)(x)
    elif how == "vjp":
        _, _, aux = jax.vjp(f, x, has_aux=True)
    elif how == "jvp":
        _, _, aux = jax.jvp(f, (x,), (x,), has_aux=True)
    else:
        _, _, aux = jax.linearize(f, x, has_aux=True)
    assert aux.trace is None and float(aux.v) == 3.0
    # under jit, the node belongs to jit's trace, not to the AD trace inside it
    seen = {}

    def g(x):
        _, a = jax.grad(f, has_aux=True)(x)
        seen["trace"], seen["outer"] = a.trace, ctx.trace
        return a.v
    assert float(jax.jit(g)(x)) == 3.0
    assert seen["trace"] is seen["outer"] and seen["outer"] is not None


# ----------------------------------------------------------------------------- *_like

@pytest.mark.parametrize("make", [
    lambda m: m.numpy.zeros_like(1.0), lambda m: m.numpy.ones_like(3),
    lambda m: m.numpy.full_like(m.numpy.asarray(1.0), 3),
    lambda m: m.numpy.zeros_like(m.numpy.asarray(1.0), shape=(2,)),
    lambda m: m.numpy.full_like(1, 2.5),
    lambda m: m.numpy.zeros_like(m.numpy.asarray(1.0), dtype=m.numpy.float32),
    lambda m: m.numpy.full_like(m.numpy.ones(2), 3.0),
    lambda m: m.numpy.zeros_like(m.ShapeDtypeStruct((), m.numpy.float32, weak_type=True)),
])
def test_like_functions_keep_weak_type(make):
    out = make(jax)
    real = _real()
    ref = make(real)
    assert (out.dtype, out.weak_type, out.shape) == (ref.dtype, ref.weak_type, ref.shape)
    np.testing.assert_array_equal(np.asarray(out), np.asarray(ref))


def test_like_functions_weak_type_literals():
    assert jnp.zeros_like(1.0).weak_type and jnp.ones_like(3).weak_type
    assert jnp.full_like(1, 2.5).dtype == np.int32 and int(jnp.full_like(1, 2.5)) == 2
    assert not jnp.zeros_like(jnp.asarray(1.0), dtype=jnp.float32).weak_type
    assert not jnp.zeros_like(jnp.ones(2)).weak_type


# ----------------------------------------------------------------------------- isclose

def test_isclose_keys_and_infinities():
    k0, k1 = jax.random.key(0), jax.random.key(1)
    assert not bool(jnp.allclose(k0, k1)) and bool(jnp.allclose(k0, k0))
    inf, nan = np.inf, np.nan
    a = jnp.array([1., 2., inf, -inf, nan, 5., 3.])
    b = jnp.array([1., inf, inf, inf, nan, 5.00001, inf])
    np.testing.assert_array_equal(jnp.isclose(a, b),
                                  [True, False, True, False, False, True, False])
    np.testing.assert_array_equal(jnp.isclose(a, b, equal_nan=True),
                                  [True, False, True, False, True, True, False])


def test_isclose_matches_jax():
    real = _real()
    a, b = [1., 2., np.inf, -np.inf, np.nan, 5., 3.], [1., np.inf, np.inf, 1., np.nan, 5., np.inf]
    for en in (False, True):
        np.testing.assert_array_equal(
            jnp.isclose(jnp.array(a), jnp.array(b), equal_nan=en),
            real.numpy.isclose(real.numpy.array(a), real.numpy.array(b), equal_nan=en))


# ----------------------------------------------------------------------------- attention

@pytest.mark.parametrize("q, k, v, msg", [
    ((1, 4, 5, 8), (1, 4, 2, 8), (1, 4, 2, 8),
     "The number of query heads must be a multiple of key/value heads, but got 5 vs 2"),
    ((1, 4, 4, 8), (1, 4, 2, 8), (1, 4, 2, 7), "value shape should be [1, 4, 2, 8]"),
    ((2, 4, 4, 8), (1, 4, 2, 8), (1, 4, 2, 8), "query shape should be [1, -1, -1, 8]"),
    ((1, 4, 4, 8), (1, 4, 2, 8), (1, 5, 2, 8), "value shape should be [1, 4, 2, 8]"),
])
def test_dot_product_attention_checks(q, k, v, msg):
    with pytest.raises(ValueError) as e:
        jax.nn.dot_product_attention(jnp.ones(q), jnp.ones(k), jnp.ones(v))
    assert msg in str(e.value)


def test_dot_product_attention_dtype_check_and_gqa():
    with pytest.raises(ValueError, match="value dtype should be bfloat16, but got float32"):
        jax.nn.dot_product_attention(jnp.ones((1, 4, 4, 8)),
                                     jnp.ones((1, 4, 2, 8), jnp.bfloat16), jnp.ones((1, 4, 2, 8)))
    q = jax.random.normal(jax.random.key(0), (1, 3, 4, 8))
    kv = jax.random.normal(jax.random.key(1), (1, 3, 2, 8))
    out = jax.nn.dot_product_attention(q, kv, kv)
    ref = jax.nn.dot_product_attention(q, jnp.repeat(kv, 2, axis=2), jnp.repeat(kv, 2, axis=2))
    np.testing.assert_allclose(out, ref, rtol=1e-6)


# ----------------------------------------------------------------------------- small APIs

def test_out_info_of_every_stage():
    f = jax.jit(lambda x: {"a": x * 2, "b": x.sum()})
    x = jnp.ones(3)
    low = f.lower(x)
    for info in (f.trace(x).out_info, low.out_info, low.compile().out_info):
        assert info["a"].shape == (3,) and info["b"].shape == ()
        assert info["a"].dtype == np.float32


def test_mesh_are_all_axes():
    from jaxlite.sharding import AbstractMesh, AxisType
    E, A = AxisType.Explicit, AxisType.Auto
    m = AbstractMesh((2, 2), ("x", "y"), axis_types=(E, E))
    assert m.are_all_axes_explicit and not m.are_all_axes_auto and not m.are_all_axes_manual
    m = AbstractMesh((2, 2), ("x", "y"), axis_types=(E, A))
    assert not m.are_all_axes_explicit and not m.are_all_axes_auto
    assert not AbstractMesh((), ()).are_all_axes_auto     # no axes: False, as in JAX


def test_parse_flags_with_absl():
    c = jax.config
    old_x64, old_prec = c.jax_enable_x64, c.jax_default_matmul_precision
    try:
        c.parse_flags_with_absl(["prog", "--jax_enable_x64", "--other",
                                 "--jax_default_matmul_precision=highest", "--",
                                 "--nojax_enable_x64"])
        assert c.jax_enable_x64 and c.jax_default_matmul_precision == "highest"
        c.parse_flags_with_absl(["--nojax_enable_x64"])
        assert not c.jax_enable_x64
        with pytest.raises(AttributeError, match="Unrecognized config option: jax_bogus"):
            c.parse_flags_with_absl(["--jax_bogus=1"])
    finally:
        c.update("jax_enable_x64", old_x64)
        c.update("jax_default_matmul_precision", old_prec)


def test_parse_flags_with_absl_parses_absl_flags():
    # JAX's parse_flags_with_absl leaves absl's flags parsed (flax's checkpoints_test reads
    # --test_tmpdir through absltest's create_tempdir right after calling it)
    pytest.importorskip("absl")
    import multidevice
    out = multidevice.run_snippet("""
import sys
sys.argv = ["prog", "--jax_enable_x64", "--", "--other"]
import jaxlite as jax
from absl import flags
print(flags.FLAGS.is_parsed())
jax.config.parse_flags_with_absl()
print(flags.FLAGS.is_parsed(), jax.config.jax_enable_x64)
""", n=1)
    assert out.split() == ["False", "True", "True"]


def test_eager_sharding_constraint_over_the_abstract_mesh_in_context():
    """flax's eager variable sharding: a NamedSharding over jax.sharding.get_abstract_mesh()
    applied outside jit takes its devices from jax.set_mesh's mesh (JAX: the same; outside
    any mesh context a TypeError)."""
    import multidevice
    out = multidevice.run_snippet("""
import jaxlite as jax, jaxlite.numpy as jnp
from jaxlite.sharding import NamedSharding, PartitionSpec as P
mesh = jax.make_mesh((2, 2), ('a', 'b'), axis_types=(jax.sharding.AxisType.Auto,) * 2)
with jax.set_mesh(mesh):
    am = jax.sharding.get_abstract_mesh()
    y = jax.lax.with_sharding_constraint(jnp.arange(8.).reshape(4, 2), NamedSharding(am, P('a', 'b')))
    print(type(y.sharding.mesh).__name__, y.sharding.spec, float(y.sum()))
try:
    jax.lax.with_sharding_constraint(jnp.ones((4, 2)), NamedSharding(am, P('a', 'b')))
except TypeError as e:
    print('TypeError', 'jax.set_mesh' in str(e))
""", n=4)
    assert out.split("\n")[:2] == ["Mesh P('a', 'b') 28.0", "TypeError True"]


# ----------------------------------------------------------------------------- scan cache

def test_scan_body_tracing_is_cached():
    """As JAX: scanning the same function over the same types again does not trace it
    again (flax's nnx.scan tests count traces); new types, or a body closing over a traced
    value, trace again."""
    n = [0]

    def f(c, x):
        n[0] += 1
        return c + 1, x ** 2
    x = jnp.arange(5)
    for _ in range(3):
        c, y = jax.lax.scan(f, jnp.array(0), x)
    assert n[0] == 1 and int(c) == 5
    np.testing.assert_array_equal(y, [0, 1, 4, 9, 16])
    jax.lax.scan(f, jnp.array(0.), x.astype(jnp.float32))
    assert n[0] == 2

    def g(s):
        def body(c, a):
            n[0] += 1
            return c + a * s, a
        return jax.lax.scan(body, 0., jnp.ones(3))[0]
    before = n[0]
    assert float(jax.grad(g)(2.)) == 3.0 and float(jax.grad(g)(3.)) == 3.0
    assert n[0] > before + 1      # each closure is a new function: traced each time


# ----------------------------------------------------------------------------- cond / jit

def test_cond_forwards_pass_through_outputs():
    """As JAX: an output every branch returns unchanged is the input itself, outside the
    cond (so under vmap a value no branch changes stays unbatched: nnx.vmap + nnx.cond with
    a broadcast Variable)."""
    jx = jax.make_jaxpr(lambda p, x, y: jax.lax.cond(
        p, lambda x, y: (x, y + 1), lambda x, y: (x, y * 2), x, y))(True, 1., 2.)
    assert str(jx).endswith("in (b, e) }") and "(h,) }" in str(jx)
    swapped = jax.make_jaxpr(lambda p, x, y: jax.lax.cond(
        p, lambda x, y: (x, y), lambda x, y: (y, x), x, y))(True, 1., 2.)
    assert str(swapped).endswith("in (e, f) }")
    f = jax.vmap(lambda p, x, y: jax.lax.cond(p, lambda x, y: (x, y + 1),
                                              lambda x, y: (x, y * 2), x, y),
                 in_axes=(0, None, 0), out_axes=(None, 0))
    a, b = f(jnp.array([True, False]), 1., jnp.array([2., 3.]))
    assert float(a) == 1.0 and b.tolist() == [3.0, 6.0]
    sw = jax.make_jaxpr(lambda i, x, y: jax.lax.switch(
        i, [lambda x, y: (x, y + 1), lambda x, y: (x, y * 2)], x, y))(1, 1., 2.)
    assert str(sw).endswith("in (b, f) }")
    assert float(jax.grad(lambda x: jax.lax.cond(True, lambda a: a, lambda a: a, x) * 3)(2.)) == 3.


def test_cond_jaxprs_match_jax():
    real = _real()
    progs = [lambda m: (lambda p, x, y: m.lax.cond(p, lambda x, y: (x, y + 1),
                                                  lambda x, y: (x, y * 2), x, y)),
             lambda m: (lambda p, x, y: m.lax.cond(p, lambda x, y: (x, y),
                                                  lambda x, y: (y, x), x, y))]
    for prog in progs:
        assert str(jax.make_jaxpr(prog(jax))(True, 1., 2.)) == \
            str(real.make_jaxpr(prog(real))(True, 1., 2.))


def test_jit_python_scalar_and_weak_array_share_a_trace():
    n = [0]

    @jax.jit
    def f(x):
        n[0] += 1
        return x * 2
    f(1.0)
    f(jnp.asarray(1.0))           # weak float32, as 1.0 is
    f(f(3.0))                     # a weak result
    assert n[0] == 1
    f(2)
    f(jnp.asarray(2))
    assert n[0] == 2
    f(True)
    assert n[0] == 3              # Python bools are not weak: bool[]
    with pytest.raises(OverflowError):
        f(2 ** 40)


def test_lower_and_call_share_one_tracing():
    """As JAX: ``f.lower(x)`` then ``f(x)`` (nnx.tabulate's flop count) traces once."""
    n = [0]

    @jax.jit
    def f(x):
        n[0] += 1
        return x * 2
    low = f.lower(jnp.ones(3))
    np.testing.assert_array_equal(f(jnp.ones(3)), [2., 2., 2.])
    f.lower(jax.ShapeDtypeStruct((3,), jnp.float32))
    np.testing.assert_array_equal(low.compile()(jnp.ones(3)), [2., 2., 2.])
    assert n[0] == 1
    f.trace(jnp.ones(4))
    f(jnp.ones(4))
    assert n[0] == 2


# ----------------------------------------------------------------------------- spmd

_SPMD_SNIPPET = """
import numpy as np
from {mod}.sharding import NamedSharding, PartitionSpec as P, AxisType, reshard
from {mod}.experimental.layout import Format, Layout
A, E = AxisType.Auto, AxisType.Explicit
mesh = jax.make_mesh((2, 2), ('row', 'col'), axis_types=(A, A))
ns = NamedSharding(mesh, P('row', 'col'))
x = jax.device_put(jnp.arange(16.).reshape(8, 2), ns)
# *_like of a committed array keeps its placement (optax's zeros_like of sharded params)
for y in (jnp.zeros_like(x), jnp.ones_like(x, dtype=jnp.int32), jnp.full_like(x, 2.),
          jnp.zeros_like(x, shape=(3,)), jnp.zeros_like(jnp.ones(3))):
    print(type(y.sharding).__name__, getattr(y.sharding, 'spec', None), y.dtype, y.shape)
class Boxed:   # stands for an array and tells its sharding (as an nnx Variable does)
    def __init__(self, v):
        self.v, self.shape, self.dtype, self.sharding = v, v.shape, v.dtype, v.sharding
    def __jax_array__(self):
        return self.v
print(jnp.zeros_like(Boxed(x)).sharding.spec)
d1 = jax.devices()[1]
print(jnp.zeros_like(jax.device_put(jnp.ones(2), d1)).sharding.device_set == {{d1}})
# a Format's sharding places the array (its layout is a memory order)
f = Format(Layout(major_to_minor=(1, 0)), NamedSharding(mesh, P('row', None)))
y = jax.lax.with_sharding_constraint(x, f)
print(y.sharding.spec, float(y.sum()), jax.device_put(x, f).sharding.spec)
# conv_general_dilated's out_sharding
em = jax.make_mesh((2, 2), ('X', 'Y'), axis_types=(E, E))
with jax.set_mesh(em):
    lhs = reshard(jnp.arange(32.).reshape(2, 4, 4), P('X', None, None))
    k = jnp.ones((3, 4, 8))
    dn = jax.lax.conv_dimension_numbers(lhs.shape, k.shape, ('NHC', 'HIO', 'NHC'))
    for s in (None, P('X', 'Y', None)):
        c = jax.lax.conv_general_dilated(lhs, k, (1,), 'SAME', dimension_numbers=dn,
                                         out_sharding=s)
        print(jax.typeof(c), float(c.sum()))
# eval_shape keeps the Explicit sharding of results
o = jax.eval_shape(lambda: reshard(jnp.ones((4, 4)), NamedSharding(em, P('X', 'Y'))))
print(o.sharding.spec, type(o.sharding.mesh).__name__)
print(jax.eval_shape(lambda v: v * 2, jnp.ones(3)).sharding)
"""


def test_spmd_gaps_match_jax():
    """flax.nnx's spmd tests: optimizer state made with zeros_like keeps the parameters'
    sharding, a Format as out_sharding, Conv's out_sharding, nnx.eval_shape of explicitly
    sharded parameters. Outputs of JAX 0.10.2 are written here; compared with the real JAX
    too when it is installed."""
    import multidevice
    head = "import jaxlite as jax, jaxlite.numpy as jnp\n"
    got = multidevice.run_snippet(head + _SPMD_SNIPPET.format(mod="jaxlite"), n=4)
    want = ("NamedSharding P('row', 'col') float32 (8, 2)\n"
            "NamedSharding P('row', 'col') int32 (8, 2)\n"
            "NamedSharding P('row', 'col') float32 (8, 2)\n"
            "SingleDeviceSharding None float32 (3,)\n"
            "SingleDeviceSharding None float32 (3,)\n"
            "P('row', 'col')\n"
            "True\n"
            "P('row', None) 120.0 P('row', None)\n"
            "float32[2@X,4,8] 9920.0\n"
            "float32[2@X,4@Y,8] 9920.0\n"
            "P('X', 'Y') AbstractMesh\n"
            "None\n")
    assert got == want
    import importlib.util
    if importlib.util.find_spec("jax") is None:
        return
    ref = multidevice.run_snippet("import jax, jax.numpy as jnp\n" +
                                  _SPMD_SNIPPET.format(mod="jax"), n=4)
    assert got == ref
