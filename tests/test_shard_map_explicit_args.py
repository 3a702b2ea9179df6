"""shard_map arguments over meshes with Explicit axes, against JAX 0.10.2 on 8 simulated
devices: JAX checks ``in_specs`` against an argument's type only when the shard_map is
manual over every mesh axis and all of them are Explicit; partial manual (``axis_names``)
or a mesh with an Auto axis takes a plain NumPy argument (or any other) as it comes and
splits it as ``in_specs`` say. NumPy arguments are computed in JAX's dtypes (float64 ->
float32 without x64).

The snippets run with jaxlite (``import jax`` resolved to jaxlite) and, when JAX 0.10.2 is
installed, with JAX at the same time; otherwise JAX's output is read from
tests/goldens/shard_map_explicit_args_jax_0.10.2.json (``python
tests/test_shard_map_explicit_args.py --record`` records it again).
"""
import pathlib
import sys

import pytest

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import multidevice  # noqa: E402

GOLDEN = HERE / "goldens" / "shard_map_explicit_args_jax_0.10.2.json"

HEAD = """
import jax, jax.numpy as jnp
from jax.sharding import PartitionSpec as P, AxisType, NamedSharding
def show(f):
    try:
        r = f()
    except Exception as e:
        print(type(e).__name__ + ':', str(e)[:120])
    else:
        print('OK', jax.typeof(r), r.sharding.spec, np.asarray(r).ravel()[:6].tolist())
a = np.arange(16.0).reshape(8, 2)
f = lambda v: v * 2 + jax.lax.axis_index('x')
E = jax.make_mesh((4, 2), ('x', 'y'), axis_types=(AxisType.Explicit,) * 2)
EA = jax.make_mesh((4, 2), ('x', 'y'), axis_types=(AxisType.Explicit, AxisType.Auto))
A = jax.make_mesh((4, 2), ('x', 'y'), axis_types=(AxisType.Auto,) * 2)
"""

CASES = {}


def case(name, code):
    CASES[name] = HEAD + code


case("all_explicit", """
sm = lambda spec: jax.shard_map(f, mesh=E, in_specs=spec, out_specs=spec)
show(lambda: sm(P('x'))(a))
show(lambda: sm(P(None, 'y'))(a))
show(lambda: jax.shard_map(lambda v: v * 2, mesh=E, in_specs=P('x'), out_specs=P('x'))(np.float32(a)))
show(lambda: sm(P('x'))(jax.device_put(a, NamedSharding(E, P('x')))))
show(lambda: sm(P('x'))(jax.device_put(a, NamedSharding(E, P()))))
show(lambda: jax.jit(sm(P('x')))(a))
""")

case("partial_manual", """
with jax.set_mesh(E):
    g = jax.shard_map(f, in_specs=P('x'), out_specs=P('x'), axis_names={'x'})
    show(lambda: g(a))
    show(lambda: jax.jit(g)(a))
    show(lambda: g(jnp.asarray(a)))
    show(lambda: jax.shard_map(f, in_specs=P('x'), out_specs=P('x'))(a))
""")

case("mixed_axis_types", """
show(lambda: jax.shard_map(f, mesh=EA, in_specs=P('x'), out_specs=P('x'))(a))
show(lambda: jax.shard_map(lambda v: v * 2, mesh=EA, in_specs=P(None, 'y'),
                           out_specs=P(None, 'y'))(a))
show(lambda: jax.shard_map(lambda v, w: v + w, mesh=EA, in_specs=(P('x'), P()),
                           out_specs=P('x'))(a, np.ones(2)))
show(lambda: jax.jit(jax.shard_map(f, mesh=EA, in_specs=P('x'), out_specs=P('x')))(a))
""")

case("numpy_dtypes", """
show(lambda: jax.shard_map(f, mesh=A, in_specs=P('x'), out_specs=P('x'))(a))
show(lambda: jax.shard_map(lambda v: v + 1, mesh=A, in_specs=P('x'), out_specs=P('x'))(
    np.arange(8)))
show(lambda: jax.shard_map(lambda v: v * 2, mesh=E, in_specs=P(), out_specs=P())(a))
""")


@pytest.fixture(scope="module")
def outputs():
    return multidevice.outputs_beside_jax(CASES)


@pytest.mark.parametrize("name", list(CASES))
def test_case_matches_jax(name, outputs):
    multidevice.assert_case_matches_jax(outputs, GOLDEN, name,
                                        canon=lambda t: multidevice.normalize(t).splitlines())


def test_numpy_argument_accepted_where_jax_takes_it(outputs):
    """jaxlite's own run (JAX or not): the partial-manual and mixed-type shard_maps run."""
    assert outputs["jaxlite"]["partial_manual"].count("OK float32[8@x,2]") == 3
    assert outputs["jaxlite"]["mixed_axis_types"].count("OK") == 4
    assert "float64" not in "".join(outputs["jaxlite"].values())


def test_golden_is_current():
    multidevice.assert_golden_current(GOLDEN, CASES)


if __name__ == "__main__":
    if sys.argv[1:] == ["--record"]:
        multidevice.record_goldens(CASES, GOLDEN)
    else:
        raise SystemExit("usage: python tests/test_shard_map_explicit_args.py --record")
