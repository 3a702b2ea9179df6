"""jax.numpy products: dot, matmul, vdot, vecdot, matvec, vecmat, inner, outer, tensordot,
einsum (+ einsum_path), kron, cross, trace and diagonal.

Contractions lower to ``dot_general`` with the dimension numbers JAX uses, so
``make_jaxpr(lambda a: a @ a.T)`` prints the same program as in JAX. einsum asks opt_einsum
for the pairwise contraction order and lowers each step to reduce_sum / dot_general /
transpose as JAX does.
"""
from __future__ import annotations

import builtins
import collections
import operator
from functools import partial

import numpy as np

from jaxlite._src.api.sharding_types import compute_with_out_sharding, place_as
from jaxlite._src.sharding.types import resolve_out_sharding
from jaxlite._src.api.jit import jit
from jaxlite._src.core import dtypes
from jaxlite._src.core.trace import Tracer
from jaxlite._src.lax import elementwise as lax
from jaxlite._src.lax import reductions as lax_red
from jaxlite._src.lax import shape as lax_shape
from jaxlite._src.numpy.util import (asarray_value, canonicalize_axis, check_arraylike,
                                     promote_dtypes)
from jaxlite._src.prims.dot import dot_general_p
from jaxlite._src.prims.precision import canonicalize_precision, check_cpu_precision
from jaxlite._src.runtime.array import ArrayImpl

__all__ = ["dot", "matmul", "vdot", "vecdot", "matvec", "vecmat", "inner", "outer",
           "tensordot", "einsum", "einsum_path", "kron", "cross", "trace", "diagonal"]

_bmax, _bmin = builtins.max, builtins.min


def _arraylike(name, *args):
    check_arraylike(name, *args)
    return [asarray_value(a) for a in args]


def _dot_general(lhs, rhs, dimension_numbers, precision=None, preferred_element_type=None,
                 out_sharding=None):
    """Bind dot_general directly (operands may differ in dtype when the result type is
    given, as in JAX)."""
    (lc, rc), (lb, rb) = dimension_numbers
    dn = ((tuple(map(int, lc)), tuple(map(int, rc))), (tuple(map(int, lb)), tuple(map(int, rb))))
    ls, rs = np.shape(lhs), np.shape(rhs)
    if dn[1][0] and tuple(ls[i] for i in dn[1][0]) != tuple(rs[i] for i in dn[1][1]):
        raise TypeError("dot_general requires lhs batch dimensions and rhs batch dimensions "
                        f"to have the same shape, got {tuple(ls[i] for i in dn[1][0])} and "
                        f"{tuple(rs[i] for i in dn[1][1])}.")
    if tuple(ls[i] for i in dn[0][0]) != tuple(rs[i] for i in dn[0][1]):
        raise TypeError("dot_general requires contracting dimensions to have the same shape, "
                        f"got {tuple(ls[i] for i in dn[0][0])} and "
                        f"{tuple(rs[i] for i in dn[0][1])}.")
    precision = canonicalize_precision(precision)
    check_cpu_precision(precision)
    return dot_general_p.bind(lhs, rhs, dimension_numbers=dn, precision=precision,
                              preferred_element_type=_canon(preferred_element_type),
                              out_sharding=out_sharding)


_CANON: dict = {}


def _canon(dt):
    r = _CANON.get(dt)
    if r is None:
        r = _CANON[dt] = dtypes.canonicalize_dtype(dt)
    return r


def _result_type(name, a, b, preferred_element_type):
    """(result dtype, weak flag) of a product of ``a`` and ``b``."""
    if preferred_element_type is None:
        return dtypes.result_type(a, b, return_weak_type_flag=True)
    dtypes.check_user_dtype_supported(preferred_element_type, name)
    return dtypes.canonicalize_dtype(preferred_element_type), False


def _cast(x, dtype, weak_type):
    """Convert ``x`` to ``dtype``/``weak_type`` unless it already has them."""
    if isinstance(x, (ArrayImpl, Tracer)) and x.dtype == dtype and x.weak_type == weak_type:
        return x
    return lax._convert_element_type(x, dtype, weak_type)


