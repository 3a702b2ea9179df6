"""Autodiff API: jvp, linearize, vjp, grad, value_and_grad, jacfwd, jacrev, hessian."""
from __future__ import annotations

import functools


import numpy as np

from jaxlite._src.core.trace import Tracer
from jaxlite._src.prims.collectives import psum_p, pvary_p
from jaxlite._src.sharding import vma
from jaxlite._src.api.sharding_types import place_as, type_sharding
from jaxlite._src.core import dtypes
from jaxlite._src.core.avals import ShapedArray, ShapeDtypeStruct, aval_of_value
from jaxlite._src.interpreters import ad
from jaxlite._src.interpreters.eval import eval_jaxpr
from jaxlite._src.prims import ad_util as u
from jaxlite._src.runtime.array import ArrayImpl
from jaxlite._src.tree_util import Partial, register_pytree_node, tree_flatten, tree_unflatten
from jaxlite._src.traceback_util import api_boundary
from jaxlite._src.api.wrapping import wraps

__all__ = ["jvp", "linearize", "vjp", "grad", "value_and_grad", "jacfwd", "jacrev",
           "hessian", "linear_transpose", "closure_convert"]


def _flat_fun(fun, in_tree, store, has_aux, kwargs=None):
    """``fun`` on flat inputs returning flat outputs; records the output tree (and aux)."""
    def flat(*leaves):
        args = tree_unflatten(in_tree, leaves)
        out = fun(*args, **(kwargs or {}))
        if has_aux:
            if not (isinstance(out, (tuple, list)) and len(out) == 2):
                raise TypeError("has_aux=True requires the function to return a pair "
                                f"(output, aux); got {type(out).__name__}.")
            out, aux = out
            store["aux_flat"] = _strip_tangents(aux)
        leaves_out, tree = tree_flatten(out)
        store["tree"] = tree
        return leaves_out
    return flat


def _strip_tangents(aux):
    """``aux`` flattened, ``(leaves, tree)``, with the current JVP trace's tracers replaced by
    their primals: auxiliary outputs are not differentiated, and must not leak this
    transformation's tracers. The tree is unflattened once the trace has ended
    (``_aux_out``), as in JAX: pytree nodes rebuilt from it (flax.nnx Variables record the
    trace they are made under) belong to the caller's trace."""
    from jaxlite._src.core.trace import ctx
    trace = ctx.trace
    leaves, tree = tree_flatten(aux)
    if isinstance(trace, ad.JVPTrace):
        leaves = [x.primal if isinstance(x, ad.JVPTracer) and x._trace is trace else x
                  for x in leaves]
    return leaves, tree


def _aux_out(store):
    """The auxiliary output recorded by ``_flat_fun``, rebuilt in the caller's trace."""
    leaves, tree = store["aux_flat"]
    return tree_unflatten(tree, leaves)


def _as_array(x):
    """A cotangent leaf as an array (Python scalars become weakly typed arrays)."""
    from jaxlite._src.prims.operands import asarray_value
    return asarray_value(x)


def _is_float(aval):
    return dtypes.issubdtype(aval.dtype, np.inexact)


def _check_callable(fun, name):
    if not callable(fun):
        raise TypeError(f"{name} requires a callable argument, got {fun!r} of type "
                        f"{type(fun).__name__}.")


# ----------------------------------------------------------------------------- jvp

