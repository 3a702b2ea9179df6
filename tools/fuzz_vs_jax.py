"""Differential testing: random small programs run on real JAX and on jaxlite, compared.

    python tools/fuzz_vs_jax.py [--n 2000] [--seed 0] [--show 30]

Each program chains one to four operations drawn from a table of jnp/lax/nn/random/
scipy.special functions, control flow, indexing and linear algebra over random inputs
(shapes, dtypes, weak-typed Python scalars) and is run in the modes asked for (``--modes``):
eager, ``jit``, ``grad`` of its sum (float programs), ``vmap`` over a leading axis, and
``jvp``, ``jacrev``, ``grad2`` (second derivative), ``vmap_grad``. A case
disagrees when one side raises and the other does not, the exception classes differ, or the
results differ in shape, dtype or value (beyond a tolerance for the dtype). The disagreeing
cases are printed with the program's text, so each can be pasted into a test. Needs real JAX
installed (a reference only; jaxlite never imports it).
"""
import argparse
import collections
import sys
import traceback

import numpy as np

UNARY = ["sin", "cos", "tan", "exp", "log", "tanh", "sqrt", "abs", "negative", "floor",
         "ceil", "sign", "round", "expm1", "log1p", "arctan", "arcsin", "arccos", "sinh",
         "cosh", "arcsinh", "arccosh", "arctanh", "square", "reciprocal", "exp2", "log2",
         "log10", "cbrt", "rint", "trunc", "sinc", "deg2rad", "i0", "signbit",
         "isnan", "isfinite", "logical_not", "positive", "conj", "real", "imag", "angle",
         "nan_to_num", "fabs", "spacing", "degrees"]
NN_UNARY = ["relu", "relu6", "sigmoid", "softplus", "silu", "gelu", "elu", "selu", "celu",
            "log_sigmoid", "hard_tanh", "leaky_relu", "soft_sign", "hard_sigmoid",
            "hard_swish", "mish", "squareplus", "sparse_plus", "glu"]
BINARY = ["add", "subtract", "multiply", "divide", "power", "maximum", "minimum", "arctan2",
          "floor_divide", "remainder", "fmod", "logaddexp", "logaddexp2", "hypot",
          "true_divide", "copysign", "nextafter", "heaviside", "fmax", "fmin",
          "greater", "less_equal", "equal", "not_equal", "float_power", "ldexp_safe",
          "bitwise_and", "bitwise_or", "bitwise_xor", "left_shift", "right_shift", "gcd",
          "lcm", "logical_and", "logical_xor"]
REDUCE = ["sum", "mean", "max", "min", "prod", "std", "var", "argmax", "argmin", "cumsum",
          "cumprod", "sort", "argsort", "any", "all", "median", "ptp", "nansum", "nanmean",
          "count_nonzero", "average", "cummax", "logsumexp", "softmax", "log_softmax",
          "diff", "nanmax", "amax", "cumulative_sum", "quantile_half"]
SHAPE = ["transpose", "flip", "roll", "ravel", "expand_dims", "squeeze1", "tile", "repeat",
         "pad", "slice", "take", "concat_self", "stack_self", "triu", "tril", "clip",
         "where_pos", "sort_desc", "moveaxis", "swapaxes", "atleast_2d", "broadcast_row",
         "diagonal", "trace", "outer_self", "dot_self", "matmul_t", "einsum_t", "kron_small",
         "cross3", "unique_size", "searchsorted_self", "argwhere_size", "nonzero_size",
         "cumsum_rev", "astype_int", "astype_f16", "astype_bf16", "scatter_add", "gather_at",
         "dynamic_slice", "top_k", "lax_reduce_window"]
FLOW = ["cond_sign", "scan_cumsum", "fori_double", "while_halve", "switch3", "map_sq",
        "associative_scan", "checkpoint_sin", "custom_jvp_clip", "select_n"]
INDEX = ["neg_index", "bool_mask_where", "at_min", "at_max", "at_mul", "take_along",
         "index_2d", "ellipsis_newaxis", "at_set_neg", "slice_step_neg", "at_get_clip",
         "put_along", "dynamic_update", "gather_oob_fill", "linalg_solve_spd",
         "linalg_inv_spd", "cholesky_spd", "qr_r", "svd_vals", "eigh_vals", "det_small",
         "norm_fro", "norm_2", "matrix_power3"]
