"""Varying manual axes inside shard_map (``check_vma=True``) against JAX 0.10.2, on 8 simulated
devices: ``jax.typeof`` inside the body (``{V:x}``), ``lax.pcast``, the out_specs replication
error, loop carries and cond branches whose varying axes differ, ``check_vma=False``.

The snippets run in one subprocess with jaxlite (``import jax`` resolved to jaxlite) and are
compared with JAX's output: live when JAX 0.10.2 is installed, else as recorded in
tests/goldens/shard_map_vma_jax_0.10.2.json (``python tests/test_shard_map_vma.py --record``
records it again). Errors are compared by class and first sentence; the text after it is
checked separately against what jaxlite is meant to say.
"""
import pathlib
import sys

import pytest

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import multidevice  # noqa: E402

GOLDEN = HERE / "goldens" / "shard_map_vma_jax_0.10.2.json"

HEAD = """
import re
import jax, jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P, AxisType
lax = jax.lax

def first(msg):
    # (JAX names its internal wrapper in the out_specs error; jaxlite names the function)
    msg = re.sub(r"to the function '[^']*'", "to the function F", msg)
    return msg.split('\\n')[0].split('. ')[0].rstrip('.:')

def show(label, fn):
    try:
        r = fn()
    except Exception as e:
        print(label, '!', type(e).__name__, first(str(e)))
    else:
        print(label, jax.typeof(r) if hasattr(r, 'shape') else r)

m = jax.make_mesh((4, 2), ('x', 'y'), axis_types=(AxisType.Auto,) * 2)
v = np.arange(64.).reshape(8, 8).astype(np.float32) / 10
"""

CASES = {}


def case(name, code):
    CASES[name] = HEAD + code


case("typeof_in_body", """
def body(a, b):
    t = show
    t('a', lambda: a); t('b', lambda: b); t('a+b', lambda: a + b)
    t('psum x', lambda: lax.psum(a, 'x')); t('psum xy', lambda: lax.psum(a, ('x', 'y')))
    t('psum b x', lambda: lax.psum(b, 'x'))
    t('pmean', lambda: lax.pmean(a, 'x')); t('pmax', lambda: lax.pmax(a, 'y'))
    t('pmin', lambda: lax.pmin(b, 'y'))
    t('all_gather', lambda: lax.all_gather(a, 'x')); t('all_gather b', lambda: lax.all_gather(b, 'x'))
    t('all_gather tiled', lambda: lax.all_gather(a, 'x', tiled=True))
    t('psum_scatter', lambda: lax.psum_scatter(a, 'y', tiled=True))
    t('ppermute', lambda: lax.ppermute(a, 'x', [(0, 1), (1, 2), (2, 3), (3, 0)]))
    t('all_to_all', lambda: lax.all_to_all(a, 'y', 0, 0, tiled=True))
    t('axis_index', lambda: lax.axis_index('x'))
    t('axis_index xy', lambda: lax.axis_index(('x', 'y')))
    t('const', lambda: jnp.ones(3))
    t('const+a', lambda: jnp.ones(4) + a)
    t('dot', lambda: a @ b.T)
    t('sum', lambda: a.sum())
    t('where', lambda: jnp.where(a > 1, b, 0.))
    t('reshape', lambda: a.reshape(8))
    t('jit', lambda: jax.jit(lambda u: u * 2)(a))
    t('jit b', lambda: jax.jit(lambda u: u * 2)(b))
    t('grad', lambda: jax.grad(lambda u: (u * b).sum())(a))
    t('grad b', lambda: jax.grad(lambda u: (u * a).sum())(b))
    return a
out = jax.shard_map(body, mesh=m, in_specs=(P('x', 'y'), P(None, 'y')), out_specs=P('x', 'y'))(v, v[:2])
print(np.allclose(np.asarray(out), v))
def gb(a, b):
    return jax.grad(lambda u: (jnp.sin(u) * a).sum())(b)
print(np.round(np.asarray(jax.shard_map(gb, mesh=m, in_specs=(P('x', 'y'), P(None, 'y')),
                                        out_specs=P(None, 'y'))(v, v[:2])), 3).tolist())
""")

