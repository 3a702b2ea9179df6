"""The Array type vs JAX: repr/str, immutability, the attribute set of jax.Array, conversions,
NumPy/DLPack interop, pickling, hashing, iteration, operators' result dtypes and weak types
(incl. reflected operators), ``.at[]`` and the device/sharding properties."""
import copy
import operator
import pickle
import warnings

import ml_dtypes
import numpy as np
import pytest

import jaxlite
import jaxlite.numpy as jnp
from jaxlite._src.config import config
from jaxlite._src.runtime.array import ArrayImpl


def _np(name):
    return np.dtype(getattr(ml_dtypes, name, None) or name)


@pytest.fixture
def jax():
    """Real JAX (tests comparing against it are skipped when it is missing)."""
    return pytest.importorskip("jax")


@pytest.fixture(params=[False, True], ids=["x32", "x64"])
def jax_x64(request, jax):
    """JAX and jaxlite with jax_enable_x64 set alike (restored afterwards)."""
    prev = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", request.param)
    try:
        with config.override("jax_enable_x64", request.param):
            yield jax
    finally:
        jax.config.update("jax_enable_x64", prev)


# ----------------------------------------------------------------------------- repr / str
# Values are built from NumPy data, so both libraries print the very same numbers.
REPR_CASES = {
    "0d_f32": lambda m: m.float32(1.5),
    "0d_weak_float": lambda m: m.asarray(2.0),
    "0d_weak_int": lambda m: m.asarray(3),
    "0d_bool": lambda m: m.array(True),
    "0d_complex_weak": lambda m: m.asarray(1j),
    "empty": lambda m: m.zeros((0,)),
    "empty_2d_int": lambda m: m.zeros((2, 0), m.int32),
    "empty_weak": lambda m: m.asarray([]),
    "bool": lambda m: m.array([True, False]),
    "c64": lambda m: m.array(np.array([1 + 2j, 3 - 4j], np.complex64)),
    "bf16": lambda m: m.array(np.array([1.5, 2.25, 3.0]), m.bfloat16),
    "f16": lambda m: m.array(np.array([1.5, 2.0]), m.float16),
    "i8": lambda m: m.array(np.array([-1, 2, 127], np.int8)),
    "u8": lambda m: m.array(np.array([1, 2], np.uint8)),
    "f8": lambda m: m.array(np.array([1.0, 2.0]), m.float8_e4m3fn),
    "i4": lambda m: m.array(np.array([1, -2]), m.int4),
    "large_1d": lambda m: m.asarray(np.arange(2000.0, dtype=np.float32)),
    "large_2d": lambda m: m.asarray(np.arange(3000, dtype=np.int32).reshape(30, 100)),
    "2d": lambda m: m.asarray(np.arange(12.0, dtype=np.float32).reshape(3, 4)),
    "3d": lambda m: m.asarray(np.arange(24, dtype=np.int32).reshape(2, 3, 4)),
    "wide_rows": lambda m: m.asarray(np.random.RandomState(0).randn(30).astype(np.float32)),
    "wrap_dtype": lambda m: m.asarray((np.arange(15.0, dtype=np.float32) / 7)[None]),
    "nan_inf": lambda m: m.array(np.array([np.nan, np.inf, -np.inf, 1.0], np.float32)),
    "small_large": lambda m: m.array(np.array([1e-8, 1.0, 1e8], np.float32)),
    "ints": lambda m: m.array(np.array([1, 100000, -3], np.int32)),
    "complex_2d": lambda m: m.asarray(np.random.RandomState(1).randn(3, 3).astype(
        np.complex64) * 1j),
    "neg_zero": lambda m: m.array(np.array([-0.0, 0.0], np.float32)),
}


@pytest.mark.parametrize("name", sorted(REPR_CASES))
def test_repr_and_str_vs_jax(name, jax):
    import jax.numpy as jjnp
    want, got = REPR_CASES[name](jjnp), REPR_CASES[name](jnp)
    assert repr(got) == repr(want)
    assert str(got) == str(want)
    assert f"{got}" == f"{want}"


def test_repr_x64(jax_x64):
    import jax.numpy as jjnp
    for make in (lambda m: m.arange(5.0), lambda m: m.asarray(1), lambda m: m.ones(3, int),
                 lambda m: m.asarray(np.arange(3, dtype=np.uint64))):
        assert repr(make(jnp)) == repr(make(jjnp))


