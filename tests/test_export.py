"""jax.export on jaxlite: export a jitted function, call it, serialize it in jaxlite's own
format, deserialize, run and differentiate it; the calling convention and errors are
JAX 0.10.2's (written from its behaviour; compared with real JAX where installed)."""
import collections
import json

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import export, lax
from jaxlite._src.export import codec


def f_dict(x, y):
    return {"a": jnp.sin(x) * y, "b": (x.sum(),)}


SPECS = (jax.ShapeDtypeStruct((3,), jnp.float32), jax.ShapeDtypeStruct((), jnp.float32))


@pytest.fixture(scope="module")
def exp():
    return export.export(jax.jit(f_dict))(*SPECS)


def test_calling_convention(exp):
    # stored from JAX 0.10.2's output for the same program
    assert str(exp) == "Exported(fun_name=f_dict, ...)"
    assert repr(exp.in_avals) == "(ShapedArray(float32[3]), ShapedArray(float32[]))"
    assert repr(exp.out_avals) == "(ShapedArray(float32[3]), ShapedArray(float32[]))"
    assert str(exp.in_tree) == "PyTreeDef(((*, *), {}))"
    assert str(exp.out_tree) == "PyTreeDef({'a': *, 'b': (*,)})"
    assert exp.platforms == ("cpu",) and exp.nr_devices == 1
    assert (exp.ordered_effects, exp.unordered_effects, exp.disabled_safety_checks) == \
        ((), (), ())
    assert exp.calling_convention_version == 10
    assert exp.module_kept_var_idx == (0, 1) and exp.uses_global_constants is False
    assert exp.has_vjp()
    assert (export.minimum_supported_calling_convention_version,
            export.maximum_supported_calling_convention_version) == (9, 10)
    assert export.default_export_platform() == "cpu"


def test_call_and_roundtrip(exp):
    x = jnp.arange(3.)
    want = jax.jit(f_dict)(x, 2.)
    got = exp.call(x, 2.)
    blob = exp.serialize()
    assert isinstance(blob, bytearray) and bytes(blob).startswith(codec.MAGIC)
    back = export.deserialize(blob)
    assert back.fun_name == "f_dict" and back.in_tree == exp.in_tree and \
        back.out_tree == exp.out_tree and back.in_avals == exp.in_avals
    again = back.call(x, 2.)
    for r in (got, again):
        np.testing.assert_array_equal(r["a"], want["a"])
        np.testing.assert_array_equal(r["b"][0], 3.)
    np.testing.assert_allclose(got["a"], np.sin(np.arange(3.)) * 2, rtol=1e-6)
    # inside jit, the program is inlined
    np.testing.assert_array_equal(jax.jit(lambda x: back.call(x, 2.)["a"])(x), want["a"])
    assert back.mlir_module() == exp.mlir_module()
    assert "sin" in exp.mlir_module() and "reduce_sum" in exp.mlir_module()


JAXPR_OF_CALL = """{ lambda ; a:f32[3]. let
    b:f32[3] c:f32[] = custom_vjp_call[
      name=f_flat
      bwd=f_flat_vjp_bwd
      call_jaxpr={ lambda ; d:f32[3] e:f32[]. let
          f:f32[3] g:f32[] = call_exported[exported=Exported(fun_name=f, ...)] d
            e
        in (f, g) }
      fwd=f_flat_vjp_fwd
      symbolic_zeros=False
    ] a 2.0:f32[]
  in (b, c) }"""


def test_jaxpr_of_call():
    # JAX 0.10.2's text for the same program
    def f(x, y):
        return {"a": jnp.sin(x) * y, "b": (x.sum(),)}
    e = export.export(jax.jit(f))(*SPECS)
    assert str(jax.make_jaxpr(lambda x: e.call(x, 2.))(jnp.arange(3.))) == JAXPR_OF_CALL