case("pcast", """
def body(a, b):
    show('pcast', lambda: lax.pcast(b, 'x', to='varying'))
    show('pcast tuple', lambda: lax.pcast(jnp.ones(3), ('x', 'y'), to='varying'))
    show('pcast again', lambda: lax.pcast(a, 'x', to='varying'))
    show('pcast to', lambda: lax.pcast(a, 'x', to='invariant'))
    show('pcast value', lambda: bool(jnp.all(lax.pcast(b, 'x', to='varying') == b)))
    return lax.pcast(b, 'x', to='varying')
out = jax.shard_map(body, mesh=m, in_specs=(P('x', 'y'), P(None, 'y')), out_specs=P('x', 'y'))(v, v[:2])
print(np.allclose(np.asarray(out), np.tile(v[:2], (4, 1))))
show('pcast outside', lambda: lax.pcast(v, 'x', to='varying'))
show('pvary removed', lambda: lax.pvary)
g = jax.grad(lambda w: jax.shard_map(lambda u: lax.pcast(u, 'x', to='varying') * 2, mesh=m,
                                      in_specs=P(), out_specs=P('x'))(w).sum())(v[:2])
print(np.allclose(np.asarray(g), 8.0))
""")

case("out_specs_check", """
show('bad out', lambda: jax.shard_map(lambda a: a * 2, mesh=m, in_specs=P('x'), out_specs=P())(v))
show('bad out2', lambda: jax.shard_map(lambda a: a * 2, mesh=m, in_specs=P('x', 'y'),
                                       out_specs=P(None, 'y'))(v))
show('bad out3', lambda: jax.shard_map(lambda a, b: (a, b * 2), mesh=m, in_specs=(P('x', 'y'), P('y')),
                                       out_specs=(P('x', 'y'), P()))(v, v))
show('no check', lambda: jax.shard_map(lambda a: a * 2, mesh=m, in_specs=P('x'), out_specs=P(),
                                       check_vma=False)(v).shape)
show('psum ok', lambda: jax.shard_map(lambda a: lax.psum(a, 'x'), mesh=m, in_specs=P('x'),
                                      out_specs=P())(v))
show('pcast ok', lambda: jax.shard_map(lambda a: lax.pcast(a, 'y', to='varying'), mesh=m,
                                       in_specs=P('x'), out_specs=P('x', 'y'))(v))
def quiet(a):
    print('typeof', jax.typeof(a), jax.typeof(lax.axis_index('x')))
    return a
show('no check typeof', lambda: jax.shard_map(quiet, mesh=m, in_specs=P('x'), out_specs=P('x'),
                                              check_vma=False)(v))
""")

case("carries_and_branches", """
def body(a, b):
    show('scan ok', lambda: lax.scan(lambda c, r: (c + r, c), lax.pcast(jnp.zeros(4), ('x', 'y'), to='varying'), a)[0])
    show('scan bad', lambda: lax.scan(lambda c, r: (c + r, c), jnp.zeros(4), a)[0])
    show('scan pcast', lambda: lax.scan(lambda c, r: (c + r, c), lax.pcast(jnp.zeros(4), 'x', to='varying'), a)[1])
    show('scan b', lambda: lax.scan(lambda c, r: (c + r, c), jnp.zeros(4), b)[0])
    show('fori bad', lambda: lax.fori_loop(0, 2, lambda i, c: c + a[0], jnp.zeros(4)))
    show('while bad', lambda: lax.while_loop(lambda c: c[0] < 3, lambda c: c + a[0], jnp.zeros(4)))
    show('while ok', lambda: lax.while_loop(lambda c: c[0] < 3, lambda c: c + 1, a[0]))
    show('cond', lambda: lax.cond(True, lambda: a, lambda: b))
    show('cond2', lambda: lax.cond(True, lambda: b, lambda: a))
    show('cond ok', lambda: lax.cond(True, lambda: a, lambda: a * 2))
    return a
jax.shard_map(body, mesh=m, in_specs=(P('x', 'y'), P(None, 'y')), out_specs=P('x', 'y'))(v, v[:2])
""")

