"""lax's structured control flow: cond, switch, while_loop, fori_loop, scan, map.

Each traces its Python callables to closed jaxprs (closed-over tracers become explicit
operands) and binds a control-flow primitive, so it works eagerly, under jit, grad and vmap.
"""
from __future__ import annotations

import weakref

import numpy as np

from jaxlite._src.core import dtypes
from jaxlite._src.core.avals import ShapedArray, aval_of_value
from jaxlite._src.core.ir import ClosedJaxpr
from jaxlite._src.core.trace import Tracer
from jaxlite._src.lax.control_flow_errors import check_branch_outputs, check_carry_type
from jaxlite._src.prims.operands import asarray_value
from jaxlite._src.tree_util import tree_flatten, tree_unflatten
from jaxlite._src.traceback_util import api_boundary

__all__ = ["cond", "switch", "while_loop", "fori_loop", "scan", "map"]



def _value(x):
    """A loop or branch value as an array (a Ref stays itself: its type is checked where
    loops and branches are traced, with JAX's error for refs they return)."""
    if getattr(getattr(x, "aval", None), "is_ref", False):
        return x
    return asarray_value(x)


def _trace(fun, in_tree, avals, what, cache_on=None, debug_fn=None):
    """Trace ``fun`` on flat avals; returns (ClosedJaxpr with the closed-over tracers as
    leading inputs, those tracers, out_tree).

    With ``cache_on`` (the user's function), the result is cached, as JAX caches the tracing
    of control-flow bodies: a second call with the same function, input structure, avals and
    tracing configuration reuses the jaxpr without running the function again. Only
    results that closed over no tracer are cached (those tracers belong to one trace)."""
    from jaxlite._src.config import config
    key = None
    if cache_on is not None:
        key = (in_tree, tuple((a, repr(a.sharding), a.vma) for a in avals), what,
               config.trace_context())
        try:
            hit = _TRACE_CACHE.get(cache_on, {}).get(key)
        except TypeError:      # an unhashable or non-weakrefable function: no caching
            hit, key = None, None
        if hit is not None:
            return hit[0], [], hit[1]
    from jaxlite._src.interpreters.staging import (DebugInfo, closed_jaxpr_from_trace,
                                                   trace_to_jaxpr)
    store = {}

    def flat(*xs):
        out = fun(*tree_unflatten(in_tree, list(xs)))
        leaves, store["tree"] = tree_flatten(out)
        if any(getattr(getattr(v, "aval", None), "is_ref", False) for v in leaves):
            from jaxlite._src.tree_util import keystr, tree_flatten_with_path
            store["paths"] = [f"result{keystr(p)}" for p, _ in tree_flatten_with_path(out)[0]]
        return [_value(v) for v in leaves]
    di = DebugInfo.from_function(debug_fn or fun, [""] * len(avals), what)
    jaxpr, tconsts, consts = trace_to_jaxpr(flat, avals, di)
    if any(getattr(v.aval, "is_ref", False) for v in jaxpr.outvars):
        # (JAX's error: a loop or branch cannot return a mutable array reference)
        from jaxlite._src.api.ref_checks import check_no_ref_outputs
        check_no_ref_outputs(jaxpr, None, cache_on or fun, what.split()[0],
                             store.get("paths"))
    closed = closed_jaxpr_from_trace(jaxpr, tconsts, consts)
    if key is not None and not tconsts:
        try:
            _TRACE_CACHE.setdefault(cache_on, {})[key] = (closed, store["tree"])
        except TypeError:
            pass
    return closed, list(tconsts), store["tree"]


# user function -> {(in_tree, avals, what, config): (ClosedJaxpr, out_tree)}
_TRACE_CACHE = weakref.WeakKeyDictionary()


def _avals(leaves):
    return [aval_of_value(_value(x)) for x in leaves]


def _scanned_aval(a):
    """The aval of one slice along the leading axis of a scanned value (over Explicit mesh
    axes that axis must not be split, as in JAX)."""
    s = a.sharding
    if s is None or not s.mesh.explicit_axes:
        return ShapedArray(a.shape[1:], a.dtype, a.weak_type, vma=a.vma)
    spec = list(s.spec) + [None] * (a.ndim - len(s.spec))
    if spec and spec[0] is not None:
        raise ValueError(f"0th dimension of all xs should be replicated. Got {s.spec}. Reshard "
                         f"the scanned value so that its leading axis is not split "
                         f"(jax.sharding.reshard(xs, P(None, ...))).")
    return ShapedArray(a.shape[1:], a.dtype, a.weak_type,
                       sharding=type(s)(s.mesh, type(s.spec)(*spec[1:])), vma=a.vma)