def dot(a, b, *, precision=None, preferred_element_type=None, out_sharding=None):
    """Dot product: the matrix product for 2-D operands, the inner product for 1-D ones,
    elementwise multiplication when one is a scalar, and in general a sum over the last
    axis of ``a`` and the second-to-last axis of ``b`` (its only axis when 1-D)."""

    a, b = _arraylike("dot", a, b)
    pet, weak = _result_type("dot", a, b, preferred_element_type)
    an, bn = np.ndim(a), np.ndim(b)
    if an == 0 or bn == 0:
        contract = ((), ())
    elif bn == 1:
        contract = ((an - 1,), (0,))
    else:
        contract = ((an - 1,), (bn - 2,))
    s = resolve_out_sharding(out_sharding)
    out = _dot_general(a, b, (contract, ((), ())), precision, pet, s)
    out = _cast(out, pet, weak)
    return out if s is None else place_as(out, s)


def matmul(a, b, *, precision=None, preferred_element_type=None, out_sharding=None):
    """Matrix product with NumPy's rules: leading dimensions broadcast as a batch, and a 1-D
    operand is a vector (a row on the left, a column on the right) whose axis is dropped
    from the result. Scalars are not allowed."""
    if out_sharding is not None:
        return compute_with_out_sharding(
            lambda a, b: matmul(a, b, precision=precision, preferred_element_type=preferred_element_type),
            (a, b), out_sharding)
    a, b = _arraylike("matmul", a, b)
    for i, x in enumerate((a, b)):
        if np.ndim(x) < 1:
            raise ValueError(f"matmul input operand {i} must have ndim at least 1, but it has "
                             f"ndim {np.ndim(x)}")
    pet, weak = _result_type("matmul", a, b, preferred_element_type)
    a_mat, b_mat = a.ndim > 1, b.ndim > 1
    a_bd = a.shape[:-2] if a_mat else ()
    b_bd = b.shape[:-2] if b_mat else ()
    nb = _bmax(len(a_bd), len(b_bd))
    a_bd = (None,) * (nb - len(a_bd)) + tuple(a_bd)
    b_bd = (None,) * (nb - len(b_bd)) + tuple(b_bd)
    a_sq, b_sq, both_sq = [], [], []
    a_batch, b_batch = [], []
    idx_batch, idx_a, idx_b = [], [], []
    for i, (da, db) in enumerate(zip(a_bd, b_bd)):
        if da is None:
            idx_b.append(i)
        elif db is None:
            idx_a.append(i)
        elif da == 1 and db == 1:
            a_sq.append(len(idx_batch) + len(idx_a) + len(a_sq))
            b_sq.append(len(idx_batch) + len(idx_b) + len(b_sq))
            both_sq.append(i)
        elif da == 1:
            idx_b.append(i)
            a_sq.append(len(idx_batch) + len(idx_a) + len(a_sq))
        elif db == 1:
            idx_a.append(i)
            b_sq.append(len(idx_batch) + len(idx_b) + len(b_sq))
        elif da == db:
            a_batch.append(len(idx_batch) + len(idx_a))
            b_batch.append(len(idx_batch) + len(idx_b))
            idx_batch.append(i)
        else:
            raise ValueError("Incompatible types for matmul arguments: "
                             f"{_aval_str(a)} and {_aval_str(b)}")
    if a_mat:
        idx_a.append(nb)
    if b_mat:
        idx_b.append(nb + a_mat)
    order = idx_batch + idx_a + idx_b
    perm = tuple(sorted(range(len(order)), key=order.__getitem__))
    a = lax_shape.squeeze(a, tuple(a_sq))
    b = lax_shape.squeeze(b, tuple(b_sq))
    out = _dot_general(a, b, (((a.ndim - 1,), (b.ndim - 1 - b_mat,)),
                              (tuple(a_batch), tuple(b_batch))), precision, pet)
    out = lax_shape.transpose(out, perm)
    if both_sq:
        out = lax_shape.expand_dims(out, tuple(both_sq))
    return _cast(out, pet, weak)


