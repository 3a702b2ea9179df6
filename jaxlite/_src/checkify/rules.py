"""checkify's per-primitive rules: ``rule(error, enabled, prim, params, *args) -> (error,
out)``.

Automatic checks follow JAX: nan checks on the primitives that can create a nan, a
division-by-zero check on ``div``, out-of-bounds checks on gather, scatter, dynamic_slice
and dynamic_update_slice. ``check`` equations merge their error. Control flow and calls
carry the error through their bodies: ``cond`` branches, ``scan`` and ``while`` carries (the
loop body also re-evaluates the loop predicate's checks), ``jit``/``checkpoint`` bodies,
``shard_map``/``pmap`` bodies (one error per device, reduced to one) and
``custom_jvp``/``custom_vjp`` primal functions (their rules forward the error, as JAX's).
"""
from __future__ import annotations

import numpy as np

from jaxlite._src.core.avals import aval_of_value
from jaxlite._src.core.ir import ClosedJaxpr
from jaxlite._src.core.primitive import registry
from jaxlite._src.checkify.core import (any_true, checkify_closed, checkify_eval,
                                        current_source, logical_or, merge_into)
from jaxlite._src.checkify.errors import (DivisionByZeroError, Error, NaNError, OOBError,
                                          assert_func)

__all__ = ["rule_for"]

# The primitives that can create a nan (JAX's list, by name).
NAN_PRIMITIVES = (
    "acos", "acosh", "add", "asin", "asinh", "atan2", "atan", "atanh", "bessel_i0e",
    "bessel_i1e", "cbrt", "conv_general_dilated", "cos", "cosh", "cumlogsumexp", "cummax",
    "cummin", "cumprod", "cumsum", "digamma", "dot_general", "erf_inv", "erf", "erfc", "exp",
    "expm1", "fft", "igamma_grad_a", "igamma", "igammac", "integer_pow", "lgamma",
    "linear_solve", "log1p", "log", "logistic", "mul", "pad", "pow", "psum", "reduce",
    "reduce_prod", "reduce_sum", "reduce_window", "reduce_window_sum",
    "regularized_incomplete_beta", "rem", "rng_uniform", "rsqrt", "sin", "sinh", "sqrt",
    "sub", "tan", "tanh")

_RULES = {}


def rule_for(prim):
    """The checkify rule of ``prim`` (None: apply it as is)."""
    return _RULES.get(prim.name)


def _register(names, rule):
    for n in names if isinstance(names, tuple) else (names,):
        _RULES[n] = rule


def _is_float(x):
    dt = np.dtype(aval_of_value(x).dtype)
    return dt.kind in "fc" or dt.name == "bfloat16"


def _isnan_any(x):
    from jaxlite._src.prims.elementwise import ne_p
    return any_true(ne_p.bind(x, x))


def check_nans(prim, error, enabled, out):
    """``error`` plus a NaNError where ``out`` (one or several arrays) holds a nan."""
    if NaNError not in enabled:
        return error
    outs = out if prim.multiple_results else [out]
    preds = [_isnan_any(o) for o in outs if _is_float(o)]
    if not preds:
        return error
    pred = preds[0]
    for p in preds[1:]:
        pred = logical_or(pred, p)
    return assert_func(error, pred, NaNError(current_source(), prim.name))


def _nan_rule(error, enabled, prim, params, *args):
    out = prim.bind(*args, **params)
    return check_nans(prim, error, enabled, out), out


def _div_rule(error, enabled, prim, params, x, y):
    if DivisionByZeroError in enabled:
        from jaxlite._src.prims.elementwise import eq_p
        zero = np.zeros((), aval_of_value(y).dtype)
        error = assert_func(error, any_true(eq_p.bind(y, zero)),
                            DivisionByZeroError(current_source()))
    return _nan_rule(error, enabled, prim, params, x, y)


_register(NAN_PRIMITIVES, _nan_rule)
_register("div", _div_rule)