@api_boundary
def jvp(fun, primals, tangents, has_aux=False):
    """Forward-mode: ``(fun(*primals), d fun(primals) . tangents)`` (and aux if has_aux).

    ``primals`` and ``tangents`` are tuples (or lists) of pytrees of the same structure;
    tangents of integer or boolean primals must have dtype float0.
    """
    _check_callable(fun, "jvp")
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise TypeError("primal and tangent arguments to jax.jvp must be tuples or lists; "
                        f"found {type(primals).__name__} and {type(tangents).__name__}.")
    p_leaves, p_tree = tree_flatten(tuple(primals))
    t_leaves, t_tree = tree_flatten(tuple(tangents))
    if p_tree != t_tree:
        raise TypeError("primal and tangent arguments to jax.jvp must have the same tree "
                        f"structure; primals have tree structure {p_tree} whereas tangents "
                        f"have tree structure {t_tree}.")
    ts = []
    for p, t in zip(p_leaves, t_leaves):
        pa, ta = aval_of_value(p), aval_of_value(t)
        want = ad.tangent_aval(pa).dtype
        if ta.dtype != want:
            raise TypeError(
                "primal and tangent arguments to jax.jvp do not match; dtypes must be equal, "
                "or in case of int/bool primal dtype the tangent dtype must be float0. Got "
                f"primal dtype {pa.dtype.name} and so expected tangent dtype {want.name}, "
                f"but got tangent dtype {ta.dtype.name} instead.")
        if pa.shape != ta.shape:
            raise ValueError("jvp called with different primal and tangent shapes; Got "
                             f"primal shape {pa.shape} and tangent shape as {ta.shape}")
        ts.append(ad.Zero(ad.tangent_aval(pa)) if want == dtypes.float0 else t)
    store = {}
    flat = _flat_fun(fun, p_tree, store, has_aux)
    out_p, out_t = ad.jvp_flat(lambda *xs: flat(*xs), p_leaves, ts)
    out_t = [ad.instantiate(t) for t in out_t]
    tree = store["tree"]
    res = (tree_unflatten(tree, out_p), tree_unflatten(tree, out_t))
    return res + (_aux_out(store),) if has_aux else res


@api_boundary
def linearize(fun, *primals, has_aux=False):
    """``(fun(*primals), f_jvp)`` where ``f_jvp(*tangents)`` evaluates the linearized
    function (its work was staged once, as a linear jaxpr)."""
    _check_callable(fun, "linearize")
    p_leaves, p_tree = tree_flatten(primals)
    store = {}
    flat = _flat_fun(fun, p_tree, store, has_aux)
    mask = [_is_float(aval_of_value(p)) for p in p_leaves]
    out_p, jaxpr, consts, zero_mask, out_tavals = ad.linearize_flat(flat, p_leaves, mask)
    consts = _residual_arrays(jaxpr, consts)
    out_tree = store["tree"]
    # a pytree whose leaves are the residuals, as JAX's: it can leave a jit or a vmap
    f_jvp = Partial(functools.partial(_lift_linearized, jaxpr, p_tree, tuple(mask),
                                      tuple(zero_mask), tuple(out_tavals), out_tree),
                    list(consts))
    out = tree_unflatten(out_tree, out_p)
    return (out, f_jvp, _aux_out(store)) if has_aux else (out, f_jvp)


def _residual_arrays(jaxpr, consts):
    """The residuals of a linearized jaxpr as the user sees them, jax.Arrays as in JAX
    (staging keeps a constant's NumPy value): they are the leaves of the returned
    function, and a function closing over them must take them as constants, not inline
    them as it does NumPy scalars."""
    return [ArrayImpl(np.asarray(c), v.aval.weak_type)
            if isinstance(c, (np.ndarray, np.generic)) else c
            for v, c in zip(jaxpr.constvars, consts)]


def _lift_linearized(jaxpr, p_tree, mask, zero_mask, out_tavals, out_tree, consts,
                     *tangents):
    t_leaves, t_tree = tree_flatten(tangents)
    if t_tree != p_tree:
        raise TypeError(f"linearized function called on tangent values inconsistent with "
                        f"the original primal values: expected {p_tree}, got {t_tree}.")
    ins = [t for t, m in zip(t_leaves, mask) if m]
    outs = iter(eval_jaxpr(jaxpr, consts, *ins))
    res = [ad.zeros_like_aval(a) if z else next(outs) for z, a in zip(zero_mask, out_tavals)]
    return tree_unflatten(out_tree, res)


