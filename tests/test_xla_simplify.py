"""Compiled programs round float arithmetic with constants as XLA does after its algebraic
simplifier rewrote it (compiler/simplify.py): ``(x + 2.1) + 3.3`` is ``x + (2.1 + 3.3)``,
``20 * (x / 13)`` is ``x * ((1 / 13) * 20)``, ``x / y / z`` is ``x / (y * z)``, ... and a
loop-invariant constant (a while loop's constant carry, a scan's closed-over constant, a cond
operand) counts as a constant inside the loop body, as XLA sinks it there. Eager operations
stay separately rounded (JAX runs each as its own program). The references are the
rewritten expressions, each operation rounded on its own (checked against JAX 0.10.2's jit
with tools/xla_simplify_probe.py); where JAX is installed the programs are also run on it."""
import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import lax

f32 = np.float32
rng = np.random.default_rng(0)
X, Y, Z = ((rng.standard_normal(256) * 100).astype(f32) for _ in range(3))


def c(v):
    return f32(v)


def recip(v):
    return f32(1) / f32(v)


def ev(f, *args):
    """The reference: jaxlite's eager operations (each rounded alone, as XLA's ops)."""
    return np.asarray(f(*[jnp.asarray(a) for a in args]))


# name -> (jitted program, reference of the rewritten program (NumPy / eager ops))
CASES = {
    "(x+2.1)+3.3": (lambda x, y, z: (x + 2.1) + 3.3,
                    lambda x, y, z: x + (c(2.1) + c(3.3))),
    "(2.1+x)+3.3": (lambda x, y, z: (2.1 + x) + 3.3,
                    lambda x, y, z: x + (c(2.1) + c(3.3))),
    "(x-2.1)+3.3": (lambda x, y, z: (x - 2.1) + 3.3,
                    lambda x, y, z: x + (-c(2.1) + c(3.3))),
    "(x+2.1)-3.3": (lambda x, y, z: (x + 2.1) - 3.3,
                    lambda x, y, z: x + (c(2.1) + -c(3.3))),
    "(2.1-x)+3.3": (lambda x, y, z: (2.1 - x) + 3.3,
                    lambda x, y, z: (c(2.1) + c(3.3)) - x),
    "3.3-(x+2.1)": (lambda x, y, z: 3.3 - (x + 2.1),
                    lambda x, y, z: c(3.3) - (x + c(2.1))),
    "x/13": (lambda x, y, z: x / 13.0, lambda x, y, z: x * recip(13)),
    "20*(x/13)": (lambda x, y, z: 20.0 * (x / 13.0), lambda x, y, z: x * (recip(13) * c(20))),
    "(x*20)/13": (lambda x, y, z: (x * 20.0) / 13.0, lambda x, y, z: x * (c(20) * recip(13))),
    "x/13/7": (lambda x, y, z: x / 13.0 / 7.0, lambda x, y, z: x * (recip(13) * recip(7))),
    "(x*2.1)*3.3": (lambda x, y, z: (x * 2.1) * 3.3, lambda x, y, z: x * (c(2.1) * c(3.3))),
    "(x*2.1)*y[0]": (lambda x, y, z: (x * 2.1) * y[0], lambda x, y, z: x * (y[0] * c(2.1))),
    "x/y/z": (lambda x, y, z: x / y / z, lambda x, y, z: x / (y * z)),
    "x/(y/z)": (lambda x, y, z: x / (y / z), lambda x, y, z: (x * z) / y),
    "(x/y)/(z/x)": (lambda x, y, z: (x / y) / (z / x), lambda x, y, z: (x * x) / (y * z)),
    "x/y/z[0]": (lambda x, y, z: x / y / z[0], lambda x, y, z: (x / y) * (f32(1) / z[0])),
    "(x/z[0])/y": (lambda x, y, z: (x / z[0]) / y, lambda x, y, z: (x * (f32(1) / z[0])) / y),
    "x*2+y*2": (lambda x, y, z: x * 2.0 + y * 2.0, lambda x, y, z: (x + y) * f32(2)),
    "(-x)*(-y)": (lambda x, y, z: (-x) * (-y), lambda x, y, z: x * y),
    "exp(x)/exp(y)": (lambda x, y, z: jnp.exp(x / 64) / jnp.exp(y / 64),
                      lambda x, y, z: ev(lambda a, b: jnp.exp(a * recip(64) - b * recip(64)),
                                         x, y)),
    "exp(x)*exp(y)": (lambda x, y, z: jnp.exp(x / 64) * jnp.exp(y / 64),
                      lambda x, y, z: ev(lambda a, b: jnp.exp(a * recip(64) + b * recip(64)),
                                         x, y)),
    "log(sqrt(|x|))": (lambda x, y, z: jnp.log(jnp.sqrt(jnp.abs(x))),
                       lambda x, y, z: ev(lambda a: jnp.log(jnp.abs(a)) * f32(0.5), x)),
    "log(exp(x))": (lambda x, y, z: jnp.log(jnp.exp(x / 64)),
                    lambda x, y, z: x * recip(64)),
}


