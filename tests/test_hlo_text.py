"""``Lowered.compiler_ir("hlo").as_hlo_text()``: jaxlite's lowered program in XLA's HLO syntax.

Compared with JAX 0.10.2's text (stored in tests/goldens/hlo_jax_0.10.2.json by
tests/hlo_programs.py, and live when jax is installed) as the tree of (shape, opcode,
attributes) each program's result is computed by, which does not depend on instruction names,
numbering or order. The remaining tests pin the properties tools rely on: deterministic
text, equal for equal programs, different for different ones (optax's numerics test compares
the HLO of ``x ** 2``, ``x * x``, ``jnp.square`` and ``abs_sq``).
"""
from __future__ import annotations

import json
import re

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import lax
from hlo_programs import GOLDENS, PROGRAMS, hlo_text

_LINE = re.compile(r"^\s*(ROOT )?(\S+) = (\(.*?\)|\S+) ([a-z][a-z0-9\-]*)\((.*?)\)(, .*)?$")
_NAME = re.compile(r"\b[A-Za-z_][\w\-]*\.\d+\b")


def parse_module(text):
    """{computation name: (root, {instruction: (shape, opcode, operands, attrs)})}, and the
    entry computation's name."""
    comps, entry, cur = {}, None, None
    for line in text.splitlines():
        m = re.match(r"^(ENTRY )?(\S+) \{$", line)
        if m:
            cur = m.group(2)
            comps[cur] = [None, {}]
            entry = cur if m.group(1) else entry
            continue
        m = _LINE.match(line)
        if m and cur is not None:
            root, name, shape, op, operands, attrs = m.groups()
            ops = [o.strip() for o in operands.split(",")] if operands and op != "constant" \
                else ([operands] if op in ("constant", "parameter") else [])
            comps[cur][1][name] = (shape, op, ops, attrs or "")
            if root:
                comps[cur][0] = name
    return comps, entry


def tree(text):
    """The HLO module as one expression: each instruction replaced by its shape, opcode,
    operand expressions and attributes (called computations expanded the same way; a
    ``call`` is replaced by its computation applied to its operands, as jaxlite inlines
    nested jit calls)."""
    comps, entry = parse_module(text)

    def comp_tree(c, args=None):
        root, instrs = comps[c]

        def node(n):
            shape, op, ops, attrs = instrs[n]
            if op == "parameter" and args is not None:
                return args[int(ops[0])]
            if op in ("parameter", "constant"):
                return f"{shape} {op}({ops[0]})"
            if op == "call":
                callee = re.search(r"to_apply=(\S+)", attrs).group(1)
                return comp_tree(callee, [node(o) for o in ops])[1:-1]
            attrs = _NAME.sub(lambda m: comp_tree(m.group(0)) if m.group(0) in comps
                              else m.group(0), attrs)
            return f"{shape} {op}({', '.join(node(o) for o in ops)}){attrs}"
        return "{" + node(root) + "}"
    head = text.splitlines()[0]
    return head + "\n" + comp_tree(entry)


# Programs whose jaxlite text has a different tree than XLA's, and why.
DIFFERENT = {
    # XLA's canonicaliser folds complex(real(z), imag(z)) into z
    "complex_parts",
    # JAX lowers broadcast_in_dim of a size-1 dimension as reshape/broadcast/reshape/
    # broadcast; jaxlite reshapes once and broadcasts once
    "broadcast_in_dim",
}


def _goldens():
    return json.loads(GOLDENS.read_text())


@pytest.mark.parametrize("name", [n for n, _ in PROGRAMS])
def test_same_hlo_tree_as_jax(name):
    make = dict(PROGRAMS)[name]
    mine = hlo_text(jax, jnp, lax, make)
    ref = _goldens()[name]
    if name in DIFFERENT:
        # the module's signature still agrees
        assert mine.splitlines()[0] == ref.splitlines()[0]
        assert tree(mine) != tree(ref), f"{name} now matches JAX: drop it from DIFFERENT"
    else:
        assert tree(mine) == tree(ref), f"\n{mine}\n--- JAX 0.10.2:\n{ref}"


def test_goldens_are_jaxs():
    real = pytest.importorskip("jax")
    if real.__version__ != "0.10.2":
        pytest.skip("goldens are JAX 0.10.2's")
    import jax.numpy as rjnp
    from jax import lax as rlax
    g = _goldens()
    for name, make in PROGRAMS[:8]:
        assert hlo_text(real, rjnp, rlax, make) == g[name], name


def test_module_text_format():
    x = np.ones((3, 4), np.float32)
    text = jax.jit(lambda x: jnp.sum(jnp.exp(x) * 2.0)).lower(x).compiler_ir(
        dialect="hlo").as_hlo_text()
    assert text == (
        "HloModule jit__lambda, entry_computation_layout={(f32[3,4]{1,0})->f32[]}\n\n"
        "region_0.1 {\n"
        "  reduce_sum.1 = f32[] parameter(0)\n"
        "  reduce_sum.2 = f32[] parameter(1)\n"
        "  ROOT reduce_sum.3 = f32[] add(reduce_sum.1, reduce_sum.2)\n"
        "}\n\n"
        "ENTRY main.2 {\n"
        "  x.1 = f32[3,4]{1,0} parameter(0)\n"
        "  exp.1 = f32[3,4]{1,0} exponential(x.1)\n"
        "  constant.1 = f32[] constant(2)\n"
        "  broadcast.1 = f32[3,4]{1,0} broadcast(constant.1), dimensions={}\n"
        "  mul.1 = f32[3,4]{1,0} multiply(exp.1, broadcast.1)\n"
        "  constant.2 = f32[] constant(0)\n"
        "  ROOT reduce_sum.4 = f32[] reduce(mul.1, constant.2), dimensions={0,1}, "
        "to_apply=region_0.1\n"
        "}\n\n")