def _strong(a):
    return ShapedArray(a.shape, a.dtype, False)


# ----------------------------------------------------------------------------- cond

def _join_consts(traced):
    """Make every branch take the closed-over values of all branches, then the operands."""
    from jaxlite._src.interpreters.eval import eval_jaxpr
    from jaxlite._src.interpreters.staging import trace_to_jaxpr
    all_consts = [c for _, cs, _ in traced for c in cs]
    c_avals = [aval_of_value(c) for c in all_consts]
    out, off = [], 0
    for closed, cs, _ in traced:
        n = len(cs)
        op_avals = closed.in_avals[n:]

        def f(*xs, closed=closed, lo=off, n=n):
            k = len(all_consts)
            return eval_jaxpr(closed.jaxpr, closed.consts, *xs[lo:lo + n], *xs[k:])
        jx, _, consts = trace_to_jaxpr(f, c_avals + list(op_avals))
        out.append(ClosedJaxpr(jx, consts))
        off += n
    return out, all_consts


def _branches(funs, operands, what):
    leaves, in_tree = tree_flatten(operands)
    leaves = [_value(x) for x in leaves]
    avals = _avals(leaves)
    traced = [_trace(f, in_tree, avals, what) for f in funs]
    trees = [t for _, _, t in traced]
    outs = [c.out_avals for c, _, _ in traced]
    if what == "cond":   # funs are [false_fun, true_fun]; JAX compares true with false
        check_branch_outputs("cond", "true_fun", "false_fun", funs[1], funs[0],
                             trees[1], outs[1], trees[0], outs[0])
    else:
        for i in range(1, len(funs)):
            check_branch_outputs(what, "branch 0", f"branch{i}", funs[0], funs[i],
                                 trees[0], outs[0], trees[i], outs[i])
    branches, consts = _join_consts(traced)
    return branches, consts, leaves, trees[0]


def _forwarded_outputs(branches):
    """JAX's pruning of pass-through outputs: for each output, the index of the input every
    branch returns unchanged there (None when some branch computes it). Returns that list
    and the branches without those outputs."""
    from jaxlite._src.core.ir import Var
    fwds = []
    for b in branches:
        pos = {}
        for i, v in enumerate(b.jaxpr.invars):
            pos.setdefault(v, i)
        fwds.append([pos.get(v) if isinstance(v, Var) else None for v in b.jaxpr.outvars])
    in_fwd = [f[0] if len(set(f)) == 1 else None for f in zip(*fwds)]
    if all(f is None for f in in_fwd):
        return in_fwd, branches
    pruned = [ClosedJaxpr(b.jaxpr.replace(outvars=[v for v, f in zip(b.jaxpr.outvars, in_fwd)
                                                   if f is None]), b.consts)
              for b in branches]
    return in_fwd, pruned


def _bind_cond(idx, branches, consts, leaves):
    """cond_p over ``branches`` whose pass-through outputs are answered by their inputs
    (so a value a batched cond returns unchanged stays unbatched, as in JAX)."""
    from jaxlite._src.prims.control import cond_p
    in_fwd, branches = _forwarded_outputs(branches)
    outs = iter(cond_p.bind(idx, *consts, *leaves, branches=tuple(branches)))
    inputs = [*consts, *leaves]
    return [next(outs) if f is None else inputs[f] for f in in_fwd]


def _to_int32(x):
    """``lax.convert_element_type(x, int32)``: no equation when ``x`` already is a strong
    int32."""
    from jaxlite._src.lax import elementwise as ew
    a = aval_of_value(x)
    if a.dtype == np.int32 and not a.weak_type:
        return x
    return ew._convert_element_type(x, np.int32, False)


def _pred_index(pred):
    """cond's predicate as JAX takes it: a boolean, or a number compared with zero."""
    from jaxlite._src.lax import elementwise as ew
    pred = _value(pred)
    if pred.shape != ():
        raise TypeError(f"Pred must be a scalar, got {pred.shape} of type {pred.dtype.name}")
    if pred.dtype != np.bool_:
        if pred.dtype.kind not in "iuf":
            raise TypeError(f"Pred type must be either boolean or number, got "
                            f"{pred.dtype.name}.")
        pred = ew.ne(pred, ew._convert_element_type(0, pred.dtype, pred.weak_type))
    return _to_int32(pred)