def _bits(a):
    return np.asarray(a).view(np.uint32)


@pytest.mark.parametrize("name", sorted(CASES))
def test_jit_rounds_as_xla_simplified(name):
    prog, ref = CASES[name]
    want = ref(X, Y, Z)
    np.testing.assert_array_equal(_bits(jax.jit(prog)(X, Y, Z)), _bits(want))


@pytest.mark.parametrize("name", ["(x+2.1)+3.3", "20*(x/13)", "x/13/7", "(x*2.1)*3.3",
                                  "x/y/z", "(2.1-x)+3.3"])
def test_scalar_programs_round_as_xla_simplified(name):
    """In a program of scalars the constants are plain constants (not broadcasts): the
    same rewrites."""
    prog, ref = CASES[name]
    f = jax.jit(prog)
    got = np.array([np.asarray(f(a, b, d)) for a, b, d in zip(X[:32], Y[:32], Z[:32])])
    np.testing.assert_array_equal(_bits(got), _bits(ref(X[:32], Y[:32], Z[:32])))


def test_the_rewrite_changes_the_bits():
    """(The references differ from plain evaluation: the tests above can fail.)"""
    for name in ("(x+2.1)+3.3", "20*(x/13)", "x/13/7", "(x*2.1)*3.3", "x/y/z"):
        plain = np.asarray(CASES[name][0](jnp.asarray(X), jnp.asarray(Y), jnp.asarray(Z)))
        assert not np.array_equal(_bits(plain), _bits(CASES[name][1](X, Y, Z))), name


def test_eager_operations_are_not_rewritten():
    x = jnp.asarray(X)
    np.testing.assert_array_equal(_bits(20.0 * (x / 13.0)), _bits(c(20) * (X * recip(13))))
    np.testing.assert_array_equal(_bits((x + 2.1) + 3.3), _bits((X + c(2.1)) + c(3.3)))


def test_signed_zero_plus_zero_is_the_operand():
    """``A + 0 => A``: -0.0 + 0.0 stays -0.0 under jit (IEEE addition gives +0.0)."""
    x = np.array([-0.0, 1.0], f32)
    got = np.asarray(jax.jit(lambda x: x + 0.0)(x))
    assert np.signbit(got[0])
    assert not np.signbit(np.asarray(jnp.asarray(x) + 0.0)[0])


def test_shared_square_root_keeps_the_division():
    """``A / sqrt(B) => A * rsqrt(B)`` only when nothing else reads the root."""
    b = np.abs(Y) + f32(0.5)

    def f(x, b):
        r = jnp.sqrt(b)
        return x / r + r
    r = np.sqrt(b)
    np.testing.assert_array_equal(_bits(jax.jit(f)(X, b)), _bits(X / r + r))


@pytest.mark.parametrize("name,unit", [("add", 0.0), ("sub", 0.0), ("mul", 1.0),
                                       ("div", 1.0)])