# ----------------------------------------------------------------------------- indexing

def _jnp():
    from jaxlite._src.numpy import creation, extra_indexing, joining, reductions, shape_ops
    from jaxlite._src.numpy import ufuncs
    return creation, extra_indexing, reductions, shape_ops, ufuncs, joining


def _oob_payload(oob_mask, indices, dims_map, operand_shape):
    """[index, axis, axis size] of the first out-of-bounds index (int32[3])."""
    creation, extra_indexing, reductions, shape_ops, ufuncs, joining = _jnp()
    flat = reductions.argmin(ufuncs.logical_not(oob_mask))
    shape = tuple(aval_of_value(indices).shape)
    last = extra_indexing.unravel_index(flat, shape)[-1] if shape else 0
    axis = creation.array(np.asarray(dims_map, np.int32))[last] if len(dims_map) else \
        np.int32(0)
    size = creation.array(np.asarray(operand_shape, np.int32))[axis]
    index = shape_ops.ravel(indices)[flat]
    return joining.stack([creation.asarray(v).astype(np.int32) for v in (index, axis, size)])


def _oob(error, enabled, name, operand_shape, oob_mask, indices, dims_map):
    if OOBError not in enabled:
        return error
    payload = _oob_payload(oob_mask, indices, dims_map, operand_shape)
    return assert_func(error, any_true(oob_mask),
                       OOBError(current_source(), name, tuple(operand_shape), payload))


def _stack_indices(idx):
    creation, _, _, _, _, joining = _jnp()
    return joining.stack([creation.asarray(i) for i in idx])


def _dynamic_slice_rule(error, enabled, prim, params, operand, *starts):
    out = prim.bind(operand, *starts, **params)
    if OOBError in enabled and starts:
        shape = tuple(aval_of_value(operand).shape)
        idx = _stack_indices(starts)
        dt = aval_of_value(idx).dtype
        sizes = np.asarray(params["slice_sizes"], dt)
        mask = (idx < np.zeros((), dt)) | (idx + sizes > np.asarray(shape, dt))
        error = _oob(error, enabled, "dynamic_slice", shape, mask, idx, range(len(shape)))
    return error, out


def _dynamic_update_slice_rule(error, enabled, prim, params, operand, update, *starts):
    out = prim.bind(operand, update, *starts, **params)
    if OOBError in enabled and starts:
        shape = tuple(aval_of_value(operand).shape)
        idx = _stack_indices(starts)
        dt = aval_of_value(idx).dtype
        upd = np.asarray(aval_of_value(update).shape, dt)
        mask = (idx < np.zeros((), dt)) | (idx + upd > np.asarray(shape, dt))
        error = _oob(error, enabled, "dynamic_update_slice", shape, mask, idx,
                     range(len(shape)))
    return error, out


def _gather_rule(error, enabled, prim, params, operand, indices):
    out = prim.bind(operand, indices, **params)
    if OOBError not in enabled:
        return error, out
    dn = params["dimension_numbers"]
    shape = np.asarray(aval_of_value(operand).shape, np.int64)
    smap = np.asarray(dn.start_index_map, np.int64)
    ia = aval_of_value(indices)
    upper = shape[smap] - np.asarray(params["slice_sizes"], np.int64)[smap]
    upper = np.minimum(upper, np.iinfo(ia.dtype).max).astype(ia.dtype)
    upper = upper.reshape((1,) * (len(ia.shape) - 1) + upper.shape)
    mask = (indices < np.zeros((), ia.dtype)) | (indices > upper)
    return _oob(error, enabled, "gather", tuple(aval_of_value(operand).shape), mask, indices,
                dn.start_index_map), out


