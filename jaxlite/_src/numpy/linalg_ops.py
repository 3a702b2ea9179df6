"""jax.numpy products: dot, matmul, vdot, inner, outer, tensordot, einsum, trace."""
from __future__ import annotations

import numpy as np

from jaxlite._src.lax import dot as _unused  # noqa: F401  (module kept for the public lax)
from jaxlite._src.lax import reductions as lax_red
from jaxlite._src.numpy.util import asarray_value, check_arraylike, promote_dtypes

__all__ = ["dot", "matmul", "vdot", "inner", "outer", "tensordot", "einsum", "trace",
           "matvec", "vecmat", "vecdot"]


def _dg(a, b, contract, batch=((), ())):
    from jaxlite._src.prims.dot import dot_general_p
    (lc, rc), (lb, rb) = contract, batch
    return dot_general_p.bind(a, b, dimension_numbers=((tuple(lc), tuple(rc)),
                                                        (tuple(lb), tuple(rb))),
                              precision=None, preferred_element_type=a.dtype,
                              out_sharding=None)


def dot(a, b, *, precision=None, preferred_element_type=None):
    """Dot product: matrix product for 2-D, sum over the last axis of ``a`` and the
    second-to-last of ``b`` in general; scalars multiply."""
    check_arraylike("dot", a, b)
    a, b = promote_dtypes(a, b)
    if a.ndim == 0 or b.ndim == 0:
        from jaxlite._src.numpy.ufuncs import multiply
        return multiply(a, b)
    rc = 0 if b.ndim == 1 else b.ndim - 2
    return _dg(a, b, ((a.ndim - 1,), (rc,)))


def matmul(a, b, *, precision=None, preferred_element_type=None):
    """Matrix product with NumPy's broadcasting of leading batch dimensions."""
    check_arraylike("matmul", a, b)
    a, b = promote_dtypes(a, b)
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError(f"matmul: scalar operands are not allowed, got shapes {a.shape} "
                         f"and {b.shape}")
    from jaxlite._src.numpy.shape_ops import broadcast_to, expand_dims, squeeze
    a_vec, b_vec = a.ndim == 1, b.ndim == 1
    if a_vec and b_vec:
        return _dg(a, b, ((0,), (0,)))
    if a.ndim <= 2 and b.ndim <= 2:
        return _dg(a, b, ((a.ndim - 1,), (0,)))
    if a_vec:
        a = expand_dims(a, 0)
    if b_vec:
        b = expand_dims(b, 1)
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    a = broadcast_to(a, batch + a.shape[-2:])
    b = broadcast_to(b, batch + b.shape[-2:])
    nb = len(batch)
    out = _dg(a, b, ((nb + 1,), (nb,)), (tuple(range(nb)), tuple(range(nb))))
    if a_vec:
        out = squeeze(out, out.ndim - 2)
    if b_vec:
        out = squeeze(out, out.ndim - 1)
    return out


def vdot(a, b, *, precision=None, preferred_element_type=None):
    """Dot product of flattened arrays, conjugating ``a`` if complex."""
    from jaxlite._src.numpy.shape_ops import ravel
    from jaxlite._src.numpy.ufuncs import conj
    check_arraylike("vdot", a, b)
    a, b = promote_dtypes(a, b)
    if np.issubdtype(a.dtype, np.complexfloating):
        a = conj(a)
    return _dg(ravel(a), ravel(b), ((0,), (0,)))


def inner(a, b, *, precision=None, preferred_element_type=None):
    """Sum over the last axes of ``a`` and ``b``."""
    check_arraylike("inner", a, b)
    a, b = promote_dtypes(a, b)
    if a.ndim == 0 or b.ndim == 0:
        from jaxlite._src.numpy.ufuncs import multiply
        return multiply(a, b)
    return _dg(a, b, ((a.ndim - 1,), (b.ndim - 1,)))


def outer(a, b, out=None):
    """Outer product of the flattened inputs."""
    from jaxlite._src.numpy.shape_ops import ravel
    from jaxlite._src.numpy.ufuncs import multiply
    a, b = ravel(asarray_value(a)), ravel(asarray_value(b))
    return multiply(a[:, None], b[None, :])