def _aval_str(x):
    return f"{x.dtype.name}[{','.join(str(d) for d in x.shape)}]"


def vdot(a, b, *, precision=None, preferred_element_type=None):
    """Dot product of the flattened inputs, conjugating ``a`` when it is complex."""
    a, b = _arraylike("vdot", a, b)
    if dtypes.issubdtype(a.dtype, np.complexfloating):
        a = lax.conj(a)
    from jaxlite._src.numpy.shape_ops import ravel
    return dot(ravel(a), ravel(b), precision=precision,
               preferred_element_type=preferred_element_type)


def _batched_contract(x1, x2, core1, core2, contract, name, conj_first=False):
    """Contract the trailing core dimensions of ``x1``/``x2`` (``contract`` pairs of core
    axis indices) after broadcasting their leading batch dimensions."""
    x1, x2 = _arraylike(name, x1, x2)
    if conj_first and dtypes.issubdtype(x1.dtype, np.complexfloating):
        x1 = lax.conj(x1)
    if x1.ndim < core1 or x2.ndim < core2:
        raise ValueError(f"{name}: operands have too few dimensions: {x1.shape} and "
                         f"{x2.shape}")
    from jaxlite._src.numpy.shape_ops import broadcast_shapes, broadcast_to
    b1, b2 = x1.shape[:x1.ndim - core1], x2.shape[:x2.ndim - core2]
    batch = broadcast_shapes(b1, b2)
    x1 = broadcast_to(x1, batch + x1.shape[x1.ndim - core1:])
    x2 = broadcast_to(x2, batch + x2.shape[x2.ndim - core2:])
    nb = len(batch)
    pet, weak = dtypes.result_type(x1, x2, return_weak_type_flag=True)
    lc = tuple(nb + i for i, _ in contract)
    rc = tuple(nb + j for _, j in contract)
    out = _dot_general(x1, x2, ((lc, rc), (tuple(range(nb)), tuple(range(nb)))), None, pet)
    return _cast(out, pet, weak)


@jit
def matvec(x1, x2, /):
    """Batched matrix-vector product: ``x1[..., n, m] @ x2[..., m] -> [..., n]``."""
    return _batched_contract(x1, x2, 2, 1, [(1, 0)], "matvec")


@jit
def vecmat(x1, x2, /):
    """Batched vector-matrix product ``conj(x1)[..., n] @ x2[..., n, m] -> [..., m]``."""
    return _batched_contract(x1, x2, 1, 2, [(0, 0)], "matvec", conj_first=True)


def vecdot(x1, x2, /, *, axis=-1, precision=None, preferred_element_type=None):
    """Vector dot product along ``axis`` (``x1`` conjugated), broadcasting the other
    axes."""
    x1, x2 = _arraylike("jnp.vecdot", x1, x2)
    if x1.shape[axis] != x2.shape[axis]:
        raise ValueError(f"axes must match; got shapes {x1.shape} and {x2.shape} with "
                         f"axis={axis}")
    from jaxlite._src.numpy.shape_ops import moveaxis
    x1, x2 = moveaxis(x1, axis, -1), moveaxis(x2, axis, -1)
    return _batched_contract(x1, x2, 1, 1, [(0, 0)], "jnp.vecdot", conj_first=True)


