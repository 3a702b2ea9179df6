"""Modules of JAX 0.10.2 (issue 20): jax.monitoring (listeners, JAX's compile events),
jax.profiler (annotations; a Perfetto trace of jaxlite's compile/execute events),
jax.experimental.pjit and jax.debug.inspect_array_sharding."""
import glob
import gzip
import json
import warnings

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import monitoring

COMPILE_EVENTS = ["/jax/core/compile/jaxpr_trace_duration",
                  "/jax/core/compile/jaxpr_to_mlir_module_duration",
                  "/jax/core/compile/backend_compile_duration"]


def test_monitoring_compile_events():
    durations, spans, scalars, events = [], [], [], []
    cbs = [lambda e, d, **k: durations.append((e, d, k)),
           lambda e, s, t, **k: spans.append((e, s, t, k)),
           lambda e, v, **k: scalars.append((e, v, k)),
           lambda e, **k: events.append((e, k))]
    monitoring.register_event_duration_secs_listener(cbs[0])
    monitoring.register_event_time_span_listener(cbs[1])
    monitoring.register_scalar_listener(cbs[2])
    monitoring.register_event_listener(cbs[3])
    try:
        def my_fn(x):
            return x * 2
        f = jax.jit(my_fn)
        f(1.)
        f(2.)                        # cached: no new events
        assert [e for e, _, _ in durations] == COMPILE_EVENTS
        assert all(k == {"fun_name": "my_fn"} and d >= 0 for _, d, k in durations)
        assert [e for e, *_ in spans] == COMPILE_EVENTS
        assert all(t >= s for _, s, t, _ in spans)
        assert [e for e, *_ in scalars] == COMPILE_EVENTS
        monitoring.record_event("/my/event", kind="x")
        assert events == [("/my/event", {"kind": "x"})]
    finally:
        monitoring.unregister_event_duration_listener(cbs[0])
        monitoring.unregister_event_time_span_listener(cbs[1])
        monitoring.unregister_scalar_listener(cbs[2])
        monitoring.unregister_event_listener(cbs[3])
    with pytest.raises(ValueError, match="not a registered"):
        monitoring.unregister_event_listener(cbs[3])


def test_monitoring_events_vs_jax():
    jr = pytest.importorskip("jax")
    got = []
    cb = lambda e, d, **k: got.append(e)  # noqa: E731
    jr.monitoring.register_event_duration_secs_listener(cb)
    try:
        jr.jit(lambda x: x * 3)(1.)
    finally:
        jr.monitoring.unregister_event_duration_listener(cb)
    assert [e for e in got if e.startswith("/jax/core/compile")] == COMPILE_EVENTS


def _read_trace(d):
    paths = glob.glob(str(d) + "/plugins/profile/*/*.trace.json.gz")
    assert len(paths) == 1
    with gzip.open(paths[0], "rt") as f:
        return json.load(f)["traceEvents"]


def test_profiler_trace_file(tmp_path):
    def step_fn(x):
        return jnp.sin(x) * 2
    with jax.profiler.trace(tmp_path):
        with jax.profiler.TraceAnnotation("my_block", x=1):
            f = jax.jit(step_fn)
            for i in range(3):
                with jax.profiler.StepTraceAnnotation("train", step_num=i):
                    f(jnp.ones(3))

        @jax.profiler.annotate_function
        def helper(v):
            return v + 1
        helper(1.0)
    ev = _read_trace(tmp_path)
    names = [e["name"] for e in ev]
    assert names.count("jit(step_fn)") == 3
    assert {"jaxpr_trace", "jaxpr_to_mlir_module", "backend_compile"} <= set(names)
    assert [e["args"]["step_num"] for e in ev if e["name"] == "train"] == [0, 1, 2]
    blk = next(e for e in ev if e["name"] == "my_block")
    assert blk["args"] == {"x": 1} and blk["ph"] == "X"
    for e in ev:
        if e["name"] == "jit(step_fn)":   # inside the block's span
            assert blk["ts"] <= e["ts"] and e["ts"] + e["dur"] <= blk["ts"] + blk["dur"] + 1
    assert any("helper" in n for n in names)
    # nothing is recorded outside a trace, and one trace at a time
    jax.profiler.start_trace(tmp_path / "b")
    with pytest.raises(RuntimeError, match="already been started"):
        jax.profiler.start_trace(tmp_path / "c")
    jax.profiler.stop_trace()
    with pytest.raises(RuntimeError, match="No profile started"):
        jax.profiler.stop_trace()
    assert _read_trace(tmp_path / "b")[1:] == []


def test_profiler_records_calls_that_have_a_fast_path(tmp_path):
    """A jitted function whose fast path (guard) exists before the trace starts is still
    recorded on every call inside it, and runs its fast path again after."""
    f = jax.jit(lambda x: x * 2)
    x = jnp.ones(3)
    for _ in range(3):
        f(x)
    assert f._guards[0]
    with jax.profiler.trace(tmp_path):
        for _ in range(4):
            assert float(f(x)[0]) == 2.0
    names = [e["name"] for e in _read_trace(tmp_path)]
    assert names.count("jit(<lambda>)") == 4
    assert float(f(x)[1]) == 2.0


def test_pjit():
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        from jaxlite.experimental.pjit import pjit
    assert any("pjit has been deprecated" in str(x.message) for x in w)
    assert float(pjit(lambda x: x * 2)(3.)) == 6.0
    f = pjit(lambda x, n: x * n, static_argnums=1)
    assert float(f(2., 4)) == 8.0