# ----------------------------------------------------------------------------- vjp

class _VjpFun:
    """The pullback returned by ``vjp``: maps output cotangents to input cotangents."""

    def __init__(self, jaxpr, consts, in_tree, out_tree, mask, in_avals, out_avals,
                 zero_mask):
        self.jaxpr, self.consts = jaxpr, consts
        self.in_tree, self.out_tree = in_tree, out_tree
        self.mask, self.in_avals, self.out_avals = mask, in_avals, out_avals
        self.zero_mask = zero_mask
        self.in_shardings = [None] * len(in_avals)

    def __call__(self, ct):
        ct_leaves, ct_tree = tree_flatten(ct)
        if ct_tree != self.out_tree:
            raise ValueError("unexpected tree structure.\n\nThe argument to a VJP function "
                             "returned by `jax.vjp` must match the pytree structure of the "
                             f"differentiated function's output: expected {self.out_tree}, "
                             f"got {ct_tree}.")
        cts = []
        for c, a, z in zip(ct_leaves, self.out_avals, self.zero_mask):
            ca = aval_of_value(c)
            want = ad.tangent_aval(a)
            if ca.shape != a.shape:
                raise ValueError(f"Shape of cotangent input to vjp pullback function "
                                 f"{ca.shape} must be the same as the shape of corresponding "
                                 f"primal input {a.shape}.")
            if ca.dtype != want.dtype and want.dtype != dtypes.float0:
                raise ValueError(f"Type of cotangent input to vjp pullback function "
                                 f"({ca.dtype.name}) is not the expected tangent type "
                                 f"({want.dtype.name}) of corresponding primal output with "
                                 f"dtype {a.dtype.name}.")
            if not z:
                cts.append(_as_array(c))
        n = len(self.jaxpr.invars)
        in_cts = ad.backward_pass(self.jaxpr, self.consts, [True] * n, [None] * n, cts)
        it = iter(in_cts)
        res = []
        for m, a, s in zip(self.mask, self.in_avals, self.in_shardings):
            c = next(it) if m else None
            c = ad.zeros_like_aval(ad.tangent_aval(a)) if c is None or \
                type(c) is ad.Zero else c
            res.append(_typed_like(c, s, a))
        return tree_unflatten(self.in_tree, res)


def _vjp_flatten(f):
    aux = (f.jaxpr, f.in_tree, f.out_tree, tuple(f.mask), tuple(f.in_avals),
           tuple(f.out_avals), tuple(f.zero_mask), tuple(f.in_shardings))
    return list(f.consts), _Static(aux)


def _vjp_unflatten(aux, consts):
    jaxpr, in_tree, out_tree, mask, in_avals, out_avals, zero_mask, shardings = aux.value
    f = _VjpFun(jaxpr, list(consts), in_tree, out_tree, mask, in_avals, out_avals, zero_mask)
    f.in_shardings = list(shardings)
    return f


class _Static:
    """The pullback's static part in a treedef: equal only to itself (its jaxpr is compared
    by identity)."""
    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value

    def __eq__(self, other):
        if type(other) is not _Static:
            return False
        a, b = self.value, other.value
        return a[0] is b[0] and a[1:] == b[1:]

    def __hash__(self):
        return hash(id(self.value[0]))


# a pullback is a pytree whose leaves are its residuals, as JAX's: it can leave a jit or vmap
register_pytree_node(_VjpFun, _vjp_flatten, _vjp_unflatten)