def _optax_repr(f, x):
    """What optax's numerics_test compares: the text from ENTRY on, with the entry's and
    the root's names blanked."""
    s = jax.jit(f).lower(x).compiler_ir(dialect="hlo").as_hlo_text()
    s = re.search(r"ENTRY.*", s, re.DOTALL).group()
    s = re.sub("ENTRY.*?{", "ENTRY XXXX", s)
    return re.sub("ROOT.*?=", "ROOT result.2 =", s)


def _abs_sq(x):
    return (x.conj() * x).real


@pytest.mark.parametrize("x", [3, 3.0, np.array([4, 5.2]), 1j, 3.0 + 1j,
                               np.array([4 + 1j, 5.2 + 1j])])
@pytest.mark.parametrize("sq", [lambda x: x ** 2, lambda x: x * x, jnp.square])
def test_squares_equal_for_real_differ_for_complex(sq, x):
    if np.iscomplexobj(x):
        assert _optax_repr(sq, x) != _optax_repr(_abs_sq, x)
    else:
        assert _optax_repr(sq, x) == _optax_repr(_abs_sq, x)


def test_deterministic_and_sensitive_to_every_difference():
    x = np.ones(3, np.float32)

    def text(f, *args, **kw):
        return jax.jit(f).lower(*args).compiler_ir("hlo").as_hlo_text(**kw)
    base = text(lambda x: jnp.sin(x) * 2.0, x)
    assert base == text(lambda x: jnp.sin(x) * 2.0, x)            # a new trace
    assert base != text(lambda x: jnp.sin(x) * 3.0, x)            # a constant
    assert base != text(lambda x: jnp.cos(x) * 2.0, x)            # an operation
    assert base != text(lambda x: jnp.sin(x) * 2.0, np.ones(4, np.float32))   # a shape
    assert base != text(lambda x: jnp.sin(x) * 2.0, np.ones(3, np.float16))   # a dtype
    # parameters of an operation printed as a custom-call
    assert text(lambda x: jnp.cumsum(x), x) != text(lambda x: jnp.cumsum(x[::-1])[::-1], x)
    # large constants print as {...} unless asked for
    a, b = np.arange(12, dtype=np.float32), np.arange(12, dtype=np.float32)[::-1]
    y = np.ones(12, np.float32)
    assert text(lambda y: y + a, y) == text(lambda y: y + b, y)
    assert "constant({...})" in text(lambda y: y + a, y)
    assert text(lambda y: y + a, y, print_large_constants=True) != \
        text(lambda y: y + b, y, print_large_constants=True)
    assert "constant({0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11})" in text(
        lambda y: y + a, y, print_large_constants=True)


def test_fallback_custom_call_names_the_primitive_and_its_parameters():
    x = np.ones(4, np.float32)
    text = jax.jit(lambda x: (jnp.arcsin(x), jnp.cumsum(x))).lower(x).as_text(dialect="hlo")
    assert re.search(r"asin\.\d+ = f32\[4\]\{0\} custom-call\(x\.1\), "
                     r'custom_call_target="jaxlite.asin"', text), text
    assert 'custom_call_target="jaxlite.cumsum", backend_config="axis=0 reverse=False"' \
        in text
    # a scan's body is a called computation of its custom-call
    text = jax.jit(lambda x: lax.scan(lambda c, v: (c + v, c * v), 0.0, x)).lower(
        x).as_text(dialect="hlo")
    m = re.search(r"called_computations=\{(scan_jaxpr\.\d+)\}", text)
    assert m and re.search(rf"^{re.escape(m.group(1))} \{{", text, re.M), text
    assert "ROOT tuple" in text.split(m.group(1) + " {")[1]


def test_multiple_results_and_passthrough():
    x = np.ones(3, np.float32)
    text = jax.jit(lambda x: x).lower(x).as_text("hlo")
    assert "ROOT x.1 = f32[3]{0} parameter(0)" in text
    text = jax.jit(lambda x: ()).lower(x).as_text("hlo")
    assert "->()}" in text and "ROOT tuple.1 = () tuple()" in text
    text = jax.jit(lambda x: jnp.argsort(x)).lower(x).as_text("hlo")
    assert 'custom_call_target="jaxlite.sort"' in text


def test_typed_keys_print_as_their_data():
    k = jax.random.key(0)
    text = jax.jit(lambda k: jax.random.split(k)).lower(k).as_text("hlo")
    assert text.startswith("HloModule jit__lambda, entry_computation_layout={(u32[2]{0})->"
                           "u32[2,2]{1,0}}")


def test_dialects():
    low = jax.jit(lambda x: x + 1).lower(1.0)
    assert "add a 1.0" in str(low.compiler_ir())
    assert str(low.compiler_ir("stablehlo")) == low.as_text()
    ir = low.compiler_ir("hlo")
    assert ir.name() == "jit__lambda"
    assert low.as_text("hlo") == ir.as_hlo_text()
    with pytest.raises(ValueError, match="unknown dialect: foo"):
        low.compiler_ir("foo")
    with pytest.raises(ValueError, match="unknown dialect: foo"):
        low.as_text("foo")
