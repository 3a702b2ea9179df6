"""``Lowered.cost_analysis`` / ``Compiled.cost_analysis``: XLA:CPU's HloCostAnalysis numbers
computed from the jaxpr (jaxlite/_src/api/cost.py and each primitive's ``cost`` rule),
checked against numbers measured with JAX 0.10.2 (stored below) and, when JAX is installed,
against JAX itself."""
import numpy as np
import pytest

import jaxlite
import jaxlite.numpy as jnp
from jaxlite import lax


def programs(jax, jnp, lax):
    """name -> (function, arguments), written against either library."""
    x = np.ones((4, 5), np.float32)
    xi = np.ones((4, 5), np.int32)
    img, ker = np.ones((1, 2, 6, 6), np.float32), np.ones((3, 2, 3, 3), np.float32)
    conv = lax.conv_general_dilated
    return {
        "add": (lambda a, b: a + b, (x, x)), "iadd": (lambda a, b: a + b, (xi, xi)),
        "tanh": (jnp.tanh, (x,)), "exp": (jnp.exp, (x,)), "log": (jnp.log, (x,)),
        "sqrt": (jnp.sqrt, (x,)), "rsqrt": (lax.rsqrt, (x,)), "sin": (jnp.sin, (x,)),
        "pow": (lambda a, b: a ** b, (x, x)), "logistic": (jax.nn.sigmoid, (x,)),
        "neg": (lambda a: -a, (x,)), "abs": (jnp.abs, (x,)), "max": (jnp.maximum, (x, x)),
        "lt": (lambda a, b: a < b, (x, x)), "div": (lambda a, b: a / b, (x, x)),
        "sum": (jnp.sum, (x,)), "sum_ax": (lambda a: a.sum(0), (x,)),
        "max_red": (lambda a: a.max(1), (x,)), "isum": (jnp.sum, (xi,)),
        "mean": (jnp.mean, (x,)),
        "dot": (lambda a, b: a @ b, (np.ones((4, 3), np.float32), np.ones((3, 5), np.float32))),
        "bdot": (lambda a, b: jnp.einsum("bij,bjk->bik", a, b),
                 (np.ones((2, 4, 3), np.float32), np.ones((2, 3, 5), np.float32))),
        "conv_same": (lambda a, b: conv(a, b, (1, 1), "SAME"), (img, ker)),
        "conv_valid": (lambda a, b: conv(a, b, (1, 1), "VALID"), (img, ker)),
        "conv_stride": (lambda a, b: conv(a, b, (2, 2), "SAME"), (img, ker)),
        "conv_dil": (lambda a, b: conv(a, b, (1, 1), "SAME", rhs_dilation=(2, 2)), (img, ker)),
        "conv_ldil": (lambda a, b: conv(a, b, (1, 1), ((1, 1), (1, 1)), lhs_dilation=(2, 2)),
                      (img, ker)),
        "conv_grp": (lambda a, b: conv(a, b, (1, 1), "SAME", feature_group_count=2),
                     (img, np.ones((4, 1, 3, 3), np.float32))),
        "reshape": (lambda a: a.reshape(20), (x,)), "T": (lambda a: a.T, (x,)),
        "bcast": (lambda a: jnp.broadcast_to(a, (3, 4, 5)), (x,)),
        "slice": (lambda a: a[1:3], (x,)),
        "concat": (lambda a, b: jnp.concatenate([a, b]), (x, x)),
        "pad": (lambda a: jnp.pad(a, 1), (x,)),
        "select": (lambda a, b: jnp.where(a > b, a, b), (x, x)),
        "chain": (lambda a: jnp.tanh(a * 2 + 1).sum(), (x,)),
        "gather": (lambda a, i: a[i], (x, np.array([0, 2, 1], np.int32))),
        "cond": (lambda p, a: lax.cond(p, lambda a: jnp.tanh(a).sum(), lambda a: (a * a).sum(),
                                       a), (np.bool_(True), x)),
        "custom_jvp": (jax.nn.relu, (x,)),
        "nested": (lambda a: jax.jit(lambda b: b * b)(a) + 1.0, (x,)),
        "sort": (jnp.sort, (x,)), "cumsum": (lambda a: jnp.cumsum(a, 0), (x,)),
        "convert": (lambda a: a.astype(jnp.int32), (x,)),
    }