def tensordot(a, b, axes=2, *, precision=None, preferred_element_type=None,
              out_sharding=None):
    """Sum products over the last ``axes`` axes of ``a`` and the first ``axes`` of ``b``,
    or over explicitly paired axes ``(axes_a, axes_b)``."""
    if out_sharding is not None:
        return compute_with_out_sharding(
            lambda a, b: tensordot(a, b, axes, precision=precision,
                                   preferred_element_type=preferred_element_type),
            (a, b), out_sharding)
    a, b = _arraylike("tensordot", a, b)
    an, bn = np.ndim(a), np.ndim(b)
    pet, weak = _result_type("tensordot", a, b, preferred_element_type)
    if type(axes) is int:
        if axes > _bmin(an, bn):
            raise TypeError(f"Number of tensordot axes (axes {axes}) exceeds input ranks "
                            f"({a.shape} and {b.shape})")
        contract = tuple(range(an - axes, an)), tuple(range(axes))
    elif isinstance(axes, (tuple, list)) and len(axes) == 2:
        ax1, ax2 = axes
        if isinstance(ax1, int) and isinstance(ax2, int):
            contract = (canonicalize_axis(ax1, an),), (canonicalize_axis(ax2, bn),)
        elif isinstance(ax1, (tuple, list)) and isinstance(ax2, (tuple, list)):
            if len(ax1) != len(ax2):
                raise TypeError("tensordot requires axes lists to have equal length, got "
                                f"{ax1} and {ax2}.")
            contract = (tuple(canonicalize_axis(i, an) for i in ax1),
                        tuple(canonicalize_axis(i, bn) for i in ax2))
        else:
            raise TypeError("tensordot requires both axes lists to be either ints, tuples or "
                            f"lists, got {ax1} and {ax2}")
    else:
        raise TypeError("tensordot axes argument must be an int, a pair of ints, or a pair "
                        "of lists/tuples of ints.")
    out = _dot_general(a, b, (contract, ((), ())), precision, pet)
    return _cast(out, pet, weak)


def inner(a, b, *, precision=None, preferred_element_type=None):
    """Sum of products over the last axes of ``a`` and ``b`` (a product for scalars)."""
    a, b = _arraylike("inner", a, b)
    if np.ndim(a) == 0 or np.ndim(b) == 0:
        from jaxlite._src.numpy.ufuncs import multiply
        if preferred_element_type is not None:
            a = lax.convert_element_type(a, preferred_element_type)
            b = lax.convert_element_type(b, preferred_element_type)
        return multiply(a, b)
    return tensordot(a, b, (-1, -1), precision=precision,
                     preferred_element_type=preferred_element_type)


def outer(a, b, out=None):
    """Outer product of the flattened inputs: ``out[i, j] = a[i] * b[j]``."""
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.outer is not supported.")
    a, b = _arraylike("outer", a, b)
    a, b = promote_dtypes(a, b)
    from jaxlite._src.numpy.shape_ops import ravel
    from jaxlite._src.numpy.ufuncs import multiply
    return multiply(ravel(a)[:, None], ravel(b)[None, :])


# ----------------------------------------------------------------------------- einsum
def _opt_einsum():
    import opt_einsum
    return opt_einsum


def _left_to_right_optimizer():
    """An opt_einsum path optimizer that contracts operands strictly left to right (what
    ``optimize=False`` means)."""
    oe = _opt_einsum()

    class LeftToRight(oe.paths.PathOptimizer):
        def __call__(self, inputs, output, size_dict, memory_limit=None):
            return [(0, 1)] * (len(inputs) - 1)

    return LeftToRight()


def _path_type(optimize):
    if optimize is True:
        return "optimal"
    if optimize is False:
        return _left_to_right_optimizer()
    return optimize


def einsum(subscripts, /, *operands, out=None, optimize="auto", precision=None,
           preferred_element_type=None, _dot_general=None, out_sharding=None):
    """Einstein summation over the operands as described by ``subscripts`` (or the
    interleaved ``(array, axes, array, axes, ...)`` form).

    The contraction order comes from opt_einsum (``optimize``: "auto", "greedy", "optimal",
    True, False or an explicit path); each pairwise step is one ``dot_general`` (plus
    reductions for summed-out and repeated indices and a final transpose).
    """
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.einsum is not supported.")
    if out_sharding is not None:
        return compute_with_out_sharding(
            lambda *ops: einsum(subscripts, *ops, optimize=optimize, precision=precision,
                                preferred_element_type=preferred_element_type,
                                _dot_general=_dot_general), operands, out_sharding)
    ops = (subscripts, *operands)
    ops = tuple(o.__jax_array__() if hasattr(o, "__jax_array__") else o for o in ops)
    shaped = tuple(_ShapeOnly(o) if isinstance(o, (ArrayImpl, Tracer)) else o for o in ops)
    arrays, contractions = _opt_einsum().contract_path(
        *shaped, einsum_call=True, use_blas=True, optimize=_path_type(optimize))
    contractions = tuple((c[0], frozenset(c[1]), c[2]) for c in contractions)
    arrays = [a.value if isinstance(a, _ShapeOnly) else a for a in arrays]
    arrays = _arraylike("einsum", *arrays)
    return _einsum_jit(arrays, contractions, precision, preferred_element_type)


