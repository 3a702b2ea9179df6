"""jaxlite.example_libraries.stax has the attributes JAX's stax module has (the jax.nn
functions and initializers it imports, and the modules jnp/lax/random), plus the small
public additions jaxlite.jacobian and the jaxlite.errors classes."""
import numpy as np
import pytest

import jaxlite
import jaxlite.numpy as jnp
from jaxlite import errors, nn
from jaxlite.example_libraries import stax

NN_NAMES = ["elu", "gelu", "leaky_relu", "log_softmax", "relu", "selu", "sigmoid", "softmax",
            "softplus", "standardize"]
INIT_NAMES = ["glorot_normal", "normal", "ones", "zeros"]


@pytest.mark.parametrize("name", NN_NAMES)
def test_stax_reexports_nn_functions(name):
    assert getattr(stax, name) is getattr(nn, name)


@pytest.mark.parametrize("name", INIT_NAMES)
def test_stax_reexports_initializers(name):
    assert getattr(stax, name) is getattr(nn.initializers, name)


def test_stax_module_attributes():
    assert stax.jnp is jnp
    assert stax.lax is jaxlite.lax
    assert stax.random is jaxlite.random
    import functools
    import math
    assert stax.functools is functools and stax.math is math


def test_stax_names_work_as_values():
    x = jnp.array([-1.0, 0.5, 2.0])
    np.testing.assert_allclose(stax.relu(x), [0.0, 0.5, 2.0])
    np.testing.assert_allclose(stax.softmax(x).sum(), 1.0, rtol=1e-6)
    w = stax.glorot_normal()(jaxlite.random.PRNGKey(0), (3, 4))
    assert w.shape == (3, 4) and w.dtype == jnp.float32
    assert stax.zeros(jaxlite.random.PRNGKey(0), (2,)).tolist() == [0.0, 0.0]


def test_star_import_exports_the_nn_names():
    ns = {}
    exec("from jaxlite.example_libraries.stax import *", ns)
    for name in NN_NAMES + INIT_NAMES + ["Dense", "serial"]:
        assert name in ns


def test_jacobian_is_jacrev():
    f = lambda x: jnp.sin(x) * x[::-1]
    x = jnp.array([0.3, 1.2, -0.7])
    np.testing.assert_allclose(jaxlite.jacobian(f)(x), jaxlite.jacrev(f)(x))
    np.testing.assert_allclose(jaxlite.jacobian(f)(x),
                               np.diag(np.cos(x) * np.asarray(x)[::-1])
                               + np.fliplr(np.diag(np.sin(np.asarray(x)))), rtol=1e-6)


def test_error_classes():
    assert issubclass(errors.JaxprTypeError, TypeError)
    assert issubclass(errors.InconclusiveDimensionOperation, Exception)
    assert not issubclass(errors.InconclusiveDimensionOperation, TypeError)
    assert errors.InconclusiveDimensionOperation.__doc__
    with pytest.raises(errors.InconclusiveDimensionOperation, match="dim"):
        raise errors.InconclusiveDimensionOperation("dim a")


def test_typecheck_raises_the_public_jaxpr_type_error():
    from jaxlite._src.core import ir
    closed = jaxlite.make_jaxpr(lambda x: jnp.sin(x) + 1.0)(1.0)
    jaxpr = closed.jaxpr
    bad = jaxpr.replace(eqns=list(reversed(jaxpr.eqns)))   # a use before definition
    with pytest.raises(errors.JaxprTypeError):
        ir.typecheck(bad)


# --------------------------------------------------------------------- against real JAX

def test_stax_dir_matches_jax():
    pytest.importorskip("jax")
    from jax.example_libraries import stax as jstax
    public = lambda m: {n for n in dir(m) if not n.startswith("_")}
    assert public(jstax) - public(stax) == set()


def test_error_bases_match_jax():
    jax = pytest.importorskip("jax")
    for name in ["InconclusiveDimensionOperation", "JaxprTypeError"]:
        jbases = [c.__name__ for c in getattr(jax.errors, name).__mro__[1:]]
        ours = [c.__name__ for c in getattr(errors, name).__mro__[1:]]
        assert ours == jbases


def test_jacobian_matches_jax():
    jax = pytest.importorskip("jax")
    f = lambda np_, x: np_.tanh(x) * x.sum()
    x = np.array([0.3, 1.2, -0.7], np.float32)
    np.testing.assert_allclose(jaxlite.jacobian(lambda x: f(jnp, x))(x),
                               jax.jacobian(lambda x: f(jax.numpy, x))(x), rtol=1e-6)