def _switch_index(index):
    x = _value(index)
    if x.shape != ():
        raise TypeError(f"Branch index must be scalar, got {index} of shape {x.shape}.")
    if x.dtype.kind not in "iu":
        raise TypeError(f"Index type must be an integer, got {index} as {x.dtype.name}")
    return x


def _eager_branch(idx):
    """Whether cond/switch call the chosen branch as plain Python (under disable_jit, with
    a concrete index), as JAX does: its results keep their own types."""
    from jaxlite._src.config import config
    return config._flags["jax_disable_jit"].value and not isinstance(idx, Tracer)


_no_operand = object()   # ``operand=None`` is a real (empty-pytree) operand, as in JAX


def _operand_kwarg(operand, operands):
    if operand is _no_operand:
        return operands
    if operands:
        raise TypeError("if 'operand' keyword is passed then no positional operands can be "
                        f"passed, got operand={operand!r} and positional operands {operands}")
    return (operand,)


@api_boundary
def cond(pred, true_fun, false_fun, *operands, operand=_no_operand):
    """``true_fun(*operands)`` if ``pred`` else ``false_fun(*operands)``. Both branches are
    traced; under vmap a batched ``pred`` runs both and selects."""
    if not (callable(true_fun) and callable(false_fun)):
        # the old form cond(pred, true_operand, true_fun, false_operand, false_fun), still
        # accepted by JAX (numpyro uses it)
        if callable(false_fun) and len(operands) == 2 and callable(operands[1]):
            x_true, f_true, (x_false, f_false) = true_fun, false_fun, operands
            return cond(pred, lambda x, _: f_true(x), lambda _, x: f_false(x), x_true,
                        x_false)
        raise TypeError("lax.cond: true_fun and false_fun arguments should be callable.")
    operands = _operand_kwarg(operand, operands)
    idx = _pred_index(pred)
    if _eager_branch(idx):     # (JAX: under disable_jit a concrete pred picks the branch)
        return (true_fun if bool(idx) else false_fun)(*operands)
    branches, consts, leaves, out_tree = _branches([false_fun, true_fun], operands, "cond")
    return tree_unflatten(out_tree, _bind_cond(idx, branches, consts, leaves))


@api_boundary
def switch(index, branches, *operands, operand=_no_operand):
    """``branches[clamp(0, index, len(branches) - 1)](*operands)``."""
    from jaxlite._src.lax import elementwise as ew
    operands = _operand_kwarg(operand, operands)
    branches = list(branches)
    if not branches:
        raise ValueError("Empty branch sequence")
    idx = _switch_index(index)
    if len(branches) == 1:
        return branches[0](*operands)
    idx = ew.clamp(np.int32(0), _to_int32(idx), np.int32(len(branches) - 1))
    if _eager_branch(idx):
        return branches[int(idx)](*operands)
    jaxprs, consts, leaves, out_tree = _branches(branches, operands, "switch")
    return tree_unflatten(out_tree, _bind_cond(idx, jaxprs, consts, leaves))


# ----------------------------------------------------------------------------- loops

def _promote_weak(leaves, out_avals):
    """Weakly typed carry inputs whose dtype differs from the body's output are promoted
    to the joint type (JAX's rule), so the loop's carry type is stable."""
    from jaxlite._src.lax import elementwise as ew
    changed = False
    new = []
    for x, o in zip(leaves, out_avals):
        a = aval_of_value(x)
        if a.weak_type and (a.shape, a.dtype) != (o.shape, o.dtype) and a.shape == o.shape:
            x = ew._convert_element_type(x, dtypes.result_type(x, o.dtype), False)
            changed = True
        new.append(x)
    return new, changed


