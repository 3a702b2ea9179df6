"""Small programs whose HLO text (``jit(f).lower(*args).compiler_ir("hlo").as_hlo_text()``)
jaxlite compares with JAX 0.10.2's (tests/test_hlo_text.py; goldens written by
``python tests/hlo_programs.py`` with the real jax installed, into
tests/goldens/hlo_jax_0.10.2.json).

Each entry is (name, make) where ``make(jax, jnp, lax)`` returns (function, args), so the same
table runs on either library.
"""
from __future__ import annotations

import json
import pathlib

import numpy as np

GOLDENS = pathlib.Path(__file__).parent / "goldens" / "hlo_jax_0.10.2.json"

f32 = np.float32


def _ones(*shape):
    return np.ones(shape, f32)


PROGRAMS = [
    ("pow2_scalar", lambda jax, jnp, lax: (lambda x: x ** 2, (3.0,))),
    ("square_vec", lambda jax, jnp, lax: (jnp.square, (np.array([4, 5.2]),))),
    ("mul_int", lambda jax, jnp, lax: (lambda x: x * x, (3,))),
    ("abs_sq_complex", lambda jax, jnp, lax: (lambda x: (x.conj() * x).real,
                                               (np.array([4 + 1j, 5.2 + 1j]),))),
    ("sum_exp", lambda jax, jnp, lax: (lambda x: jnp.sum(jnp.exp(x) * 2.0), (_ones(3, 4),))),
    ("matmul", lambda jax, jnp, lax: (lambda x, y: x @ y, (_ones(3, 4), _ones(4, 2)))),
    ("batched_dot", lambda jax, jnp, lax: (lambda x, y: jnp.einsum("bij,bjk->bik", x, y),
                                            (_ones(2, 3, 4), _ones(2, 4, 5)))),
    ("max_axis", lambda jax, jnp, lax: (lambda x: jnp.max(x, axis=1), (_ones(3, 4),))),
    ("min_int", lambda jax, jnp, lax: (lambda x: jnp.min(x, axis=0),
                                        (np.ones((3, 4), np.int32),))),
    ("prod_all", lambda jax, jnp, lax: (lambda x: jnp.prod(x), (_ones(5),))),
    ("transpose_reshape_slice", lambda jax, jnp, lax: (lambda x: x.T.reshape(-1)[1:3],
                                                        (_ones(3, 4),))),
    ("strided_slice_rev", lambda jax, jnp, lax: (lambda x: (x[::2], x[::-1]), (_ones(6),))),
    ("tuple_out", lambda jax, jnp, lax: (lambda x, y: (x + y, x, 1.0), (_ones(3), 2.0))),
    ("small_constant", lambda jax, jnp, lax: (lambda x: x + np.arange(3, dtype=f32),
                                              (_ones(3),))),
    ("large_constant", lambda jax, jnp, lax: (lambda x: x + np.arange(12, dtype=f32),
                                              (_ones(12),))),
    ("unary_ops", lambda jax, jnp, lax: (lambda x: (jnp.tanh(x), jnp.sqrt(x), jnp.log1p(x),
                                                    jnp.floor(x), jnp.sin(x), lax.rsqrt(x),
                                                    jnp.expm1(x), jax.nn.sigmoid(x)),
                                         (_ones(4),))),
    ("compare_select", lambda jax, jnp, lax: (lambda x, y: lax.select(x > y, x, y - 1.0),
                                              (_ones(4), _ones(4)))),
    ("convert_types", lambda jax, jnp, lax: (lambda x: (x.astype(jnp.int32),
                                                        x.astype(jnp.bfloat16),
                                                        (x > 0).astype(jnp.float32)),
                                             (_ones(2, 2),))),
    ("integer_powers", lambda jax, jnp, lax: (lambda x: x ** 5 + x ** -2, (_ones(4),))),
    ("broadcast_in_dim", lambda jax, jnp, lax: (lambda x: jnp.broadcast_to(x[:, None], (3, 4))
                                                + 1.0, (_ones(3),))),
    ("concat_pad", lambda jax, jnp, lax: (lambda x: (
        jnp.concatenate([x, x]), lax.pad(x, 0.0, [(1, 2, 1)])), (_ones(3),))),
    ("argmax", lambda jax, jnp, lax: (lambda x: lax.argmax(x, 0, jnp.int32), (_ones(4),))),
    ("select_n_int", lambda jax, jnp, lax: (lambda i, x: lax.select_n(i, x, x + 1, x * 2),
                                            (np.array([0, 2], np.int32), _ones(2)))),
    ("clamp_rem_pow", lambda jax, jnp, lax: (lambda x: (lax.clamp(0.0, x, 1.0), lax.rem(x, 2.0),
                                                        lax.pow(x, x), lax.atan2(x, x)),
                                             (_ones(3),))),
    ("dynamic_slicing", lambda jax, jnp, lax: (lambda x, i: (
        lax.dynamic_slice(x, (i,), (2,)), lax.dynamic_update_slice(x, x[:2], (i,))),
        (_ones(5), np.int32(1)))),
    ("cond", lambda jax, jnp, lax: (lambda x: lax.cond(x[0] > 0, lambda x: x + 1,
                                                       lambda x: x * 2, x), (_ones(3),))),
    ("while", lambda jax, jnp, lax: (lambda x: lax.while_loop(
        lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] * 2), (0, x)), (_ones(3),))),
    ("bitwise", lambda jax, jnp, lax: (lambda x, y: (x & y, x | y, x ^ y, ~x, x << 1,
                                                     lax.shift_right_logical(x, 2)),
                                       (np.arange(4, dtype=np.int32),
                                        np.arange(4, dtype=np.int32)))),
    ("complex_parts", lambda jax, jnp, lax: (lambda z: (jnp.abs(z), z.real, z.imag,
                                                        lax.complex(z.real, z.imag)),
                                             (np.array([1 + 2j], np.complex64),))),
]


def hlo_text(jax, jnp, lax, make):
    f, args = make(jax, jnp, lax)
    return jax.jit(f).lower(*args).compiler_ir(dialect="hlo").as_hlo_text()


if __name__ == "__main__":
    import jax
    import jax.numpy as jnp
    from jax import lax
    assert jax.__version__ == "0.10.2", jax.__version__
    out = {name: hlo_text(jax, jnp, lax, make) for name, make in PROGRAMS}
    GOLDENS.write_text(json.dumps(out, indent=1, sort_keys=True) + "\n")
    print(f"wrote {len(out)} programs to {GOLDENS}")
