"""jax.experimental.custom_partitioning on jaxlite: the function runs (eagerly, under jit
and a sharded jit), the jaxpr and the sharding-rule parsing are JAX 0.10.2's (stored)."""
from functools import partial

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite.experimental.custom_partitioning import (
    BATCHING, ArrayMapping, CompoundFactor, SdyShardingRule, custom_partitioning)
from multidevice import run_snippet

JAXPR = """{ lambda ; a:f32[2,2]. let
    b:f32[2,2] = custom_partitioning[
      call={ lambda ; c:f32[2,2]. let d:f32[2,2] = mul c 2.0:f32[] in (d,) }
      decode_shardings=True
      in_tree=PyTreeDef((*,))
      infer_sharding_from_operands=None
      out_tree=PyTreeDef(*)
      partition=<function <lambda> at 0xXXXXXXXXXXXX>
      propagate_user_sharding=None
      sharding_rule=SdyShardingRule((('i', 'j'),), (('i', 'j'),), {})
      static_args=()
    ] a
  in (b,) }"""


_PARTITION = lambda mesh, a, r: (mesh, lambda x: x * 2, r.sharding,  # noqa: E731
                                  (a[0].sharding,))


def _double():
    @custom_partitioning
    def f(x):
        return x * 2
    f.def_partition(partition=_PARTITION, sharding_rule="i j -> i j")
    return f


def test_runs_and_prints_as_jax():
    f = _double()
    x = jnp.ones((2, 2))
    np.testing.assert_array_equal(f(x), 2 * np.ones((2, 2)))
    np.testing.assert_array_equal(jax.jit(f)(x), 2 * np.ones((2, 2)))
    assert str(jax.make_jaxpr(f)(x)) == JAXPR
    assert str(f.sharding_rule) == "SdyShardingRule((('i', 'j'),), (('i', 'j'),), {})"


def test_static_args_and_pytrees():
    g = partial(custom_partitioning, static_argnums=(1,))(
        lambda d, n: {"a": d["x"] * n, "b": d["y"] + n})
    g.def_partition(partition=None, sharding_rule="i, i -> i, i")
    r = g({"x": jnp.ones(2), "y": jnp.zeros(2)}, 3)
    assert r["a"].tolist() == [3., 3.] and r["b"].tolist() == [3., 3.]


def test_no_derivative_or_batching_rule():
    f = _double()
    with pytest.raises(NotImplementedError, match="Differentiation rule for "
                       "'custom_partitioning' not implemented"):
        jax.grad(lambda x: f(x).sum())(jnp.ones((2, 2)))
    with pytest.raises(NotImplementedError, match="Batching rule for 'custom_partitioning' "
                       "not implemented"):
        jax.vmap(f)(jnp.ones((3, 2, 2)))


def test_sharding_rules():
    r = SdyShardingRule((ArrayMapping(BATCHING, CompoundFactor("i", "j")),),
                        (ArrayMapping("k"),), i=2, j=3)
    assert str(r) == "SdyShardingRule((('\u2026', ('i', 'j')),), (('k',),), {'i': 2, 'j': 3})"
    f = _double()
    f.def_partition(partition=None, sharding_rule="... i, (a b) -> i", a=2, b=3,
                    reduction_factors=("i",))
    assert str(f.sharding_rule) == ("SdyShardingRule((('\u20260', 'i'), (('a', 'b'),)), "
                                    "(('i',),), {'a': 2, 'b': 3} reduction_factors=('i',))")
    f.def_partition(partition=None, sharding_rule="i j -> ")
    assert str(f.sharding_rule) == "SdyShardingRule((('i', 'j'),), ((),), {})"
    for rule, kw, msg in [("i j", {}, "There is no -> in rule: 'i j'"),
                          ("i j -> i k", {"foo": 2}, "Factor foo is not used in the rule"),
                          ("i j -> i", {"i": 2}, "Factor i represents a whole dimension"),
                          ("(a b) -> i", {"a": 2}, "Factor b is only used in compound"),
                          ("i 1 -> i", {}, "Factor names have to start with a letter"),
                          ("i . -> i", {}, "Character '.' must be used inside ellipsis"),
                          ("(a) -> a", {}, "Brackets should contain at least two factors"),
                          ("i ... -> i", {}, "Ellipsis can only be used at the beginning")]:
        with pytest.raises(ValueError, match=msg.replace("(", r"\(").replace(")", r"\)")
                           .replace(".", r"\.")):
            f.def_partition(partition=None, sharding_rule=rule, **kw)
    with pytest.raises(ValueError, match="Unknown keyword arguments"):
        f.def_partition(partition=None, sharding_rule=r, a=2)


def test_sharded_jit_gives_the_function():
    out = run_snippet("""
        import numpy as np
        import jaxlite as jax, jaxlite.numpy as jnp
        from jaxlite.experimental.custom_partitioning import custom_partitioning
        from jaxlite.sharding import NamedSharding, PartitionSpec as P, Mesh
        mesh = Mesh(np.array(jax.devices()), ("x",))
        @custom_partitioning
        def f(x):
            return jnp.cumsum(x)
        f.def_partition(partition=lambda *a: None, sharding_rule="i -> i")
        x = jax.device_put(jnp.arange(8.), NamedSharding(mesh, P("x")))
        y = jax.jit(f, out_shardings=NamedSharding(mesh, P("x")))(x)
        print(np.asarray(y).tolist(), y.sharding.spec)
    """, n=2)
    assert out.strip() == "[0.0, 1.0, 3.0, 6.0, 10.0, 15.0, 21.0, 28.0] P('x',)"


def test_against_jax():
    pytest.importorskip("jax")
    from jax.experimental import custom_partitioning as rcp
    for rule, kw in [("... i, (a b) -> i", dict(a=2, b=3, reduction_factors=("i",))),
                     ("i j, j k -> i k", {}), ("i j -> ", {})]:
        assert str(rcp.custom_partitioning_sharding_rule.str_to_sdy_sharding_rule(
            rule, **kw) if hasattr(rcp, "custom_partitioning_sharding_rule") else
            _jax_rule(rule, kw)) == str(_mine(rule, kw))


def _jax_rule(rule, kw):
    from jax._src.custom_partitioning_sharding_rule import str_to_sdy_sharding_rule
    return str_to_sdy_sharding_rule(rule, **kw)


def _mine(rule, kw):
    from jaxlite._src.api.custom_partitioning import str_to_sdy_sharding_rule
    return str_to_sdy_sharding_rule(rule, **kw)