def test_a_library_primitive_of_the_same_name_is_not_rewritten(name, unit):
    """The rewrites are the arithmetic primitives' own rules, not rules of a name: a
    library's primitive (jax.extend) called "div" is no division (``A / 1 => A`` was applied
    to it, and jit gave ``x`` for its ``2 * x + 1``)."""
    from jaxlite.extend.core import Primitive
    p = Primitive(name)
    p.def_impl(lambda x, y: np.asarray(x) * 2 + np.asarray(y))
    p.def_abstract_eval(lambda x, y: x)
    want = X * f32(2) + f32(unit)
    np.testing.assert_array_equal(np.asarray(p.bind(jnp.asarray(X), f32(unit))), want)
    np.testing.assert_array_equal(np.asarray(jax.jit(lambda x: p.bind(x, f32(unit)))(X)),
                                  want)


# --------------------------------------------------------------------- loop constants

def _while_carry(x):
    def body(s):
        i, v, n, m = s
        return i + 1, m * (v / n), n, m
    return lax.while_loop(lambda s: s[0] < 3, body,
                          (0, x, jnp.asarray(13.0, x.dtype), jnp.asarray(20.0, x.dtype)))[1]


def _scan_closure(x):
    n = jnp.asarray(13.0, x.dtype)
    return lax.scan(lambda v, _: ((v / n) * 20.0, None), x, None, length=3)[0]


def _scan_carry(x):
    def body(carry, _):
        v, n = carry
        return ((v / n) * 20.0, n), None
    return lax.scan(body, (x, jnp.asarray(13.0, x.dtype)), None, length=3)[0][0]


def _cond_operand(x):
    n = jnp.asarray(13.0, x.dtype)
    return lax.cond(x.sum() > 0, lambda v, n: (v / n) * 20.0, lambda v, n: (v / n) * 7.0,
                    x, n)


def _traced_carry(x):
    def body(s):
        i, v, n = s
        return i + 1, (v / n) * 20.0, n
    return lax.while_loop(lambda s: s[0] < 3, body, (0, x, x * 0 + 13.0))[1]


def _thrice(f, x):
    for _ in range(3):
        x = f(x)
    return x


LOOPS = {
    "while carry": (_while_carry, lambda x: _thrice(lambda v: v * (recip(13) * c(20)), x)),
    "scan closure": (_scan_closure, lambda x: _thrice(lambda v: v * (recip(13) * c(20)), x)),
    "scan carry": (_scan_carry, lambda x: _thrice(lambda v: v * (recip(13) * c(20)), x)),
    "cond operand": (_cond_operand, lambda x: x * (recip(13) * c(20)) if x.sum() > 0
                     else x * (recip(13) * c(7))),
    # a carry that starts from an argument is no constant: divided, then multiplied
    "while traced carry": (_traced_carry,
                           lambda x: _thrice(lambda v: (v / c(13)) * c(20), x)),
}


@pytest.mark.parametrize("name", sorted(LOOPS))
def test_loop_invariant_constants_are_constants_in_the_body(name):
    prog, ref = LOOPS[name]
    np.testing.assert_array_equal(_bits(jax.jit(prog)(X)), _bits(ref(X)))


def test_constant_step_times_as_jax():
    """diffrax's ConstantStepSize, ``t0 + (t1 - t0) * (k / n)`` in a while loop whose
    ``n`` is a carry the body passes through: the 13 times are JAX's."""
    def times(t0, t1):
        def body(s):
            k, n, out = s
            t = t0 + (t1 - t0) * (k / n)
            return k + 1, n, out.at[k.astype(int)].set(t)
        return lax.while_loop(lambda s: s[0] < s[1], body,
                              (f32(0), f32(13), jnp.zeros(13, f32)))[2]
    got = np.asarray(jax.jit(lambda: times(0.0, 20.0))())
    k = np.arange(13, dtype=f32)
    np.testing.assert_array_equal(_bits(got), _bits(k * (recip(13) * c(20))))
    assert not np.array_equal(_bits(got), _bits(c(20) * (k / c(13))))


# ------------------------------------------- loop constants from outside the function