RANDOM = ["normal", "uniform", "bernoulli", "categorical", "gamma", "beta", "randint",
          "permutation", "choice", "truncated_normal", "exponential", "poisson", "dirichlet",
          "split_normal", "fold_in_uniform", "key_data"]
SPECIAL = ["gammaln", "digamma", "erf", "erfc", "erfinv", "xlogy", "xlog1py", "logit",
           "expit", "ndtri", "ndtr", "i0e", "i1e", "entr", "log_ndtr", "betaln",
           "gammainc", "multigammaln2", "polygamma1", "zeta2", "sinc", "logsumexp_b"]
DTYPES = ["float32", "float32", "float32", "int32", "bool", "bfloat16", "float16",
          "complex64", "uint8"]


def make_input(rng, dtype, shape):
    """A random NumPy array (or, for shape None, a Python scalar: weakly typed in both)."""
    if shape is None:
        return float(np.round(rng.normal() * 3, 2)) if dtype != "int32" else int(
            rng.integers(-5, 6))
    if dtype == "bool":
        return rng.random(shape) < 0.5
    if dtype in ("int32", "uint8"):
        lo = 0 if dtype == "uint8" else -8
        return rng.integers(lo, 9, shape).astype(dtype)
    x = rng.normal(size=shape) * rng.choice([0.5, 2.0, 10.0])
    special = rng.random(shape) < 0.05
    x = np.where(special, rng.choice([0.0, -0.0, 1.0, -1.0, np.inf, np.nan], shape), x)
    if dtype == "complex64":
        return (x + 1j * rng.normal(size=shape)).astype(np.complex64)
    if dtype == "bfloat16":
        import ml_dtypes
        return x.astype(ml_dtypes.bfloat16)
    return x.astype(dtype)