def _scatter_rule(error, enabled, prim, params, operand, indices, updates):
    out = prim.bind(operand, indices, updates, **params)
    if OOBError in enabled:
        dn = params["dimension_numbers"]
        oshape = tuple(aval_of_value(operand).shape)
        ushape = tuple(aval_of_value(updates).shape)
        sizes, pos = [], 0
        for i in range(len(oshape)):
            if i in dn.inserted_window_dims or i in dn.operand_batching_dims:
                sizes.append(1)
            else:
                sizes.append(ushape[dn.update_window_dims[pos]])
                pos += 1
        ia = aval_of_value(indices)
        upper = np.asarray([oshape[i] - sizes[i] for i in dn.scatter_dims_to_operand_dims],
                           np.int64)
        upper = np.minimum(upper, np.iinfo(ia.dtype).max).astype(ia.dtype)
        upper = upper.reshape((1,) * (len(ia.shape) - 1) + upper.shape)
        mask = (indices < np.zeros((), ia.dtype)) | (indices > upper)
        error = _oob(error, enabled, prim.name, oshape, mask, indices,
                     dn.scatter_dims_to_operand_dims)
    return check_nans(prim, error, enabled, out), out


_register("dynamic_slice", _dynamic_slice_rule)
_register("dynamic_update_slice", _dynamic_update_slice_rule)
_register("gather", _gather_rule)
_register(("scatter", "scatter-add", "scatter-sub", "scatter-mul", "scatter-min",
           "scatter-max"), _scatter_rule)


# ----------------------------------------------------------------------------- check

def _check_rule(error, enabled, prim, params, *args):
    err = Error.from_leaves(params["layout"], list(args), dict(params["metadata"]))
    return merge_into(error, err, enabled), []


_register("check", _check_rule)


# ----------------------------------------------------------------------------- calls

def _with_effects(error, enabled, *closed):
    """``error`` with placeholder slots for every effect the jaxprs ``closed`` can raise,
    so that it can go in and come out of them with one structure."""
    from jaxlite._src.checkify.core import out_effects
    effs = set()
    for c in closed:
        effs |= out_effects(c, enabled, error)
    return error.with_placeholders(effs)


def _call_rule(param):
    """jit / checkpoint: the body takes and returns the error leaves too."""
    def rule(error, enabled, prim, params, *args):
        body = params[param]
        if len(body.in_avals) != len(args):
            return error, prim.bind(*args, **params)
        new, layout, meta = checkify_closed(body, enabled, error)
        leaves = error.leaves()
        new_params = dict(params)
        new_params[param] = new
        if "donated_invars" in params:
            new_params["donated_invars"] = (False,) * (len(leaves) + len(args))
        outs = prim.bind(*leaves, *args, **new_params)
        n = sum(2 + k for _, k in layout)
        return Error.from_leaves(layout, outs[:n], meta), list(outs[n:])
    return rule


_register("jit", _call_rule("jaxpr"))
_register("remat2", _call_rule("jaxpr"))


def _shard_map_rule(error, enabled, prim, params, *args):
    """shard_map (and pmap, staged as one): the body takes the error replicated and each
    device returns its own, stacked along a new leading dimension split over the manual
    mesh axes: the error comes out batched over the devices, as JAX's (``get()`` names the
    failing mapped indices)."""
    from jaxlite._src.interpreters.eval import eval_jaxpr
    from jaxlite._src.interpreters.staging import trace_to_jaxpr
    from jaxlite._src.prims.collectives import axis_env
    from jaxlite._src.prims.shape import broadcast_in_dim_p
    from jaxlite._src.sharding.partition_spec import PartitionSpec
    mesh, body = params["mesh"], params["jaxpr"]
    manual = params.get("newly_manual_axes") or mesh.axis_names
    every = PartitionSpec(tuple(a for a in mesh.axis_names if a in manual))
    with axis_env(mesh):
        new, layout, meta = checkify_closed(body, enabled, error)
    n_in, n_out = len(error.leaves()), sum(2 + k for _, k in layout)

    def stacked(*xs):
        outs = eval_jaxpr(new.jaxpr, new.consts, *xs)
        return [broadcast_in_dim_p.bind(
            e, shape=(1,) + tuple(aval_of_value(e).shape),
            broadcast_dimensions=tuple(range(1, len(aval_of_value(e).shape) + 1)),
            sharding=None) for e in outs[:n_out]] + list(outs[n_out:])
    with axis_env(mesh):
        jaxpr, _, consts = trace_to_jaxpr(stacked, list(new.in_avals))
    outs = prim.bind(*error.leaves(), *args, **dict(
        params, jaxpr=ClosedJaxpr(jaxpr, consts),
        in_specs=(PartitionSpec(),) * n_in + tuple(params["in_specs"]),
        out_specs=(every,) * n_out + tuple(params["out_specs"])))
    return Error.from_leaves(layout, outs[:n_out], meta), list(outs[n_out:])