@api_boundary
def while_loop(cond_fun, body_fun, init_val):
    """``while cond_fun(val): val = body_fun(val)``; returns the final ``val``. Reverse-mode
    differentiation is not defined (the trip count is dynamic), as in JAX.

    Mutable hijax values the functions close over and apply hijax primitives to are
    threaded through the loop and updated afterwards, as in ``scan``."""
    from jaxlite._src.api.hi_capture import HiCapture, capture_scope, with_captured
    captured = []
    while True:
        try:
            if not captured:
                return _while_loop(cond_fun, body_fun, init_val, capture_scope)

            def run(body_wrap, init2):
                body2, cond2 = body_wrap(body_fun), body_wrap(cond_fun)
                c, sts = _while_loop(lambda carry: cond2(carry)[0], body2, init2,
                                     capture_scope)
                return c, sts
            return with_captured(run, captured, init_val)
        except HiCapture as e:
            if any(e.value is v for v in captured):
                raise
            captured.append(e.value)


def _while_loop(cond_fn, body_fn, init_val, scope):
    from jaxlite._src.prims.control import while_p

    def cond_fun(c):
        with scope():
            return cond_fn(c)

    def body_fun(c):
        with scope():
            return body_fn(c)
    leaves, c_tree = tree_flatten(init_val)
    in_tree = tree_flatten((init_val,))[1]
    leaves = [_value(x) for x in leaves]
    for _ in range(2):
        avals = _avals(leaves)
        body, bconsts, out_tree = _trace(body_fun, in_tree, avals, "while_loop body",
                                         debug_fn=body_fn)
        out_avals = body.out_avals[:]
        if c_tree == out_tree:   # weak carries promote first (JAX), then types must agree
            leaves, changed = _promote_weak(leaves, out_avals)
            if changed:
                continue
        check_carry_type("while_loop body", body_fn, c_tree, avals, out_tree, out_avals)
        break
    avals = _avals(leaves)
    cj, cconsts, _ = _trace(cond_fun, in_tree, avals, "while_loop cond", debug_fn=cond_fn)
    co = cj.out_avals
    if len(co) != 1 or co[0].shape != () or co[0].dtype != np.bool_:
        raise TypeError("cond_fun must return a boolean scalar, but got output type(s) "
                        f"[{', '.join(repr(a) for a in co)}].")
    outs = while_p.bind(*cconsts, *bconsts, *leaves, cond_jaxpr=cj, body_jaxpr=body,
                        cond_nconsts=len(cconsts), body_nconsts=len(bconsts))
    return tree_unflatten(c_tree, outs)


def _concrete_int(x):
    if isinstance(x, Tracer):
        return None
    try:
        v = np.asarray(x)
    except Exception:  # noqa: BLE001
        return None
    if v.shape == () and v.dtype.kind in "iu":
        return int(v)
    return None


def _one_like(i):
    """The constant 1 with the loop index's dtype and weak type."""
    from jaxlite._src.lax import elementwise as ew
    a = aval_of_value(i)
    return ew._convert_element_type(1, a.dtype, a.weak_type)


@api_boundary
def fori_loop(lower, upper, body_fun, init_val, *, unroll=None):
    """``for i in range(lower, upper): val = body_fun(i, val)``. With static bounds it is a
    ``scan`` (so reverse mode works); otherwise a ``while_loop``."""
    from jaxlite._src.lax import elementwise as ew
    lower, upper = _value(lower), _value(upper)
    la, ua = aval_of_value(lower), aval_of_value(upper)
    if la.dtype != ua.dtype:   # JAX lets a weak (Python) integer bound take the other's type
        if la.dtype.kind == ua.dtype.kind == "i" and la.weak_type != ua.weak_type:
            dt = ua.dtype if la.weak_type else la.dtype
            lower = ew._convert_element_type(lower, dt, False)
            upper = ew._convert_element_type(upper, dt, False)
        else:
            raise TypeError("lower and upper arguments to fori_loop must have equal types, "
                            f"got {la.dtype.name} and {ua.dtype.name}")
    lo, hi = _concrete_int(lower), _concrete_int(upper)
    if lo is not None and hi is not None:
        start = lower if not aval_of_value(lower).weak_type else lo

        def step(loop_carry, _):
            i, x = loop_carry
            return (ew.add(i, _one_like(i)), body_fun(i, x)), None
        (_, out), _ = scan(step, (start, init_val), None, length=max(hi - lo, 0),
                           unroll=1 if unroll is None else unroll)
        return out

    def c(carry):
        return ew.lt(carry[0], carry[1])

    def b(loop_carry):
        i, n, x = loop_carry
        return ew.add(i, _one_like(i)), n, body_fun(i, x)
    return while_loop(c, b, (lower, upper, init_val))[2]