def apply_op(ns, op, kind, x, y, rng_key):
    """Run ``op`` with the namespace ``ns`` (jnp, lax, nn, jax of one side)."""
    jnp, lax, nn = ns["jnp"], ns["lax"], ns["nn"]
    a = rng_key
    if kind == "unary":
        return getattr(jnp, op)(x)
    if kind == "nn":
        return getattr(nn, op)(x)
    if kind == "binary":
        if op == "ldexp_safe":
            return jnp.ldexp(x, jnp.asarray(y).astype(jnp.int32) % 7)
        return getattr(jnp, op)(x, y)
    if kind == "reduce":
        ax = a % max(1, jnp.ndim(x)) if jnp.ndim(x) else None
        if op in ("softmax", "log_softmax", "logsumexp"):
            mod = nn if op != "logsumexp" else ns["scipy_special"]
            return getattr(mod, op)(x, axis=ax)
        if op == "quantile_half":
            return jnp.quantile(x, 0.5, axis=ax)
        if op == "diff":
            return jnp.diff(x, axis=ax if ax is not None else -1)
        if op in ("cummax",):
            return lax.cummax(x, axis=ax or 0)
        if op == "cumulative_sum":
            return jnp.cumulative_sum(x, axis=ax) if jnp.ndim(x) else jnp.cumulative_sum(x)
        return getattr(jnp, op)(x, axis=ax)
    # shape-ish operations
    nd = jnp.ndim(x)
    if op == "transpose":
        return jnp.transpose(x)
    if op == "flip":
        return jnp.flip(x)
    if op == "roll":
        return jnp.roll(x, a - 2)
    if op == "ravel":
        return jnp.ravel(x)
    if op == "expand_dims":
        return jnp.expand_dims(x, 0)
    if op == "squeeze1":
        return jnp.squeeze(jnp.expand_dims(x, -1), -1)
    if op == "tile":
        return jnp.tile(x, 2)
    if op == "repeat":
        return jnp.repeat(x, 2, axis=0 if nd else None)
    if op == "pad":
        return jnp.pad(x, 1, mode=["constant", "edge", "reflect", "wrap"][a % 4])
    if op == "slice":
        return x[..., ::2] if nd else x
    if op == "take":
        return jnp.take(x, jnp.array([0, -1, 2]), axis=0 if nd else None, mode="clip")
    if op == "concat_self":
        return jnp.concatenate([x, x], axis=-1 if nd else None) if nd else jnp.stack([x, x])
    if op == "stack_self":
        return jnp.stack([x, x], axis=-1)
    if op in ("triu", "tril"):
        return getattr(jnp, op)(jnp.atleast_2d(x), k=a % 3 - 1)
    if op == "clip":
        return jnp.clip(x, -1, 2)
    if op == "where_pos":
        return jnp.where(x > 0, x, y)
    if op == "sort_desc":
        return jnp.sort(x, descending=True) if nd else x
    if op == "moveaxis":
        return jnp.moveaxis(x, 0, -1) if nd else x
    if op == "swapaxes":
        return jnp.swapaxes(x, 0, -1) if nd else x
    if op == "atleast_2d":
        return jnp.atleast_2d(x)
    if op == "broadcast_row":
        return jnp.broadcast_to(x, (2,) + jnp.shape(x))
    if op == "diagonal":
        return jnp.diagonal(jnp.atleast_2d(x))
    if op == "trace":
        return jnp.trace(jnp.atleast_2d(x))
    if op == "outer_self":
        return jnp.outer(x, x)
    if op == "dot_self":
        return jnp.dot(jnp.ravel(x), jnp.ravel(x))
    if op == "matmul_t":
        m = jnp.atleast_2d(x)
        return jnp.matmul(m, jnp.swapaxes(m, -1, -2))
    if op == "einsum_t":
        m = jnp.atleast_2d(x)
        return jnp.einsum("...ij,...kj->...ik", m, m)
    if op == "kron_small":
        return jnp.kron(jnp.ravel(x)[:3], jnp.ravel(x)[:2])
    if op == "cross3":
        return jnp.cross(jnp.ravel(jnp.tile(x, 3))[:3], jnp.ravel(jnp.tile(x, 3))[-3:])
    if op == "unique_size":
        return jnp.unique(x, size=4, fill_value=0)
    if op == "searchsorted_self":
        return jnp.searchsorted(jnp.sort(jnp.ravel(x)), x)
    if op == "argwhere_size":
        return jnp.argwhere(x, size=3, fill_value=-1)
    if op == "nonzero_size":
        return jnp.nonzero(jnp.ravel(x), size=3)[0]
    if op == "cumsum_rev":
        return lax.cumsum(jnp.atleast_1d(x), axis=0, reverse=True)
    if op == "astype_int":
        return x.astype(jnp.int32) if hasattr(x, "astype") else jnp.int32(x)
    if op == "astype_f16":
        return jnp.asarray(x).astype(jnp.float16)
    if op == "astype_bf16":
        return jnp.asarray(x).astype(jnp.bfloat16)
    if op == "scatter_add":
        v = jnp.atleast_1d(x)
        return v.at[jnp.array([0, 0, -1])].add(v[0])
    if op == "gather_at":
        v = jnp.atleast_1d(x)
        return v.at[jnp.array([5, -7, 1])].get(mode="fill", fill_value=3)
    if op == "dynamic_slice":
        v = jnp.atleast_1d(x)
        return lax.dynamic_slice_in_dim(v, a - 2, 2, axis=0)
    if op == "top_k":
        return lax.top_k(jnp.atleast_1d(x), 2)[0]
    if op == "lax_reduce_window":
        v = jnp.atleast_1d(x)
        init = jnp.zeros((), v.dtype)
        return lax.reduce_window(v, init, lax.add, (2,) + (1,) * (v.ndim - 1),
                                 (1,) * v.ndim, "SAME")
    return _apply_more(ns, op, x, y, a)


def _spd(jnp, x):
    v = jnp.ravel(jnp.asarray(x, jnp.float32))[:3]
    v = jnp.concatenate([v, jnp.ones(3 - v.shape[0], v.dtype)]) if v.shape[0] < 3 else v
    m = jnp.outer(v, v) + jnp.tanh(v)[:, None] * jnp.tanh(v)[None, :]
    return m + 3 * jnp.eye(3, dtype=m.dtype)


