"""lax.composite and jax.smap (issue 20)."""
import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import lax


def test_composite_jaxpr_values_and_rules():
    my_tanh = lax.composite(lambda x: jnp.tanh(x), name="my.tanh")
    scale = lax.composite(lambda x, *, scale: x * scale, name="my.scale", version=2)
    assert str(jax.make_jaxpr(my_tanh)(1.)) == (
        "{ lambda ; a:f32[]. let\n    b:f32[] = composite[\n      attributes=()\n"
        "      jaxpr={ lambda ; c:f32[]. let d:f32[] = tanh c in (d,) }\n"
        "      name=my.tanh\n      version=0\n    ] a\n  in (b,) }")
    pp = str(jax.make_jaxpr(lambda x: scale(x, scale=2.))(1.))
    assert "attributes=(('scale', (2.0,), PyTreeDef(*)),)" in pp and "version=2" in pp
    assert float(my_tanh(1.)) == pytest.approx(np.tanh(1.0))
    assert float(jax.jit(my_tanh)(1.)) == pytest.approx(np.tanh(1.0))
    assert float(scale(3., scale=2.)) == 6.0
    two = lax.composite(lambda x, y: {"s": x + y, "p": x * y}, name="two")
    out = two(1., 2.)
    assert float(out["s"]) == 3.0 and float(out["p"]) == 2.0
    np.testing.assert_allclose(jax.vmap(my_tanh)(jnp.arange(3.)), np.tanh(np.arange(3.)),
                               rtol=1e-6)
    with pytest.raises(ValueError, match="JVP rule for composite not implemented"):
        jax.grad(my_tanh)(1.)
    c = 5.0
    closure = lax.composite(lambda x: x + c, name="closure")
    assert float(jax.jit(closure)(1.)) == 6.0


def test_composite_vs_jax():
    jr = pytest.importorskip("jax")
    f = lambda mod: mod.lax.composite(lambda x, *, k: mod.numpy.sin(x) * k,  # noqa: E731
                                      name="a.b", version=1)
    a = str(jax.make_jaxpr(lambda x: f(jax)(x, k=3))(1.))
    b = str(jr.make_jaxpr(lambda x: f(jr)(x, k=3))(1.))
    assert a == b


def test_smap():
    from multidevice import run_snippet
    out = run_snippet("""
import jaxlite as jax, jaxlite.numpy as jnp
from jaxlite.sharding import PartitionSpec as P, AxisType
mesh = jax.make_mesh((4,), ('x',), axis_types=(AxisType.Explicit,))
with jax.set_mesh(mesh):
    x = jax.device_put(jnp.arange(8.), P('x'))
    f = jax.smap(lambda v: v * jax.lax.axis_index('x'), in_axes=0, out_axes=0, axis_name='x')
    y = jax.jit(f)(x)
    print(y.tolist(), y.sharding.spec)
    print(jax.jit(jax.smap(lambda v: jax.lax.psum(v, 'x'), out_axes=None, axis_name='x'))(x).tolist())
mesh = jax.make_mesh((4,), ('x',), axis_types=(AxisType.Auto,))
with jax.set_mesh(mesh):
    print(jax.jit(jax.smap(lambda v: v * 2, in_axes=0, out_axes=0, axis_name='x'))(jnp.arange(8.)).tolist())
    try:
        jax.smap(lambda v: v * 2, out_axes=0, axis_name='x')(jnp.arange(8.))
    except TypeError as e:
        print(e)
""", 4)
    assert out.splitlines() == [
        "[0.0, 0.0, 2.0, 3.0, 8.0, 10.0, 18.0, 21.0] P('x',)", "[12.0, 16.0]",
        "[0.0, 2.0, 4.0, 6.0, 8.0, 10.0, 12.0, 14.0]",
        "in_axes was not specified when axis_name=frozenset({'x'}) was of type AxisType.Auto"]


def test_smap_argument_errors():
    with pytest.raises(TypeError, match="axis_name should be a `str`"):
        jax.smap(lambda v: v, out_axes=0, axis_name=("x", "y"))
    with pytest.raises(TypeError, match="in_axes must be an int, None"):
        jax.smap(lambda v: v, in_axes=[0], out_axes=0, axis_name="x")
    with pytest.raises(TypeError, match="out_axes must be an int"):
        jax.smap(lambda v: v, in_axes=0, out_axes="0", axis_name="x")
