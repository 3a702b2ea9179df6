"""Dtypes vs JAX: the promotion table (promote_types, result_type and the dtype/weak type of
``x + y``) with x64 off and on, canonicalization, jnp.dtype, finfo/iinfo, issubdtype,
jnp scalar constructors and the 64-bit warnings. A NumPy-only golden test of the table runs
without JAX."""
import os
import subprocess
import sys
import warnings

import ml_dtypes
import numpy as np
import pytest

import jaxlite
import jaxlite.numpy as jnp
from jaxlite._src.config import config

# Every dtype JAX's promotion lattice knows (bool, ints, uints, floats, complex, the small
# floats and the sub-byte ints), by jnp attribute name.
NAMES = ["bool_", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
         "bfloat16", "float16", "float32", "float64", "complex64", "complex128",
         "float8_e3m4", "float8_e4m3", "float8_e4m3b11fnuz", "float8_e4m3fn",
         "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz", "float8_e8m0fnu",
         "float4_e2m1fn", "float6_e2m3fn", "float6_e3m2fn", "int1", "int2", "int4", "uint1",
         "uint2", "uint4"]
NAMES = [n for n in NAMES if hasattr(jnp, n)]
WEAK = {"int": int, "float": float, "complex": complex}
ENTRIES = NAMES + list(WEAK)
# Dtypes used for the array-level (``x + y``) table: the ones jnp arithmetic supports.
ARRAY_NAMES = ["bool_", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
               "uint64", "bfloat16", "float16", "float32", "float64", "complex64",
               "complex128", "float8_e4m3fn", "float8_e5m2", "int4", "uint4"]


def _jtype(mod, name):
    return WEAK[name] if name in WEAK else getattr(mod, name)


def _outcome(f):
    """('ok', dtype) or ('err', exception type name, message): compared as a whole."""
    try:
        r = f()
    except Exception as e:  # noqa: BLE001 - errors are compared with JAX's
        return ("err", type(e).__name__, str(e))
    if isinstance(r, tuple):
        return ("ok", np.dtype(r[0]), r[1])
    if hasattr(r, "weak_type"):
        return ("ok", np.dtype(r.dtype), bool(r.weak_type))
    return ("ok", np.dtype(r))


@pytest.fixture(params=[False, True], ids=["x32", "x64"])
def jax_x64(request):
    """JAX with jax_enable_x64 set like jaxlite's (both restored afterwards)."""
    jax = pytest.importorskip("jax")
    prev = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", request.param)
    try:
        with config.override("jax_enable_x64", request.param):
            yield jax
    finally:
        jax.config.update("jax_enable_x64", prev)


# ----------------------------------------------------------------------------- the table
@pytest.mark.parametrize("fn", ["promote_types", "result_type"])
@pytest.mark.parametrize("a", ENTRIES)
def test_promotion_table_vs_jax(jax_x64, fn, a):
    import jax.numpy as jjnp
    bad = []
    for b in ENTRIES:
        want = _outcome(lambda: getattr(jjnp, fn)(_jtype(jjnp, a), _jtype(jjnp, b)))
        got = _outcome(lambda: getattr(jnp, fn)(_jtype(jnp, a), _jtype(jnp, b)))
        if want != got:
            bad.append((b, want, got))
    assert not bad


@pytest.mark.parametrize("a", ENTRIES)
def test_result_type_weak_flag_vs_jax(jax_x64, a):
    bad = []
    for b in ENTRIES:
        want = _outcome(lambda: jax_x64.dtypes.result_type(
            _jtype(jax_x64.numpy, a), _jtype(jax_x64.numpy, b), return_weak_type_flag=True))
        got = _outcome(lambda: jaxlite.dtypes.result_type(
            _jtype(jnp, a), _jtype(jnp, b), return_weak_type_flag=True))
        if want != got:
            bad.append((b, want, got))
    assert not bad