def test_repr_golden():
    assert repr(jnp.asarray(2.0)) == "Array(2., dtype=float32, weak_type=True)"
    assert repr(jnp.zeros((2, 0), jnp.int32)) == "Array([], shape=(2, 0), dtype=int32)"
    assert repr(jnp.array([True, False])) == "Array([ True, False], dtype=bool)"
    assert str(jnp.arange(3)) == "[0 1 2]"


# ----------------------------------------------------------------------------- attributes
JAX_ARRAY_ATTRS = [
    'T', '__abs__', '__add__', '__and__', '__array_namespace__', '__contains__', '__copy__',
    '__deepcopy__', '__divmod__', '__eq__', '__floordiv__', '__format__', '__ge__',
    '__getitem__', '__gt__', '__hash__', '__invert__', '__le__', '__lshift__', '__lt__',
    '__matmul__', '__mod__', '__mul__', '__ne__', '__neg__', '__numpy_dtype__', '__or__',
    '__pos__', '__pow__', '__radd__', '__rand__', '__rdivmod__', '__reduce__', '__repr__',
    '__rfloordiv__', '__rlshift__', '__rmatmul__', '__rmod__', '__rmul__', '__ror__',
    '__round__', '__rpow__', '__rrshift__', '__rshift__', '__rsub__', '__rtruediv__',
    '__rxor__', '__setitem__', '__str__', '__sub__', '__truediv__', '__xor__', '_split',
    'addressable_data', 'addressable_shards', 'all', 'any', 'argmax', 'argmin',
    'argpartition', 'argsort', 'astype', 'at', 'byteswap', 'choose', 'clip', 'committed',
    'compress', 'conj', 'conjugate', 'copy', 'copy_to_host_async', 'cumprod', 'cumsum',
    'device', 'diagonal', 'dot', 'dtype', 'flat', 'flatten', 'global_shards', 'imag',
    'is_fully_addressable', 'is_fully_replicated', 'item', 'itemsize', 'mT', 'max', 'mean',
    'min', 'nbytes', 'ndim', 'nonzero', 'prod', 'ptp', 'ravel', 'real', 'repeat', 'reshape',
    'round', 'searchsorted', 'shape', 'sharding', 'size', 'sort', 'squeeze', 'std', 'sum',
    'swapaxes', 'take', 'to_device', 'trace', 'transpose', 'var', 'view']
IMPL_EXTRA_ATTRS = ['__array__', '__dlpack__', '__dlpack_device__', '__iter__', '__len__',
                    '__bool__', '__int__', '__float__', '__complex__', '__index__',
                    'block_until_ready', 'delete', 'is_deleted', 'is_ready', 'devices',
                    'unsafe_buffer_pointer', 'on_device_size_in_bytes', 'tobytes', 'tolist',
                    'clone', 'platform', 'weak_type', 'aval', '_npy_value']
# jax.Array attributes jaxlite deliberately lacks (JAX internals): none left.
MISSING_OK = {'_multi_slice'}


def test_jax_array_attribute_set(jax):
    want = set(dir(jax.Array)) - set(dir(object)) - {"__slots__", "__weakref__"}
    missing = sorted(want - set(dir(jaxlite.Array)) - MISSING_OK)
    assert not missing
    assert set(JAX_ARRAY_ATTRS) - MISSING_OK <= set(dir(jaxlite.Array))


@pytest.mark.parametrize("name", JAX_ARRAY_ATTRS + IMPL_EXTRA_ATTRS)
def test_array_impl_has_attribute(name):
    x = jnp.ones(3)
    assert hasattr(type(x), name) or hasattr(x, name)


@pytest.mark.parametrize("name", [n for n in JAX_ARRAY_ATTRS if n not in (
    "addressable_data", "addressable_shards", "committed", "copy_to_host_async", "device",
    "global_shards", "is_fully_addressable", "is_fully_replicated", "sharding", "to_device",
    "__reduce__", "__format__")])
def test_tracer_has_array_methods(name):
    from jaxlite._src.core.trace import Tracer
    assert hasattr(Tracer, name)


# ----------------------------------------------------------------------------- immutability
IMMUTABLE = ("JAX arrays are immutable and do not support in-place item assignment. Instead of "
             "x[idx] = y, use x = x.at[idx].set(y) or another .at[] method: "
             "https://docs.jax.dev/en/latest/_autosummary/jax.numpy.ndarray.at.html")