# XLA:CPU's numbers, measured with JAX 0.10.2 (``jax.jit(f).lower(*args).cost_analysis()``
# and ``.compile().cost_analysis()``) for PROGRAMS; keys abbreviated (see _expand).
LOWERED = {
    'add': "b=240 f=20 b0=80 b1=80 bo=80 u0=1 u1=1",
    'iadd': "b=240 f=20 b0=80 b1=80 bo=80 u0=1 u1=1",
    'tanh': "b=160 t=20 b0=80 bo=80 u0=1",
    'exp': "b=160 t=20 b0=80 bo=80 u0=1",
    'log': "b=160 t=20 b0=80 bo=80 u0=1",
    'sqrt': "b=160 t=20 b0=80 bo=80 u0=1",
    'rsqrt': "b=160 t=20 b0=80 bo=80 u0=1",
    'sin': "b=160 t=20 b0=80 bo=80 u0=1",
    'pow': "b=240 t=20 b0=80 b1=80 bo=80 u0=1 u1=1",
    'logistic': "b=884 f=60 t=20 b0=324 b1=160 bo=400 u0=5 u1=2",
    'neg': "b=160 f=20 b0=80 bo=80 u0=1",
    'abs': "b=160 f=20 b0=80 bo=80 u0=1",
    'max': "b=240 f=20 b0=80 b1=80 bo=80 u0=1 u1=1",
    'lt': "b=180 f=20 b0=80 b1=80 bo=20 u0=1 u1=1",
    'div': "b=240 f=20 b0=80 b1=80 bo=80 u0=1 u1=1",
    'sum': "b=88 f=19 b0=80 b1=4 bo=4 u0=1 u1=1",
    'sum_ax': "b=104 f=15 b0=80 b1=4 bo=20 u0=1 u1=1",
    'max_red': "b=100 f=16 b0=80 b1=4 bo=16 u0=1 u1=1",
    'isum': "b=88 f=19 b0=80 b1=4 bo=4 u0=1 u1=1",
    'mean': "b=100 f=20 b0=84 b1=8 bo=8 u0=2 u1=2",
    'dot': "b=188 f=120 b0=48 b1=60 bo=80 u0=1 u1=1",
    'bdot': "b=376 f=240 b0=96 b1=120 bo=160 u0=1 u1=1",
    'conv_same': "b=936 f=3072 b0=288 b1=216 bo=432 u0=1 u1=1",
    'conv_valid': "b=696 f=1728 b0=288 b1=216 bo=192 u0=1 u1=1",
    'conv_stride': "b=612 f=768 b0=288 b1=216 bo=108 u0=1 u1=1",
    'conv_dil': "b=936 f=2352 b0=288 b1=216 bo=432 u0=1 u1=1",
    'conv_ldil': "b=1956 f=3072 b0=288 b1=216 bo=1452 u0=1 u1=1",
    'conv_grp': "b=1008 f=2048 b0=288 b1=144 bo=576 u0=1 u1=1",
    'reshape': "b=160 b0=80 bo=80 u0=1",
    'T': "u0=1",
    'bcast': "b=320 b0=80 bo=240 u0=1",
    'slice': "b=80 b0=40 bo=40 u0=0.5",
    'concat': "b=320 b0=80 b1=80 bo=160 u0=1 u1=1",
    'pad': "b=260 f=1 b0=84 b1=4 bo=172 u0=2 u1=1",
    'select': "b=440 f=40 b0=100 b1=160 b2=80 bo=100 u0=2 u1=2 u2=1",
    'chain': "b=896 f=59 t=20 b0=328 b1=164 bo=404 u0=6 u1=3",
    'cond': "b=333 f=40 t=20 b0=161 b1=84 bo=88 u0=3 u1=2",
    'custom_jvp': "b=324 f=20 b0=84 b1=80 bo=160 u0=2 u1=1",
    'nested': "b=564 f=40 b0=164 b1=160 bo=240 u0=3 u1=2",
    'sort': "b=160 f=100 b0=80 bo=80 u0=1",
    'cumsum': "b=164 f=60 b0=80 b1=4 bo=80 u0=1 u1=1",
    'convert': "b=160 f=20 b0=80 bo=80 u0=1",
}

COMPILED = {
    'add': "b=240 f=20 b0=80 b1=80 bo=80 u0=1 u1=1",
    'iadd': "b=240 f=20 b0=80 b1=80 bo=80 u0=1 u1=1",
    'tanh': "b=160 t=20 b0=80 bo=80 u0=1",
    'exp': "b=160 t=20 b0=80 bo=80 u0=1",
    'log': "b=160 t=20 b0=80 bo=80 u0=1",
    'sqrt': "b=160 t=20 b0=80 bo=80 u0=1",
    'rsqrt': "b=160 t=20 b0=80 bo=80 u0=1",
    'sin': "b=160 t=20 b0=80 bo=80 u0=1",
    'pow': "b=240 t=20 b0=80 b1=80 bo=80 u0=1 u1=1",
    'logistic': "b=160 f=60 t=20 b0=80 b1=160 bo=80 u0=1 u1=2",
    'neg': "b=160 f=20 b0=80 bo=80 u0=1",
    'abs': "b=160 f=20 b0=80 bo=80 u0=1",
    'max': "b=240 f=20 b0=80 b1=80 bo=80 u0=1 u1=1",
    'lt': "b=180 f=20 b0=80 b1=80 bo=20 u0=1 u1=1",
    'div': "b=240 f=20 b0=80 b1=80 bo=80 u0=1 u1=1",
    'sum': "b=88 f=19 b0=80 b1=4 bo=4 u0=1 u1=1",
    'sum_ax': "b=104 f=15 b0=80 b1=4 bo=20 u0=1 u1=1",
    'max_red': "b=100 f=16 b0=80 b1=4 bo=16 u0=1 u1=1",
    'isum': "b=88 f=19 b0=80 b1=4 bo=4 u0=1 u1=1",
    'mean': "b=84 f=20 b0=80 b1=8 bo=4 u0=1 u1=2",
    'dot': "b=188 f=120 b0=48 b1=60 bo=80 u0=1 u1=1",
    'bdot': "b=376 f=240 b0=96 b1=120 bo=160 u0=1 u1=1",
    'bcast': "b=320 b0=80 bo=240 u0=1",
    'concat': "b=320 b0=80 b1=80 bo=160 u0=1 u1=1",
    'select': "b=240 f=40 b0=80 b1=80 b2=80 bo=80 u0=1 u1=1 u2=1",
    'chain': "b=84 f=59 t=20 b0=80 b1=164 bo=4 u0=1 u1=3",
    'gather': "b=152 f=9 b0=80 b1=12 b2=12 bo=60 u0=1 u1=1 u2=1",
    'custom_jvp': "b=160 f=20 b0=80 b1=80 bo=80 u0=1 u1=1",
    'nested': "b=160 f=40 b0=80 b1=160 bo=80 u0=1 u1=2",
    'sort': "b=160 f=100 b0=80 bo=80 u0=1",
    'convert': "b=160 f=20 b0=80 bo=80 u0=1",
}