def test_grad_needs_serialized_vjp(exp):
    x = jnp.arange(3.)
    loss = lambda e: lambda x: e.call(x, 2.)["a"].sum()  # noqa: E731
    want = 2 * np.cos(np.arange(3.))
    np.testing.assert_allclose(jax.grad(loss(exp))(x), want, rtol=1e-6)
    no_vjp = export.deserialize(exp.serialize())
    assert not no_vjp.has_vjp()
    with pytest.raises(ValueError, match="No VJP is available"):
        jax.grad(loss(no_vjp))(x)
    one = export.deserialize(exp.serialize(vjp_order=1))
    assert one.has_vjp()
    np.testing.assert_allclose(jax.grad(loss(one))(x), want, rtol=1e-6)
    second = lambda e: jax.grad(jax.grad(lambda s: e.call(jnp.ones(3) * s, 2.)["a"].sum()))  # noqa
    with pytest.raises(ValueError, match="No VJP is available"):
        second(one)(1.)
    two = export.deserialize(exp.serialize(vjp_order=2))
    np.testing.assert_allclose(second(two)(1.), -3 * 2 * np.sin(1.), rtol=1e-5)
    vj = exp.vjp()
    assert vj.fun_name == "fun_vjp_jax" and str(vj.in_tree) == "PyTreeDef(((*, *, *, *), {}))"
    assert str(vj.out_tree) == "PyTreeDef((*, *))"
    with pytest.raises(TypeError, match="forward-mode"):
        jax.jvp(lambda x: exp.call(x, 2.)["a"], (x,), (x,))


def test_custom_jvp_rules_kept_in_vjp():
    # the VJP is taken of the traced program with its custom rules (softplus' logaddexp,
    # relu at 0), not of the inlined primal
    f = jax.jit(lambda x: jax.nn.relu(x) + jax.nn.softplus(x))
    e = export.deserialize(export.export(f)(jnp.zeros(3)).serialize(vjp_order=1))
    x = jnp.array([0., 1., -1.])
    np.testing.assert_array_equal(jax.grad(lambda x: e.call(x).sum())(x),
                                  jax.grad(lambda x: f(x).sum())(x))
    assert float(jax.grad(lambda x: e.call(x).sum())(x)[0]) == 0.5


PROGRAMS = {
    "cond": (lambda x: lax.cond(x.sum() > 0, jnp.sin, jnp.cos, x), [np.arange(4.) - 1]),
    "while": (lambda x: lax.while_loop(lambda c: c[0] < 5,
                                       lambda c: (c[0] + 1, c[1] * 1.5), (0, x))[1],
              [np.arange(4.)]),
    "scan": (lambda x: lax.scan(lambda c, y: (c + y, c * y), 0., x), [np.arange(5.)]),
    "fori": (lambda x: lax.fori_loop(0, 3, lambda i, c: c * 2 + i, x), [np.arange(3.)]),
    "index": (lambda x, i: (x[i], x[1:3], x.at[i].add(5.), x[::-1]),
              [np.arange(6.), np.int32(2)]),
    "gather": (lambda x, idx: x[idx], [np.arange(12.).reshape(3, 4), np.array([2, 0])]),
    "conv": (lambda x, w: lax.conv(x, w, (1, 1), "SAME"),
             [np.ones((1, 2, 5, 5)), np.ones((3, 2, 3, 3))]),
    "sort": (lambda x: (jnp.sort(x), jnp.argsort(x), jnp.cumsum(x), jnp.argmax(x)),
             [np.array([3., 1., 2.])]),
    "random": (lambda k: jax.random.normal(jax.random.PRNGKey(k), (3,)), [np.int32(0)]),
    "typed_key": (lambda k: jax.random.uniform(jax.random.fold_in(k, 3), (2,)),
                  [jax.random.key(1)]),
    "nn": (lambda x: (jax.nn.relu(x), jax.nn.softplus(x), jax.nn.gelu(x), jax.nn.softmax(x)),
           [np.linspace(-2, 2, 5)]),
    "remat": (lambda x: jax.checkpoint(lambda y: jnp.sin(y) ** 2)(x), [np.arange(3.)]),
    "matmul": (lambda a, b: (a @ b, jnp.einsum("ij,jk->ik", a, b)),
               [np.ones((2, 3)), np.ones((3, 4))]),
    "dtypes": (lambda x: (x.astype(jnp.bfloat16) * 2, x.astype(jnp.int8), x > 1,
                          jnp.complex64(1j) * x, x * np.float32(np.inf)), [np.arange(3.)]),
    "linalg": (lambda a: (jnp.linalg.inv(a), jnp.linalg.cholesky(a @ a.T + 3 * jnp.eye(3))),
               [np.eye(3) * 2 + 0.1]),
    "nested_jit": (lambda x: jax.jit(lambda y: y * 3)(x) + 1, [np.arange(3.)]),
    "consts": (lambda x: x + jnp.asarray(np.arange(20.)), [np.arange(20.)]),
}


