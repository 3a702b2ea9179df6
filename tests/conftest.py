"""Test configuration: every eager primitive result is checked against its abstract_eval."""
import pytest

from jaxlite._src.config import config

config.update("jaxlite_check_eager_avals", True)


@pytest.fixture
def x64():
    """Run a test with jax_enable_x64 on (restored afterwards)."""
    with config.override("jax_enable_x64", True):
        yield