def test_setitem_raises_like_jax():
    x = jnp.arange(3.0)
    with pytest.raises(TypeError) as e:
        x[0] = 1.0
    assert str(e.value) == IMMUTABLE

    def f(x):
        x[0] = 1.0
        return x
    with pytest.raises(TypeError) as e:
        jaxlite.jit(f)(x)
    assert str(e.value) == IMMUTABLE


def test_numpy_view_is_read_only():
    x = jnp.arange(3.0)
    v = np.asarray(x)
    assert not v.flags.writeable
    with pytest.raises(ValueError):
        v[0] = 5
    assert float(x[0]) == 0.0
    assert np.asarray(jaxlite.jit(lambda a: a * 2)(jnp.float32(2))).flags.writeable is False
    c = np.array(x)   # np.array copies: writable
    c[0] = 7
    assert float(x[0]) == 0.0


def test_numpy_conversion_to_another_dtype_of_a_scalar_array():
    # a 0-d array whose value is held as a NumPy scalar converts too (as with JAX,
    # np.asarray(x, dtype) of any array gives an ndarray of that dtype)
    for x in (jnp.float32(2.0) * 3, jnp.int32(5) + 1, jnp.arange(3.0)):
        v = np.asarray(x, np.float64)
        assert type(v) is np.ndarray and v.dtype == np.float64 and v.shape == x.shape
        np.testing.assert_array_equal(v, np.asarray(x).astype(np.float64))
    assert np.array(jnp.float32(1.5) * 2, dtype=np.float16).dtype == np.float16


def test_hash_raises():
    with pytest.raises(TypeError, match="unhashable type"):
        hash(jnp.ones(2))
    with pytest.raises(TypeError, match="unhashable type"):
        {jnp.float32(1): 1}


def test_arrays_tracers_and_keys_are_not_hashable_as_in_jax():
    """Arrays, tracers and key arrays are not ``collections.abc.Hashable`` (their
    ``__hash__`` is None), as in JAX: libraries such as funsor pick ``id(x)`` as a cache key
    for values that are not Hashable, and would call ``hash`` otherwise."""
    from collections.abc import Hashable
    real = pytest.importorskip("jax")

    def kinds(api):
        x = api.numpy.ones(3)
        seen = {"array": isinstance(x, Hashable),
                "key": isinstance(api.random.key(0), Hashable)}

        def probe(name):
            def f(t):
                seen[name] = isinstance(t, Hashable)
                return t
            return f
        api.jit(probe("jit"))(x)
        api.grad(lambda t: probe("grad")(t).sum())(x)
        api.vmap(probe("vmap"))(x)
        return seen

    want = kinds(real)
    assert kinds(jaxlite) == want
    assert not any(want.values())
    for v in (jnp.ones(2), jaxlite.random.key(0)):
        with pytest.raises(TypeError, match="unhashable type"):
            hash(v)


# ----------------------------------------------------------------------------- conversions
def test_len_and_iteration():
    x = jnp.arange(3.0)
    assert len(x) == 3
    items = list(x)
    assert [repr(i) for i in items] == [f"Array({v}., dtype=float32)" for v in range(3)]
    rows = list(jnp.ones((2, 3), jnp.int8))
    assert all(isinstance(r, jaxlite.Array) and r.shape == (3,) and r.dtype == np.int8
               for r in rows)
    assert all(r.weak_type for r in jnp.asarray(2.0)[None])
    assert not any(r.weak_type for r in jnp.asarray([1.0, 2.0]))
    with pytest.raises(TypeError, match="len\\(\\) of unsized object"):
        len(jnp.float32(1))
    with pytest.raises(TypeError, match="iteration over a 0-d array"):
        iter(jnp.float32(1))
    a, b = jnp.array([4, 5])
    assert int(a) == 4 and int(b) == 5