def _args(args):
    return [np.asarray(a, np.float32) if isinstance(a, np.ndarray) and a.dtype == np.float64
            else a for a in args]


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_programs_roundtrip(name):
    f, args = PROGRAMS[name]
    args = _args(args)
    jf = jax.jit(f)
    e = export.deserialize(export.export(jf)(*args).serialize())
    want = jax.tree_util.tree_leaves(jf(*args))
    got = jax.tree_util.tree_leaves(e.call(*args))
    assert len(want) == len(got)
    for w, g in zip(want, got):
        assert w.dtype == g.dtype and w.shape == g.shape
        np.testing.assert_array_equal(np.asarray(g), np.asarray(w))   # the same program


def test_programs_against_jax():
    rjax = pytest.importorskip("jax")
    pytest.importorskip("flatbuffers")
    for name, (f, args) in PROGRAMS.items():
        if name == "typed_key":
            continue
        args = _args(args)
        e = rjax.export.deserialize(
            rjax.export.export(rjax.jit(_as_jax(f, rjax)))(*args).serialize())
        want = rjax.tree_util.tree_leaves(e.call(*args))
        mine = export.export(jax.jit(f))(*args)
        got = jax.tree_util.tree_leaves(export.deserialize(mine.serialize()).call(*args))
        assert [str(a) for a in mine.out_avals] == [str(a) for a in e.out_avals], name
        for w, g in zip(want, got):
            np.testing.assert_allclose(_wide(g), _wide(w), rtol=2e-6, atol=1e-6, err_msg=name)


def _wide(a):
    a = np.asarray(a)
    return a if a.dtype == bool else a.astype(np.complex128 if np.iscomplexobj(a)
                                              else np.float64)


def _as_jax(f, rjax):
    # the same lambda, with the module globals pointing at real JAX
    import types
    g = dict(f.__globals__, jax=rjax, jnp=rjax.numpy, lax=rjax.lax)
    return types.FunctionType(f.__code__, g, f.__name__, f.__defaults__, f.__closure__)


def test_vmap_of_call_batches_the_program(exp):
    # JAX has no batching rule for call_exported; jaxlite batches the exported program
    xs = jnp.arange(6.).reshape(2, 3)
    out = jax.vmap(lambda x: exp.call(x, 2.)["a"])(xs)
    np.testing.assert_array_equal(out, jnp.stack([exp.call(x, 2.)["a"] for x in xs]))


def test_call_errors(exp):
    with pytest.raises(ValueError, match=r"Shape mismatch for args\[0\].shape\[0\] \(expected "
                       r"same constant\): expected \(3,\) and called with \(4,\)"):
        exp.call(jnp.arange(4.), 2.)
    with pytest.raises(ValueError, match=r"Dtype mismatch for args\[0\]: expected float32 and "
                       "called with int32"):
        exp.call(jnp.arange(3), 2.)
    with pytest.raises(ValueError, match=r"Rank mismatch for args\[1\]: expected \(\) and "
                       r"called with \(1,\)"):
        exp.call(jnp.arange(3.), jnp.ones(1))
    with pytest.raises(ValueError, match="must have the same pytree structure as when the "
                       "function 'f_dict' was exported") as ei:
        exp.call(jnp.arange(3.))
    assert "args is a tuple of length 1 in the invocation and a tuple of length 2 when " \
           "exported, so the lengths do not match." in str(ei.value)
    with pytest.raises(ValueError, match="Function to be exported must be the result of `jit`"):
        export.export(f_dict)


def test_platforms():
    f = jax.jit(jnp.sin)
    e = export.export(f, platforms=("tpu",))(jnp.ones(3))
    assert e.platforms == ("tpu",)
    with pytest.raises(ValueError, match=r"Function 'sin' was exported for platforms "
                       r"'\('tpu',\)' but it is used on '\('cpu',\)'."):
        e.call(jnp.ones(3))
    ok = export.export(f, platforms=("tpu",),
                       disabled_checks=[export.DisabledSafetyCheck.platform()])(jnp.ones(3))
    np.testing.assert_array_equal(ok.call(jnp.ones(3)), f(jnp.ones(3)))
    e2 = export.deserialize(export.export(f, platforms=("cpu", "tpu"))(jnp.ones(3))
                            .serialize())
    assert e2.platforms == ("cpu", "tpu")
    assert str(export.DisabledSafetyCheck.custom_call("x")) == "custom_call:x"
    assert export.DisabledSafetyCheck.custom_call("x").is_custom_call() == "x"