def _typed_like(ct, sharding, aval):
    """A cotangent typed as its primal: inside shard_map it varies over the primal's manual
    axes; eagerly, over Explicit mesh axes it is laid out as the primal's sharding (as in
    JAX)."""
    want = getattr(aval, "vma", ())
    if isinstance(ct, Tracer) and vma.current() is not None:
        have = getattr(ct.aval, "vma", ())
        extra = tuple(a for a in have if a not in want)
        if extra:   # (the transpose of the primal's implicit pvary: a sum over those axes)
            (ct,) = psum_p.bind(ct, axes=extra, axis_index_groups=None)
        missing = tuple(a for a in want if a not in getattr(ct.aval, "vma", ()))
        if missing:
            return pvary_p.bind(ct, axes=missing)
        return ct
    if sharding is None or not isinstance(ct, ArrayImpl) or \
            getattr(ct, "_sharding", None) == sharding or ct.dtype == dtypes.float0 or \
            not ct.is_fully_addressable:   # (spanning processes: it stays where it is)
        return ct
    return place_as(ct, sharding)


@api_boundary
def vjp(fun, *primals, has_aux=False):
    """``(fun(*primals), vjp_fn)``: ``vjp_fn(ct)`` pulls an output cotangent back to a tuple
    of input cotangents (one per primal), by transposing the linearized function."""
    _check_callable(fun, "vjp")
    p_leaves, p_tree = tree_flatten(primals)
    store = {}
    flat = _flat_fun(fun, p_tree, store, has_aux)
    in_avals = [aval_of_value(p) for p in p_leaves]
    mask = [_is_float(a) for a in in_avals]
    out_p, jaxpr, consts, zero_mask, _ = ad.linearize_flat(flat, p_leaves, mask)
    consts = _residual_arrays(jaxpr, consts)
    out_avals = [aval_of_value(o) for o in out_p]
    fn = _VjpFun(jaxpr, consts, p_tree, store["tree"], mask, in_avals, out_avals, zero_mask)
    fn.in_shardings = [type_sharding(p) for p in p_leaves]
    out = tree_unflatten(store["tree"], out_p)
    return (out, fn, _aux_out(store)) if has_aux else (out, fn)


# ----------------------------------------------------------------------------- grad

def _argnums_tuple(argnums, nargs, name):
    single = isinstance(argnums, int)
    nums = (argnums,) if single else tuple(argnums)
    for a in nums:
        if not isinstance(a, int):
            raise TypeError(f"argnums must be an int or a tuple of ints, got {argnums!r}")
        if not -nargs <= a < nargs:
            need = a + 1 if a >= 0 else -a
            raise TypeError(f"differentiating with respect to argnums={argnums} requires at "
                            f"least {need} positional arguments to be passed by the caller, "
                            f"but got only {nargs} positional arguments.")
    return single, tuple(a % nargs for a in nums)


def _check_input_dtype(x, holomorphic, allow_int, name):
    a = aval_of_value(x)
    if getattr(a, "is_ref", False):
        raise ValueError(f"Expected cotangent type {a.str_short(False)} but got "
                         f"{a.inner_aval.str_short(False)}: {name} cannot differentiate with "
                         "respect to a mutable array reference (jax.new_ref). Pass its value "
                         "(ref[...]) instead, or leave the ref out of argnums.")
    dt = a.dtype
    if holomorphic and not dtypes.issubdtype(dt, np.complexfloating):
        raise TypeError(f"{name} with holomorphic=True requires inputs with complex dtype, "
                        f"but got {dt.name}.")
    if dtypes.issubdtype(dt, np.inexact):
        return
    if not allow_int:
        raise TypeError(f"{name} requires real- or complex-valued inputs (input dtype that "
                        f"is a sub-dtype of np.inexact), but got {dt.name}. If you want to "
                        "use Boolean- or integer-valued inputs, use vjp or set allow_int to "
                        "True.")


def _check_output(ans, holomorphic, name):
    a = aval_of_value(ans)
    if a.shape != () or getattr(a, "is_ref", False):
        if getattr(a, "is_ref", False):
            raise TypeError("Gradient only defined for scalar-output functions. Output had "
                            f"abstract value {a.str_short(False)}.")
        raise TypeError(f"Gradient only defined for scalar-output functions. Output had "
                        f"shape: {a.shape}.")
    _check_output_dtype(a, holomorphic, name)