def test_scalar_conversions():
    assert int(jnp.float32(2.7)) == 2 and float(jnp.int32(2)) == 2.0
    assert complex(jnp.float32(2)) == 2 + 0j and bool(jnp.array([1.0])) is True
    assert [0, 1, 2][jnp.int32(1)] == 1 and operator.index(jnp.uint8(3)) == 3
    assert hex(jnp.int32(255)) == "0xff"
    assert jnp.float32(2).item() == 2.0 and jnp.bfloat16(2).item() == 2.0
    assert jnp.ones((2, 2), int).tolist() == [[1, 1], [1, 1]]
    assert f"{jnp.float32(2.5):.3f}" == "2.500"
    msg = "Only scalar arrays can be converted to Python scalars; got arr.ndim=1"
    for fn in (int, float, complex):
        with pytest.raises(TypeError, match=msg):
            fn(jnp.array([3.5]))
    for bad in (jnp.float32(1), jnp.array([1]), jnp.array(True)):
        with pytest.raises(TypeError, match="Only integer scalar arrays can be converted to "
                                            "a scalar index."):
            [0, 1, 2][bad]
    with pytest.raises(ValueError, match="The truth value of an array with more than one "
                                         "element is ambiguous"):
        bool(jnp.ones(3))
    with pytest.raises(ValueError, match="The truth value of an empty array is ambiguous"):
        bool(jnp.zeros(0))


def test_round_returns_arrays(jax):
    import jax.numpy as jjnp
    for args in [(2.5,), (2.567, 1), (-3.5,)]:
        want = round(jjnp.float32(args[0]), *args[1:])
        got = round(jnp.float32(args[0]), *args[1:])
        assert isinstance(got, jaxlite.Array)
        assert (got.dtype, got.weak_type, got.shape) == (want.dtype, want.weak_type, want.shape)
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6)


def test_contains():
    x = jnp.array([1.0, 2.0, 3.0])
    assert 2.0 in x and 7 not in x
    with pytest.raises(TypeError, match="Array.__contains__: unsupported operand type"):
        None in x  # noqa: B015
    with pytest.raises(ValueError, match="search array must be one-dimensional"):
        1 in jnp.ones((2, 2))  # noqa: B015


def test_array_and_dlpack_interop():
    x = jnp.array([1.0, 2.0, 3.0])
    np.testing.assert_array_equal(np.asarray(x), [1, 2, 3])
    assert np.asarray(x, dtype=np.float64).dtype == np.float64
    assert np.asarray(jnp.ones(2, jnp.bfloat16)).dtype == ml_dtypes.bfloat16
    np.testing.assert_array_equal(np.from_dlpack(x), [1, 2, 3])
    dev = x.__dlpack_device__()
    assert dev == (1, 0) and dev[0].name == "kDLCPU"
    assert x.tobytes() == np.array([1, 2, 3], np.float32).tobytes()
    assert isinstance(np.ones(3, np.float32) + x, jaxlite.Array)
    assert (np.ones(3) * x).dtype == np.float32


def test_numpy_dtype_protocol_warns():
    with pytest.warns(DeprecationWarning, match="Implicit conversion of an array to a dtype"):
        assert np.dtype(jnp.ones(2, jnp.int8)) == np.int8


@pytest.mark.parametrize("make", [lambda: jnp.array([1.0, 2.0]), lambda: jnp.asarray(1.0),
                                  lambda: jnp.ones(2, jnp.bfloat16),
                                  lambda: jnp.array([1, 2], jnp.int8)])
def test_pickle_and_copy(make):
    x = make()
    for y in (pickle.loads(pickle.dumps(x)), copy.copy(x), copy.deepcopy(x), x.copy(),
              x.clone()):
        assert isinstance(y, jaxlite.Array)
        assert repr(y) == repr(x)


def test_delete():
    x = jnp.ones(2)
    assert not x.is_deleted()
    x.delete()
    assert x.is_deleted()
    with pytest.raises(RuntimeError, match=r"Array has been deleted with shape=float32\[2\]."):
        np.asarray(x)