@api_boundary
def scan(f, init, xs=None, length=None, reverse=False, unroll=1, _split_transpose=False):
    """Loop ``carry, y = f(carry, x)`` over the leading axis of ``xs`` (``length`` steps
    when ``xs`` is None); returns ``(final carry, stacked ys)``.

    Mutable hijax values the body closes over and applies hijax primitives to are threaded
    through the loop as extra carries and updated afterwards (api/hi_capture.py), as JAX
    hoists them into the loop's state."""
    if not callable(f):
        raise TypeError("lax.scan: f argument should be callable.")
    from jaxlite._src.api.hi_capture import HiCapture, capture_scope, with_captured
    args = (xs, length, reverse, unroll, _split_transpose)
    captured = []
    while True:
        try:
            if not captured:
                return _scan(f, init, *args, scope=capture_scope)

            def run(body_wrap, init2):
                g = body_wrap(f)

                def f2(carry, x):
                    (c, y), sts = g(carry, x)
                    return (c, sts), y
                (c, sts), ys = _scan(f2, init2, *args, scope=capture_scope)
                return (c, ys), sts
            return with_captured(run, captured, init)
        except HiCapture as e:
            if any(e.value is v for v in captured):
                raise
            captured.append(e.value)


def _scan(f, init, xs, length, reverse, unroll, _split_transpose, scope):
    from jaxlite._src.prims.scan import scan_p
    body_fn = f

    def f(c, x):
        with scope():
            return body_fn(c, x)
    x_leaves, x_tree = tree_flatten(xs)
    x_leaves = [_value(x) for x in x_leaves]
    lengths = {x.shape[0] if x.shape else None for x in x_leaves}
    if None in lengths:
        raise ValueError("scan got value with no leading axis to scan over.")
    if length is not None:
        length = int(length)
        if lengths and lengths != {length}:
            raise ValueError(f"scan got `length` argument of {length} which disagrees with "
                             f"leading axis sizes {sorted(lengths)}.")
    elif not lengths:
        raise ValueError("scan got no values to scan over and `length` not provided.")
    elif len(lengths) > 1:
        raise ValueError("scan got values with different leading axis sizes: "
                         f"{', '.join(str(n) for n in sorted(lengths))}.")
    else:
        length = lengths.pop()
    c_leaves, c_tree = tree_flatten(init)
    c_leaves = [_value(x) for x in c_leaves]
    x_avals = [_scanned_aval(aval_of_value(x)) for x in x_leaves]
    in_tree = tree_flatten((init, xs))[1]
    for _ in range(2):
        c_avals = _avals(c_leaves)
        body, consts, out_tree = _trace(f, in_tree, c_avals + x_avals,
                                        "scan body", cache_on=body_fn, debug_fn=body_fn)
        out_avals = body.out_avals
        n_c = len(c_leaves)
        kids = out_tree.children()
        if len(kids) != 2 or out_tree.node_data()[0] not in (tuple, list):
            raise TypeError("scan body function must return a pair (carry, y), got "
                            f"{out_tree}.")
        carry_tree, y_tree = kids
        if c_tree == carry_tree:   # weak carries promote first (JAX), then types must agree
            c_leaves, changed = _promote_weak(c_leaves, out_avals[:n_c])
            if changed:
                continue
        check_carry_type("scan body", body_fn, c_tree, c_avals, carry_tree,
                         out_avals[:carry_tree.num_leaves])
        break
    outs = scan_p.bind(*consts, *c_leaves, *x_leaves, jaxpr=body, length=length,
                       reverse=bool(reverse), num_consts=len(consts), num_carry=n_c,
                       unroll=unroll, linear=(False,) * (len(consts) + n_c + len(x_leaves)),
                       _split_transpose=bool(_split_transpose))
    return tree_unflatten(carry_tree, outs[:n_c]), tree_unflatten(y_tree, outs[n_c:])


