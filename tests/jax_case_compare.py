"""Shared pieces of the expression-table tests that compare a jaxlite module with JAX's
(tests/test_scipy_signal.py, tests/test_scipy_fft_integrate_ndimage.py): each case is a
Python expression evaluated once against JAX's modules and once against jaxlite's, and the
results (values, dtypes, weak types, or the exception class) must agree."""
import inspect
import warnings

import numpy as np
import pytest

import jaxlite.numpy as jnp
from jaxlite._src.config import config

__all__ = ["run_expr", "compare", "same_public_api", "under_x64", "close"]


def run_expr(expr, env):
    """``(value or raised exception, sorted UserWarnings as (class name, first clause))``."""
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        try:
            out = eval(expr, env)
        except Exception as e:  # noqa: BLE001 - compared by class
            out = e
    return out, sorted({(w.category.__name__, str(w.message).split(",")[0]) for w in rec
                        if w.category is UserWarning})


def compare(got, want, expr):
    """jaxlite's result ``got`` against JAX's ``want``: same exception class, or same tuple
    structure, shape, dtype and weak type, and values exact (integers) or close (floats,
    at the precision of the dtype)."""
    if isinstance(want, BaseException):
        assert isinstance(got, BaseException), f"{expr}: JAX raised {want!r}, jaxlite gave {got}"
        assert type(got).__name__ == type(want).__name__ or isinstance(got, type(want)), \
            f"{expr}: {type(got).__name__}({got}) vs JAX {type(want).__name__}({want})"
        return
    assert not isinstance(got, BaseException), f"{expr}: jaxlite raised {got!r}"
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want), expr
        for g, w in zip(got, want):
            compare(g, w, expr)
        return
    g, w = np.asarray(got), np.asarray(want)
    assert g.shape == w.shape, f"{expr}: shape {g.shape} vs {w.shape}"
    assert g.dtype == w.dtype, f"{expr}: dtype {g.dtype} vs {w.dtype}"
    assert bool(getattr(got, "weak_type", False)) == bool(want.weak_type), f"{expr}: weak type"
    if not g.size:
        return
    if g.dtype.kind in "biu":
        np.testing.assert_array_equal(g, w, err_msg=expr)
        return
    scale = float(np.nanmax(np.abs(w.astype(np.complex128)))) + 1.0
    low = g.dtype in (np.float16, jnp.bfloat16) or "float16" in expr or "bfloat16" in expr
    tol = 2e-2 if low else (1e-9 if g.dtype in (np.float64, np.complex128) else 2e-5)
    np.testing.assert_allclose(g.astype(np.complex128), w.astype(np.complex128),
                               rtol=tol, atol=tol * scale, err_msg=expr)


def same_public_api(ours, theirs):
    """Module ``ours`` has exactly the public names of ``theirs``, each with the same
    parameters (names, kinds, defaults) and a docstring."""
    public = {k for k in dir(theirs) if not k.startswith("_")}
    assert public == {k for k in dir(ours) if not k.startswith("_")}
    for name in public:
        o = inspect.signature(getattr(ours, name)).parameters.values()
        t = inspect.signature(getattr(theirs, name)).parameters.values()
        assert [(p.name, p.kind, p.default) for p in o] == \
            [(p.name, p.kind, p.default) for p in t], name
        assert getattr(ours, name).__doc__


def under_x64(check, expr):
    """Run ``check(expr)`` with x64 enabled in both JAX and jaxlite."""
    rjax = pytest.importorskip("jax")
    prev = rjax.config.jax_enable_x64
    rjax.config.update("jax_enable_x64", True)
    try:
        with config.override("jax_enable_x64", True):
            check(expr)
    finally:
        rjax.config.update("jax_enable_x64", prev)


def close(got, want, tol=2e-5):
    """``got`` equals the reference ``want`` in shape and to ``tol`` relative to its scale."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol * (np.abs(want).max() + 1))
