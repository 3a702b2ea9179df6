"""The partitioner's rules for FFTs, factorizations and convolutions, against JAX 0.10.2 on
8 simulated devices: batch dimensions keep their split (each device transforms, factors or
convolves its own block), the dimensions an FFT transforms are computed whole and split
again as XLA does, a convolution keeps the lhs batch and kernel output-feature splits.
Values and output shardings (``devices_indices_map``) are compared with JAX's (live when
JAX 0.10.2 is installed, else tests/goldens/sharded_linalg_fft_conv_jax_0.10.2.json;
``python tests/test_sharded_linalg_fft_conv.py --record`` records it again); jaxlite's
explanation of the program shows which operands were gathered.
"""
import json
import pathlib
import sys

import pytest

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import multidevice  # noqa: E402

GOLDEN = HERE / "goldens" / "sharded_linalg_fft_conv_jax_0.10.2.json"

HEAD = """
import jax, jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P, AxisType
lax = jax.lax
m = jax.make_mesh((4, 2), ('x', 'y'), axis_types=(AxisType.Auto,) * 2)
rng = np.random.RandomState(0)
A = rng.randn(8, 4, 4).astype(np.float32)
A = A @ A.transpose(0, 2, 1) + 4 * np.eye(4, dtype=np.float32)
C = (rng.randn(8, 4, 4) + 1j * rng.randn(8, 4, 4)).astype(np.complex64)

def sh(a, *spec):
    return jax.device_put(a, NamedSharding(m, P(*spec)))
""" + multidevice.SHARD_WHERE + """
def show(label, fn, *args, tol=2):
    try:
        r = jax.jit(fn)(*args)
    except Exception as e:
        print(label, '!', type(e).__name__, str(e).split('\\n')[0])
        return
    for k, y in enumerate(r if isinstance(r, (tuple, list)) else [r]):
        vals = np.asarray(y)
        if k == 0 or vals.dtype.kind == 'i':
            print(label, k, jax.typeof(y), np.round(np.abs(vals), tol).ravel()[:6].tolist())
        print('  ', where(y))
"""

CASES = {}


def case(name, code):
    CASES[name] = HEAD + code


case("linalg", """
for spec in [('x',), ('x', 'y'), (None, 'y'), ('x', None, 'y')]:
    a = sh(A, *spec)
    show(f'cholesky {spec}', jnp.linalg.cholesky, a)
    show(f'qr {spec}', lambda a: jnp.linalg.qr(a)[1], a)
    show(f'eigh {spec}', lambda a: jnp.linalg.eigh(a)[0], a)
    show(f'eigh both {spec}', lambda a: jnp.abs(jnp.linalg.eigh(a)[1]).sum(), a)
    show(f'svd {spec}', lambda a: jnp.linalg.svd(a, compute_uv=False), a)
    show(f'lu {spec}', jax.scipy.linalg.lu_factor, a)
    show(f'inv {spec}', jnp.linalg.inv, a)
    show(f'solve_tri {spec}', lambda a: lax.linalg.triangular_solve(
        a, a, left_side=True, lower=True), a)
""")

case("fft", """
for spec in [('x',), ('x', 'y'), (None, 'y'), ('x', None, 'y')]:
    c, a = sh(C, *spec), sh(A, *spec)
    show(f'fft {spec}', jnp.fft.fft, c)
    show(f'ifft2 {spec}', jnp.fft.ifft2, c)
    show(f'rfft {spec}', jnp.fft.rfft, a)
    show(f'irfft {spec}', jnp.fft.irfft, c)
    show(f'fft axis0 {spec}', lambda c: jnp.fft.fft(c, axis=0), c)
    show(f'fftn {spec}', jnp.fft.fftn, c)
""")

case("conv", """
X = rng.randn(8, 4, 6, 6).astype(np.float32)
K = rng.randn(8, 4, 3, 3).astype(np.float32)
conv = lambda x, k: lax.conv_general_dilated(x, k, (1, 1), 'SAME')
for xs, ks in [(('x',), ()), (('x', 'y'), ()), ((), ('x',)), (('x',), ('y',)),
               ((None, 'y'), ()), ((None, 'y'), (None, 'y')), (('y',), ('y',))]:
    show(f'conv {xs} {ks}', conv, sh(X, *xs), sh(K, *ks))
Kg = rng.randn(8, 2, 3, 3).astype(np.float32)
show('grouped', lambda x, k: lax.conv_general_dilated(x, k, (1, 1), 'SAME',
                                                      feature_group_count=2),
     sh(X, 'x'), sh(Kg, 'y'))
Xn = rng.randn(8, 6, 6, 4).astype(np.float32)
Kn = rng.randn(3, 3, 4, 8).astype(np.float32)
show('nhwc', lambda x, k: lax.conv_general_dilated(
    x, k, (2, 2), 'VALID', dimension_numbers=('NHWC', 'HWIO', 'NHWC')), sh(Xn, 'x'),
    sh(Kn, None, None, None, 'y'))
""")


@pytest.fixture(scope="module")
def outputs():
    return multidevice.outputs_beside_jax(CASES)


@pytest.mark.parametrize("name", list(CASES))
def test_case_matches_jax(name, outputs):
    multidevice.assert_case_matches_jax(outputs, GOLDEN, name)


def test_golden_is_current():
    multidevice.assert_golden_current(GOLDEN, CASES)


def test_batch_dims_are_not_gathered():
    """Split batch dimensions stay split: the only collectives are for the dimensions a
    primitive needs whole (jaxlite's explanation of each program)."""
    out = multidevice.run("""
    from jaxlite.sharding import NamedSharding, PartitionSpec as P, AxisType
    m = jax.make_mesh((4, 2), ('x', 'y'), axis_types=(AxisType.Auto,) * 2)
    sh = lambda a, *s: jax.device_put(a, NamedSharding(m, P(*s)))
    A = np.eye(4, dtype=np.float32) * np.arange(1, 9, dtype=np.float32)[:, None, None]
    X = np.ones((8, 4, 6, 6), np.float32)
    K = np.ones((8, 4, 3, 3), np.float32)
    progs = {
        'cholesky': (jnp.linalg.cholesky, (sh(A, 'x', 'y'),)),
        'fft': (jnp.fft.fft, (sh(A.astype(np.complex64), 'x', 'y'),)),
        'conv': (lambda x, k: lax.conv_general_dilated(x, k, (1, 1), 'SAME'),
                 (sh(X, 'x'), sh(K, 'y'))),
    }
    res = {}
    for name, (f, args) in progs.items():
        res[name] = jax.jit(f).lower(*args).explain_sharding()
    print(json.dumps(res))
    """).strip().splitlines()[-1]
    res = json.loads(out)
    # cholesky: the matrix rows split over 'y' are gathered, the batch split over 'x' kept
    assert "all_gather dimension 1 over ('y',)" in res["cholesky"]
    assert "over ('x',)" not in res["cholesky"]
    # fft: the transformed dimension is gathered; the batch stays split
    assert "all_gather dimension 2" not in res["fft"]
    assert "over ('x',)" not in res["fft"]
    assert res["conv"].startswith("no collectives")


if __name__ == "__main__":
    multidevice.golden_cli(CASES, GOLDEN, __file__)