def _check_output_dtype(a, holomorphic, name):
    if holomorphic:
        if not dtypes.issubdtype(a.dtype, np.complexfloating):
            raise TypeError(f"{name} with holomorphic=True requires outputs with complex "
                            f"dtype, but got {a.dtype.name}.")
    elif not dtypes.issubdtype(a.dtype, np.floating):
        extra = ("For holomorphic differentiation, pass holomorphic=True. For "
                 "differentiation of non-holomorphic functions involving complex outputs, use "
                 "jax.vjp directly." if dtypes.issubdtype(a.dtype, np.complexfloating) else
                 "For differentiation of functions with integer outputs, use jax.vjp "
                 "directly.")
        raise TypeError(f"{name} requires real-valued outputs (output dtype that is a "
                        f"sub-dtype of np.floating), but got {a.dtype.name}. {extra}")


def value_and_grad(fun, argnums=0, has_aux=False, holomorphic=False, allow_int=False,
                   reduce_axes=()):
    """A function returning ``(fun(*args), grad)``, grad with respect to ``argnums``
    (an int gives one gradient, a tuple a tuple of them); ``has_aux`` returns
    ``((value, aux), grad)``."""
    _check_callable(fun, "value_and_grad")
    # (JAX's errors say "grad" for both)
    return _value_and_grad(fun, argnums, has_aux, holomorphic, allow_int, "grad")


def _value_and_grad(fun, argnums, has_aux, holomorphic, allow_int, name):
    """value_and_grad; errors name ``name`` (the API the user called)."""

    @wraps(fun)
    @api_boundary
    def vg(*args, **kwargs):
        single, nums = _argnums_tuple(argnums, len(args), name)
        dyn = [args[i] for i in nums]
        for x in tree_flatten(dyn)[0]:
            _check_input_dtype(x, holomorphic, allow_int, name)

        def partial_fun(*d):
            full = list(args)
            for i, v in zip(nums, d):
                full[i] = v
            return fun(*full, **kwargs)

        if has_aux:
            ans, pullback, aux = vjp(partial_fun, *dyn, has_aux=True)
        else:
            ans, pullback = vjp(partial_fun, *dyn)
        _check_output(ans, holomorphic, name)
        from jaxlite._src.runtime.array import ArrayImpl
        a = aval_of_value(ans)
        g = pullback(ArrayImpl(np.ones((), a.dtype), a.weak_type))  # JAX's _one(ans)
        g = g[0] if single else tuple(g)
        return ((ans, aux), g) if has_aux else (ans, g)

    return vg


def grad(fun, argnums=0, has_aux=False, holomorphic=False, allow_int=False,
         reduce_axes=()):
    """The gradient of the scalar-valued ``fun`` with respect to ``argnums`` (reverse mode:
    linearize, then transpose). ``has_aux=True`` returns ``(grad, aux)``."""
    _check_callable(fun, "grad")
    vg = _value_and_grad(fun, argnums, has_aux, holomorphic, allow_int, "grad")

    @wraps(fun)
    @api_boundary
    def g(*args, **kwargs):
        if has_aux:
            (_, aux), gr = vg(*args, **kwargs)
            return gr, aux
        return vg(*args, **kwargs)[1]

    return g


# ----------------------------------------------------------------------------- Jacobians

def _std_basis(avals):
    """Unit vectors for all elements of the flat ``avals``: one array per leaf with a new
    leading axis of length N (the total number of elements), cut from an identity matrix
    (as JAX builds it, so jaxprs match)."""
    n = sum(a.size for a in avals)
    dt = dtypes.result_type(*[a.dtype for a in avals]) if avals else np.float32
    return _split_axis(_eye(n, dt), avals, 1, False, always=True), n


