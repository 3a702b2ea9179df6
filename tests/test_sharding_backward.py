"""Backward sharding propagation in the partitioner (issue 15): values computed from whole
(unsharded or replicated) arguments take the layout their uses, or ``out_shardings``, ask
for, so the work on them is done on blocks, as GSPMD does.

A table of small programs on 8 simulated devices ((4, 2) mesh): each result's layout
(``devices_indices_map``) equals JAX 0.10.2's and its values the unsharded program's; beside
that, the collectives each side inserts (jaxlite's from its explanation, JAX's from the
compiled HLO) and the per-device shapes of the program's transcendental ops and products
(jaxlite's from its per-device program, JAX's from the HLO after SPMD partitioning): jaxlite
inserts no more collectives of any kind than XLA and, unless it inserts fewer, computes each
of those ops on blocks no larger than XLA's.

The snippets run with jaxlite (``import jax`` resolved to jaxlite) and, when JAX 0.10.2 is
installed, with JAX at the same time; otherwise JAX's output is read from
tests/goldens/sharding_backward_jax_0.10.2.json (``python tests/test_sharding_backward.py
--record`` records it again).
"""
import ast
import math
import pathlib
import sys

import pytest

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import multidevice  # noqa: E402

GOLDEN = HERE / "goldens" / "sharding_backward_jax_0.10.2.json"

HEAD = """
import re
import jax, jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P, AxisType
lax = jax.lax
m = jax.make_mesh((4, 2), ('x', 'y'), axis_types=(AxisType.Auto,) * 2)
S = lambda *spec: NamedSharding(m, P(*spec))
""" + multidevice.SHARD_WHERE + """
KINDS = ('all-gather', 'all-reduce', 'reduce-scatter', 'all-to-all', 'collective-permute')
def collectives(f, args, **kw):
    low = jax.jit(f, **kw).lower(*args)
    if hasattr(low, 'explain_sharding'):
        text = low.explain_sharding()
        lines = [] if text.startswith('no collectives') else text.splitlines()
        names = {'all_gather': 'all-gather', 'psum': 'all-reduce', 'pmax': 'all-reduce',
                 'pmin': 'all-reduce', 'psum_scatter': 'reduce-scatter',
                 'all_to_all': 'all-to-all', 'ppermute': 'collective-permute'}
        found = [names[re.search(r': (\\w+)', l).group(1)] for l in lines]
    else:
        hlo = low.compile().as_text()
        found = [k for l in hlo.splitlines() for k in KINDS
                 if re.search(r'= \\S+ ' + k + r'(-start)?\\(', l)]
    return {k: found.count(k) for k in KINDS if found.count(k)}

OPS = {'sin': 'sine', 'cos': 'cosine', 'exp': 'exponential', 'tanh': 'tanh',
       'dot_general': 'dot'}
def _walk(j):
    for e in j.eqns:
        yield e
        for v in e.params.values():
            for sub in (v if isinstance(v, (tuple, list)) else [v]):
                inner = getattr(sub, 'jaxpr', None)
                if inner is not None and hasattr(inner, 'eqns'):
                    yield from _walk(inner)
                elif hasattr(sub, 'eqns'):
                    yield from _walk(sub)
def block_shapes(f, args, **kw):
    # the per-device shapes of the program's transcendental ops and products
    low = jax.jit(f, **kw).lower(*args)
    found = set()
    if hasattr(low, 'explain_sharding'):
        part = low._partitioned()
        body = part.body.jaxpr if part is not None else low._closed.jaxpr
        for e in _walk(body):
            if e.primitive.name in OPS:
                found.add((e.primitive.name, tuple(e.outvars[0].aval.shape)))
    else:
        for l in low.compile().as_text().splitlines():
            for ours, theirs in OPS.items():
                mt = re.search(r'= \\w+\\[([\\d,]*)\\]\\S* ' + theirs + r'\\(', l)
                if mt:
                    found.add((ours, tuple(int(d) for d in mt.group(1).split(',') if d)))
    return sorted(found)

def check(label, f, *args, **kw):
    outs = jax.jit(f, **kw)(*args)
    ref = jax.jit(f)(*[np.asarray(a) if not jnp.issubdtype(getattr(a, 'dtype', np.float32), jax.dtypes.prng_key) else a for a in args])
    outs = outs if isinstance(outs, (tuple, list)) else [outs]
    ref = ref if isinstance(ref, (tuple, list)) else [ref]
    for k, (o, r) in enumerate(zip(outs, ref)):
        same = np.allclose(np.asarray(o), np.asarray(r), rtol=1e-5, atol=1e-5)
        print(label, k, o.shape, o.dtype, 'same as unsharded:', same)
        print('  ', o.sharding.spec if hasattr(o.sharding, 'spec') else o.sharding, where(o))
    print('# collectives', label, collectives(f, args, **kw))
    print('  block shapes', block_shapes(f, args, **kw))

rng = np.random.RandomState(0)
xs = rng.rand(8, 16).astype(np.float32)
x = jax.device_put(xs, S('x'))
xy = jax.device_put(xs, S('x', 'y'))
w = rng.rand(16, 4).astype(np.float32)
"""
CASES = {}


def case(name, code):
    CASES[name] = HEAD + code