class _ShapeOnly:
    """Stand-in giving opt_einsum an operand's shape without touching its data."""
    __slots__ = ("value", "shape", "ndim")

    def __init__(self, value):
        self.value = value
        self.shape = tuple(value.shape)
        self.ndim = len(self.shape)


def _drop_chars(s, chars):
    return "".join(c for c in s if c not in chars)


def _einsum_impl(operands, contractions, precision, preferred_element_type):
    operands = list(operands)
    if preferred_element_type is None:
        pet, weak = dtypes.result_type(*operands, return_weak_type_flag=True)
    else:
        dtypes.check_user_dtype_supported(preferred_element_type, "einsum")
        pet, weak = dtypes.canonicalize_dtype(preferred_element_type), False

    def total(x, axes):
        if dtypes.result_type(x, pet) != x.dtype:
            x = lax.convert_element_type(x, pet)
        return (lax_red.reduce_or if x.dtype == np.bool_ else lax_red.reduce_sum)(
            x, tuple(axes))

    def sum_uniques(x, names, uniques):
        if uniques:
            x = total(x, [names.index(n) for n in uniques])
            names = _drop_chars(names, uniques)
        return x, names

    def sum_repeats(x, names, counts, keep):
        for name, count in counts.items():
            if count > 1:
                axes = [i for i, n in enumerate(names) if n == name]
                eye = _delta(x.shape, axes)
                x = lax.select(eye, x, lax_shape.full_like(x, 0))
                if name not in keep:
                    x = total(x, axes)
                    names = names.replace(name, "")
                else:
                    x = total(x, axes[:-1])
                    names = names.replace(name, "", count - 1)
        return x, names

    def drop_singletons(x, names, other_shape, other_names):
        keep = [x.shape[i] != 1 or j == -1 or other_shape[j] == 1
                for i, j in enumerate(map(other_names.find, names))]
        sq = [i for i, k in enumerate(keep) if not k]
        return lax_shape.squeeze(x, tuple(sq)), "".join(n for n, k in zip(names, keep) if k)

    for idx, contracted, spec in contractions:
        contracted = sorted(contracted)
        ins, result = spec.split("->")
        in_names = ins.split(",")
        if len(idx) == 1:
            x = operands.pop(idx[0])
            (names,) = in_names
            counts = collections.Counter(names)
            x, names = sum_uniques(x, names, [n for n in contracted if counts[n] == 1])
            x, names = sum_repeats(x, names, counts, result)
        elif len(idx) == 2:
            lhs, rhs = map(operands.pop, idx)
            ln, rn = in_names
            lhs, ln = drop_singletons(lhs, ln, np.shape(rhs), rn)
            rhs, rn = drop_singletons(rhs, rn, np.shape(lhs), ln)
            lcount, rcount = collections.Counter(ln), collections.Counter(rn)
            lhs, ln = sum_uniques(lhs, ln, [n for n in contracted
                                            if lcount[n] == 1 and rcount[n] == 0])
            rhs, rn = sum_uniques(rhs, rn, [n for n in contracted
                                            if rcount[n] == 1 and lcount[n] == 0])
            lhs, ln = sum_repeats(lhs, ln, lcount, result + rn)
            rhs, rn = sum_repeats(rhs, rn, rcount, result + ln)
            either = set(ln) | set(rn)
            contracted = [n for n in contracted if n in either]
            both = set(ln) & set(rn)
            batch = [n for n in result if n in both]
            lb = tuple(ln.find(n) for n in batch)
            rb = tuple(rn.find(n) for n in batch)
            lcon = tuple(ln.index(n) for n in contracted)
            rcon = tuple(rn.index(n) for n in contracted)
            gone = "".join(batch) + "".join(contracted)
            rest_l, rest_r = _drop_chars(ln, gone), _drop_chars(rn, gone)
            names = "".join(batch) + rest_r + rest_l
            if names == result:
                x = _dot_general(rhs, lhs, ((rcon, lcon), (rb, lb)), precision, pet)
            else:
                names = "".join(batch) + rest_l + rest_r
                x = _dot_general(lhs, rhs, ((lcon, rcon), (lb, rb)), precision, pet)
        else:
            raise NotImplementedError(
                "jax.numpy.einsum does not support simultaneous contraction of 3 or more "
                "operands. Typically this means you've passed an unsupported path to the "
                "einsum optimize parameter.")
        if names != result:
            x = lax_shape.transpose(x, tuple(names.index(n) for n in result))
        operands.append(x)
    return _cast(operands[0], pet, weak)


