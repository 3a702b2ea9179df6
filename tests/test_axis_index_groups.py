"""``axis_index_groups`` of the collectives under pmap: each listed set of axis indices is a
group of its own, its members numbered by their place in the set. The expected values are
JAX 0.10.2's output on 8 CPU devices (stored, so the test stands without jax)."""
from __future__ import annotations

import json

import pytest

from multidevice import run_snippet

PROGRAM = r'''
import json, numpy as np, jaxlite as jax, jaxlite.numpy as jnp
from jaxlite import lax
x = jnp.arange(8.)
g = [[0, 2, 4, 6], [3, 1, 7, 5]]
h = [[0, 1, 2, 3], [4, 5, 6, 7]]
cases = {
 "psum_halves": lambda v: lax.psum(v, 'i', axis_index_groups=h),
 "psum_parity": lambda v: lax.psum(v, 'i', axis_index_groups=[[0, 2, 4, 6], [1, 3, 5, 7]]),
 "pmax": lambda v: lax.pmax(v, 'i', axis_index_groups=g),
 "pmean": lambda v: lax.pmean(v, 'i', axis_index_groups=g),
 "all_gather": lambda v: lax.all_gather(v, 'i', axis_index_groups=g),
 "all_gather_tiled": lambda v: lax.all_gather(jnp.stack([v, -v]), 'i', axis_index_groups=g,
                                              tiled=True),
 "psum_scatter": lambda v: lax.psum_scatter(jnp.arange(4.) * v, 'i', axis_index_groups=g),
 "psum_scatter_tiled": lambda v: lax.psum_scatter(jnp.arange(8.) * v, 'i',
                                                  axis_index_groups=g, tiled=True),
 "all_to_all": lambda v: lax.all_to_all(jnp.arange(4.) + 10 * v, 'i', 0, 0,
                                        axis_index_groups=g),
 "unequal_sizes": lambda v: lax.psum(v, 'i', axis_index_groups=[[0, 1, 2], [3, 4, 5, 6, 7]]),
 "grad_psum": jax.grad(lambda v: lax.psum(v * v, 'i', axis_index_groups=h)),
 "grad_all_gather": jax.grad(lambda v: jnp.sum(lax.all_gather(v * v, 'i', axis_index_groups=h)
                                               * jnp.arange(4.))),
 "not_a_partition": lambda v: lax.psum(v, 'i', axis_index_groups=[[0, 1], [2, 3]]),
 "all_gather_unequal": lambda v: lax.all_gather(v, 'i', axis_index_groups=[[0], [1, 2, 3, 4, 5, 6, 7]]),
}
out = {}
for name, f in cases.items():
    try:
        out[name] = np.asarray(jax.pmap(f, axis_name='i')(x)).tolist()
    except Exception as e:
        out[name] = type(e).__name__ + ": " + str(e)
try:
    jax.vmap(lambda v: lax.psum(v, 'i', axis_index_groups=h), axis_name='i')(x)
except Exception as e:
    out["vmap"] = type(e).__name__ + ": " + str(e)
print(json.dumps(out))
'''

JAX = {
    "psum_halves": [6.0, 6.0, 6.0, 6.0, 22.0, 22.0, 22.0, 22.0],
    "psum_parity": [12.0, 16.0, 12.0, 16.0, 12.0, 16.0, 12.0, 16.0],
    "pmax": [6.0, 7.0, 6.0, 7.0, 6.0, 7.0, 6.0, 7.0],
    "pmean": [3.0, 4.0, 3.0, 4.0, 3.0, 4.0, 3.0, 4.0],
    "all_gather": [[0.0, 2.0, 4.0, 6.0], [3.0, 1.0, 7.0, 5.0]] * 4,
    "all_gather_tiled": [[0.0, -0.0, 2.0, -2.0, 4.0, -4.0, 6.0, -6.0],
                         [3.0, -3.0, 1.0, -1.0, 7.0, -7.0, 5.0, -5.0]] * 4,
    "psum_scatter": [0.0, 16.0, 12.0, 0.0, 24.0, 48.0, 36.0, 32.0],
    "psum_scatter_tiled": [[0.0, 12.0], [32.0, 48.0], [24.0, 36.0], [0.0, 16.0], [48.0, 60.0],
                           [96.0, 112.0], [72.0, 84.0], [64.0, 80.0]],
    "all_to_all": [[0.0, 20.0, 40.0, 60.0], [31.0, 11.0, 71.0, 51.0], [1.0, 21.0, 41.0, 61.0],
                   [30.0, 10.0, 70.0, 50.0], [2.0, 22.0, 42.0, 62.0], [33.0, 13.0, 73.0, 53.0],
                   [3.0, 23.0, 43.0, 63.0], [32.0, 12.0, 72.0, 52.0]],
    "unequal_sizes": [3.0, 3.0, 3.0, 25.0, 25.0, 25.0, 25.0, 25.0],
    "grad_psum": [0.0, 8.0, 16.0, 24.0, 32.0, 40.0, 48.0, 56.0],
    "grad_all_gather": [0.0, 8.0, 32.0, 72.0, 0.0, 40.0, 96.0, 168.0],
}


@pytest.fixture(scope="module")
def results():
    return json.loads(run_snippet(PROGRAM, n=8).strip().splitlines()[-1])


@pytest.mark.parametrize("name", sorted(JAX))
def test_values_equal_jax(results, name):
    assert results[name] == JAX[name]


def test_errors(results):
    # JAX fails deep in XLA on a grouping that leaves indices out; jaxlite says what is wrong
    assert results["not_a_partition"].startswith(
        "ValueError: psum: axis_index_groups must split the 8 indices of axis 'i'")
    assert results["all_gather_unequal"].startswith(
        "ValueError: all_gather: axis_index_groups must all be the same size")
    assert results["vmap"] == ("NotImplementedError: axis_index_groups not supported in vmap "
                               "collectives. Please open a feature request!")