def test_static_args_and_weak_types():
    h = jax.jit(lambda x, n: x * n, static_argnums=1)
    e = export.export(h)(jnp.ones(3), 3)
    assert str(e.in_tree) == "PyTreeDef(((*,), {}))"
    np.testing.assert_array_equal(e.call(jnp.ones(3)), [3., 3., 3.])
    w = export.export(jax.jit(lambda x: x))(1.0)
    assert repr(w.in_avals) == "(ShapedArray(float32[], weak_type=True),)"
    assert repr(export.deserialize(w.serialize()).out_avals) == \
        "(ShapedArray(float32[], weak_type=True),)"


def test_callbacks_are_refused():
    g = jax.jit(lambda x: jax.pure_callback(np.sin, jax.ShapeDtypeStruct((3,), jnp.float32),
                                            x))
    with pytest.raises(NotImplementedError, match="serialization of host_callbacks is not "
                       "yet implemented"):
        export.export(g)(jnp.ones(3))


Point = collections.namedtuple("Point", ["x", "y"])


def test_pytree_serialization_registry():
    f = jax.jit(lambda p: Point(p.y, p.x * 2))
    e = export.export(f)(Point(jnp.ones(2), jnp.zeros(2)))
    r = e.call(Point(jnp.ones(2), jnp.zeros(2)))
    assert isinstance(r, Point)
    with pytest.raises(ValueError, match="Cannot serialize PyTreeDef containing an "
                       "unregistered type"):
        e.serialize()

    class P2(collections.namedtuple("P2", ["x", "y"])):
        pass
    export.register_namedtuple_serialization(P2, serialized_name="test_export.P2")
    with pytest.raises(ValueError, match="Duplicate serialization registration"):
        export.register_namedtuple_serialization(P2, serialized_name="other")
    e = export.export(jax.jit(lambda p: P2(p.y, p.x)))(P2(jnp.ones(2), jnp.zeros(2)))
    back = export.deserialize(e.serialize())
    r = back.call(P2(jnp.ones(2), jnp.zeros(2)))
    assert type(r) is P2 and r.y.tolist() == [1., 1.]
    od = collections.OrderedDict([("b", jnp.ones(1)), ("a", jnp.zeros(1))])
    e = export.deserialize(export.export(jax.jit(lambda d: d))(od).serialize())
    assert list(e.call(od).keys()) == ["b", "a"]
    with pytest.raises(ValueError, match="Use `jax.export.register_pytree_node_serialization`"):
        export.register_namedtuple_serialization(dict, serialized_name="d")


def _payload(blob):
    return json.loads(bytes(blob)[len(codec.MAGIC):])


def _blob(p):
    return codec.MAGIC + json.dumps(p).encode()


def test_deserialize_is_safe_and_checked(exp):
    with pytest.raises(ValueError, match="not a serialized jaxlite Exported"):
        export.deserialize(b"\x80\x04pickle")
    with pytest.raises(ValueError, match="corrupted"):
        export.deserialize(codec.MAGIC + b"{not json")
    p = _payload(exp.serialize())
    with pytest.raises(ValueError, match="format version 99, newer"):
        export.deserialize(_blob(dict(p, format=99)))
    # a blob naming a class outside jaxlite is refused, never imported
    bad = json.loads(json.dumps(p))
    bad["module"]["jaxpr"]["eqns"][0]["params"]["axes"] = {"nt": ["os", "system", []]}
    with pytest.raises(ValueError, match="Refusing to load the type os.system"):
        export.deserialize(_blob(bad))
    bad = json.loads(json.dumps(p))
    bad["module"]["jaxpr"]["eqns"][0]["p"] = "no_such_primitive"
    with pytest.raises(ValueError, match="'no_such_primitive'"):
        export.deserialize(_blob(bad))
    bad = json.loads(json.dumps(p))
    del bad["module"]
    with pytest.raises(ValueError, match="corrupted"):
        export.deserialize(_blob(bad))


def test_symbolic_shapes():
    s = export.symbolic_shape("b, 4")
    assert str(s) == "(b, 4)" and export.is_symbolic_dim(s[0]) and \
        not export.is_symbolic_dim(4)
    assert str(export.symbolic_shape("2*b + 1, b - k, 3")) == "(2*b + 1, b - k, 3)"
    assert s[0] * 2 + 1 == export.symbolic_shape("2*b+1")[0]
    spec = export.symbolic_args_specs(np.ones((3, 4)), "b, _")
    assert str(spec) == "ShapeDtypeStruct(shape=(b, 4), dtype=float32)"
    with pytest.raises(ValueError, match="syntax error in polymorphic shape"):
        export.symbolic_shape("b**2")