def _apply_more(ns, op, x, y, a):
    """Control flow, indexing and linear algebra steps."""
    jnp, lax, jax = ns["jnp"], ns["lax"], ns["jax"]
    v = jnp.atleast_1d(x)
    if op == "cond_sign":
        return lax.cond(jnp.sum(v.real if jnp.iscomplexobj(v) else v) > 0,
                        lambda t: t * 2, lambda t: t - 1, v)
    if op == "scan_cumsum":
        return lax.scan(lambda c, e: (c + e, c * e), jnp.zeros_like(v[0]), v)
    if op == "fori_double":
        return lax.fori_loop(0, a + 1, lambda i, c: c + c * 0.5 if c.dtype.kind in "fc"
                             else c + 1, v)
    if op == "while_halve":
        return lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] * 2),
                              (0, v))[1]
    if op == "switch3":
        return lax.switch(a, [lambda t: t + 1, lambda t: t * 3, lambda t: -t], v)
    if op == "map_sq":
        return lax.map(lambda t: t * t, v)
    if op == "associative_scan":
        return lax.associative_scan(jnp.add, v)
    if op == "checkpoint_sin":
        return jax.checkpoint(lambda t: jnp.sin(t) * t)(v)
    if op == "custom_jvp_clip":
        return ns["nn"].relu6(v)
    if op == "select_n":
        return lax.select_n(v > 0 if v.dtype != bool else v, v, v * 2) if not \
            jnp.iscomplexobj(v) else v
    if op == "neg_index":
        return v[-1]
    if op == "bool_mask_where":
        return jnp.where(v > 0, v, 0) if not jnp.iscomplexobj(v) else v
    if op in ("at_min", "at_max", "at_mul"):
        return getattr(v.at[jnp.array([0, -1, 0])], op[3:])(v[-1])
    if op == "take_along":
        return jnp.take_along_axis(v, jnp.argsort(v, axis=-1), axis=-1) if not \
            jnp.iscomplexobj(v) else v
    if op == "index_2d":
        m = jnp.atleast_2d(x)
        return m[jnp.array([0, -1]), 0]
    if op == "ellipsis_newaxis":
        return v[..., None, ::-1]
    if op == "at_set_neg":
        return v.at[-a - 1].set(7, mode="drop")
    if op == "slice_step_neg":
        return v[::-2]
    if op == "at_get_clip":
        return v.at[jnp.array([-9, 9])].get(mode="clip")
    if op == "put_along":
        return jnp.put_along_axis(v, jnp.array([0]), v[-1], axis=0, inplace=False)
    if op == "dynamic_update":
        return lax.dynamic_update_slice_in_dim(v, v[:1] * 2, a - 2, axis=0)
    if op == "gather_oob_fill":
        return v.at[jnp.array([a, 10])].get(mode="fill")
    if op in RANDOM:
        return _random_op(ns, op, v, a)
    if op in SPECIAL:
        return _special_op(ns, op, v, y)
    m = _spd(jnp, x)
    if op == "linalg_solve_spd":
        return jnp.linalg.solve(m, jnp.arange(3.0))
    if op == "linalg_inv_spd":
        return jnp.linalg.inv(m)
    if op == "cholesky_spd":
        return jnp.linalg.cholesky(m)
    if op == "qr_r":
        return jnp.abs(jnp.linalg.qr(m)[1])
    if op == "svd_vals":
        return jnp.linalg.svd(m, compute_uv=False)
    if op == "eigh_vals":
        return jnp.linalg.eigh(m)[0]
    if op == "det_small":
        return jnp.linalg.det(m)
    if op == "norm_fro":
        return jnp.linalg.norm(v)
    if op == "norm_2":
        return jnp.linalg.norm(m, 2)
    if op == "matrix_power3":
        return jnp.linalg.matrix_power(m, 3)
    raise ValueError(op)


def _random_op(ns, op, v, a):
    """jax.random with a key from ``a``, shaped like ``v`` (values of ``v`` as parameters
    where a sampler takes them)."""
    jax, jnp = ns["jax"], ns["jnp"]
    r = jax.random
    k = r.key(a) if a % 2 else r.PRNGKey(a)
    shape = v.shape
    fv = jnp.abs(v.real if jnp.iscomplexobj(v) else v).astype(jnp.float32) + 0.5
    if op == "normal":
        return r.normal(k, shape)
    if op == "uniform":
        return r.uniform(k, shape, minval=-1.0, maxval=2.0)
    if op == "bernoulli":
        return r.bernoulli(k, 0.3, shape)
    if op == "categorical":
        return r.categorical(k, jnp.atleast_2d(fv))
    if op == "gamma":
        return r.gamma(k, fv)
    if op == "beta":
        return r.beta(k, fv, 2.0)
    if op == "randint":
        return r.randint(k, shape, -5, 17)
    if op == "permutation":
        return r.permutation(k, jnp.ravel(v))
    if op == "choice":
        return r.choice(k, jnp.ravel(v), (2,), replace=bool(a % 2))
    if op == "truncated_normal":
        return r.truncated_normal(k, -1.0, 2.0, shape)
    if op == "exponential":
        return r.exponential(k, shape)
    if op == "poisson":
        return r.poisson(k, fv * 3, shape)
    if op == "dirichlet":
        return r.dirichlet(k, jnp.atleast_1d(fv))
    if op == "split_normal":
        return r.normal(r.split(k, 3)[a % 3], shape)
    if op == "fold_in_uniform":
        return r.uniform(r.fold_in(k, 7), shape)
    return r.key_data(r.split(k, 2)) if a % 2 else r.split(k, 2)