def test_result_type_three_args_and_strict_vs_jax(jax_x64):
    import jax.numpy as jjnp
    cases = [("int8", "uint8", "float16"), ("bfloat16", "float16", "int8"),
             ("uint32", "int8", "bool_"), ("int", "float", "uint8"), ("complex", "bfloat16")]
    for case in cases:
        want = _outcome(lambda: jjnp.result_type(*[_jtype(jjnp, n) for n in case]))
        got = _outcome(lambda: jnp.result_type(*[_jtype(jnp, n) for n in case]))
        assert want == got, case
    prev = jax_x64.config.jax_numpy_dtype_promotion
    jax_x64.config.update("jax_numpy_dtype_promotion", "strict")
    try:
        with config.override("jax_numpy_dtype_promotion", "strict"):
            for a in ["int8", "float32", "bfloat16", "int", "float"]:
                for b in ["int8", "int32", "float32", "float16", "float", "complex"]:
                    want = _outcome(lambda: jjnp.promote_types(_jtype(jjnp, a),
                                                               _jtype(jjnp, b)))
                    got = _outcome(lambda: jnp.promote_types(_jtype(jnp, a), _jtype(jnp, b)))
                    assert want == got, (a, b)
    finally:
        jax_x64.config.update("jax_numpy_dtype_promotion", prev)


def _array_entries(mod):
    out = [(n, mod.asarray(np.zeros(2, getattr(ml_dtypes, n, None) or n.rstrip("_"))))
           for n in ARRAY_NAMES]
    out += [("weak_int", mod.asarray(1)), ("weak_float", mod.asarray(1.0)),
            ("weak_complex", mod.asarray(1j))]
    return out


SCALARS = [("py_int", 1), ("py_float", 1.0), ("py_complex", 1j), ("py_bool", True)]