_einsum_impl.__name__ = _einsum_impl.__qualname__ = "_einsum"
_einsum_jit = _einsum_impl  # JAX inlines this jit: no nested equation


def _delta(shape, axes):
    """Boolean mask, true where the indices along ``axes`` are all equal."""
    base = tuple(shape[a] for a in axes)
    iotas = [lax_shape.broadcasted_iota(np.uint32, base, i) for i in range(len(base))]
    eyes = [lax.eq(p, q) for p, q in zip(iotas[:-1], iotas[1:])]
    m = eyes[0]
    for e in eyes[1:]:
        m = lax.bitwise_and(m, e)
    return lax_shape.broadcast_in_dim(m, tuple(shape), tuple(axes))


def einsum_path(subscripts, /, *operands, optimize="auto"):
    """The contraction order einsum would use, with opt_einsum's cost report:
    ``(path, info)``."""
    ops = tuple(_ShapeOnly(o) if isinstance(o, (ArrayImpl, Tracer)) else o for o in operands)
    if isinstance(optimize, bool):
        optimize = "optimal" if optimize else _left_to_right_optimizer()
    return _opt_einsum().contract_path(subscripts, *ops, optimize=optimize)


# ----------------------------------------------------------------------------- misc products
@jit
def kron(a, b):
    """Kronecker product: blocks ``a[i, j] * b`` laid out like ``a``."""
    check_arraylike("kron", a, b)
    a, b = promote_dtypes(a, b)
    from jaxlite._src.numpy.shape_ops import expand_dims, reshape
    if a.ndim < b.ndim:
        a = expand_dims(a, tuple(range(b.ndim - a.ndim)))
    elif b.ndim < a.ndim:
        b = expand_dims(b, tuple(range(a.ndim - b.ndim)))
    ar = expand_dims(a, tuple(range(1, 2 * a.ndim, 2)))
    br = expand_dims(b, tuple(range(0, 2 * b.ndim, 2)))
    out_shape = tuple(int(p) * int(q) for p, q in zip(a.shape, b.shape))
    return reshape(lax.mul(ar, br), out_shape)


@partial(jit, static_argnames=("axisa", "axisb", "axisc", "axis"))
def cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """Cross product of 3-vectors (or 2-vectors, padded with zero) along the given axes;
    two 2-vectors give the scalar z component."""
    check_arraylike("cross", a, b)
    if axis is not None:
        axisa = axisb = axisc = axis
    from jaxlite._src.numpy import ufuncs as U
    from jaxlite._src.numpy.shape_ops import moveaxis
    a = moveaxis(a, axisa, -1)
    b = moveaxis(b, axisb, -1)
    if a.shape[-1] not in (2, 3) or b.shape[-1] not in (2, 3):
        raise ValueError("Dimension must be either 2 or 3 for cross product")
    if a.shape[-1] == 2 and b.shape[-1] == 2:
        return U.subtract(U.multiply(a[..., 0], b[..., 1]), U.multiply(a[..., 1], b[..., 0]))
    a0, a1 = a[..., 0], a[..., 1]
    a2 = a[..., 2] if a.shape[-1] == 3 else lax_shape.full_like(a0, 0)
    b0, b1 = b[..., 0], b[..., 1]
    b2 = b[..., 2] if b.shape[-1] == 3 else lax_shape.full_like(b0, 0)
    from jaxlite._src.numpy.creation import array
    c = array([U.subtract(U.multiply(a1, b2), U.multiply(a2, b1)),
               U.subtract(U.multiply(a2, b0), U.multiply(a0, b2)),
               U.subtract(U.multiply(a0, b1), U.multiply(a1, b0))])
    return moveaxis(c, 0, axisc)