def _special_op(ns, op, v, y):
    """jax.scipy.special of ``v`` (and ``y``)."""
    sp, jnp = ns["scipy_special"], ns["jnp"]
    if op == "xlogy":
        return sp.xlogy(v, y)
    if op == "xlog1py":
        return sp.xlog1py(v, y)
    if op == "betaln":
        return sp.betaln(jnp.abs(v), 1.5)
    if op == "gammainc":
        return sp.gammainc(jnp.abs(v) + 0.1, 2.0)
    if op == "multigammaln2":
        return sp.multigammaln(jnp.abs(v) + 1.0, 2)
    if op == "polygamma1":
        return sp.polygamma(1, v)
    if op == "zeta2":
        return sp.zeta(jnp.abs(v) + 1.5, 2.0)
    if op == "sinc":
        return jnp.sinc(v)
    if op == "logsumexp_b":
        return sp.logsumexp(v, b=jnp.ones_like(v) * 0.5)
    return getattr(sp, op)(v)


KINDS = [("unary", UNARY), ("nn", NN_UNARY), ("binary", BINARY), ("reduce", REDUCE),
         ("shape", SHAPE), ("flow", FLOW), ("index", INDEX),
         ("random", RANDOM), ("special", SPECIAL)]


def random_program(rng):
    """(inputs, steps): a program is a list of (kind, op, key) applied left to right; binary
    steps take the second input."""
    dt = str(rng.choice(DTYPES))
    shape = tuple(int(s) for s in rng.integers(1, 5, rng.integers(0, 4)))
    x = make_input(rng, dt, shape)
    if rng.random() < 0.3:
        y = make_input(rng, str(rng.choice(["float32", "int32"])), None)
    else:
        dt2 = dt if rng.random() < 0.7 else str(rng.choice(DTYPES))
        yshape = shape[int(rng.integers(0, len(shape) + 1)):]
        y = make_input(rng, dt2, yshape)
    steps = []
    for _ in range(int(rng.integers(1, 5))):
        kind, ops = KINDS[int(rng.integers(0, len(KINDS)))]
        steps.append((kind, str(rng.choice(ops)), int(rng.integers(0, 5))))
    return x, y, steps


def run(ns, x, y, steps, mode):
    jax = ns["jax"]

    def prog(x, y):
        for kind, op, key in steps:
            x = apply_op(ns, op, kind, x, y, key)
        return x

    if mode == "eager":
        return prog(x, y)
    if mode == "jit":
        return jax.jit(prog)(x, y)
    if mode == "grad":
        return jax.grad(lambda x, y: ns["jnp"].sum(prog(x, y)).real)(x, y)
    if mode == "vmap":
        return jax.vmap(prog, in_axes=(0, None))(x, y)
    jnp = ns["jnp"]
    if mode == "jvp":
        t = np.ones_like(x)
        return jax.jvp(lambda x: prog(x, y), (x,), (t,))
    if mode == "jacrev":
        return jax.jit(jax.jacrev(lambda x: jnp.sum(prog(x, y)).real))(x)
    if mode == "grad2":
        g = jax.grad(lambda x: jnp.sum(prog(x, y)).real)
        return jax.grad(lambda x: jnp.sum(g(x)))(x)
    if mode == "vmap_grad":
        return jax.vmap(jax.grad(lambda x: jnp.sum(prog(x, y)).real))(x)
    raise ValueError(mode)


def tolerance(dtype):
    return {"bfloat16": 2e-2, "float16": 2e-3}.get(str(dtype), 2e-5)


def outcome(ns, x, y, steps, mode):
    try:
        out = run(ns, x, y, steps, mode)
        leaves = ns["jax"].tree_util.tree_leaves(out)
        return "ok", [(np.asarray(v), str(getattr(v, "dtype", type(v).__name__)),
                       bool(getattr(v, "weak_type", False))) for v in leaves]
    except Exception as e:  # noqa: BLE001
        return "err", type(e).__name__ + ": " + str(e).splitlines()[0][:120] if str(e) else \
            type(e).__name__