def tensordot(a, b, axes=2, *, precision=None, preferred_element_type=None):
    """Contract ``axes`` of ``a`` with ``axes`` of ``b``."""
    check_arraylike("tensordot", a, b)
    a, b = promote_dtypes(a, b)
    if isinstance(axes, (int, np.integer)):
        n = int(axes)
        ca, cb = tuple(range(a.ndim - n, a.ndim)), tuple(range(n))
    else:
        ca, cb = axes
        ca = (ca,) if isinstance(ca, int) else tuple(ca)
        cb = (cb,) if isinstance(cb, int) else tuple(cb)
        ca = tuple(x % a.ndim for x in ca)
        cb = tuple(x % b.ndim for x in cb)
    return _dg(a, b, (ca, cb))


def einsum(subscripts, *operands, optimize="auto", precision=None,
           preferred_element_type=None, out=None):
    """Einstein summation, contracted pairwise (path chosen by opt_einsum) via dot_general."""
    import opt_einsum
    ops = promote_dtypes(*operands) if len(operands) > 1 else [asarray_value(operands[0])]
    _, contractions = opt_einsum.contract_path(subscripts, *[np.empty(o.shape, np.int8)
                                                             for o in ops],
                                               einsum_call=True, optimize="greedy"
                                               if optimize in ("auto", True) else optimize)
    ops = list(ops)
    for inds, _, spec, _, _ in contractions:
        args = [ops.pop(i) for i in sorted(inds, reverse=True)]
        ins, out_spec = spec.split("->")
        in_specs = ins.split(",")[::-1] if len(args) > 1 else ins.split(",")
        ops.append(_einsum_pair(in_specs, out_spec, args))
    return ops[0]


def _einsum_pair(in_specs, out_spec, args):
    from jaxlite._src.numpy.shape_ops import transpose
    if len(args) == 1:
        (s,), (x,) = in_specs, args
        # Sum indices absent from the output, then order as requested (no diagonals).
        summed = tuple(i for i, c in enumerate(s) if c not in out_spec)
        if summed:
            x = lax_red.reduce_sum(x, summed)
            s = "".join(c for c in s if c in out_spec)
        return transpose(x, tuple(s.index(c) for c in out_spec)) if s != out_spec else x
    (sa, sb), (a, b) = in_specs, args
    # Reduce indices only in one operand and absent from the output first.
    for side in (0, 1):
        s, o, x = (sa, sb, a) if side == 0 else (sb, sa, b)
        only = tuple(i for i, c in enumerate(s) if c not in o and c not in out_spec)
        if only:
            x = lax_red.reduce_sum(x, only)
            s = "".join(c for c in s if c in o or c in out_spec)
            if side == 0:
                sa, a = s, x
            else:
                sb, b = s, x
    batch = [c for c in sa if c in sb and c in out_spec]
    contract = [c for c in sa if c in sb and c not in out_spec]
    r = _dg(a, b, (tuple(sa.index(c) for c in contract), tuple(sb.index(c) for c in contract)),
            (tuple(sa.index(c) for c in batch), tuple(sb.index(c) for c in batch)))
    res = "".join(batch) + "".join(c for c in sa if c not in batch and c not in contract) + \
        "".join(c for c in sb if c not in batch and c not in contract)
    return transpose(r, tuple(res.index(c) for c in out_spec)) if res != out_spec else r


def trace(a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    """Sum along a diagonal."""
    from jaxlite._src.numpy.creation import eye
    from jaxlite._src.numpy.reductions import sum as jsum
    from jaxlite._src.numpy.ufuncs import multiply
    from jaxlite._src.numpy.shape_ops import moveaxis
    a = asarray_value(a)
    a = moveaxis(a, (axis1, axis2), (-2, -1))
    mask = eye(a.shape[-2], a.shape[-1], k=offset, dtype=a.dtype)
    return jsum(multiply(a, mask), axis=(-2, -1), dtype=dtype)


def matvec(x1, x2, /):
    """Matrix-vector product over the last axes."""
    return matmul(x1, asarray_value(x2)[..., None])[..., 0]


def vecmat(x1, x2, /):
    """Vector-matrix product over the last axes."""
    from jaxlite._src.numpy.ufuncs import conj
    return matmul(conj(asarray_value(x1))[..., None, :], x2)[..., 0, :]


def vecdot(x1, x2, /, *, axis=-1):
    """Vector dot product along ``axis`` (conjugating ``x1``)."""
    from jaxlite._src.numpy.reductions import sum as jsum
    from jaxlite._src.numpy.ufuncs import conj, multiply
    return jsum(multiply(conj(x1), x2), axis=axis)