def _eye(n, dtype):
    """``jnp.eye(n, dtype=dtype)``, bound with the primitives jnp.eye binds."""
    r = u.broadcasted_iota(np.int32, (n, n), 0)
    c = u.broadcasted_iota(np.int32, (n, n), 1)
    k = ArrayImpl(np.asarray(0, np.int32), False)
    return u.convert_element_type(u.eq(u.add(r, k), c), dtypes.canonicalize_dtype(dtype))


def _split_axis(x, avals, axis, front, like=None, always=False):
    """Split ``x``'s axis ``axis`` (length sum of sizes) into one piece per aval, reshaped
    to that aval's shape (placed at the front or back of the result). Each piece is cast to
    the dtype and weak type of ``like`` (or of its own aval), as JAX's Jacobians do."""
    from jaxlite._src.prims.joins import split_p
    shp = tuple(x.shape)
    pieces = split_p.bind(x, sizes=tuple(np.int64(a.size) for a in avals),
                          axis=int(axis) % len(shp) if shp else 0)
    rest = shp[:axis] + shp[axis + 1:]
    out = []
    for p, a in zip(pieces, avals):
        want = (tuple(a.shape) + rest) if front else (rest + tuple(a.shape))
        p = p if tuple(p.shape) == want else u.reshape(p, want)
        out.append(_downcast(p, a if like is None else like, always))
    return out


def _downcast(x, example, always=False):
    """Cast a Jacobian block to the dtype and weak type of ``example`` (real part first when
    a complex block belongs to a real value); no equation when nothing changes, unless
    ``always`` (JAX's standard basis always carries the cast, so its jaxprs show it)."""
    from jaxlite._src.prims.elementwise import convert_element_type_p, real_p
    xa = aval_of_value(x)
    if xa.dtype == dtypes.float0:   # tangents of integer outputs: zeros of their dtype
        return ad.zeros_like_aval(type(xa)(xa.shape, np.dtype(example.dtype),
                                           example.weak_type))
    if (dtypes.issubdtype(xa.dtype, np.complexfloating)
            and not dtypes.issubdtype(example.dtype, np.complexfloating)):
        x = real_p.bind(x)
        xa = aval_of_value(x)
    if (not always and np.dtype(xa.dtype) == np.dtype(example.dtype)
            and xa.weak_type == example.weak_type):
        return x
    return convert_element_type_p.bind(x, new_dtype=np.dtype(example.dtype),
                                       weak_type=example.weak_type, sharding=None)


def _dyn_args(fun, args, kwargs, argnums, name):
    single, nums = _argnums_tuple(argnums, len(args), name)
    dyn = tuple(args[i] for i in nums)

    def partial_fun(*d):
        full = list(args)
        for i, v in zip(nums, d):
            full[i] = v
        return fun(*full, **kwargs)
    return single, dyn, partial_fun