def same_values(a, b, dtype):
    if a.shape != b.shape:
        return False
    if "float0" in str(dtype):       # (tangents of integer values: no data)
        return True
    if a.dtype.kind in "biu" or a.dtype == bool:
        return np.array_equal(a, b)
    a64 = a.astype(np.complex128 if a.dtype.kind == "c" else np.float64)
    b64 = b.astype(a64.dtype)
    tol = tolerance(dtype)
    scale = np.maximum(np.abs(a64), 1.0)
    ok = np.isclose(a64, b64, rtol=tol, atol=0) | (np.abs(a64 - b64) <= tol * scale * 10)
    ok |= (np.isnan(a64) & np.isnan(b64))
    return bool(np.all(ok))


def compare(res_j, res_l):
    (kj, vj), (kl, vl) = res_j, res_l
    if kj == "err" and kl == "err":
        cj, cl = vj.split(":")[0], vl.split(":")[0]
        return None if cj == cl else f"error class: JAX {vj!r} / jaxlite {vl!r}"
    if kj != kl:
        return f"JAX {'raises ' + vj if kj == 'err' else 'runs'}; jaxlite " \
               f"{'raises ' + vl if kl == 'err' else 'runs'}"
    if len(vj) != len(vl):
        return "different number of results"
    for (aj, dj, wj), (al, dl, wl) in zip(vj, vl):
        if dj != dl:
            return f"dtype JAX {dj} / jaxlite {dl}"
        if wj != wl:
            return f"weak type JAX {wj} / jaxlite {wl}"
        if aj.shape != al.shape:
            return f"shape JAX {aj.shape} / jaxlite {al.shape}"
        if not same_values(aj, al, dj):
            return f"values differ: JAX {np.array2string(aj.ravel()[:6], precision=6)} / " \
                   f"jaxlite {np.array2string(al.ravel()[:6], precision=6)}"
    return None


def namespaces():
    import jax
    import jax.numpy as jnp
    import jaxlite
    import jaxlite.numpy as ljnp
    jax.config.update("jax_platforms", "cpu")
    return ({"jax": jax, "jnp": jnp, "lax": jax.lax, "nn": jax.nn,
             "scipy_special": jax.scipy.special},
            {"jax": jaxlite, "jnp": ljnp, "lax": jaxlite.lax, "nn": jaxlite.nn,
             "scipy_special": jaxlite.scipy.special})


def describe(x, y, steps):
    def d(v):
        if isinstance(v, np.ndarray):
            return f"{v.dtype}{list(v.shape)}"
        return repr(v)
    ops = " -> ".join(f"{k}:{o}({a})" for k, o, a in steps)
    return f"x={d(x)} y={d(y)}: {ops}"


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=500)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--show", type=int, default=40)
    p.add_argument("--modes", default="eager,jit,grad,vmap")
    args = p.parse_args()
    nsj, nsl = namespaces()
    rng = np.random.default_rng(args.seed)
    bad = collections.defaultdict(list)
    total = 0
    np.seterr(all="ignore")
    for i in range(args.n):
        x, y, steps = random_program(rng)
        for mode in args.modes.split(","):
            is_float = isinstance(x, np.ndarray) and x.dtype.kind == "f"
            if mode in ("grad", "jvp", "jacrev", "grad2") and not is_float:
                continue
            if mode in ("vmap", "vmap_grad") and not (isinstance(x, np.ndarray) and x.ndim
                                                      and (mode == "vmap" or is_float)):
                continue
            total += 1
            try:
                why = compare(outcome(nsj, x, y, steps, mode), outcome(nsl, x, y, steps, mode))
            except Exception:  # noqa: BLE001
                why = "comparison crashed: " + traceback.format_exc(limit=1)
            if why:
                bad[why.split(":")[0]].append((i, mode, describe(x, y, steps), why))
    nbad = sum(map(len, bad.values()))
    print(f"{total - nbad} of {total} cases agree ({100 * (total - nbad) / max(total, 1):.1f}%)")
    shown = 0
    for kind, cases in sorted(bad.items(), key=lambda kv: -len(kv[1])):
        print(f"\n## {kind}: {len(cases)}")
        for i, mode, desc, why in cases:
            if shown >= args.show:
                break
            shown += 1
            print(f"  [{i} {mode}] {desc}\n      {why}")
    return 0 if not nbad else 1


if __name__ == "__main__":
    sys.exit(main())
