"""Test configuration: every eager primitive result is checked against its abstract_eval."""
import pytest

from jaxlite._src.config import config

config.update("jaxlite_check_eager_avals", True)


@pytest.fixture
def x64():
    """Run a test with jax_enable_x64 on (restored afterwards)."""
    with config.override("jax_enable_x64", True):
        yield


def pytest_configure(config):
    """Where the reference JAX is installed, make it print jaxprs as on NumPy 1 (plain ints in
    parameters, as jaxlite prints them); see tests/jax_print_compat.py."""
    from jax_print_compat import use_numpy1_scalar_repr
    use_numpy1_scalar_repr()