def jacfwd(fun, argnums=0, has_aux=False, holomorphic=False):
    """The Jacobian of ``fun`` by forward mode (a vmapped JVP over the standard basis); the
    output pytree's leaves get the input's shape appended."""
    _check_callable(fun, "jacfwd")

    @wraps(fun)
    def jac(*args, **kwargs):
        from jaxlite._src.api.vmap import vmap
        single, dyn, partial_fun = _dyn_args(fun, args, kwargs, argnums, "jacfwd")
        for x in tree_flatten(dyn)[0]:
            dt = aval_of_value(x).dtype
            if holomorphic and not dtypes.issubdtype(dt, np.complexfloating):
                raise TypeError("jacfwd with holomorphic=True requires inputs with complex "
                                f"dtype, but got {dt.name}.")
            if not holomorphic and not dtypes.issubdtype(dt, np.floating):
                raise TypeError("jacfwd requires real-valued inputs (input dtype that is a "
                                f"sub-dtype of np.floating), but got {dt.name}. For "
                                "holomorphic differentiation, pass holomorphic=True. For "
                                "differentiation of non-holomorphic functions involving "
                                "complex inputs or integer inputs, use jax.jvp directly.")
        in_leaves, in_tree = tree_flatten(dyn)
        in_avals = [aval_of_value(x) for x in in_leaves]
        basis, _ = _std_basis(in_avals)

        y_avals = []

        def pushfwd(*t_leaves):
            res = jvp(partial_fun, dyn, tree_unflatten(in_tree, list(t_leaves)),
                      has_aux=has_aux)
            y_avals[:] = [aval_of_value(v) for v in tree_flatten(res[0])[0]]
            return (res[1], res[2]) if has_aux else res[1]
        if has_aux:
            tans, aux = vmap(pushfwd, out_axes=(-1, None))(*basis)
        else:
            tans = vmap(pushfwd, out_axes=-1)(*basis)
        if holomorphic:
            for ya in y_avals:
                if not dtypes.issubdtype(ya.dtype, np.complexfloating):
                    raise TypeError("jacfwd with holomorphic=True requires outputs with "
                                    f"complex dtype, but got {ya.dtype.name}.")
        t_leaves, t_tree = tree_flatten(tans)
        per_out = [tree_unflatten(in_tree, _split_axis(t, in_avals, t.ndim - 1, False, ya))
                   for t, ya in zip(t_leaves, y_avals)]
        jac_tree = tree_unflatten(t_tree, [r[0] if single else r for r in per_out])
        return (jac_tree, aux) if has_aux else jac_tree

    return jac


def jacrev(fun, argnums=0, has_aux=False, holomorphic=False, allow_int=False):
    """The Jacobian of ``fun`` by reverse mode (a vmapped VJP over the output's standard
    basis); the output pytree's leaves get the input's shape appended."""
    _check_callable(fun, "jacrev")

    @wraps(fun)
    def jac(*args, **kwargs):
        from jaxlite._src.api.vmap import vmap
        single, dyn, partial_fun = _dyn_args(fun, args, kwargs, argnums, "jacrev")
        for x in tree_flatten(dyn)[0]:
            _check_input_dtype(x, holomorphic, allow_int, "jacrev")
        if has_aux:
            y, pullback, aux = vjp(partial_fun, *dyn, has_aux=True)
        else:
            y, pullback = vjp(partial_fun, *dyn)
        y_leaves, y_tree = tree_flatten(y)
        y_avals = [aval_of_value(v) for v in y_leaves]
        for ya in y_avals:
            _check_output_dtype(ya, holomorphic, "jacrev")
        basis, _ = _std_basis(y_avals)
        rows = vmap(lambda *e: pullback(tree_unflatten(y_tree, list(e))))(*basis)
        row_leaves, in_tree = tree_flatten(rows)
        # per input leaf: (N_out,) + in_shape -> split N_out over the output leaves, each
        # block taking the input leaf's dtype and weak type (as JAX's _jacrev_unravel)
        per_in = [_split_axis(r, y_avals, 0, True, aval_of_value(x))
                  for r, x in zip(row_leaves, tree_flatten(dyn)[0])]
        result = [tree_unflatten(in_tree, [p[i] for p in per_in]) for i in range(len(y_avals))]
        jac_tree = tree_unflatten(y_tree, [r[0] if single else r for r in result])
        return (jac_tree, aux) if has_aux else jac_tree

    return jac


def hessian(fun, argnums=0, has_aux=False, holomorphic=False):
    """The Hessian of the scalar ``fun``: ``jacfwd(jacrev(fun))``."""
    return jacfwd(jacrev(fun, argnums, has_aux=has_aux, holomorphic=holomorphic), argnums,
                  has_aux=has_aux, holomorphic=holomorphic)



# ----------------------------------------------------------------------------- misc

