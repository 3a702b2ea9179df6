"""lax.ragged_dot / ragged_dot_general (issue 20): the three modes against a NumPy loop
over groups, gradients against the loop's closed form, jit/vmap, and real JAX."""
import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import lax

rng = np.random.default_rng(0)
LHS = rng.standard_normal((7, 4)).astype(np.float32)
RHS = rng.standard_normal((3, 4, 5)).astype(np.float32)
GS = np.array([2, 0, 3], np.int32)     # rows 5 and 6 belong to no group


def ref_ragged_dot(lhs, rhs, gs):
    out = np.zeros((lhs.shape[0], rhs.shape[2]), np.float64)
    start = 0
    for j, n in enumerate(gs):
        out[start:start + n] = lhs[start:start + n].astype(np.float64) @ rhs[j]
        start += n
    return out


def test_ragged_dot_values_jit_vmap():
    want = ref_ragged_dot(LHS, RHS, GS)
    np.testing.assert_allclose(lax.ragged_dot(LHS, RHS, GS), want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(jax.jit(lax.ragged_dot)(LHS, RHS, GS), want, rtol=1e-5,
                               atol=1e-6)
    out = jax.vmap(lambda l: lax.ragged_dot(l, RHS, GS))(np.stack([LHS, 2 * LHS]))
    np.testing.assert_allclose(out[1], 2 * want, rtol=1e-5, atol=1e-5)
    assert np.all(np.asarray(lax.ragged_dot(LHS, RHS, GS))[5:] == 0)


def test_ragged_dot_gradients():
    ct = rng.standard_normal((7, 5))
    gl, gr = jax.grad(lambda l, r: jnp.sum(lax.ragged_dot(l, r, GS) * ct), (0, 1))(LHS, RHS)
    want_l = np.zeros_like(LHS, dtype=np.float64)
    want_r = np.zeros_like(RHS, dtype=np.float64)
    start = 0
    for j, n in enumerate(GS):
        want_l[start:start + n] = ct[start:start + n] @ RHS[j].T
        want_r[j] = LHS[start:start + n].T @ ct[start:start + n]
        start += n
    np.testing.assert_allclose(gl, want_l, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(gr, want_r, rtol=1e-5, atol=1e-5)


def test_ragged_contracting_and_batched_modes():
    dn2 = lax.RaggedDotDimensionNumbers((([1], [0]), ([], [])), [1], [])
    l2 = rng.standard_normal((3, 6)).astype(np.float32)
    r2 = rng.standard_normal((6, 2)).astype(np.float32)
    out = np.asarray(lax.ragged_dot_general(l2, r2, np.array([1, 2, 3], np.int32), dn2))
    want = np.stack([l2[:, s:e] @ r2[s:e] for s, e in ((0, 1), (1, 3), (3, 6))])
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-6)
    dn1 = lax.RaggedDotDimensionNumbers((([2], [2]), ([0], [1])), [1], [0])
    l3 = rng.standard_normal((2, 5, 3)).astype(np.float32)
    r3 = rng.standard_normal((2, 2, 3, 4)).astype(np.float32)
    out = np.asarray(lax.ragged_dot_general(l3, r3, np.array([2, 3], np.int32), dn1))
    want = np.stack([np.concatenate([l3[b, :2] @ r3[0, b], l3[b, 2:] @ r3[1, b]])
                     for b in range(2)])
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-6)
    with pytest.raises(TypeError, match="group dimension has size"):
        lax.ragged_dot(LHS, RHS, np.array([3, 4], np.int32))
    with pytest.raises(NotImplementedError, match="group_offset"):
        lax.ragged_dot(LHS, RHS, GS, group_offset=np.array([1], np.int32))


def test_vs_jax():
    jr = pytest.importorskip("jax")
    np.testing.assert_allclose(lax.ragged_dot(LHS, RHS, GS),
                               jr.lax.ragged_dot(LHS, RHS, GS), rtol=1e-6, atol=1e-6)
    f = lambda mod: mod.grad(lambda l, r: mod.numpy.sum(mod.numpy.sin(  # noqa: E731
        mod.lax.ragged_dot(l, r, GS))), (0, 1))(LHS, RHS)
    for a, b in zip(f(jax), f(jr)):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
