"""Sharded jit of pooling (reduce_window and its gradients), top_k and sorts over the last
dimension, dynamic_slice / dynamic_update_slice, and programs returning typed key arrays,
on 8 simulated devices: output shardings (``devices_indices_map``) equal JAX 0.10.2's, values
equal the unsharded program's, and the dimensions the operation does not touch keep their
split (the partitioner says which collectives it inserted: none gathers those dimensions).

The snippets run in one subprocess with jaxlite (``import jax`` resolved to jaxlite) and are
compared with JAX's output: live when JAX 0.10.2 is installed, else as recorded in
tests/goldens/sharded_windows_sort_jax_0.10.2.json (``python
tests/test_sharded_windows_sort.py --record`` records it again).
"""
import json
import pathlib
import sys

import pytest

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import multidevice  # noqa: E402

GOLDEN = HERE / "goldens" / "sharded_windows_sort_jax_0.10.2.json"

HEAD = """
import jax, jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P, AxisType
lax = jax.lax
m = jax.make_mesh((4, 2), ('x', 'y'), axis_types=(AxisType.Auto,) * 2)
S = lambda *spec: NamedSharding(m, P(*spec))
""" + multidevice.SHARD_WHERE + """
def check(label, f, *args):
    # f under jit on the sharded args: each result's layout, and its values against the
    # same program on unsharded NumPy copies of the arguments
    outs = jax.jit(f)(*args)
    ref = jax.jit(f)(*[np.asarray(a) for a in args])
    outs = outs if isinstance(outs, (tuple, list)) else [outs]
    ref = ref if isinstance(ref, (tuple, list)) else [ref]
    for k, (o, r) in enumerate(zip(outs, ref)):
        same = np.allclose(np.asarray(o), np.asarray(r), rtol=1e-5, atol=1e-5)
        print(label, k, o.shape, o.dtype, 'same as unsharded:', same)
        print('  ', where(o))

rng = np.random.RandomState(0)
x = jax.device_put(rng.rand(8, 16).astype(np.float32), S('x', 'y'))
xb = jax.device_put(rng.rand(8, 16).astype(np.float32), S('x'))
img = jax.device_put(rng.rand(8, 8, 8, 4).astype(np.float32), S('x', None, None, 'y'))
"""

CASES = {}


def case(name, code):
    CASES[name] = HEAD + code


case("pooling", """
pool = lambda a, w, s, pad='VALID': lax.reduce_window(a, -np.inf, lax.max, w, s, pad)
check('maxpool rows kept', lambda a: pool(a, (1, 2), (1, 2)), x)
check('maxpool 1x1', lambda a: pool(a, (1, 1), (1, 1)), x)
check('maxpool both', lambda a: pool(a, (2, 2), (2, 2)), x)
check('sumpool same pad', lambda a: lax.reduce_window(a, 0., lax.add, (1, 3), (1, 1), 'SAME'), x)
check('minpool', lambda a: lax.reduce_window(a, np.inf, lax.min, (1, 4), (1, 4), 'VALID'), xb)
check('avgpool nhwc', lambda a: lax.reduce_window(a, 0., lax.add, (1, 2, 2, 1), (1, 2, 2, 1),
                                                  'VALID') / 4, img)
check('maxpool nhwc', lambda a: pool(a, (1, 2, 2, 1), (1, 2, 2, 1)), img)
check('grad maxpool', jax.grad(lambda a: jnp.sum(pool(a, (1, 2, 2, 1), (1, 2, 2, 1)) ** 2)),
      img)
check('grad avgpool', jax.grad(lambda a: jnp.sum(lax.reduce_window(
    a, 0., lax.add, (1, 2, 2, 1), (1, 2, 2, 1), 'VALID') ** 2)), img)
""")

case("sort_like", """
check('top_k xy', lambda a: lax.top_k(a, 3), x)
check('top_k x', lambda a: lax.top_k(a, 3), xb)
check('sort last', lambda a: jnp.sort(a, axis=-1), x)
check('sort first', lambda a: jnp.sort(a, axis=0), x)
check('argsort last', lambda a: jnp.argsort(a, axis=-1), xb)
check('sort two', lambda a: lax.sort((a, -a), dimension=1, num_keys=1), x)
check('cummax last', lambda a: lax.cummax(a, axis=1), x)
""")

case("dynamic_slices", """
i = jnp.int32(3)
check('dslice rows', lambda a, i: lax.dynamic_slice(a, (i, 0), (2, 16)), x, i)
check('dslice cols', lambda a, i: lax.dynamic_slice(a, (0, i), (8, 4)), x, i)
check('dslice in dim', lambda a, i: lax.dynamic_slice_in_dim(a, i, 2, axis=1), xb, i)
check('dindex row', lambda a, i: a[i], x, i)
upd = np.ones((2, 16), np.float32)
check('dus rows', lambda a, u, i: lax.dynamic_update_slice(a, u, (i, 0)), x, upd, i)
check('dus cols', lambda a, u, i: lax.dynamic_update_slice(a, u, (0, i)), x,
      np.ones((8, 3), np.float32), i)
check('dus split update', lambda a, u, i: lax.dynamic_update_slice(a, u, (i, 0)), x,
      jax.device_put(upd, S(None, 'y')), i)
check('dus in scan', lambda a: lax.fori_loop(
    0, 4, lambda k, c: lax.dynamic_update_slice_in_dim(
        c, lax.dynamic_slice_in_dim(c, k, 1, 0) * 2, k, 0), a), xb)
""")