_register("shard_map", _shard_map_rule)


def _forwarded(error, layout):
    """``error`` (its leaves) extended to ``layout`` with never-set slots."""
    return error.with_placeholders({e for e, _ in layout}).leaves()


def _custom_jvp_rule(error, enabled, prim, params, *args):
    from jaxlite._src.interpreters import ad
    call = params["call_jaxpr"]
    new, layout, meta = checkify_closed(call, enabled, error)
    in_layout, md, n_in = error.layout(), error._metadata, len(error.leaves())
    n_out = sum(2 + k for _, k in layout)
    jvp = params["jvp"]

    def jvp_checked(primals, tangents):
        # the JVP rule itself is not checked (as in JAX): the error is forwarded
        err = Error.from_leaves(in_layout, list(primals[:n_in]), md)
        outs, outs_t = jvp(list(primals[n_in:]), list(tangents[n_in:]))
        leaves = _forwarded(err, layout)
        zeros = [ad.Zero(ad.tangent_aval(aval_of_value(x))) for x in leaves]
        return leaves + list(outs), zeros + list(outs_t)
    jvp_checked.__name__ = getattr(jvp, "__name__", "jvp")
    outs = prim.bind(*error.leaves(), *args, **dict(params, call_jaxpr=new, jvp=jvp_checked))
    return Error.from_leaves(layout, outs[:n_out], meta), list(outs[n_out:])


def _custom_vjp_rule(error, enabled, prim, params, *args):
    call = params["call_jaxpr"]
    new, layout, meta = checkify_closed(call, enabled, error)
    in_layout, md, n_in = error.layout(), error._metadata, len(error.leaves())
    n_out = sum(2 + k for _, k in layout)
    fwd, bwd = params["fwd"], params["bwd"]

    def fwd_checked(primals, perturbed=None):
        err = Error.from_leaves(in_layout, list(primals[:n_in]), md)
        outs, res = fwd(list(primals[n_in:]),
                        None if perturbed is None else list(perturbed[n_in:]))
        return _forwarded(err, layout) + list(outs), res

    def bwd_checked(res, cts):
        return [None] * n_in + list(bwd(res, list(cts[n_out:])))
    fwd_checked.__name__ = getattr(fwd, "__name__", "fwd")
    bwd_checked.__name__ = getattr(bwd, "__name__", "bwd")
    outs = prim.bind(*error.leaves(), *args,
                     **dict(params, call_jaxpr=new, fwd=fwd_checked, bwd=bwd_checked))
    return Error.from_leaves(layout, outs[:n_out], meta), list(outs[n_out:])


_register("custom_jvp_call", _custom_jvp_rule)
_register("custom_vjp_call", _custom_vjp_rule)


# ----------------------------------------------------------------------------- control flow

def _cond_rule(error, enabled, prim, params, index, *ops):
    branches = params["branches"]
    error = _with_effects(error, enabled, *branches)
    new, meta = [], dict(error._metadata)
    layout = error.layout()
    for b in branches:
        nb, lay, m = checkify_closed(b, enabled, error)
        assert lay == layout
        new.append(nb)
        meta.update(m)
    leaves = error.leaves()
    outs = prim.bind(index, *leaves, *ops, **dict(params, branches=tuple(new)))
    return Error.from_leaves(layout, outs[:len(leaves)], meta), list(outs[len(leaves):])