def test_misc_methods(jax):
    import jax.numpy as jjnp
    calls = [lambda m: m.array([3, 1, 2]).sort(), lambda m: m.array([3, 1, 2]).argsort(),
             lambda m: m.array([3, 1, 2]).argpartition(1)[1:2],
             lambda m: m.arange(5).take(m.array([1, 7]), mode="clip"),
             lambda m: m.arange(9).reshape(3, 3).diagonal(1),
             lambda m: m.arange(4).compress(m.array([1, 0, 1, 0])),
             lambda m: m.arange(4).searchsorted(2),
             lambda m: m.array([0, 1, 2, 0]).choose([m.arange(4), 10 * m.arange(4),
                                                     100 * m.arange(4)], mode="wrap"),
             lambda m: m.array([1, 2 ** 20], m.int32).byteswap(),
             lambda m: m.array([1, 256], m.int16).byteswap(),
             lambda m: m.array([1.5, -2.0], m.float32).byteswap(),
             lambda m: m.arange(6.0).reshape(2, 3).mT, lambda m: m.arange(3.0).T,
             lambda m: m.asarray(1 + 2j).real, lambda m: m.arange(3.0).imag,
             lambda m: m.array([1.0, 2.0, 3.0]).view(m.int32)]
    for c in calls:
        want, got = c(jjnp), c(jnp)
        assert repr(got) == repr(want)
    with pytest.raises(NotImplementedError, match="JAX Arrays do not implement the arr.flat"):
        jnp.ones(2).flat  # noqa: B018
    assert jnp.ones(2).__array_namespace__() is jnp


# ----------------------------------------------------------------------------- devices
def test_device_properties(jax):
    x = jnp.array([1.0, 2.0, 3.0])
    jx = jax.numpy.array([1.0, 2.0, 3.0])
    assert len(x.devices()) == 1 and x.device in x.devices()
    assert x.sharding.device_set == x.devices()
    assert x.is_fully_addressable and x.is_fully_replicated
    shards = x.addressable_shards
    assert len(shards) == 1 and shards[0].index == (slice(None),) and shards[0].replica_id == 0
    assert shards[0].device == x.device
    np.testing.assert_array_equal(np.asarray(shards[0].data), [1, 2, 3])
    np.testing.assert_array_equal(np.asarray(x.addressable_data(0)), [1, 2, 3])
    assert len(x.global_shards) == 1
    assert x.committed == jx.committed
    assert jaxlite.device_put(x).committed == jax.device_put(jx).committed
    d = jaxlite.devices()[0]
    assert jaxlite.device_put(x, d).committed
    assert x.to_device(d).device == d
    assert x.block_until_ready() is x and x.is_ready() and x.platform() == "cpu"
    assert x.itemsize == 4 and x.nbytes == 12 and x.on_device_size_in_bytes() == 12
    x.copy_to_host_async()


# ----------------------------------------------------------------------------- .at[]
def test_at_methods_and_flags(jax):
    import jax.numpy as jjnp
    ref_methods = sorted(n for n in dir(jjnp.ones(2).at[0]) if not n.startswith("_"))
    ours = [n for n in ref_methods if not hasattr(jnp.ones(2).at[0], n)]
    assert not ours
    calls = [lambda m: m.arange(3.0).at[5].set(9.0, mode="drop"),
             lambda m: m.arange(3.0).at[5].get(mode="fill", fill_value=-1.0),
             lambda m: m.arange(3.0).at[m.array([0, 1])].add(
                 1.0, indices_are_sorted=True, unique_indices=True),
             lambda m: m.arange(3.0).at[0].apply(lambda v: v * 10),
             lambda m: m.arange(3.0).at[-1].mul(3.0, mode="promise_in_bounds"),
             lambda m: m.arange(4).at[m.array([1, 1])].min(-1, indices_are_sorted=True),
             lambda m: m.arange(4.0).at[1:].divide(2.0),
             lambda m: m.arange(4.0).at[2].power(2.0)]
    for c in calls:
        assert repr(c(jnp)) == repr(c(jjnp))
    if repr(jnp.asarray(1.0).at[()].set(5)) != repr(jjnp.asarray(1.0).at[()].set(5)):
        pytest.xfail("x.at[].set on a weak array drops weak_type (index_update.py)")
    with pytest.raises(TypeError, match="unexpected keyword argument 'wrong'"):
        jnp.ones(2).at[0].set(1, wrong=1)


# ----------------------------------------------------------------------------- operators
OPS = {"add": operator.add, "sub": operator.sub, "mul": operator.mul,
       "truediv": operator.truediv, "floordiv": operator.floordiv, "mod": operator.mod,
       "pow": operator.pow, "and": operator.and_, "or": operator.or_, "xor": operator.xor,
       "lshift": operator.lshift, "rshift": operator.rshift, "eq": operator.eq,
       "ne": operator.ne, "lt": operator.lt, "le": operator.le, "gt": operator.gt,
       "ge": operator.ge, "matmul": operator.matmul, "divmod": divmod}