def _eye_mask(n, m, k):
    """Boolean (n, m) mask of the k-th diagonal."""
    r = lax_shape.broadcasted_iota(np.int32, (n, m), 0)
    c = lax_shape.broadcasted_iota(np.int32, (n, m), 1)
    return lax.eq(lax.add(r, np.int32(k)), c)


@partial(jit, static_argnames=("axis1", "axis2", "dtype"))
def trace(a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    """Sum along the ``offset``-th diagonal of the (``axis1``, ``axis2``) planes."""
    (a,) = _arraylike("trace", a)
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.trace is not supported.")
    if canonicalize_axis(axis1, a.ndim) == canonicalize_axis(axis2, a.ndim):
        raise ValueError(f"axis1 and axis2 can not be same. axis1={axis1} and axis2={axis2}")
    if dtype is not None:
        dtypes.check_user_dtype_supported(dtype, "trace")
    from jaxlite._src.numpy.reductions import sum as jsum
    from jaxlite._src.numpy.shape_ops import moveaxis
    from jaxlite._src.numpy.ufuncs import where
    shp = a.shape
    a = moveaxis(a, (axis1, axis2), (-2, -1))
    n, m = shp[axis1], shp[axis2]
    if isinstance(offset, (int, np.integer)):
        mask = _eye_mask(n, m, int(offset))
    else:
        r = lax_shape.broadcasted_iota(np.int32, (n, m), 0)
        c = lax_shape.broadcasted_iota(np.int32, (n, m), 1)
        from jaxlite._src.numpy.ufuncs import add, equal
        mask = equal(add(r, offset), c)
    a = where(mask, a, lax_shape.full_like(a, 0))
    return jsum(a, axis=(-2, -1), dtype=dtype)


@partial(jit, static_argnames=("offset", "axis1", "axis2"))
def diagonal(a, offset=0, axis1=0, axis2=1):
    """The ``offset``-th diagonal of the (``axis1``, ``axis2``) planes, as the last axis of
    the result."""
    (a,) = _arraylike("diagonal", a)
    if a.ndim < 2:
        raise ValueError("diagonal requires an array of at least two dimensions.")
    offset = operator.index(offset)
    shp = a.shape
    from jaxlite._src.numpy.shape_ops import moveaxis
    a = moveaxis(a, (axis1, axis2), (-2, -1))
    n = _bmax(0, _bmin(shp[axis1] + _bmin(offset, 0), shp[axis2] - _bmax(offset, 0)))
    from jaxlite._src.numpy.creation import arange
    i = arange(n)
    j = arange(abs(offset), abs(offset) + n)
    try:
        return a[..., i, j] if offset >= 0 else a[..., j, i]
    except NotImplementedError:  # integer-array indexing not available: mask and reduce
        return _diagonal_by_mask(a, offset, n)


def _diagonal_by_mask(a, offset, n):
    """The ``offset``-th diagonal of the last two axes via select + reduce_sum."""
    rows, cols = a.shape[-2:]
    if offset >= 0:
        a = lax_shape.slice_in_dim(a, offset, cols, 1, a.ndim - 1)
    else:
        a = lax_shape.slice_in_dim(a, -offset, rows, 1, a.ndim - 2)
    a = lax_shape.slice_in_dim(lax_shape.slice_in_dim(a, 0, n, 1, a.ndim - 2), 0, n, 1,
                               a.ndim - 1)
    mask = lax_shape.broadcast_in_dim(_eye_mask(n, n, 0), a.shape, (a.ndim - 2, a.ndim - 1))
    picked = lax.select(mask, a, lax_shape.full_like(a, 0))
    return (lax_red.reduce_or if a.dtype == np.bool_ else lax_red.reduce_sum)(
        picked, (a.ndim - 1,))