def linear_transpose(fun, *primals, reduce_axes=()):
    """The transpose of the linear function ``fun``, at inputs shaped like ``primals``:
    ``f_t(*out_cotangents) -> tuple of input cotangents``."""
    _check_callable(fun, "linear_transpose")
    from jaxlite._src.interpreters.partial_eval import PartialEvalTrace
    from jaxlite._src.core.trace import ctx, set_current_trace
    p_leaves, in_tree = tree_flatten(primals)
    # (only the primals' types matter: abstract values and ShapeDtypeStructs are accepted)
    in_avals = [p if isinstance(p, ShapedArray) else
                ShapedArray(p.shape, p.dtype, getattr(p, "weak_type", False))
                if isinstance(p, ShapeDtypeStruct) else aval_of_value(p) for p in p_leaves]
    pe = PartialEvalTrace(ctx.trace)
    tracers = [pe.new_arg(a) for a in in_avals]
    store = {}
    flat = _flat_fun(fun, in_tree, store, False)
    with set_current_trace(pe):
        outs = flat(*tracers)
    jaxpr, consts = pe.finish(outs)
    out_tree = store["tree"]
    out_avals = [aval_of_value(o) for o in outs]
    all_dts = [a.dtype for a in in_avals + out_avals]
    if not (all(dtypes.issubdtype(d, np.inexact) for d in all_dts) or
            all(dtypes.issubdtype(d, np.integer) for d in all_dts)):
        raise TypeError("linear_transpose only supports [float or complex] -> [float or "
                        "complex], and integer -> integer functions, but got "
                        f"{[a.dtype for a in in_avals]} -> {[a.dtype for a in out_avals]}.")

    def transposed(*cts):
        ct_leaves, ct_tree = tree_flatten(cts[0] if len(cts) == 1 else cts)
        if ct_tree != out_tree:
            raise TypeError("cotangent tree does not match function output, expected "
                            f"{out_tree} but got {ct_tree}")
        for c, a in zip(ct_leaves, out_avals):
            ca = aval_of_value(c)
            if ca.shape != a.shape or ca.dtype != a.dtype:
                raise TypeError(f"cotangent type does not match function output, expected "
                                f"{a.str_short()} but got {ca.str_short()}")
        ct_leaves = [_as_array(c) for c in ct_leaves]
        n = len(jaxpr.invars)
        res = ad.backward_pass(jaxpr, consts, [True] * n, [None] * n, ct_leaves)
        res = [ad.zeros_like_aval(a) if r is None or type(r) is ad.Zero else r
               for r, a in zip(res, in_avals)]
        return tree_unflatten(in_tree, res)

    return transposed


def closure_convert(fun, *example_args):
    """``(converted, consts)``: ``converted(*args, *consts)`` equals ``fun(*args)``, with the
    inexact arrays and tracers ``fun`` closes over hoisted into ``consts`` (so custom_vjp
    rules can differentiate with respect to them)."""
    from jaxlite._src.core.ir import ClosedJaxpr
    from jaxlite._src.interpreters.staging import trace_to_jaxpr
    leaves, in_tree = tree_flatten(example_args)
    store = {}
    flat = _flat_fun(fun, in_tree, store, False)
    jaxpr, tconsts, const_vals = trace_to_jaxpr(flat, [aval_of_value(x) for x in leaves])
    all_consts = list(tconsts) + list(const_vals)
    hoist = [_is_float(aval_of_value(c)) for c in all_consts]
    hoisted = [c for c, h in zip(all_consts, hoist) if h]
    kept = [c for c, h in zip(all_consts, hoist) if not h]
    out_tree = store["tree"]
    closed = ClosedJaxpr(jaxpr, [])

    def converted(*args):
        n = len(args) - len(hoisted)
        a_leaves, a_tree = tree_flatten(args[:n])
        if a_tree != in_tree:
            raise TypeError(f"closure_convert: arguments {a_tree} do not match the example "
                            f"arguments {in_tree}.")
        hi, ki = iter(args[n:]), iter(kept)
        consts = [next(hi) if h else next(ki) for h in hoist]
        outs = eval_jaxpr(closed.jaxpr, consts, *a_leaves)
        return tree_unflatten(out_tree, outs)

    return converted, hoisted
