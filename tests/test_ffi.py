"""jax.ffi on jaxlite: C++ handlers compiled against jaxlib's XLA FFI headers run unchanged.

``tests/ffi/handlers.cc`` is compiled once per session with the system C++ compiler against
``<jaxlib>/include`` (the tests skip without a compiler or jaxlib's headers). The handlers
are checked against NumPy references eagerly, under jit and under vmap (every vmap_method),
with attributes of every kind and with errors; and, when the real ``jax`` is installed,
against JAX running the same shared library.
"""
import ctypes
import importlib.util
import os
import shutil
import subprocess
import threading
import warnings

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite.errors import JaxRuntimeError

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.join(HERE, "ffi", "handlers.cc")
HANDLERS = ["RmsNorm", "RmsNormFwd", "Attrs", "Fail", "SumArgs", "Count", "ContextProbe",
            "StreamProbe", "AsyncScale", "AsyncSlow"]
VMAP_METHODS = ["sequential", "sequential_unrolled", "expand_dims", "broadcast_all",
                "legacy_vectorized"]


def _jaxlib_include():
    spec = importlib.util.find_spec("jaxlib")
    if spec is None or not spec.submodule_search_locations:
        return None
    inc = os.path.join(list(spec.submodule_search_locations)[0], "include")
    return inc if os.path.exists(os.path.join(inc, "xla", "ffi", "api", "ffi.h")) else None


@pytest.fixture(scope="session")
def lib(tmp_path_factory):
    cxx = shutil.which(os.environ.get("CXX", "g++")) or shutil.which("c++")
    if cxx is None:
        pytest.skip("no C++ compiler")
    inc = _jaxlib_include()
    if inc is None:
        pytest.skip("jaxlib's XLA FFI headers are not installed")
    out = str(tmp_path_factory.mktemp("ffi") / "handlers.so")
    proc = subprocess.run([cxx, "-std=c++17", "-O2", "-shared", "-fPIC", "-w", "-I", inc,
                           SOURCE, "-o", out, "-lpthread"], capture_output=True, text=True,
                          timeout=300)
    if proc.returncode != 0:
        pytest.fail("compiling the FFI test handlers failed:\n" + proc.stderr[-3000:])
    lib = ctypes.CDLL(out)
    for name in HANDLERS:
        jax.ffi.register_ffi_target(name.lower(), jax.ffi.pycapsule(getattr(lib, name)),
                                    platform="cpu")
    lib.counter_value.restype = ctypes.c_int64
    lib.layout_probe.restype = ctypes.c_int64
    lib.CounterStateTypeId.restype = ctypes.c_void_p
    lib.CounterStateTypeInfo.restype = ctypes.c_void_p
    _register_stateful(jax, lib)
    return lib


def _register_stateful(api, lib):
    api.ffi.register_ffi_type("counter_state", {
        "type_id": api.ffi.pycapsule(lib.CounterStateTypeId()),
        "type_info": api.ffi.pycapsule(lib.CounterStateTypeInfo())})
    api.ffi.register_ffi_target("counter", {
        "instantiate": api.ffi.pycapsule(lib.CounterInstantiate),
        "execute": api.ffi.pycapsule(lib.CounterExecute)})


@pytest.fixture(scope="session")
def rjax(lib):
    """The real JAX, with the same handlers registered."""
    real = pytest.importorskip("jax")
    real.devices()    # so that registrations reach XLA at once, types before handlers
    _register_stateful(real, lib)
    for name in HANDLERS:
        real.ffi.register_ffi_target(name.lower(), real.ffi.pycapsule(getattr(lib, name)),
                                     platform="cpu")
    return real


def rms_norm_ref(x, eps):
    x = np.asarray(x, np.float32)
    scale = 1 / np.sqrt(np.mean(np.square(x), axis=-1, keepdims=True) + np.float32(eps))
    return x * scale


def rms_norm(x, eps=1e-5, vmap_method=None, api=jax):
    f = api.ffi.ffi_call("rmsnorm", api.ShapeDtypeStruct(x.shape, x.dtype),
                         vmap_method=vmap_method)
    return f(x, eps=np.float32(eps))


X = np.random.RandomState(0).randn(5, 3, 8).astype(np.float32)


# ----------------------------------------------------------------------------- the ABI