case("grad_through_replicated_outputs", """
w2, w8 = np.ones((2, 8), np.float32), np.linspace(0, 1, 64, dtype=np.float32).reshape(8, 8)
fs = {
  'in P() out P(x), no check': (lambda w: jax.shard_map(lambda u: u * 2, mesh=m, in_specs=P(),
                                out_specs=P('x'), check_vma=False)(w).sum(), w2),
  'pcast in P() out P(x)': (lambda w: jax.shard_map(lambda u: lax.pcast(u, 'x', to='varying') * 2,
                            mesh=m, in_specs=P(), out_specs=P('x'))(w).sum(), w2),
  'in P(x) out P(x)': (lambda w: jax.shard_map(lambda u: u * u, mesh=m, in_specs=P('x'),
                       out_specs=P('x'))(w).sum(), w8),
  'psum x out P()': (lambda w: jax.shard_map(lambda u: lax.psum(jnp.sin(u), 'x'), mesh=m,
                     in_specs=P('x'), out_specs=P())(w).sum(), w8),
  'psum xy out P()': (lambda w: jax.shard_map(lambda u: lax.psum(u * 2, ('x', 'y')), mesh=m,
                      in_specs=P('x', 'y'), out_specs=P())(w).sum(), w8),
}
for k, (f, w) in fs.items():
    print(k, np.round(np.asarray(jax.grad(f)(w)), 5).ravel()[:6].tolist())
""")




@pytest.fixture(scope="module")
def outputs():
    return multidevice.outputs_beside_jax(CASES)


@pytest.mark.parametrize("name", list(CASES))
def test_vma_case_matches_jax(name, outputs):
    multidevice.assert_case_matches_jax(outputs, GOLDEN, name)


def test_golden_is_current():
    multidevice.assert_golden_current(GOLDEN, CASES)


def test_error_texts():
    """The whole messages of the vma errors: JAX's explanation, the fix, and (beyond JAX) the
    user's function name and every failing output."""
    out = multidevice.run("""
    from jaxlite.sharding import PartitionSpec as P, AxisType
    m = jax.make_mesh((4, 2), ('x', 'y'), axis_types=(AxisType.Auto,) * 2)
    v = np.ones((8, 8), np.float32)
    def double(a):
        return a * 2
    try:
        jax.shard_map(double, mesh=m, in_specs=P('x'), out_specs=P())(v)
    except ValueError as e:
        print(repr(str(e)))
    def body(a):
        try:
            lax.scan(lambda c, r: (c + r, c), jnp.zeros(8), a)
        except TypeError as e:
            print(repr(str(e)))
        return a
    jax.shard_map(body, mesh=m, in_specs=P('x'), out_specs=P('x'))(v)
    """)
    lines = [eval(ln) for ln in out.strip().splitlines()]  # noqa: S307 - repr of our own str
    assert lines[0] == (
        "shard_map applied to the function 'double' was given out_specs which require "
        "replication which can't be statically inferred given the mesh:\n\nThe mesh given has "
        "shape (4, 2) with corresponding axis names ('x', 'y').\n\nout_specs is P() which "
        "implies that the corresponding output value is only varying across mesh axes {} and "
        "not {x}, but it was inferred to be possibly varying over {x}\n\nCheck if these output "
        "values are meant to be replicated over those mesh axes. If not, consider revising the "
        "corresponding out_specs entries. If so, consider disabling the check by passing the "
        "check_vma=False argument to `jax.shard_map` (or reduce the value over those axes "
        "first, e.g. with jax.lax.psum).")
    assert lines[1] == (
        "scan body function carry input and carry output must have equal types, but they "
        "differ:\n\nThe input carry c has type float32[8] but the corresponding output carry "
        "component has type float32[8]{V:x}, so the manual axis types do not match.\n\nThis "
        "might be fixed by applying `jax.lax.pcast(..., ('x',), to='varying')`, to the initial "
        "carry value corresponding to the input carry c.\nSee "
        "https://docs.jax.dev/en/latest/notebooks/shard_map.html#scan-vma for more "
        "information.\n\nRevise the function so that all output types match the corresponding "
        "input types.")


if __name__ == "__main__":
    multidevice.golden_cli(CASES, GOLDEN, __file__)