case("key_arrays", """
key = jax.random.key(0)
def show_keys(label, ks):
    print(label, jax.typeof(ks), where(ks))
    print('  ', np.asarray(jax.random.key_data(ks)).ravel()[:6].tolist())
show_keys('split', jax.jit(lambda k, a: jax.random.split(k, 8))(key, x))
r = jax.jit(lambda k, a: (a * 2, jax.random.split(k, 4)))(key, x)
print('with array', where(r[0]), np.allclose(np.asarray(r[0]), np.asarray(x) * 2))
show_keys('  keys', r[1])
show_keys('out_shardings', jax.jit(lambda k: jax.random.split(k, 8),
                                   out_shardings=S('x'))(key))
# keys arriving split over 'x': what is drawn from them and the keys derived from them
# keep that split
ks = jax.device_put(jax.random.split(key, 8), S('x'))
r2 = jax.jit(lambda ks, a: (jax.vmap(lambda k: jax.random.normal(k, (16,)))(ks) + a,
                            jax.vmap(jax.random.fold_in, (0, None))(ks, 3)))(ks, x)
print('normal', where(r2[0]), np.round(np.asarray(r2[0]).ravel()[:4], 4).tolist())
show_keys('  fold_in', r2[1])
r3 = jax.jit(lambda ks: jax.vmap(lambda k: jax.random.split(k, 3))(ks))(ks)
show_keys('vmap split', r3)
""")


@pytest.fixture(scope="module")
def outputs():
    return multidevice.outputs_beside_jax(CASES)


@pytest.mark.parametrize("name", list(CASES))
def test_case_matches_jax(name, outputs):
    multidevice.assert_case_matches_jax(outputs, GOLDEN, name,
                                        canon=lambda t: multidevice.normalize(t).splitlines())


def test_values_equal_the_unsharded_program(outputs):
    """Every result equals the unsharded program's (jaxlite's own run, JAX or not)."""
    text = "".join(outputs["jaxlite"].values())
    assert "same as unsharded: False" not in text
    assert text.count("same as unsharded: True") >= 27


def test_golden_is_current():
    multidevice.assert_golden_current(GOLDEN, CASES)


def test_untouched_dimensions_keep_their_split():
    """The partitioner gathers only the dimensions a window, a sort or a slice needs whole:
    its explanation names no all_gather over the other dimensions."""
    out = multidevice.run("""
    from jaxlite.sharding import NamedSharding, PartitionSpec as P, AxisType
    m = jax.make_mesh((4, 2), ('x', 'y'), axis_types=(AxisType.Auto,) * 2)
    x = jax.device_put(np.ones((8, 16), np.float32), NamedSharding(m, P('x', 'y')))
    img = jax.device_put(np.ones((8, 8, 8, 4), np.float32),
                         NamedSharding(m, P('x', None, None, 'y')))
    i = jnp.int32(1)
    progs = {
        'pool': (lambda a: lax.reduce_window(a, 0., lax.add, (1, 2, 2, 1), (1, 2, 2, 1),
                                             'VALID'), (img,)),
        'top_k': (lambda a: lax.top_k(a, 3)[0], (x,)),
        'dslice': (lambda a, i: lax.dynamic_slice(a, (i, 0), (2, 16)), (x, i)),
        'dus': (lambda a, i: lax.dynamic_update_slice(a, jnp.ones((2, 16)), (i, 0)), (x, i)),
    }
    print(json.dumps({k: jax.jit(f).lower(*a).explain_sharding() for k, (f, a) in
                      progs.items()}))
    """)
    ex = json.loads(out.strip().splitlines()[-1])
    assert ex["pool"].startswith("no collectives")
    # top_k over the last dimension gathers only it (over 'y'); rows stay split over 'x'
    assert "all_gather dimension 1 over ('y',)" in ex["top_k"]
    assert "dimension 0" not in ex["top_k"]
    # slicing rows gathers the rows (over 'x'); the columns keep their split over 'y'
    assert "all_gather dimension 0 over ('x',)" in ex["dslice"]
    assert "dimension 1" not in ex["dslice"]
    assert "all_gather dimension 0 over ('x',)" in ex["dus"]
    assert "dimension 1" not in ex["dus"]


if __name__ == "__main__":
    multidevice.golden_cli(CASES, GOLDEN, __file__)