def test_abi_layout_matches_headers(lib):
    """jaxlite's ctypes structs have the sizes and offsets the C headers give."""
    from jaxlite._src.runtime import xla_ffi as abi
    buf = (ctypes.c_int64 * 64)()
    n = lib.layout_probe(buf)
    got = list(buf[:n])
    S = abi.struct_size
    want = [S(abi.Api), abi.Api.api_version.offset, abi.Api.XLA_FFI_Error_Create.offset,
            abi.Api.XLA_FFI_Stream_Get.offset, abi.Api.XLA_FFI_DeviceOrdinal_Get.offset,
            abi.CALL_FRAME_SIZE, abi.CallFrame.stage.offset, abi.CallFrame.args.offset,
            abi.CallFrame.rets.offset, abi.CallFrame.attrs.offset, abi.CallFrame.future.offset,
            S(abi.Buffer, "dims"), abi.Buffer.dims.offset, S(abi.Args, "args"),
            S(abi.Rets, "rets"), S(abi.Attrs, "attrs"), ctypes.sizeof(abi.Scalar),
            ctypes.sizeof(abi.Array), ctypes.sizeof(abi.ByteSpan), abi.METADATA_SIZE,
            ctypes.sizeof(abi.Metadata), S(abi.MetadataExtension, "metadata"),
            S(abi.ErrorCreateArgs, "errc"), S(abi.HandlerRegisterArgs, "traits"),
            S(abi.StateSetArgs, "state"), abi.API_MAJOR, abi.API_MINOR]
    assert got == want


def test_registered_target_metadata(lib):
    from jaxlite._src.runtime.xla_ffi_frame import registered_targets
    t = registered_targets()["rmsnorm"]
    assert t.version == (0, 3) and t.platform == "host"


# ----------------------------------------------------------------------------- calls

@pytest.mark.parametrize("shape", [(8,), (3, 8), (2, 3, 8), (0, 8)])
def test_rms_norm_eager(lib, shape):
    x = np.random.RandomState(1).randn(*shape).astype(np.float32)
    y = rms_norm(x)
    assert isinstance(y, jax.Array) and y.dtype == np.float32 and y.shape == shape
    np.testing.assert_allclose(np.asarray(y), rms_norm_ref(x, 1e-5), rtol=1e-5, atol=1e-6)


def test_rms_norm_jit_and_jaxpr(lib):
    f = jax.jit(lambda x: rms_norm(x, 1e-3) * 2)
    np.testing.assert_allclose(np.asarray(f(X)), 2 * rms_norm_ref(X, 1e-3), rtol=1e-5,
                               atol=1e-6)
    np.testing.assert_allclose(np.asarray(f(X[0])), 2 * rms_norm_ref(X[0], 1e-3), rtol=1e-5,
                               atol=1e-6)
    text = str(jax.make_jaxpr(lambda x: rms_norm(x, 1e-5))(X[0]))
    assert "ffi_call[" in text and "attributes=(('eps', np.float32(1e-05)),)" in text
    assert "target_name=rmsnorm" in text and "input_layouts=((1, 0),)" in text


def test_jaxpr_text_matches_jax(rjax):
    # conftest makes the reference JAX print its jaxprs with NumPy 1's scalar repr
    # (tests/jax_print_compat.py): print jaxlite's the same way here
    f = lambda api: (lambda x: rms_norm(x, 1e-5, "broadcast_all", api=api))  # noqa: E731
    with np.printoptions(legacy="1.25"):
        assert str(jax.make_jaxpr(f(jax))(X)) == str(rjax.make_jaxpr(f(rjax))(X))
    g = lambda api: api.vmap(lambda r: api.ffi.ffi_call(  # noqa: E731
        "rmsnorm", api.ShapeDtypeStruct(r.shape, r.dtype), vmap_method="sequential")(
            r, eps=np.float32(1e-5)))
    with np.printoptions(legacy="1.25"):
        assert str(jax.make_jaxpr(g(jax))(X[0])) == str(rjax.make_jaxpr(g(rjax))(X[0]))


def test_matches_jax_eager_and_jit(rjax):
    for api in (jax, rjax):
        assert api.ffi.ffi_call is not None
    np.testing.assert_array_equal(np.asarray(rms_norm(X)), np.asarray(rms_norm(X, api=rjax)))
    np.testing.assert_array_equal(
        np.asarray(jax.jit(lambda x: rms_norm(x))(X)),
        np.asarray(rjax.jit(lambda x: rms_norm(x, api=rjax))(X)))