_KEYS = {"f": "flops", "t": "transcendentals", "b": "bytes accessed", "bo": "bytes accessedout{}"}


def _expand(text):
    out = {}
    for item in text.split():
        k, v = item.split("=")
        name = _KEYS.get(k) or (f"bytes accessed{k[1:]}{{}}" if k[0] == "b"
                                else f"utilization{k[1:]}{{}}")
        out[name] = float(v)
    return out


def _costs(jax, jnp, lax, name):
    f, args = programs(jax, jnp, lax)[name]
    lowered = jax.jit(f).lower(*args)
    return lowered.cost_analysis(), lowered.compile().cost_analysis()


@pytest.mark.parametrize("name", sorted(LOWERED))
def test_lowered_cost_matches_xla(name):
    got = _costs(jaxlite, jnp, lax, name)[0]
    assert isinstance(got, dict)
    assert got == _expand(LOWERED[name])


@pytest.mark.parametrize("name", sorted(COMPILED))
def test_compiled_cost_matches_xla(name):
    got = _costs(jaxlite, jnp, lax, name)[1]
    assert isinstance(got, dict)
    assert got == _expand(COMPILED[name])


def test_flops_of_every_program_match_xla():
    """flops and transcendentals (what flax's tabulate reads) agree on both stages even where
    the bytes differ by XLA's fusion or layout decisions (conv, slice, pad)."""
    for table, stage in ((LOWERED, 0), (COMPILED, 1)):
        for name, text in table.items():
            want = _expand(text)
            got = _costs(jaxlite, jnp, lax, name)[stage]
            for k in ("flops", "transcendentals"):
                assert got.get(k) == want.get(k), (name, stage, k)
    # the conv counts only the kernel taps that land inside the input: SAME padding gives
    # 3072 flops, not 2 * 3 * 2 * 6 * 6 * 9 = 3888
    assert _costs(jaxlite, jnp, lax, "conv_same")[1]["flops"] == 3072.0


def test_cost_keys_are_left_out_when_zero():
    got = _costs(jaxlite, jnp, lax, "tanh")[0]
    assert "flops" not in got and got["transcendentals"] == 20.0
    assert "flops" not in _costs(jaxlite, jnp, lax, "reshape")[0]


def test_pmap_forwards_cost_analysis():
    f = jaxlite.pmap(lambda a: a * a)
    x = np.ones((jaxlite.local_device_count(), 5), np.float32)
    lowered = f.lower(x)
    assert lowered.cost_analysis()["flops"] == float(x.size)
    assert lowered.compile().cost_analysis()["flops"] == float(x.size)


_LIVE = sorted(set(LOWERED) | set(COMPILED))


@pytest.mark.parametrize("name", _LIVE)
def test_cost_analysis_matches_live_jax(name):
    jax = pytest.importorskip("jax")
    import jax.numpy as jjnp
    from jax import lax as jlax
    want = _costs(jax, jjnp, jlax, name)
    got = _costs(jaxlite, jnp, lax, name)
    if name in LOWERED:
        assert got[0] == want[0]
    if name in COMPILED:
        assert got[1] == want[1]


@pytest.mark.parametrize("trips", [1, 3, 7])
def test_while_loop_counts_one_iteration(trips):
    """XLA counts a while loop's body and condition once, whatever the trip count (JAX
    0.10.2: flops 22, transcendentals 20 for 1, 3 and 7 trips)."""
    x = np.ones((4, 5), np.float32)
    f = jaxlite.jit(lambda a: lax.while_loop(
        lambda c: c[0] < trips, lambda c: (c[0] + 1, jnp.tanh(c[1]) * 3.0), (0, a))[1])
    got = f.lower(x).cost_analysis()
    assert (got["flops"], got["transcendentals"]) == (22.0, 20.0)
    assert (got["bytes accessed0{}"], got["bytes accessed1{}"]) == (172.0, 88.0)