def test_add_dtype_and_weak_type_vs_jax(jax_x64):
    """dtype and weak_type of x + y (and y + x for Python scalars) for every pair."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        js, ls = _array_entries(jax_x64.numpy), _array_entries(jnp)
    bad = []
    for (na, ja), (_, la) in zip(js, ls):
        for (nb, jb), (_, lb) in zip(js + SCALARS, ls + SCALARS):
            for rev in (False, True) if nb.startswith("py_") else (False,):
                # eval_shape: JAX's types without compiling a kernel per pair
                want = _outcome(lambda: jax_x64.eval_shape(
                    lambda: jb + ja if rev else ja + jb))
                got = _outcome(lambda: lb + la if rev else la + lb)
                if want[:2] != got[:2] or want[0] == "ok" and want != got:
                    bad.append((na, nb, rev, want, got))
    assert not bad


# ----------------------------------------------------------------------------- golden
# A few entries of JAX's table, checked without JAX (dtype names; "E" means no promotion).
GOLDEN_X32 = [
    ("int8", "uint8", "int16"), ("uint32", "int32", "int32"), ("uint64", "int64", "int32"),
    ("bfloat16", "float16", "float32"), ("int32", "bfloat16", "bfloat16"),
    ("uint8", int, "uint8"), ("float16", float, "float16"), ("int8", complex, "complex64"),
    ("bool_", int, "int32"), (int, float, "float32"), ("float32", "complex64", "complex64"),
    ("float8_e4m3fn", float, "float8_e4m3fn"), ("float8_e4m3fn", "float32", "E"),
    ("int4", "int8", "E"), ("int4", int, "int4"), ("float64", "int8", "float32"),
]
GOLDEN_X64 = [("uint32", "int32", "int64"), ("uint64", "int64", "float64"),
              ("int8", complex, "complex128"), ("bool_", int, "int64"), (int, float, "float64"),
              ("float32", "int64", "float32"), ("float64", "complex64", "complex128")]


def _golden(table):
    for a, b, want in table:
        ta = a if isinstance(a, type) else getattr(jnp, a)
        tb = b if isinstance(b, type) else getattr(jnp, b)
        if want == "E":
            with pytest.raises(jaxlite.dtypes.TypePromotionError,
                               match="have no available implicit dtype promotion path"):
                jnp.result_type(ta, tb)
        else:
            assert jnp.result_type(ta, tb) == np.dtype(getattr(ml_dtypes, want, None)
                                                       or want.rstrip("_")), (a, b)


def test_golden_promotion_entries():
    _golden(GOLDEN_X32)
    assert jnp.promote_types(jnp.uint64, jnp.int64) == np.float64   # promote_types: no canon
    assert jnp.promote_types(jnp.uint8, int) == np.uint8
    assert jnp.promote_types(int, float) == np.float64
    r = jnp.asarray(np.zeros(2, np.uint8)) + 1
    assert r.dtype == np.uint8 and not r.weak_type
    r = jnp.asarray(2) * 1.5
    assert r.dtype == np.float32 and r.weak_type
    assert jaxlite.dtypes.result_type(1.0, return_weak_type_flag=True) == (np.float32, True)
    with pytest.raises(jaxlite.dtypes.TypePromotionError,
                       match=r"Input dtypes \('int4', 'int8'\) have no available implicit "
                             r"dtype promotion path\. To avoid unintended promotion, 1-bit, "
                             r"2-bit and 4-bit integers do not support implicit promotion"):
        jnp.promote_types(jnp.int4, jnp.int8)


def test_golden_promotion_entries_x64(x64):
    _golden(GOLDEN_X64)


# ----------------------------------------------------------------------------- canonicalize
def test_canonicalize_dtype():
    c = jaxlite.dtypes.canonicalize_dtype
    assert c(np.float64) == np.float32 and c("uint64") == np.uint32
    assert c(jnp.complex128) == np.complex64 and c(int) == np.int32 and c(float) == np.float32
    assert c(jnp.bfloat16) == ml_dtypes.bfloat16 and c(np.int8) == np.int8
    assert c("S") == np.dtype("S")


def test_canonicalize_dtype_x64(x64):
    c = jaxlite.dtypes.canonicalize_dtype
    assert c(np.float64) == np.float64 and c(int) == np.int64 and c("uint64") == np.uint64


def test_jnp_dtype():
    assert jnp.dtype(jnp.float32) == np.float32 and jnp.dtype("bfloat16") == ml_dtypes.bfloat16
    assert jnp.dtype(float) == np.float64 and jnp.dtype(int) == np.int64   # not canonical
    assert jnp.dtype(None) == np.float64 and jnp.dtype(jnp.int_) == np.int64
    with pytest.warns(DeprecationWarning, match="Implicit conversion of an array to a dtype "
                      "is deprecated; rather than dtype=arr use dtype=arr.dtype"):
        assert jnp.dtype(jnp.ones(2)) == np.float32


def test_dtypes_module_names():
    names = ['TypePromotionError', 'bfloat16', 'canonicalize_dtype', 'extended', 'finfo',
             'float0', 'iinfo', 'issubdtype', 'itemsize_bits', 'prng_key', 'result_type',
             'scalar_type_of']
    assert all(hasattr(jaxlite.dtypes, n) for n in names)
    assert jaxlite.dtypes.bfloat16 is ml_dtypes.bfloat16
    assert jaxlite.dtypes.float0 == np.dtype([("float0", np.void, 0)])
    assert jaxlite.dtypes.itemsize_bits(jnp.int4) == 4
    f0 = jaxlite.dtypes.float0
    assert jaxlite.dtypes.result_type(f0) == f0 and jnp.result_type(f0, f0) == f0
    with pytest.raises(ValueError, match=r"dtype=dtype\(\[\('float0', 'V'\)\]\) is not a "
                                         "valid dtype for JAX type promotion."):
        jaxlite.dtypes.result_type(np.zeros(2, f0), 1)
    assert jaxlite.dtypes.scalar_type_of(jnp.ones(2)) is float


def test_jnp_type_aliases():
    assert repr(jnp.float32) == "<class 'jax.numpy.float32'>"
    assert jnp.float32.dtype == np.float32 and jnp.float32 == np.float32
    assert jnp.int_ is jnp.int64 and jnp.float_ is jnp.float64 and jnp.uint is jnp.uint64
    assert jnp.complex_ is jnp.complex128 and jnp.single is jnp.float32
    assert jnp.double is jnp.float64 and repr(jnp.bool) == "<class 'jax.numpy.bool'>"
    assert not isinstance(jnp.float32(1), jnp.float32)
    assert isinstance(np.float32(1), jnp.float32)


# ----------------------------------------------------------------------------- finfo/iinfo
def test_finfo_iinfo():
    fb = jnp.finfo(jnp.bfloat16)
    assert fb.bits == 16 and fb.eps == 2.0 ** -7 and float(fb.max) == 3.3895313892515355e38
    assert "Machine parameters for bfloat16" in str(fb)
    assert jnp.finfo(jnp.float32).eps == np.float32(1.1920929e-07)
    assert jnp.finfo(jnp.ones(2)).bits == 32 and jnp.finfo(float).bits == 64
    assert jnp.finfo(jnp.complex64).bits == 32 and float(jnp.finfo(jnp.float8_e4m3fn).max) == 448
    assert (jnp.iinfo(jnp.int4).min, jnp.iinfo(jnp.int4).max) == (-8, 7)
    assert str(jnp.iinfo(jnp.uint8)) == "iinfo(min=0, max=255, dtype=uint8)"
    assert jnp.iinfo(jnp.ones(2, int)).bits == 32 and jnp.iinfo(int).bits == 64
    with pytest.raises(ValueError, match="not inexact"):
        jnp.finfo(jnp.int32)
    with pytest.raises(ValueError, match="Invalid integer data type 'f'."):
        jnp.iinfo(jnp.float32)
    with pytest.raises(ValueError, match="Invalid integer data type 'b'."):
        jnp.iinfo(bool)


# ----------------------------------------------------------------------------- issubdtype
ISSUB = [("bfloat16", "floating", True), ("bfloat16", "inexact", True),
         ("int4", "signedinteger", True), ("uint4", "unsignedinteger", True),
         ("int4", "integer", True), ("float8_e4m3fn", "floating", True),
         ("bfloat16", "float16", False), ("float32", "floating", True),
         ("bool_", "integer", False), ("bool_", "number", False), ("bool_", "generic", True),
         ("complex64", "complexfloating", True), ("float32", "complexfloating", False),
         ("int32", "int32", True), ("float8_e5m2", "number", True)]


@pytest.mark.parametrize("a,b,want", ISSUB)
def test_issubdtype(a, b, want):
    assert jnp.issubdtype(getattr(jnp, a), getattr(jnp, b)) is want


def test_issubdtype_extended_and_python_types():
    assert jnp.issubdtype(jnp.bfloat16, np.floating)
    assert not jnp.issubdtype(jnp.float32, jaxlite.dtypes.extended)
    key = jaxlite.random.key(0)
    assert jnp.issubdtype(key.dtype, jaxlite.dtypes.extended)
    assert jnp.issubdtype(key.dtype, jaxlite.dtypes.prng_key)
    assert jnp.issubdtype(float, float) and not jnp.issubdtype(jnp.int32, int)
    assert jnp.issubdtype("float32", jnp.floating) and not jnp.issubdtype(jnp.float32, None)
    assert jnp.isdtype(jnp.bfloat16, "real floating")


# ----------------------------------------------------------------------------- scalars
def test_scalar_constructors_return_arrays():
    x = jnp.float32(3)
    assert isinstance(x, jaxlite.Array) and x.dtype == np.float32 and x.shape == ()
    assert not x.weak_type and repr(x) == "Array(3., dtype=float32)"
    assert repr(jnp.bfloat16(1.5)) == "Array(1.5, dtype=bfloat16)"
    assert repr(jnp.float32([1, 2])) == "Array([1., 2.], dtype=float32)"
    assert repr(jnp.bool_(1)) == "Array(True, dtype=bool)"


def _warning_text(dt, fun):
    return (f"Explicitly requested dtype {dt} requested in {fun} is not available, and will be "
            f"truncated to dtype {dt.replace('64', '32')}. To enable more dtypes, set the "
            "jax_enable_x64 configuration option or the JAX_ENABLE_X64 shell environment "
            "variable. See https://github.com/jax-ml/jax#current-gotchas for more.")


@pytest.mark.parametrize("fun,make,dt", [
    ("array", lambda: jnp.array(1., dtype=jnp.float64), "float64"),
    ("asarray", lambda: jnp.float64(3), "float64"),
    ("asarray", lambda: jnp.int64(3), "int64"),
    ("zeros", lambda: jnp.zeros(2, jnp.float64), "float64"),
    ("ones", lambda: jnp.ones(2, "int64"), "int64"),
    ("arange", lambda: jnp.arange(3, dtype=jnp.float64), "float64"),
    ("astype", lambda: jnp.ones(2).astype(jnp.float64), "float64"),
    ("full", lambda: jnp.full(2, 1, jnp.float64), "float64"),
])
def test_x64_truncation_warning(fun, make, dt):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        out = make()
    assert out.dtype == np.dtype(dt.replace("64", "32"))
    assert [str(m.message) for m in w] == [_warning_text(dt, fun)]


def test_x64_truncation_asarray_text():
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        jnp.asarray(1., dtype=jnp.float64)
    assert [str(m.message) for m in w] == [_warning_text("float64", "asarray")]


def test_float64_input_becomes_float32():
    with warnings.catch_warnings():
        warnings.simplefilter("error")   # no warning for NumPy inputs: only explicit dtypes
        assert jnp.array(np.ones(2)).dtype == np.float32
        assert jnp.array(np.float64(1)).dtype == np.float32
        assert not jnp.asarray(np.float64(1)).weak_type
        assert jnp.ones(2, float).dtype == np.float32 and jnp.ones(2, int).dtype == np.int32
    assert repr(jnp.array(1)) == "Array(1, dtype=int32, weak_type=True)"
    assert repr(jnp.array(1.0)) == "Array(1., dtype=float32, weak_type=True)"


def test_x64_mode_types(x64):
    assert jnp.float64(3).dtype == np.float64 and jnp.array(1.0).dtype == np.float64
    assert jnp.ones(2, int).dtype == np.int64 and jnp.array(np.ones(2)).dtype == np.float64


def test_enable_x64_context():
    assert not config.jax_enable_x64
    with jaxlite.enable_x64():
        assert jnp.ones(1).dtype == np.float64
    with jaxlite.enable_x64(True):
        assert config.jax_enable_x64
    assert jnp.ones(1).dtype == np.float32
    with jaxlite.experimental.enable_x64():
        assert jnp.array(1).dtype == np.int64
    assert jnp.array(1).dtype == np.int32


def test_config_update_x64():
    jaxlite.config.update("jax_enable_x64", True)
    try:
        assert jnp.ones(1).dtype == np.float64 and jaxlite.config.jax_enable_x64
    finally:
        jaxlite.config.update("jax_enable_x64", False)
    assert jnp.ones(1).dtype == np.float32


@pytest.mark.parametrize("env,want", [("1", "float64 int64"), ("0", "float32 int32"),
                                      ("true", "float64 int64")])
def test_jax_enable_x64_env_var(env, want):
    code = ("import jaxlite.numpy as jnp; print(jnp.ones(1).dtype, jnp.array(1).dtype)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env={**os.environ, "JAX_ENABLE_X64": env}, check=True)
    assert out.stdout.strip() == want