def _poly_f(x, w):
    return jnp.tanh(x @ w).mean(axis=0), x.reshape(-1)[:3] * 2, jnp.concatenate([x, x])


def test_polymorphic_batch():
    # values, avals and errors stored from JAX 0.10.2 for the same program
    b4 = jax.ShapeDtypeStruct(export.symbolic_shape("b, 4"), jnp.float32)
    e = export.export(jax.jit(_poly_f))(b4, jax.ShapeDtypeStruct((4, 2), jnp.float32))
    assert repr(e.in_avals) == "(ShapedArray(float32[b,4]), ShapedArray(float32[4,2]))"
    assert repr(e.out_avals) == ("(ShapedArray(float32[2]), ShapedArray(float32[3]), "
                                 "ShapedArray(float32[2*b,4]))")
    assert e.uses_global_constants
    w = jnp.ones((4, 2)) / 4
    want = {1: 0.14889, 3: 0.46306, 7: 0.73796}
    back = export.deserialize(e.serialize(vjp_order=1))
    assert repr(back.in_avals) == repr(e.in_avals) and repr(back.out_avals) == repr(e.out_avals)
    for n, m in want.items():
        x = jnp.arange(4. * n).reshape(n, 4) / 10
        for ex in (e, back):
            r = ex.call(x, w)
            np.testing.assert_allclose(r[0], [m, m], atol=1e-5)
            np.testing.assert_allclose(r[1], [0., .2, .4], atol=1e-6)
            assert r[2].shape == (2 * n, 4)
            for got, ref in zip(r, jax.jit(_poly_f)(x, w)):   # the same program
                np.testing.assert_array_equal(got, ref)
    x = jnp.arange(12.).reshape(3, 4) / 10
    g = jax.grad(lambda x: back.call(x, w)[0].sum())(x)
    np.testing.assert_allclose(g[:, 0], [0.16297, 0.12491, 0.07545], atol=1e-5)
    # (the exported program is compiled: fused multiply-adds, as XLA's; eager is not)
    np.testing.assert_allclose(g, jax.grad(lambda x: _poly_f(x, w)[0].sum())(x), rtol=1e-6)
    assert "polymorphic in b" in e.mlir_module()
    with pytest.raises(ValueError, match=r"Shape mismatch for args\[0\].shape\[1\] \(expected "
                       r"same constant\): expected \(b, 4\) and called with \(3, 5\)"):
        e.call(jnp.ones((3, 5)), w)
    with pytest.raises(ValueError, match=r"Rank mismatch for args\[0\]: expected \(b, 4\) "
                       r"and called with \(3,\)"):
        e.call(jnp.ones((3,)), w)


def test_polymorphic_two_variables_and_inconsistency():
    spec = export.symbolic_args_specs((np.ones((2, 3)), np.ones((3, 5))), ("a, k", "k, c"))
    e = export.export(jax.jit(lambda x, y: (x @ y).sum(0)))(*spec)
    assert repr(e.out_avals) == "(ShapedArray(float32[c]),)"
    x, y = np.ones((4, 2), np.float32), np.ones((2, 6), np.float32)
    np.testing.assert_array_equal(e.call(x, y), np.full(6, 8., np.float32))
    with pytest.raises(ValueError, match="inconsistency between dimension size"):
        e.call(np.ones((4, 2), np.float32), np.ones((3, 6), np.float32))


def test_polymorphic_refuses_what_it_cannot_express():
    spec = jax.ShapeDtypeStruct(export.symbolic_shape("b"), jnp.float32)
    with pytest.raises(NotImplementedError, match="cannot export this function for symbolic"):
        export.export(jax.jit(lambda x: x[: x.shape[0] // 2]))(spec)   # b // 2
    with pytest.raises(NotImplementedError, match="cannot export this function for symbolic"):
        export.export(jax.jit(lambda x: x + jnp.asarray(np.arange(x.shape[0]) ** 2.)))(spec)


def test_exported_values_match_jax_stored():
    # JAX 0.10.2: export(jit(sin))(float32[4]) deserialized and called on [.1 .2 .3 .4]
    e = export.deserialize(export.export(jax.jit(jnp.sin))(
        np.arange(4, dtype=np.float32)).serialize())
    assert e.fun_name == "sin"
    np.testing.assert_allclose(e.call(np.array([.1, .2, .3, .4], np.float32)),
                               [0.09983342, 0.19866933, 0.29552022, 0.38941833], rtol=1e-6)
