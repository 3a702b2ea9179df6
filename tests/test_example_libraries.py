"""example_libraries: optimizers against JAX's (same parameters after N steps) and closed
forms; stax layer shapes and apply functions."""
import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite.example_libraries import optimizers, stax

OPTS = [("sgd", (0.1,)), ("momentum", (0.1, 0.9)), ("nesterov", (0.1, 0.9)),
        ("adagrad", (0.1,)), ("rmsprop", (0.01,)), ("rmsprop_momentum", (0.01,)),
        ("adam", (0.01,)), ("adamax", (0.01,)), ("sm3", (0.1,))]


def _loss(m):
    return lambda p: m.sum((p["w"] @ np.arange(6.0, dtype=np.float32).reshape(3, 2)
                            + p["b"] - 1.0) ** 2)


def _run(opt_mod, grad, loss, name, args, steps=5):
    init, update, get = getattr(opt_mod, name)(*args)
    state = init({"w": np.ones((2, 3), np.float32) * 0.1, "b": np.zeros(2, np.float32)})
    for i in range(steps):
        state = update(i, grad(loss)(get(state)), state)
    return get(state)


@pytest.mark.parametrize("name,args", OPTS, ids=[o[0] for o in OPTS])
def test_optimizers_match_jax(name, args):
    rjax = pytest.importorskip("jax")
    from jax.example_libraries import optimizers as ropt
    ours = _run(optimizers, jax.grad, _loss(jnp), name, args)
    theirs = _run(ropt, rjax.grad, _loss(rjax.numpy), name, args)
    for k in ("w", "b"):
        np.testing.assert_allclose(np.asarray(ours[k]), np.asarray(theirs[k]), rtol=2e-5,
                                   atol=1e-6)


def test_sgd_closed_form_and_schedules():
    init, update, get = optimizers.sgd(optimizers.exponential_decay(0.5, 1, 0.5))
    s = init(jnp.array(1.0))
    s = update(0, 2.0, s)
    s = update(1, 2.0, s)
    assert float(get(s)) == pytest.approx(1.0 - 0.5 * 2 - 0.25 * 2)
    sched = optimizers.piecewise_constant([2, 4], [1.0, 0.5, 0.1])
    np.testing.assert_allclose([float(sched(i)) for i in (0, 3, 5)], [1.0, 0.5, 0.1])
    assert float(optimizers.polynomial_decay(1.0, 10, 0.0)(5)) == pytest.approx(0.5)
    assert float(optimizers.inverse_time_decay(1.0, 1, 1.0, staircase=True)(1.5)) == 0.5
    assert float(optimizers.l2_norm({"a": jnp.ones(4), "b": 3.0})) == pytest.approx(
        np.sqrt(13))
    clipped = optimizers.clip_grads({"a": jnp.ones(4) * 3}, 1.0)
    assert float(optimizers.l2_norm(clipped)) == pytest.approx(1.0, rel=1e-6)
    with pytest.raises(TypeError, match="tree structure"):
        update(0, {"x": 1.0}, s)


def test_optimizer_state_pytree_and_packing():
    init, update, get = optimizers.momentum(0.1, 0.9)
    s = init({"a": jnp.ones(2), "b": (jnp.zeros(3),)})
    leaves = jax.tree_util.tree_leaves(s)
    assert len(leaves) == 4
    s2 = jax.tree_util.tree_map(lambda x: x * 2, s)
    assert isinstance(s2, optimizers.OptimizerState)
    packed = optimizers.pack_optimizer_state(optimizers.unpack_optimizer_state(s))
    assert packed.tree_def == s.tree_def
    f = jax.jit(lambda st: update(0, {"a": jnp.ones(2), "b": (jnp.ones(3),)}, st))
    np.testing.assert_allclose(get(f(s))["a"], [0.9, 0.9])


def test_stax_apply_and_shapes():
    W = np.arange(6.0, dtype=np.float32).reshape(3, 2)
    b = np.ones(2, np.float32)
    _, apply = stax.serial(stax.Dense(2), stax.Relu, stax.Dense(1))
    params = [(W, b), (), (np.ones((2, 1), np.float32), np.zeros(1, np.float32))]
    x = np.ones((4, 3), np.float32)
    want = np.maximum(x @ W + b, 0) @ np.ones((2, 1))
    np.testing.assert_allclose(apply(params, x), want)
    _, par = stax.serial(stax.FanOut(2), stax.parallel(stax.Identity, stax.Tanh),
                         stax.FanInConcat())
    np.testing.assert_allclose(par([(), [(), ()], ()], x), np.concatenate([x, np.tanh(x)], -1),
                               rtol=1e-6)
    _, s = stax.serial(stax.FanOut(2), stax.parallel(stax.Identity, stax.Identity),
                       stax.FanInSum)
    np.testing.assert_allclose(s([(), [(), ()], ()], x), 2 * x)
    assert stax.Flatten[0](None, (5, 2, 3))[0] == (5, 6)
    assert stax.FanInConcat()[0](None, [(2, 3), (2, 4)])[0] == (2, 7)
    with pytest.raises(ValueError, match="PRNG key"):
        stax.Dropout(0.5)[1]((), x)


def test_stax_init_shapes():
    pytest.importorskip("jaxlite.random")
    from jaxlite import random
    init, apply = stax.serial(stax.Dense(64), stax.Relu, stax.Dense(1))
    out_shape, params = init(random.PRNGKey(0), (-1, 4))
    assert out_shape == (-1, 1)
    assert params[0][0].shape == (4, 64) and params[2][0].shape == (64, 1)
    assert apply(params, jnp.ones((3, 4))).shape == (3, 1)