@pytest.mark.parametrize("method", VMAP_METHODS)
def test_vmap_methods(lib, method):
    row = lambda r: rms_norm(r, 1e-5, method)  # noqa: E731
    got = jax.vmap(jax.vmap(row))(X)
    np.testing.assert_allclose(np.asarray(got), rms_norm_ref(X, 1e-5), rtol=1e-5, atol=1e-6)
    got = jax.jit(jax.vmap(row, in_axes=1, out_axes=1))(X)
    np.testing.assert_allclose(np.asarray(got), rms_norm_ref(X, 1e-5), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("method", VMAP_METHODS)
def test_vmap_unbatched_operand(lib, rjax, method):
    """An unbatched operand is broadcast (broadcast_all), given a unit batch dimension
    (expand_dims) or passed as is; results and errors as JAX's."""
    a, b = np.arange(12.0, dtype=np.float32).reshape(3, 4), np.ones(4, np.float32)

    def run(api):
        f = api.ffi.ffi_call("sumargs", api.ShapeDtypeStruct((4,), np.float64),
                             vmap_method=method)
        try:
            return np.asarray(api.vmap(lambda x, y: f(x, y, scale=2.0),
                                       in_axes=(0, None))(a, b))
        except Exception as e:   # noqa: BLE001 -- compared below
            return type(e).__name__, str(e)
    got, want = run(jax), run(rjax)
    if isinstance(want, tuple):
        assert got == want
    else:
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(got, 2 * (a + b))


@pytest.mark.parametrize("method", VMAP_METHODS)
def test_vmap_matches_jax(rjax, method):
    got = jax.vmap(lambda r: rms_norm(r, 1e-5, method))(X)
    want = rjax.vmap(lambda r: rms_norm(r, 1e-5, method, api=rjax))(X)
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


def test_vmap_method_none_raises(lib):
    with pytest.raises(NotImplementedError, match="Got vmap_method=None"):
        jax.vmap(lambda r: rms_norm(r))(X)
    with pytest.raises(ValueError, match="vmap_method must be on of the allowed"):
        jax.ffi.ffi_call("rmsnorm", jax.ShapeDtypeStruct((3,), np.float32), vmap_method="x")


def test_not_differentiable(lib):
    with pytest.raises(ValueError, match="The FFI call to `rmsnorm` cannot be differentiated"):
        jax.grad(lambda x: rms_norm(x).sum())(X[0])
    with pytest.raises(ValueError, match="cannot be differentiated"):
        jax.jvp(rms_norm, (X[0],), (X[0],))


def test_multiple_results(lib):
    x = X[0]
    outs = [jax.ShapeDtypeStruct(x.shape, x.dtype), jax.ShapeDtypeStruct(x.shape[:1], x.dtype)]
    y, res = jax.ffi.ffi_call("rmsnormfwd", outs)(x, eps=np.float32(1e-5))
    assert isinstance(jax.ffi.ffi_call("rmsnormfwd", outs)(x, eps=np.float32(1e-5)), list)
    assert isinstance(jax.ffi.ffi_call("rmsnormfwd", tuple(outs))(x, eps=np.float32(1e-5)),
                      tuple)
    np.testing.assert_allclose(np.asarray(y), rms_norm_ref(x, 1e-5), rtol=1e-5, atol=1e-6)
    want = 1 / np.sqrt(np.mean(x * x, axis=-1) + np.float32(1e-5))
    np.testing.assert_allclose(np.asarray(res), want, rtol=1e-5)
    y2, res2 = jax.jit(lambda x: jax.ffi.ffi_call("rmsnormfwd", outs)(x, eps=np.float32(1e-5)))(x)
    np.testing.assert_array_equal(np.asarray(y2), np.asarray(y))


def test_remaining_args_any_dtype(lib):
    f = jax.ffi.ffi_call("sumargs", jax.ShapeDtypeStruct((3,), np.float64))
    out = f(np.ones(3, np.float32), np.arange(3, dtype=np.int32), scale=2.0)
    assert out.dtype == np.float64     # as declared, even with x64 off (as JAX)
    np.testing.assert_array_equal(np.asarray(out), [2.0, 4.0, 6.0])
    assert np.asarray(f(scale=1.0)).tolist() == [0.0, 0.0, 0.0]
    with pytest.raises(JaxRuntimeError, match="INVALID_ARGUMENT: unsupported dtype for "
                                              "argument 0"):
        f(np.ones(3, np.float16), scale=1.0)


# ----------------------------------------------------------------------------- attributes

ATTRS = dict(i64=np.int64(-7), i32=np.int32(5), u8=np.uint8(200), f32=np.float32(1.5),
             f64=np.float64(2.25), flag=True, name="hello",
             arr=np.array([1, 2, 3], np.int64), farr=np.array([0.5, 0.25], np.float32),
             dict={"a": np.int64(4), "b": 0.125})
ATTRS_WANT = [-7, 5, 200, 1.5, 2.25, 1, 5, ord("h"), 6, 3, 0.75, 4, 0.125, 2]


def _attrs_call(api=jax, **kw):
    return api.ffi.ffi_call("attrs", api.ShapeDtypeStruct((14,), np.float64))(**kw)


def test_attributes_every_kind(lib):
    np.testing.assert_array_equal(np.asarray(_attrs_call(**ATTRS)), ATTRS_WANT)
    got = jax.jit(lambda: _attrs_call(**ATTRS))()
    np.testing.assert_array_equal(np.asarray(got), ATTRS_WANT)
    kw = dict(ATTRS, i64=3, f64=0.5, flag=np.bool_(False), name=b"xy",
              arr=np.array([[1, 2], [3, 4]], np.int64))   # Python int/float: int64/float64
    want = list(ATTRS_WANT)
    want[0], want[4], want[5], want[6], want[7], want[8], want[9] = 3, 0.5, 0, 2, ord("x"), 10, 4
    np.testing.assert_array_equal(np.asarray(_attrs_call(**kw)), want)


BAD_ATTRS = [
    ("i32", 3, JaxRuntimeError, "Wrong scalar data type: expected S32 but got S64"),
    ("f32", np.float16(1), JaxRuntimeError,
     "Unsupported float attribute bit width for attribute: f32"),
    ("dict", {"a": np.int64(4)}, JaxRuntimeError, "INTERNAL: Unexpected attribute: b"),
    ("arr", [1, 2], TypeError, "Non-hashable keyword argument to ffi_call arr"),
    ("arr", (1, 2), JaxRuntimeError, "Unsupported attribute type for attribute: arr"),
    ("arr", np.array([True]), JaxRuntimeError,
     "Unsupported array element type for attribute: arr"),
    ("i64", np.complex64(1), TypeError, "Unsupported scalar attribute type"),
]


@pytest.mark.parametrize("name,value,err,msg", BAD_ATTRS)
def test_bad_attributes(lib, name, value, err, msg):
    with pytest.raises(err, match=msg.replace("(", r"\(").replace(")", r"\)")):
        _attrs_call(**dict(ATTRS, **{name: value}))


def test_attributes_match_jax(rjax):
    np.testing.assert_array_equal(np.asarray(_attrs_call(**ATTRS)),
                                  np.asarray(_attrs_call(rjax, **ATTRS)))
    for name, value, err, msg in BAD_ATTRS:
        kw = dict(ATTRS, **{name: value})
        with pytest.raises(Exception) as want:
            _attrs_call(rjax, **kw)
        with pytest.raises(Exception) as got:
            _attrs_call(**kw)
        assert type(got.value).__name__ == type(want.value).__name__
        assert str(got.value).startswith(str(want.value).split(" (")[0].rstrip(".")[:60])


def test_missing_and_wrongly_typed_attribute(lib):
    f = jax.ffi.ffi_call("rmsnorm", jax.ShapeDtypeStruct(X.shape, X.dtype))
    with pytest.raises(JaxRuntimeError, match=r"Wrong number of attributes: expected 1 but "
                                              r"got 0"):
        f(X)
    with pytest.raises(JaxRuntimeError, match="Wrong scalar data type: expected F32 but got "
                                              "F64"):
        f(X, eps=1e-5)


def test_traced_attribute_is_an_error(lib):
    f = jax.ffi.ffi_call("rmsnorm", jax.ShapeDtypeStruct(X.shape, X.dtype))
    with pytest.raises(TypeError, match="Non-hashable keyword argument to ffi_call eps"):
        jax.jit(lambda x, e: f(x, eps=e))(X, np.float32(1e-5))


# ----------------------------------------------------------------------------- errors

def test_handler_error_raised_with_its_message(lib):
    f = jax.ffi.ffi_call("fail", jax.ShapeDtypeStruct((3,), np.float32))
    ok = np.array([1.0, 4.0, 9.0], np.float32)
    bad = np.array([1.0, -2.0, 3.0], np.float32)
    with pytest.raises(JaxRuntimeError) as e:
        f(bad)
    assert str(e.value) == "INVALID_ARGUMENT: negative input at index 1"
    with pytest.raises(JaxRuntimeError, match="negative input at index 1"):
        jax.jit(f)(bad)
    np.testing.assert_array_equal(np.asarray(f(ok)), [1.0, 2.0, 3.0])   # still usable
    np.testing.assert_array_equal(np.asarray(jax.jit(f)(ok)), [1.0, 2.0, 3.0])
    from jaxlite._src.runtime import xla_ffi
    assert not xla_ffi._errors   # every error the handler created was destroyed


def test_handler_error_matches_jax(rjax):
    bad = np.array([1.0, -2.0, 3.0], np.float32)
    with pytest.raises(Exception) as want:
        rjax.ffi.ffi_call("fail", rjax.ShapeDtypeStruct((3,), np.float32))(bad)
    with pytest.raises(JaxRuntimeError) as got:
        jax.ffi.ffi_call("fail", jax.ShapeDtypeStruct((3,), np.float32))(bad)
    assert str(got.value) == str(want.value)


def test_unregistered_target(lib):
    f = jax.ffi.ffi_call("no_such_target", jax.ShapeDtypeStruct((3,), np.float32))
    msg = "NOT_FOUND: No FFI handler registered for no_such_target on a platform Host"
    with pytest.raises(JaxRuntimeError, match=msg):
        f(np.ones(3, np.float32))
    with pytest.raises(JaxRuntimeError, match=msg):
        jax.jit(f)(np.ones(3, np.float32))
    jax.make_jaxpr(f)(np.ones(3, np.float32))    # tracing alone does not look it up


def test_wrong_operands_are_errors_not_crashes(lib):
    f = jax.ffi.ffi_call("count", jax.ShapeDtypeStruct((3,), np.float32))
    with pytest.raises(JaxRuntimeError, match="Wrong buffer dtype: expected F32 but got S32"):
        f(np.ones(3, np.int32))
    with pytest.raises(JaxRuntimeError, match="bad operands at: 1.*\n.*\nWrong buffer dtype: "
                                              "expected F32 but got S32"):
        jax.ffi.ffi_call("count", jax.ShapeDtypeStruct((3,), np.int32))(np.ones(3, np.float32))
    with pytest.raises(JaxRuntimeError, match="Wrong number of arguments: expected 1 but got "
                                              "2"):
        f(np.ones(3, np.float32), np.ones(3, np.float32))
    with pytest.raises(JaxRuntimeError, match="Wrong number of results: expected 1 but got 2"):
        jax.ffi.ffi_call("count", [jax.ShapeDtypeStruct((3,), np.float32)] * 2)(
            np.ones(3, np.float32))
    with pytest.raises(TypeError, match="XLA FFI buffers cannot hold"):
        jax.ffi.ffi_call("count", jax.ShapeDtypeStruct((3,), np.dtype("U3")))(
            np.ones(3, np.float32))


def test_results_start_zeroed(lib):
    """A handler that writes fewer elements than declared leaves zeros, not stale memory
    (JAX hands out uninitialised buffers)."""
    out = jax.ffi.ffi_call("count", jax.ShapeDtypeStruct((3,), np.float32))(np.float32(2.0))
    np.testing.assert_array_equal(np.asarray(out), [2.0, 0.0, 0.0])


def test_register_errors(lib):
    with pytest.raises(JaxRuntimeError, match="Unsupported custom call target type for "
                                              "api_version=1"):
        jax.ffi.register_ffi_target("bad", lib.RmsNorm)
    with pytest.raises(JaxRuntimeError, match="API version 3 is not supported"):
        jax.ffi.register_ffi_target("bad", jax.ffi.pycapsule(lib.RmsNorm), api_version=3)
    with pytest.raises(JaxRuntimeError, match="api_version=0"):
        jax.ffi.register_ffi_target("bad", jax.ffi.pycapsule(lib.RmsNorm), api_version=0)
    # a function that is not an FFI handler: it reports no metadata (API version 0.0)
    lib.counter_reset()
    lib.counter_value.restype = ctypes.c_int64
    with pytest.raises(JaxRuntimeError, match=r"handler's API version \(0.0\) is "
                                              "incompatible"):
        jax.ffi.register_ffi_target("not_a_handler", jax.ffi.pycapsule(lib.counter_value))
    with pytest.raises(JaxRuntimeError, match="must provide an execute implementation"):
        jax.ffi.register_ffi_target("bad", {"prepare": jax.ffi.pycapsule(lib.RmsNorm)})
    with pytest.raises(JaxRuntimeError, match="Unsupported FFI stage"):
        jax.ffi.register_ffi_target("bad", {"run": jax.ffi.pycapsule(lib.RmsNorm)})
    with pytest.raises(ValueError, match="null function pointer"):
        jax.ffi.pycapsule(0)
    from jaxlite._src.runtime.xla_ffi_frame import registered_targets
    assert "bad" not in registered_targets() and "not_a_handler" not in registered_targets()
    # registering the same handler again is fine, another one under the name is not
    jax.ffi.register_ffi_target("rmsnorm", jax.ffi.pycapsule(lib.RmsNorm))
    with pytest.raises(JaxRuntimeError, match="Duplicate FFI handler registration"):
        jax.ffi.register_ffi_target("rmsnorm", jax.ffi.pycapsule(lib.Fail))
    # a dict of stages
    jax.ffi.register_ffi_target("rmsnorm_stages", {"execute": jax.ffi.pycapsule(lib.RmsNorm)})
    np.testing.assert_array_equal(
        np.asarray(jax.ffi.ffi_call("rmsnorm_stages", jax.ShapeDtypeStruct(X.shape, X.dtype))(
            X, eps=np.float32(1e-5))), np.asarray(rms_norm(X)))


def test_gpu_target_is_not_found_on_cpu(lib):
    jax.ffi.register_ffi_target("rms_gpu_only", jax.ffi.pycapsule(lib.RmsNorm), platform="gpu")
    with pytest.raises(JaxRuntimeError, match="No FFI handler registered for rms_gpu_only"):
        jax.ffi.ffi_call("rms_gpu_only", jax.ShapeDtypeStruct(X.shape, X.dtype))(
            X, eps=np.float32(1e-5))


# ----------------------------------------------------------------------------- options

def test_side_effect_keeps_call_under_jit(lib):
    c = jax.ffi.ffi_call("count", jax.ShapeDtypeStruct((3,), np.float32), has_side_effect=True)
    pure = jax.ffi.ffi_call("count", jax.ShapeDtypeStruct((3,), np.float32))
    x = np.ones(3, np.float32)
    lib.counter_reset()
    jax.jit(lambda x: (c(x), x + 1)[1])(x)
    assert lib.counter_value() == 1
    jax.jit(lambda x: (pure(x), x + 1)[1])(x)      # unused and pure: removed
    assert lib.counter_value() == 1
    jax.jit(lambda x: pure(x) + pure(x))(x)         # equal pure calls: merged (as XLA)
    assert lib.counter_value() == 2
    jax.jit(lambda x: c(x) + c(x))(x)               # side effects: both kept
    assert lib.counter_value() == 4
    from jaxlite._src.core.ir import jaxpr_effects
    effs = jaxpr_effects(jax.make_jaxpr(c)(x).jaxpr)
    assert [str(e) for e in effs] == ["FFI"]
    assert not jaxpr_effects(jax.make_jaxpr(pure)(x).jaxpr)


def test_input_output_aliases(lib):
    x = np.arange(3.0, dtype=np.float32)
    xa = jnp.asarray(x)
    f = jax.ffi.ffi_call("count", jax.ShapeDtypeStruct((3,), np.float32),
                         input_output_aliases={0: 0})
    np.testing.assert_array_equal(np.asarray(f(xa)), x)
    np.testing.assert_array_equal(np.asarray(jax.jit(f)(xa)), x)
    np.testing.assert_array_equal(np.asarray(xa), x)        # the input is not modified
    with pytest.raises(ValueError, match="referring to an input with abstract value "
                                         r"float32\[4\] and an output with a different"):
        f(np.arange(4.0, dtype=np.float32))
    with pytest.raises(ValueError, match="outside the range"):
        jax.ffi.ffi_call("count", jax.ShapeDtypeStruct((3,), np.float32),
                         input_output_aliases={1: 0})(x)


@pytest.mark.parametrize("layout", [(1, 0), (0, 1)])
def test_layouts(lib, layout):
    """The handler sees the operand in the requested dimension order (dims stay logical);
    the result is read back from that order, as XLA relayouts."""
    x = X[0]
    f = jax.ffi.ffi_call("rmsnorm", jax.ShapeDtypeStruct(x.shape, x.dtype),
                         input_layouts=[layout], output_layouts=layout)
    got = f(x, eps=np.float32(1e-5))
    if layout == (0, 1):
        want = rms_norm_ref(x, 1e-5)
    else:   # column-major memory, read in rows of x.shape[-1] by the handler
        mem = rms_norm_ref(x.T.reshape(x.shape), 1e-5).reshape(-1)
        want = mem.reshape(x.shape[::-1]).T
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(np.asarray(jax.jit(lambda x: f(x, eps=np.float32(1e-5)))(x)),
                                  np.asarray(got))


def test_layouts_match_jax(rjax):
    x = X[0]

    def run(api):
        f = api.ffi.ffi_call("rmsnorm", api.ShapeDtypeStruct(x.shape, x.dtype),
                             input_layouts=[(1, 0)], output_layouts=(1, 0))
        return np.asarray(f(x, eps=np.float32(1e-5)))
    np.testing.assert_array_equal(run(jax), run(rjax))


def test_seed_one_shot_form(lib):
    """Seed 003 (older JAX): ``from jax.extend.ffi import ffi_call`` and
    ``ffi_call('target', out_type, x, parameter=jnp.float32(0.5))``."""
    from jaxlite.extend.ffi import ffi_call, register_ffi_target  # noqa: F401
    out_type = jax.ShapeDtypeStruct(X.shape, X.dtype)
    with pytest.warns(DeprecationWarning, match="Calling ffi_call directly"):
        y = ffi_call("rmsnorm", out_type, X, eps=jnp.float32(0.5))
    np.testing.assert_allclose(np.asarray(y), rms_norm_ref(X, 0.5), rtol=1e-5, atol=1e-6)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        y = jax.jit(lambda x: ffi_call("rmsnorm", out_type, x, eps=np.float32(0.5)))(X)
    np.testing.assert_allclose(np.asarray(y), rms_norm_ref(X, 0.5), rtol=1e-5, atol=1e-6)
    import jaxlite.extend
    assert jaxlite.extend.ffi.ffi_call is jax.ffi.ffi_call


def test_include_dir_and_lowering(lib):
    assert os.path.exists(os.path.join(jax.ffi.include_dir(), "xla", "ffi", "api", "ffi.h"))
    rule = jax.ffi.ffi_lowering("rmsnorm")

    class Ctx:
        avals_out = [jax.ShapeDtypeStruct(X.shape, X.dtype)]
    y, = rule(Ctx(), X, eps=np.float32(1e-5))
    np.testing.assert_array_equal(np.asarray(y), np.asarray(rms_norm(X)))
    y, = jax.ffi.ffi_lowering("rmsnorm", backend_config={"eps": np.float32(1e-5)})(Ctx(), X)
    np.testing.assert_array_equal(np.asarray(y), np.asarray(rms_norm(X)))
    with pytest.raises(ValueError, match="not supported after jaxlib"):
        jax.ffi.register_ffi_type_id("t", None)


# ----------------------------------------------------------------------------- context

def test_execution_context(lib):
    f = jax.ffi.ffi_call("contextprobe", jax.ShapeDtypeStruct((4,), np.int64))
    a, b = np.asarray(f()), np.asarray(f())
    assert a[0] > 0 and b[0] > a[0]            # a fresh run id per execution
    assert a[1:].tolist() == [0, 1, 1]         # device 0, one thread, the task ran


def test_stream_is_unavailable_cleanly(lib):
    f = jax.ffi.ffi_call("streamprobe", jax.ShapeDtypeStruct((1,), np.float32))
    with pytest.raises(JaxRuntimeError, match="Failed to get platform stream"):
        f()


def test_concurrent_calls(lib):
    """Several threads calling one call site share nothing mutable."""
    f = jax.jit(lambda x: rms_norm(x))
    want = rms_norm_ref(X, 1e-5)
    errors = []

    def work():
        try:
            for _ in range(50):
                np.testing.assert_allclose(np.asarray(f(X)), want, rtol=1e-5, atol=1e-6)
        except Exception as e:   # noqa: BLE001
            errors.append(e)
    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert not any(t.is_alive() for t in threads) and not errors


# ----------------------------------------------------------------------------- stages

def _counter_runs(api):
    c = api.ffi.ffi_call("counter", api.ShapeDtypeStruct((1,), np.int64),
                         has_side_effect=True)
    eager = [int(c(start=100)[0]) for _ in range(3)]
    f, g = api.jit(lambda: c(start=10)), api.jit(lambda: c(start=10))
    return eager, [int(f()[0]) for _ in range(3)], [int(g()[0]) for _ in range(2)]


def test_stateful_handler(lib):
    """The instantiate stage creates a state (XLA_FFI_State_Set) once per compiled function
    (and per eager signature); execute reads it (XLA_FFI_State_Get)."""
    eager, f, g = _counter_runs(jax)
    assert eager == [100, 101, 102] and f == [10, 11, 12] and g == [10, 11]


def test_stateful_handler_matches_jax(rjax):
    c = lambda api: api.ffi.ffi_call(  # noqa: E731
        "counter", api.ShapeDtypeStruct((1,), np.int64), has_side_effect=True)
    for api in (jax, rjax):     # a start no other test uses: a fresh eager state
        assert [int(c(api)(start=7)[0]) for _ in range(2)] == [7, 8]
    assert [int(jax.jit(lambda: c(jax)(start=1))()[0]) for _ in range(2)] == \
        [int(rjax.jit(lambda: c(rjax)(start=1))()[0]) for _ in range(2)]


def test_async_handler(lib):
    """A handler returning an ffi::Future completed on another thread."""
    f = jax.ffi.ffi_call("asyncscale", jax.ShapeDtypeStruct((4,), np.float32))
    x = np.arange(4, dtype=np.float32)
    np.testing.assert_array_equal(np.asarray(f(x)), 3 * x)
    np.testing.assert_array_equal(np.asarray(jax.jit(f)(x + 1)), 3 * (x + 1))


def test_async_handler_timeout(lib, monkeypatch):
    """A future not completed in time is an error (the buffers stay alive for the handler's
    thread, which completes the future later without harm)."""
    import time
    from jaxlite._src.runtime import xla_ffi
    f = jax.ffi.ffi_call("asyncslow", jax.ShapeDtypeStruct((4,), np.float32))
    np.testing.assert_array_equal(np.asarray(f(ms=np.int64(1))), [7.0] * 4)
    monkeypatch.setattr(xla_ffi, "FUTURE_TIMEOUT", 0.05)
    with pytest.raises(JaxRuntimeError, match="DEADLINE_EXCEEDED: the asynchronous FFI "
                                              "handler for 'asyncslow'"):
        f(ms=np.int64(300))
    time.sleep(0.6)      # the late completion lands in the kept buffers
    monkeypatch.setattr(xla_ffi, "FUTURE_TIMEOUT", 60.0)
    np.testing.assert_array_equal(np.asarray(f(ms=np.int64(300))), [7.0] * 4)


# ----------------------------------------------------------------------------- devices

def test_multidevice(lib):
    """pmap, shard_map and sharded eager calls run the handler on every device's executor
    thread; each device sees its own ordinal (as XLA's per-device executions)."""
    from multidevice import run_snippet
    out = run_snippet(f"""
        import ctypes, numpy as np, jaxlite as jax
        from jaxlite.sharding import NamedSharding, PartitionSpec as P
        lib = ctypes.CDLL({lib._name!r})
        jax.ffi.register_ffi_target("rmsnorm", jax.ffi.pycapsule(lib.RmsNorm))
        jax.ffi.register_ffi_target("ctx", jax.ffi.pycapsule(lib.ContextProbe))
        X = np.random.RandomState(0).randn(8, 4).astype(np.float32)
        want = X / np.sqrt(np.mean(X * X, -1, keepdims=True) + np.float32(1e-5))
        row = jax.ffi.ffi_call("rmsnorm", jax.ShapeDtypeStruct((4,), np.float32),
                               vmap_method="sequential")
        blk = jax.ffi.ffi_call("rmsnorm", jax.ShapeDtypeStruct((2, 4), np.float32))
        eps = np.float32(1e-5)
        np.testing.assert_allclose(np.asarray(jax.pmap(lambda r: row(r, eps=eps))(X[:4])),
                                   want[:4], rtol=1e-5, atol=1e-6)
        # (Auto axes: over Explicit ones JAX 0.10.2 requires in_specs to match the
        # arguments' types, and a NumPy argument is typed replicated)
        mesh = jax.make_mesh((4,), ("x",), axis_types=(jax.sharding.AxisType.Auto,))
        sm = jax.jit(jax.shard_map(lambda r: blk(r, eps=eps), mesh=mesh, in_specs=P("x"),
                                   out_specs=P("x")))
        np.testing.assert_allclose(np.asarray(sm(X)), want, rtol=1e-5, atol=1e-6)
        xs = jax.device_put(X, NamedSharding(mesh, P("x")))
        full = jax.ffi.ffi_call("rmsnorm", jax.ShapeDtypeStruct((8, 4), np.float32))
        np.testing.assert_allclose(np.asarray(full(xs, eps=eps)), want, rtol=1e-5, atol=1e-6)
        probe = jax.ffi.ffi_call("ctx", jax.ShapeDtypeStruct((4,), np.int64),
                                 vmap_method="sequential")
        print(np.asarray(jax.pmap(lambda r: probe())(np.zeros(4)))[:, 1].tolist())
    """, n=4)
    assert out.strip() == "[0, 1, 2, 3]"


def test_attribute_jaxpr_text_matches_jax(rjax):
    f = lambda api: (lambda: _attrs_call(api, **ATTRS))  # noqa: E731
    with np.printoptions(legacy="1.25"):
        assert str(jax.make_jaxpr(f(jax))()) == str(rjax.make_jaxpr(f(rjax))())


def test_inside_control_flow(lib):
    f = jax.ffi.ffi_call("rmsnorm", jax.ShapeDtypeStruct((4,), np.float32),
                         vmap_method="sequential")
    x = np.arange(4, dtype=np.float32)
    eps = np.float32(1e-5)

    def body(c, _):
        return f(c + 1, eps=eps), c.sum()
    c, ys = jax.jit(lambda x: jax.lax.scan(body, x, None, length=3))(x)
    want_c, want_ys = x, []
    for _ in range(3):
        want_ys.append(want_c.sum())
        want_c = rms_norm_ref(want_c + 1, 1e-5)
    np.testing.assert_allclose(np.asarray(c), want_c, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(ys), want_ys, rtol=1e-6)
    g = jax.jit(lambda x, p: jax.lax.cond(p, lambda v: f(v, eps=eps), lambda v: v, x))
    np.testing.assert_allclose(np.asarray(g(x, True)), rms_norm_ref(x, 1e-5), rtol=1e-6)
    np.testing.assert_array_equal(np.asarray(g(x, False)), x)
    h = jax.jit(jax.checkpoint(lambda x: f(x, eps=eps) * 2))
    np.testing.assert_allclose(np.asarray(h(x)), 2 * rms_norm_ref(x, 1e-5), rtol=1e-6)
    assert jax.eval_shape(lambda x: f(x, eps=eps), x).shape == (4,)


def test_include_dir_without_jaxlib(monkeypatch):
    """jaxlite runs handlers without jaxlib; only compiling one needs its headers."""
    import importlib.util as iu
    real = iu.find_spec
    monkeypatch.setattr(iu, "find_spec", lambda n, *a: None if n == "jaxlib" else real(n, *a))
    with pytest.raises(RuntimeError, match="the XLA FFI headers come with jaxlib"):
        jax.ffi.include_dir()


def test_register_type_twice(lib):
    """Registering a type again under its name keeps its id; another id is refused."""
    tid = ctypes.c_int64(0)
    cap = jax.ffi.pycapsule(ctypes.addressof(tid))
    jax.ffi.register_ffi_type("test_type_twice", {"type_id": cap})
    first = tid.value
    assert first > 0
    tid.value = 0
    jax.ffi.register_ffi_type("test_type_twice", {"type_id": cap})
    assert tid.value == first
    tid.value = first + 12345
    with pytest.raises(JaxRuntimeError, match="ALREADY_EXISTS: Type name test_type_twice"):
        jax.ffi.register_ffi_type("test_type_twice", {"type_id": cap})