def map(f, xs, *, batch_size=None):  # noqa: A001 - JAX's name
    """``[f(x) for x in xs]`` along the leading axis, stacked (a scan); with ``batch_size``
    chunks of that many elements are vmapped."""
    if batch_size is None:
        _, ys = scan(lambda _, x: ((), f(x)), (), xs)
        return ys
    from jaxlite._src.api.vmap import vmap
    from jaxlite._src.lax.shape import concatenate, reshape, slice
    from jaxlite._src.tree_util import tree_map
    leaves = tree_flatten(xs)[0]
    n = leaves[0].shape[0]
    nb = n // batch_size

    def rows(x, lo, hi):   # x[lo:hi] (nothing staged for all of x)
        x = _value(x)
        shp = tuple(x.shape)
        if lo == 0 and hi == shp[0]:
            return x
        return slice(x, (lo,) + (0,) * (len(shp) - 1), (hi,) + shp[1:])
    main = tree_map(lambda x: reshape(rows(x, 0, nb * batch_size),
                                      (nb, batch_size) + tuple(x.shape[1:])), xs)
    # the remainder is sliced before the scan and mapped after it (JAX's equation order)
    rest = tree_map(lambda x: rows(x, nb * batch_size, n), xs) if n % batch_size else None
    _, ys = scan(lambda _, x: ((), vmap(f)(x)), (), main)
    if rest is not None:
        rest_ys = vmap(f)(rest)
    ys = tree_map(lambda y: reshape(y, (nb * batch_size,) + tuple(y.shape[2:])), ys)
    if rest is not None:
        ys = tree_map(lambda a, b: concatenate([a, b], 0), ys, rest_ys)
    return ys


# ----------------------------------------------------------------------------- scans

def _interleave(a, b, axis):
    """Elements of ``a`` at the even and of ``b`` at the odd positions along ``axis``."""
    from jaxlite._src.lax import elementwise as ew
    from jaxlite._src.lax import shape as ls
    na, nb = a.shape[axis], b.shape[axis]
    cfg_a = [(0, 0, 0)] * a.ndim
    cfg_b = [(0, 0, 0)] * b.ndim
    cfg_a[axis] = (0, 1 if na == nb else 0, 1)
    cfg_b[axis] = (1, 0 if na == nb else 1, 1)
    zero = np.zeros((), a.dtype)
    pa, pb = ls.pad(a, zero, cfg_a), ls.pad(b, zero, cfg_b)
    return ew.bitwise_or(pa, pb) if a.dtype == np.bool_ else ew.add(pa, pb)


def associative_scan(fn, elems, reverse=False, axis=0):
    """Inclusive scan of ``elems`` (a pytree of arrays with equal ``axis`` length) with the
    associative binary ``fn``, by recursive pairing (O(log n) depth, parallel steps)."""
    from jaxlite._src.lax import shape as ls
    leaves, tree = tree_flatten(elems)
    leaves = [_value(x) for x in leaves]
    if not leaves:
        return elems
    axis = axis % leaves[0].ndim
    n = leaves[0].shape[axis]
    if any(x.shape[axis] != n for x in leaves):
        raise ValueError("Array inputs to associative_scan must have the same first dimension."
                         f" (saw: {[x.shape for x in leaves]})")
    if reverse:
        leaves = [ls.rev(x, (axis,)) for x in leaves]

    def combine(a, b):
        out = fn(tree_unflatten(tree, a), tree_unflatten(tree, b))
        out_leaves, out_tree = tree_flatten(out)
        if out_tree != tree:
            raise ValueError("associative_scan fn must return a pytree with the structure of "
                             f"elems: got {out_tree}, expected {tree}.")
        return [_value(v) for v in out_leaves]

    def sl(x, start, stop, stride=1):
        return ls.slice_in_dim(x, start, stop, stride, axis)

    def rec(xs):
        m = xs[0].shape[axis]
        if m < 2:
            return xs
        pairs = combine([sl(x, 0, m - 1, 2) for x in xs], [sl(x, 1, None, 2) for x in xs])
        odd = rec(pairs)
        if m % 2 == 0:
            even = combine([sl(o, 0, o.shape[axis] - 1) for o in odd],
                           [sl(x, 2, None, 2) for x in xs])
        else:
            even = combine(odd, [sl(x, 2, None, 2) for x in xs])
        even = [ls.concatenate([sl(x, 0, 1), e], axis) for x, e in zip(xs, even)]
        return [_interleave(e, o, axis) for e, o in zip(even, odd)]

    out = rec(leaves)
    if reverse:
        out = [ls.rev(x, (axis,)) for x in out]
    return tree_unflatten(tree, out)


__all__ += ["associative_scan"]