# ``(v * u + c) + 0.43`` three times in a loop of a nested jit: JAX's MLIR stage sinks the
# constants of one function into its loops; ``c`` passed to the jitted function reaches the
# loop later, after XLA inlined the call, and XLA's WhileLoopConstantSinking sinks a scalar
# constant but not an array of one value (a broadcast to XLA). Sunk, ``(v*u + c) + 0.43``
# is ``v*u + (c + 0.43)``. Bits of JAX 0.10.2's jit (XLA:CPU) on X[:16], Y[:16] / 100.
_OUTSIDE_BITS = {
    "array operand": "45425117 4594c033 455493d2 470acdb6 45471bbc 453bdc4b 4580da18 "
                     "454131ec 457890fc 46127396 453f7568 455434a6 45db6a59 4557187c "
                     "47272e73 4642119a",
    "scalar operand": "45425117 4594c032 455493d2 470acdb6 45471bbc 453bdc4b 4580da18 "
                      "454131ec 457890fc 46127396 453f7568 455434a6 45db6a57 4557187c "
                      "47272e74 4642119a",
}
_OUTSIDE_BITS["same function"] = _OUTSIDE_BITS["scalar operand"]


def _outside_programs(jit, lax_, jnp_):
    @jit
    def inner(x, u, c):
        return lax_.fori_loop(0, 3, lambda i, v: (v * u + c) + f32(0.43), x)

    def local(x, u):
        c = jnp_.full(x.shape, 4000., f32)
        return lax_.fori_loop(0, 3, lambda i, v: (v * u + c) + f32(0.43), x)
    return {"array operand": lambda x, u: inner(x, u, jnp_.full(x.shape, 4000., f32)),
            "scalar operand": lambda x, u: inner(x, u, f32(4000.)),
            "same function": local}


@pytest.mark.parametrize("name", sorted(_OUTSIDE_BITS))
def test_loop_operands_through_a_nested_jit_sink_as_in_xla(name):
    x, u = X[:16], Y[:16] / f32(100)
    want = np.array([int(b, 16) for b in _OUTSIDE_BITS[name].split()], np.uint32)
    prog = _outside_programs(jax.jit, lax, jnp)[name]
    np.testing.assert_array_equal(_bits(jax.jit(prog)(x, u)), want)


@pytest.mark.parametrize("name", sorted(_OUTSIDE_BITS))
def test_loop_operands_through_a_nested_jit_as_jax(name):
    jax_ = pytest.importorskip("jax")
    x, u = X[:16], Y[:16] / f32(100)
    prog = _outside_programs(jax_.jit, jax_.lax, jax_.numpy)[name]
    np.testing.assert_array_equal(
        _bits(jax.jit(_outside_programs(jax.jit, lax, jnp)[name])(x, u)),
        _bits(jax_.jit(prog)(x, u)))


# --------------------------------------------------------------------- against JAX

@pytest.mark.parametrize("name", sorted(CASES))
def test_same_bits_as_jax(name):
    jax_ = pytest.importorskip("jax")
    prog = CASES[name][0]
    import jax.numpy as jjnp
    env = {"jnp": jjnp}
    jprog = type(prog)(prog.__code__, {**prog.__globals__, **env})
    ref = np.asarray(jax_.jit(jprog)(X, Y, Z))
    np.testing.assert_array_equal(_bits(jax.jit(prog)(X, Y, Z)), _bits(ref))


@pytest.mark.parametrize("name", sorted(LOOPS))
def test_loops_same_bits_as_jax(name):
    jax_ = pytest.importorskip("jax")
    import jax.numpy as jjnp
    prog = LOOPS[name][0]
    jprog = type(prog)(prog.__code__, {**prog.__globals__, "jnp": jjnp, "lax": jax_.lax})
    ref = np.asarray(jax_.jit(jprog)(X))
    np.testing.assert_array_equal(_bits(jax.jit(prog)(X)), _bits(ref))


@pytest.mark.parametrize("op", ["div", "mul", "add", "sub", "pow"])
def test_empty_constant_operands_are_left_alone(op):
    # an empty constant is uniform in no useful sense: the rules must not read its first
    # element (optax's piecewise_interpolate_schedule with no boundaries divides by one)
    c = jnp.zeros((0,), jnp.float32) + 1.0
    f = {"div": lambda x: x / c, "mul": lambda x: x * c, "add": lambda x: x + c,
         "sub": lambda x: x - c, "pow": lambda x: x ** c}[op]
    x = jnp.zeros((0,), jnp.float32)
    got = jax.jit(f)(x)
    assert got.shape == (0,) and got.dtype == jnp.float32