def test_pjit_sharded():
    from multidevice import run_snippet
    out = run_snippet("""
import warnings; warnings.simplefilter("ignore")
import jaxlite as jax, jaxlite.numpy as jnp
from jaxlite.experimental.pjit import pjit
from jaxlite.sharding import PartitionSpec as P, NamedSharding
mesh = jax.make_mesh((4,), ('x',))
f = pjit(lambda v: v * 2, in_shardings=NamedSharding(mesh, P('x')),
         out_shardings=NamedSharding(mesh, P('x')))
y = f(jnp.arange(8.))
print(y.sharding.spec, y.tolist())
jax.debug.inspect_array_sharding(y, callback=lambda s: print(s.spec))
with jax.set_mesh(mesh):
    jax.jit(lambda v: jax.debug.inspect_array_sharding(v, callback=lambda s: print(s.spec))
            or v)(y)
""", 4)
    assert out.splitlines() == ["P('x',) [0.0, 2.0, 4.0, 6.0, 8.0, 10.0, 12.0, 14.0]",
                                "P('x',)", "P('x',)"]


def test_inspect_array_sharding_single_device():
    got = []
    assert jax.debug.inspect_array_sharding(jnp.ones(3), callback=got.append) is None
    jax.jit(lambda x: jax.debug.inspect_array_sharding(x, callback=got.append) or x)(
        jnp.ones(3))
    assert [type(s).__name__ for s in got] == ["SingleDeviceSharding"] * 2
    assert got[0].device_set == {jax.devices()[0]}
    np.testing.assert_array_equal(jax.jit(lambda x: x)(jnp.ones(2)), [1., 1.])


def test_compute_on():
    from jaxlite.experimental.compute_on import compute_on, compute_on2

    @compute_on("device_host")
    @jax.jit
    def g(x):
        return x * 2
    assert float(jax.jit(lambda x: g(x) + 1)(1.)) == 3.0
    with compute_on("device"):
        assert float(jnp.sin(0.)) == 0.0
    with pytest.raises(ValueError, match="Invalid compute type gpu"):
        with compute_on("gpu"):
            pass
    with pytest.raises(TypeError, match="must be a string"):
        with compute_on(3):
            pass
    h = compute_on2(lambda x: x + 1, compute_type="device_host",
                    out_memory_spaces=None)
    assert float(h(1.)) == 2.0


def _pprof_message_class():
    """pprof's Profile message (the fields jaxlite writes), built with protobuf's descriptor
    API, to parse the profile independently of jaxlite's encoder."""
    descriptor_pb2 = pytest.importorskip("google.protobuf.descriptor_pb2")
    from google.protobuf import descriptor_pool, message_factory
    F = descriptor_pb2.FieldDescriptorProto
    fp = descriptor_pb2.FileDescriptorProto(name="pprof_test.proto", package="pp")

    def msg(name, fields):
        m = fp.message_type.add(name=name)
        for fname, num, typ, label, tname in fields:
            f = m.field.add(name=fname, number=num, type=typ, label=label)
            if tname:
                f.type_name = ".pp." + tname
    R, O = F.LABEL_REPEATED, F.LABEL_OPTIONAL
    msg("ValueType", [("type", 1, F.TYPE_INT64, O, None), ("unit", 2, F.TYPE_INT64, O, None)])
    msg("Label", [("key", 1, F.TYPE_INT64, O, None), ("str", 2, F.TYPE_INT64, O, None)])
    msg("Sample", [("location_id", 1, F.TYPE_UINT64, R, None),
                   ("value", 2, F.TYPE_INT64, R, None), ("label", 3, F.TYPE_MESSAGE, R, "Label")])
    msg("Line", [("function_id", 1, F.TYPE_UINT64, O, None)])
    msg("Location", [("id", 1, F.TYPE_UINT64, O, None), ("line", 4, F.TYPE_MESSAGE, R, "Line")])
    msg("Function", [("id", 1, F.TYPE_UINT64, O, None), ("name", 2, F.TYPE_INT64, O, None),
                     ("system_name", 3, F.TYPE_INT64, O, None)])
    msg("Profile", [("sample_type", 1, F.TYPE_MESSAGE, R, "ValueType"),
                    ("sample", 2, F.TYPE_MESSAGE, R, "Sample"),
                    ("location", 4, F.TYPE_MESSAGE, R, "Location"),
                    ("function", 5, F.TYPE_MESSAGE, R, "Function"),
                    ("string_table", 6, F.TYPE_STRING, R, None),
                    ("time_nanos", 9, F.TYPE_INT64, O, None)])
    pool = descriptor_pool.DescriptorPool()
    pool.Add(fp)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName("pp.Profile"))


def test_device_memory_profile(tmp_path):
    Profile = _pprof_message_class()
    keep = (jnp.ones((100, 10)), jnp.zeros(7, jnp.int32))
    raw = jax.profiler.device_memory_profile()
    p = Profile()
    p.ParseFromString(gzip.decompress(raw))
    st = list(p.string_table)
    assert st[0] == "" and [(st[t.type], st[t.unit]) for t in p.sample_type] == \
        [("allocations", "count"), ("space", "bytes")]
    names = {f.id: st[f.name] for f in p.function}
    loc_fn = {loc.id: loc.line[0].function_id for loc in p.location}
    by_name = {}
    for s in p.sample:
        name = names[loc_fn[s.location_id[0]]]
        by_name.setdefault(name, []).append(list(s.value))
        assert st[s.label[0].key] == "device" and st[s.label[0].str] == "cpu:0"
    assert [1, 4000] in by_name["float32[100,10]"]
    assert [1, 28] in by_name["int32[7]"]
    jax.profiler.save_device_memory_profile(tmp_path / "m.prof")
    assert (tmp_path / "m.prof").read_bytes()[:2] == b"\x1f\x8b"
    del keep