def _scan_rule(error, enabled, prim, params, *args):
    body, nc, nk = params["jaxpr"], params["num_consts"], params["num_carry"]
    # the error is a carry: the checkified body takes (err, consts, carry, xs), reordered
    # to the scan's (consts, err, carry, xs)
    error = _with_effects(error, enabled, body)
    new, layout, meta = checkify_closed(body, enabled, error)
    new = _err_after_consts(new, nc, len(error.leaves()))
    assert layout == error.layout()
    leaves = error.leaves()
    ne = len(leaves)
    outs = prim.bind(*args[:nc], *leaves, *args[nc:],
                     **dict(params, jaxpr=new, num_carry=nk + ne,
                            linear=(False,) * (len(args) + ne)))
    return Error.from_leaves(layout, outs[:ne], meta), list(outs[ne:])


def _err_after_consts(closed, nc, n_err):
    """(err, consts, rest) inputs reordered to (consts, err, rest)."""
    j = closed.jaxpr
    ins = list(j.invars)
    err, consts, rest = ins[:n_err], ins[n_err:n_err + nc], ins[n_err + nc:]
    return ClosedJaxpr(j.replace(invars=consts + err + rest), closed.consts)


def _while_rule(error, enabled, prim, params, *args):
    cj, bj = params["cond_jaxpr"], params["body_jaxpr"]
    cn, bn = params["cond_nconsts"], params["body_nconsts"]
    cconsts, bconsts, init = args[:cn], args[cn:cn + bn], args[cn + bn:]

    error = _with_effects(error, enabled, cj, bj)
    layout, ne = error.layout(), len(error.leaves())
    # the predicate's checks run before the loop and after each step (as often as the
    # predicate itself)
    error, (pred,) = checkify_eval(cj.jaxpr, cj.consts, error, enabled, *cconsts, *init)
    meta = dict(error._metadata)
    from jaxlite._src.core.avals import ShapedArray
    from jaxlite._src.interpreters.staging import trace_to_jaxpr
    c_avals = [aval_of_value(x) for x in cconsts]
    b_avals = [aval_of_value(x) for x in bconsts]
    k_avals = [aval_of_value(x) for x in init]
    e_avals = error.leaf_avals()
    p_aval = ShapedArray((), np.dtype(np.bool_))

    def new_cond(*xs):
        return [xs[len(c_avals) + ne]]

    def new_body(*xs):
        cc, bc = xs[:cn], xs[cn:cn + bn]
        err = Error.from_leaves(layout, list(xs[cn + bn:cn + bn + ne]), meta)
        carry = xs[cn + bn + ne + 1:]
        err, carry = checkify_eval(bj.jaxpr, bj.consts, err, enabled, *bc, *carry)
        err, (p,) = checkify_eval(cj.jaxpr, cj.consts, err, enabled, *cc, *carry)
        assert err.layout() == layout
        meta.update(err._metadata)
        return err.leaves() + [p] + list(carry)
    cjx, _, cconsts_ = trace_to_jaxpr(new_cond, c_avals + e_avals + [p_aval] + k_avals)
    bjx, _, bconsts_ = trace_to_jaxpr(new_body, c_avals + b_avals + e_avals + [p_aval] +
                                      k_avals)
    outs = prim.bind(*cconsts, *cconsts, *bconsts, *error.leaves(), pred, *init,
                     cond_jaxpr=ClosedJaxpr(cjx, cconsts_),
                     body_jaxpr=ClosedJaxpr(bjx, bconsts_),
                     cond_nconsts=cn, body_nconsts=cn + bn)
    return Error.from_leaves(layout, outs[:ne], meta), list(outs[ne + 1:])


_register("cond", _cond_rule)
_register("scan", _scan_rule)
_register("while", _while_rule)

assert all(n in registry for n in ("jit", "cond", "scan", "while", "check"))