OP_DTYPES = ["bool", "int8", "int32", "uint8", "uint32", "float16", "bfloat16", "float32",
             "complex64"]
SCALARS = [("py_int", 2), ("py_float", 2.0), ("py_complex", 2j), ("py_bool", True)]
# Known mismatches owned by jaxlite/_src/numpy/ufuncs.py (none left: floor_divide keeps weak
# ints weak, concrete 0-d int exponents take integer_pow and shifts promote bool to int32).
_UFUNC_KNOWN = set()


def _operands(mod):
    out = [(n, mod.asarray(np.array([1, 2], _np(n)))) for n in OP_DTYPES]
    return out + [("weak_int", mod.asarray(2)), ("weak_float", mod.asarray(2.0))]


def _result(f, jax=None):
    """Result types of ``f()``: per output (dtype, weak_type, is an array), or the error
    class. With ``jax``, ``f`` runs under ``jax.eval_shape`` (JAX's types without compiling
    a kernel per dtype pair)."""
    try:
        r = jax.eval_shape(f) if jax is not None else f()
    except Exception as e:  # noqa: BLE001 - compared with JAX's exception type
        return ("err", type(e).__name__)
    rs = r if isinstance(r, tuple) else (r,)
    array_type = jax.ShapeDtypeStruct if jax is not None else ArrayImpl
    return tuple((np.dtype(x.dtype), bool(x.weak_type), type(x) is array_type) for x in rs)


@pytest.mark.parametrize("op", sorted(OPS))
def test_operator_result_types_vs_jax(jax_x64, op):
    fn = OPS[op]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        js, ls = _operands(jax_x64.numpy), _operands(jnp)
        bad = []
        for (na, ja), (_, la) in zip(js, ls):
            for (nb, jb), (_, lb) in zip(js + SCALARS, ls + SCALARS):
                for rev in (False, True):
                    want = _result(lambda: fn(jb, ja) if rev else fn(ja, jb), jax_x64)
                    got = _result(lambda: fn(lb, la) if rev else fn(la, lb))
                    if want != got:
                        bad.append((na, nb, rev, want, got))
    if bad and op in _UFUNC_KNOWN:
        pytest.xfail(f"{len(bad)} known ufunc mismatches, e.g. {bad[0]}")
    assert not bad


@pytest.mark.parametrize("op", ["neg", "pos", "abs", "invert"])
def test_unary_operator_result_types_vs_jax(jax_x64, op):
    fn = {"neg": operator.neg, "pos": operator.pos, "abs": abs, "invert": operator.invert}[op]
    js, ls = _operands(jax_x64.numpy), _operands(jnp)
    for (na, ja), (_, la) in zip(js, ls):
        assert _result(lambda: fn(la)) == _result(lambda: fn(ja), jax_x64), na


def test_foreign_operands():
    x = jnp.array([1.0, 2.0])
    assert (x == None) is False and (x != None) is True  # noqa: E711
    assert (x == "a") is False
    with pytest.raises(TypeError, match="'<' not supported between instances of 'ArrayImpl' "
                                        "and 'str'"):
        x < "a"  # noqa: B015
    with pytest.raises(TypeError, match="unsupported operand type\\(s\\) for \\+: "
                                        "'ArrayImpl' and 'NoneType'"):
        x + None  # noqa: B018
    with pytest.raises(TypeError, match="unsupported operand type\\(s\\) for \\+: 'list' and "
                                        "'ArrayImpl'"):
        [1, 2] + x  # noqa: B018
    with pytest.raises(TypeError, match="unsupported operand type\\(s\\) for ==: 'ArrayImpl' "
                                        "and 'tuple'"):
        x == (1, 2)  # noqa: B015

    class HasJaxArray:
        def __jax_array__(self):
            return jnp.array([10.0, 20.0])
    np.testing.assert_array_equal(np.asarray(x + HasJaxArray()), [11, 22])
    np.testing.assert_array_equal(np.asarray(HasJaxArray() * x), [10, 40])


def test_isinstance():
    x = jnp.ones(2)
    assert isinstance(x, jaxlite.Array) and not isinstance(np.ones(2), jaxlite.Array)
    assert isinstance(x, jnp.ndarray) and type(x).__name__ == "ArrayImpl"
    seen = []
    jaxlite.jit(lambda t: seen.append(isinstance(t, jaxlite.Array)) or t)(x)
    assert seen == [True]