case("elementwise", """
check('add split+numpy', lambda a, b: a + b, x, xs)
check('add split+replicated', lambda a, b: a * 2 + jnp.sin(b), xy, jax.device_put(xs, S()))
check('add chain', lambda a, b: jnp.exp(b) * 3 + a, x, xs)
check('result and split use', lambda a, b: (lambda e: (a + e, e))(jnp.exp(b)), x, xs)
check('split use and a sum', lambda a, b: (lambda c: (a * c, c.sum()))(jnp.cos(b)), x, xs)
check('random normal + x', lambda k, a: jax.random.normal(k, a.shape) + a, jax.random.key(1), x)
check('random uniform * x', lambda k, a: jax.random.uniform(k, a.shape) * a, jax.random.key(2), xy)
""")
case("dot", """
check('dot unsharded rhs', lambda a, b: jnp.tanh(a) @ b, x, w)
check('dot unsharded lhs', lambda a, b: a @ jnp.cos(b), xs, jax.device_put(w, S(None, 'y')))
check('dot then add', lambda a, b, c: a @ b + c, x, w, rng.rand(8, 4).astype(np.float32))
""")
case("reshape", """
check('reshape feeds add', lambda a, b: a.reshape(8, 16) + b, xs.reshape(128), x)
check('merge feeds add', lambda a, b: jnp.tanh(a).reshape(8, 16) * b, xs.reshape(8, 2, 8), x)
check('reshape 3d feeds add', lambda a, b: jnp.sin(a).reshape(8, 2, 8) * b, xs, jax.device_put(xs.reshape(8, 2, 8), S('x')))
""")
case("scan", """
check('scan carry from zeros', lambda a: lax.scan(lambda c, r: (c + jnp.sin(r), c.sum()),
      jnp.zeros((4, 16)), a), jax.device_put(xs.reshape(2, 4, 16), S(None, 'x')))
check('fori carry', lambda a, b: lax.fori_loop(0, 3, lambda i, c: c * 0.5 + a, b), x, xs)
""")
case("out_shardings", """
check('out_shardings chain', lambda a, b: jnp.sin(a) * b + 1, xs, xs, out_shardings=S('x', 'y'))
check('out_shardings sum', lambda a: jnp.exp(a).sum(1), xs, out_shardings=S('x'))
check('out_shardings two', lambda a: (jnp.cos(a), a * 2), xs, out_shardings=(S('x'), S(None, 'y')))
check('out_shardings dot', lambda a, b: jnp.tanh(a @ b), xs, w, out_shardings=S('x'))
""")


_MEASURES = ("# collectives", "  block shapes")


def _layouts(text):
    """The lines compared exactly with JAX: shapes, values' agreement and layouts."""
    return [ln for ln in multidevice.normalize(text).splitlines()
            if not ln.startswith(_MEASURES)]


def _measures(text):
    """[(label, collectives {kind: count}, block shapes [(op, shape)])] of a case's output."""
    out, label, colls = [], None, None
    for ln in text.splitlines():
        if ln.startswith("# collectives "):
            rest = ln[len("# collectives "):]
            cut = rest.rindex(" {")
            label, colls = rest[:cut], ast.literal_eval(rest[cut + 1:])
        elif ln.startswith("  block shapes "):
            out.append((label, colls, ast.literal_eval(ln[len("  block shapes "):])))
    return out


@pytest.fixture(scope="module")
def outputs():
    return multidevice.outputs_beside_jax(CASES)


def _jax_text(outputs, name):
    if "jax" in outputs:
        return outputs["jax"][name]
    import json
    return json.loads(GOLDEN.read_text(encoding="utf-8"))["outputs"][name]


@pytest.mark.parametrize("name", list(CASES))
def test_layouts_match_jax(name, outputs):
    multidevice.assert_case_matches_jax(outputs, GOLDEN, name, canon=_layouts)


@pytest.mark.parametrize("name", list(CASES))
def test_no_more_communication_or_work_than_xla(name, outputs):
    ours = _measures(outputs["jaxlite"][name])
    theirs = _measures(_jax_text(outputs, name))
    assert [m[0] for m in ours] == [m[0] for m in theirs]
    for (label, c_ours, b_ours), (_, c_jax, b_jax) in zip(ours, theirs):
        for kind, n in c_ours.items():
            assert n <= c_jax.get(kind, 0), (label, c_ours, c_jax)
        if sum(c_ours.values()) < sum(c_jax.values()):
            continue     # (fewer collectives, possibly bigger blocks: less moved)
        biggest = {}
        for op, shape in b_jax:
            biggest[op] = max(biggest.get(op, 0), math.prod(shape))
        for op, shape in b_ours:
            assert op in biggest, (label, b_ours, b_jax)
            assert math.prod(shape) <= biggest[op], (label, op, b_ours, b_jax)


def test_values_equal_the_unsharded_program(outputs):
    text = "".join(outputs["jaxlite"].values())
    assert "same as unsharded: False" not in text
    assert text.count("same as unsharded: True") >= 20


def test_golden_is_current():
    multidevice.assert_golden_current(GOLDEN, CASES)


def test_forward_only_computes_whole():
    """The same program without the backward pass (JAXLITE_PARTITION_BACKWARD=0) computes
    the chain whole and slices at the end: the backward pass is what splits the work."""
    code = HEAD.replace("import jax, jax.numpy as jnp", "import jaxlite as jax, "
                        "jaxlite.numpy as jnp, numpy as np").replace(
        "from jax.sharding", "from jaxlite.sharding")
    code += """
f = lambda a, b: jnp.sin(a) * b + 1
print(block_shapes(f, (xs, xs), out_shardings=S('x', 'y')))
print(block_shapes(lambda a, b: jnp.exp(b) * 3 + a, (x, xs)))
"""
    on = multidevice.run_snippet(code).splitlines()
    off = multidevice.run_snippet(code, env={"JAXLITE_PARTITION_BACKWARD": "0"}).splitlines()
    assert on == ["[('sin', (2, 8))]", "[('exp', (2, 16))]"]
    assert off == ["[('sin', (8, 16))]", "[('exp', (8, 16))]"]


if __name__ == "__main__":
    multidevice.golden_cli(CASES, GOLDEN, __file__)
