"""jaxlite.flatten_util.ravel_pytree: round trips, dtypes, transformations, and JAX parity."""
import numpy as np
import pytest

import jaxlite
import jaxlite.numpy as jnp
from jaxlite.flatten_util import ravel_pytree


def _tree(mod_np):
    return {"a": mod_np.ones((2, 2)), "b": (mod_np.arange(3), np.float16(2.0)), "c": 1.0}


def test_round_trip_shapes_and_dtypes():
    tree = _tree(jnp)
    flat, unravel = ravel_pytree(tree)
    assert flat.shape == (9,) and flat.dtype == np.float32 and not flat.weak_type
    np.testing.assert_array_equal(flat, [1, 1, 1, 1, 0, 1, 2, 2, 1])
    back = unravel(flat)
    assert jaxlite.tree_util.tree_structure(back) == jaxlite.tree_util.tree_structure(tree)
    assert back["b"][0].dtype == np.int32 and back["b"][1].dtype == np.float16
    assert back["a"].shape == (2, 2) and back["c"].shape == ()
    np.testing.assert_array_equal(back["b"][0], [0, 1, 2])


@pytest.mark.parametrize("leaves, dtype", [
    ((np.ones(2, np.float16), 1.0), np.float32),
    ((np.bool_(True), np.ones(2, np.int8)), np.int8),
    ((np.ones(2, np.int32), np.ones(1, np.uint32)), np.int64),
    ((), np.float32),
])
def test_flat_dtype_follows_promotion(leaves, dtype):
    flat, unravel = ravel_pytree(leaves)
    want = jaxlite.dtypes.canonicalize_dtype(dtype)
    assert flat.dtype == want
    assert jaxlite.tree_util.tree_structure(unravel(flat)) == \
        jaxlite.tree_util.tree_structure(leaves)


def test_single_leaf_keeps_weak_type():
    flat, _ = ravel_pytree((3,))
    assert flat.dtype == np.int32 and flat.weak_type


def test_unravel_rejects_other_dtypes():
    flat, unravel = ravel_pytree(_tree(jnp))
    for dt in (jnp.float16, jnp.int32, jnp.complex64):
        with pytest.raises(TypeError, match="unravel function given array of dtype"):
            unravel(jnp.ones(9, dt))


def test_jit_vmap_grad():
    tree = {"w": jnp.arange(6.0).reshape(2, 3), "b": jnp.ones(3)}
    flat, unravel = ravel_pytree(tree)
    np.testing.assert_array_equal(jaxlite.jit(lambda t: ravel_pytree(t)[0])(tree), flat)
    back = jaxlite.jit(unravel)(flat)
    np.testing.assert_array_equal(back["w"], tree["w"])
    batch = jnp.stack([flat, 2 * flat])
    out = jaxlite.vmap(unravel)(batch)
    assert out["w"].shape == (2, 2, 3)
    np.testing.assert_array_equal(out["b"][1], 2 * tree["b"])
    # gradient of a function of the flat vector comes back in the tree's shape
    g = jaxlite.grad(lambda t: jnp.sum(ravel_pytree(t)[0] ** 2))(tree)
    np.testing.assert_allclose(g["w"], 2 * tree["w"])
    gf = jaxlite.grad(lambda v: jnp.sum(unravel(v)["w"] * 3.0))(flat)
    np.testing.assert_array_equal(gf, [0.0] * 3 + [3.0] * 6)   # leaves in key order: b, w


def test_matches_jax():
    jax = pytest.importorskip("jax")
    from jax.flatten_util import ravel_pytree as jax_ravel
    from jax_print_compat import use_numpy1_scalar_repr
    use_numpy1_scalar_repr()
    import jax.numpy as jjnp
    for tree_l, tree_j in [(_tree(jnp), _tree(jjnp)),
                           ((jnp.ones(2, jnp.bfloat16), jnp.ones(1, jnp.float16)),
                            (jjnp.ones(2, jjnp.bfloat16), jjnp.ones(1, jjnp.float16))),
                           ((3,), (3,)), ([], [])]:
        fl, ul = ravel_pytree(tree_l)
        fj, uj = jax_ravel(tree_j)
        assert fl.dtype == fj.dtype and fl.weak_type == fj.weak_type
        np.testing.assert_array_equal(np.asarray(fl), np.asarray(fj))
        assert str(jaxlite.make_jaxpr(lambda t: ravel_pytree(t)[0])(tree_l)) == \
            str(jax.make_jaxpr(lambda t: jax_ravel(t)[0])(tree_j))
        assert str(jaxlite.make_jaxpr(ul)(fl)) == str(jax.make_jaxpr(uj)(fj))
