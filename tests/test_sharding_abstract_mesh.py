"""Shardings over the abstract mesh inside jit, laid out on the mesh of jax.set_mesh."""
from multidevice import run_json


def test_constraint_on_abstract_mesh_under_set_mesh():
    """A sharding constraint traced under jax.set_mesh over the abstract mesh (as flax's
    with_partitioning makes it inside jit) lays the value out on the mesh in context."""
    got = run_json("""
        mesh = jax.make_mesh((2, 2), ("model", "data"),
                             axis_types=(jax.sharding.AxisType.Auto,) * 2)
        P = jax.sharding.PartitionSpec

        @jax.jit
        def make():
            am = jax.sharding.get_abstract_mesh()
            return lax.with_sharding_constraint(
                jnp.ones((8, 2)), jax.sharding.NamedSharding(am, P("model", "data")))
        with jax.set_mesh(mesh):
            y = make()
        print(json.dumps([str(y.sharding.spec), y.sharding.mesh.axis_names,
                          float(y.sum())]))
    """, devices=4)
    assert got == ["P('model', 'data')", ["model", "data"], 16.0]
