"""dot_general: generalized tensor contraction with batch dimensions."""
from __future__ import annotations

import math

import numpy as np

from jaxlite._src.core.avals import ShapedArray
from jaxlite._src.core.primitive import Primitive, aval_nbytes
from jaxlite._src.prims import ad_util as u
from jaxlite._src.prims import numba_exprs as nx
from jaxlite._src.runtime import blas as _blas
from jaxlite._src.prims import taylor

__all__ = ["dot_general_p"]


def _letters(n, start=0):
    return [chr(ord("a") + start + i) for i in range(n)]


def _matmul_plan(lshape, rshape, dimension_numbers):
    """How dot_general becomes one (batched) matmul: the operand permutations to
    (batch, free, contract) and (batch, contract, free), the batch shape, m, n, k and the
    free dimensions of each side."""
    (lc, rc), (lb, rb) = dimension_numbers
    lf = [d for d in range(len(lshape)) if d not in lc and d not in lb]
    rf = [d for d in range(len(rshape)) if d not in rc and d not in rb]
    bshape = [lshape[d] for d in lb]
    m = math.prod([lshape[d] for d in lf])
    n = math.prod([rshape[d] for d in rf])
    k = math.prod([lshape[d] for d in lc])
    return (list(lb) + lf + list(lc), list(rb) + list(rc) + rf, bshape, m, n, k, lf, rf)


def _view_plan(shape, perm, nb, nr, target):
    """How an operand becomes the (batch, rows, cols) stack ``target`` that its
    permutation ``perm`` (batch dims, ``nr`` row dims, then column dims) asks for:
    (permutation or None, shape to reshape to or None, swap the last two axes?). When the
    operand is laid out (batch, cols, rows) the stack is a reshape plus a swap, a
    transposed view BLAS takes as it is, instead of a transposed copy."""
    n = len(shape)
    rows, cols = list(perm[nb:nb + nr]), list(perm[nb + nr:])
    if rows and cols and list(perm[:nb]) + cols + rows == list(range(n)) and \
            list(perm) != list(range(n)):
        flipped = list(target[:nb]) + [target[-1], target[-2]]
        return None, (flipped if [shape[d] for d in range(n)] != flipped else None), True
    p = None if list(perm) == list(range(n)) else tuple(perm)
    permuted = [shape[d] for d in perm]
    return p, (list(target) if permuted != list(target) else None), False


def _apply_view(x, plan):
    perm, shape, swap = plan
    if perm is not None:
        x = np.transpose(x, perm)
    if shape is not None:
        x = x.reshape(shape)
    return np.swapaxes(x, -1, -2) if swap else x


def _view_text(name, ndim, plan):
    perm, shape, swap = plan
    e = name
    if perm is not None:
        e = f"{e}.T" if ndim == 2 else f"{e}.transpose({perm})"
    if shape is not None:
        e = f"{e}.reshape({tuple(shape)})"
    if swap:
        e = f"{e}.T" if (ndim if shape is None else len(shape)) == 2 else f"{e}.swapaxes(-1, -2)"
    return e


def _operand_views(lshape, rshape, dimension_numbers):
    """(lhs view plan, rhs view plan, batch shape, m, n, k, lhs free, rhs free)."""
    lperm, rperm, bshape, m, n, k, lf, rf = _matmul_plan(lshape, rshape, dimension_numbers)
    nb = len(bshape)
    return (_view_plan(lshape, lperm, nb, len(lf), bshape + [m, k]),
            _view_plan(rshape, rperm, nb, len(dimension_numbers[0][1]), bshape + [k, n]),
            bshape, m, n, k, lf, rf)


def _rhs_made_contiguous(bshape, m, n, k):
    """Whether a 2-D product's right operand is made row-major before BLAS: OpenBLAS's
    small-matrix kernel for a transposed right operand takes up to twice the time of a copy
    plus the plain kernel for products of about 32 to 80 on each side, and is as fast or
    faster outside that window. (The two kernels may round differently; eager and jit both
    apply this rule, so they give the same bits.)"""
    return not bshape and min(m, n, k) >= 32 and m * n * k <= 1 << 19


def _via_matmul(lhs, rhs, dimension_numbers):
    """dot_general as one (batched) BLAS matmul: lhs -> (batch, free, contract), rhs ->
    (batch, contract, free); transposed views go to BLAS without copies."""
    lplan, rplan, bshape, m, n, k, lf, rf = _operand_views(lhs.shape, rhs.shape,
                                                          dimension_numbers)
    a = _apply_view(lhs, lplan)
    b = _apply_view(rhs, rplan)
    # an outer product (k == 1) is a broadcast multiply; BLAS gains nothing there
    if k == 1:
        out = np.multiply(a, b)
    elif m == 1 and n == 1:   # batched inner products
        out = np.einsum("...k,...k->...", a[..., 0, :], b[..., :, 0])[..., None, None]
    else:
        if _rhs_made_contiguous(bshape, m, n, k):
            b = np.ascontiguousarray(b)
        out = np.matmul(a, b)
    return out.reshape(bshape + [lhs.shape[d] for d in lf] + [rhs.shape[d] for d in rf])


class DotGeneral(Primitive):
    """Contract ``lhs`` and ``rhs`` over ``dimension_numbers = ((lc, rc), (lb, rb))``.

    Output dimensions: batch, then lhs free, then rhs free (XLA's order)."""
    name = "dot_general"
    numba_expr = nx.product    # (an outer product's element in tier 2's loops)
    # over a split contracted dimension: each device contracts its block, then an
    # all-reduce of this computation (the partitioner's psum)
    all_reduce = "add"

    def outer_product(self, eqn):
        """For a 2-D product contracting one size-1 dimension (autodiff's ``x^T @ dy`` of a
        one-column layer), which tier 1 computes as the broadcast multiply ``lhs[i] *
        rhs[j]``: the number of columns ``n`` (tier 2's loops read ``lhs[i // n]`` and
        ``rhs[i % n]``), else None."""
        lhs, rhs = (a.aval for a in eqn.invars)
        (lc, rc), (lb, rb) = eqn.params["dimension_numbers"]
        out = eqn.outvars[0].aval
        if lb or rb or lhs.ndim != 2 or rhs.ndim != 2 or len(lc) != 1 or len(rc) != 1 or \
                lhs.shape[lc[0]] != 1 or lhs.dtype not in nx.FLOAT_KINDS or \
                rhs.dtype != lhs.dtype or out.dtype != lhs.dtype or \
                eqn.params.get("out_sharding") is not None:
            return None
        return out.shape[1]

    def cost(self, avals_in, avals_out, literals, dimension_numbers, **params):
        """XLA's ``dot``: 2 flops (a multiply-add) per output element and contracted index."""
        (lc, _), _ = dimension_numbers
        k = math.prod(int(avals_in[0].shape[d]) for d in lc)
        n = math.prod(int(d) for d in avals_out[0].shape)
        return [(2 * n * k, 0, [aval_nbytes(a) for a in avals_in], aval_nbytes(avals_out[0]))]

    def hlo(self, b, lhs, rhs, dimension_numbers, precision=None,
            preferred_element_type=None, out_sharding=None):
        """``dot`` with its batch and contracting dimensions."""
        (lc, rc), (lb, rb) = dimension_numbers
        attrs = []
        for side, bd, cd in (("lhs", lb, lc), ("rhs", rb, rc)):
            if bd:
                attrs.append(f"{side}_batch_dims={{{','.join(map(str, bd))}}}")
            attrs.append(f"{side}_contracting_dims={{{','.join(map(str, cd))}}}")
        return b.op("dot", b.out_avals[0], (lhs, rhs), *attrs)
    fresh_result = True   # (a BLAS/einsum/multiply result, never an operand)

    def _spec(self, lnd, rnd, dimension_numbers):
        (lc, rc), (lb, rb) = dimension_numbers
        lhs = [None] * lnd
        rhs = [None] * rnd
        it = iter("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
        out = []
        for a, b in zip(lb, rb):
            c = next(it)
            lhs[a] = rhs[b] = c
            out.append(c)
        for a, b in zip(lc, rc):
            c = next(it)
            lhs[a] = rhs[b] = c
        for i in range(lnd):
            if lhs[i] is None:
                lhs[i] = next(it)
                out.append(lhs[i])
        for i in range(rnd):
            if rhs[i] is None:
                rhs[i] = next(it)
                out.append(rhs[i])
        return f"{''.join(lhs)},{''.join(rhs)}->{''.join(out)}"

    def sharding_rule(self, avals, dimension_numbers, **params):
        """Batch, then lhs free, then rhs free dimensions map to the output; contracted
        dimensions must not be split."""
        (lc, rc), (lb, rb) = dimension_numbers
        lhs, rhs = [None] * avals[0].ndim, [None] * avals[1].ndim
        for k, (a, b) in enumerate(zip(lb, rb)):
            lhs[a] = rhs[b] = k
        k = len(lb)
        for i in range(len(lhs)):
            if i not in lc and i not in lb:
                lhs[i], k = k, k + 1
        for i in range(len(rhs)):
            if i not in rc and i not in rb:
                rhs[i], k = k, k + 1
        return [tuple(lhs), tuple(rhs)]

    def explicit_sharding_rule(self, avals, dims, dimension_numbers, out_sharding=None,
                               **params):
        """The result's sharding over Explicit axes (JAX's rule): batch dimensions, then the
        free dimensions of lhs and rhs keep their splits; contracted dimensions split on
        both sides make the result ambiguous (``out_sharding=`` says what it is)."""
        from jaxlite._src.sharding.types import ShardingTypeError, sharding_dims, spec_of
        nd = avals[0].ndim + avals[1].ndim - 2 * len(dimension_numbers[0][0]) - \
            len(dimension_numbers[1][0])
        if out_sharding is not None:
            return [sharding_dims(out_sharding, nd)]
        (lc, rc), (lb, rb) = dimension_numbers
        ld, rd = dims
        show = lambda ds: tuple(spec_of(ds))  # noqa: E731
        lcs, rcs = [ld[i] for i in lc], [rd[i] for i in rc]
        lbs, rbs = [ld[i] for i in lb], [rd[i] for i in rb]
        if any(a and b and a != b for a, b in zip(lbs, rbs)):
            raise ShardingTypeError(
                f"dot_general requires lhs batch dimensions and rhs batch dimensions to have "
                f"the consistent sharding, got {show(lbs)} and {show(rbs)}. Reshard one "
                f"operand (jax.sharding.reshard) to match the other.")
        if any(a and b and a != b for a, b in zip(lcs, rcs)):
            raise ShardingTypeError(
                f"dot_general requires contracting dimensions to have consistent sharding, "
                f"got {show(lcs)} and {show(rcs)}. Reshard one operand "
                f"(jax.sharding.reshard) to match the other.")
        if any(a and b for a, b in zip(lcs, rcs)):
            raise ShardingTypeError(
                "Contracting dimensions are sharded and it is ambiguous how the output should "
                "be sharded. Please specify the output sharding via the `out_sharding` "
                f"parameter. Got lhs_contracting_spec={show(lcs)} and "
                f"rhs_contracting_spec={show(rcs)}")
        lfree = [ld[i] for i in range(len(ld)) if i not in lc and i not in lb]
        rfree = [rd[i] for i in range(len(rd)) if i not in rc and i not in rb]
        return [tuple(lbs) + tuple(lfree) + tuple(rfree)]

    def _is_matmul(self, lnd, rnd, dimension_numbers):
        (lc, rc), (lb, rb) = dimension_numbers
        if lb or rb:
            nb = len(lb)
            return (tuple(lb) == tuple(range(nb)) and tuple(rb) == tuple(range(nb))
                    and lnd == nb + 2 and rnd == nb + 2 and tuple(lc) == (nb + 1,)
                    and tuple(rc) == (nb,))
        return lnd in (1, 2) and rnd in (1, 2) and tuple(lc) == (lnd - 1,) and tuple(rc) == (0,)

    def impl(self, lhs, rhs, dimension_numbers, precision=None, preferred_element_type=None,
             out_sharding=None):
        out_dt = preferred_element_type or lhs.dtype
        if preferred_element_type is not None and (lhs.dtype != out_dt or
                                                   rhs.dtype != out_dt):
            # XLA:CPU computes in the preferred type (bools and integers counted in it,
            # float16 accumulated in float32); float operands keep their type for integers
            out_dt = np.dtype(out_dt)
            if out_dt.kind not in "biu" or lhs.dtype.kind in "biu":
                lhs = lhs.astype(out_dt, copy=False)
            if out_dt.kind not in "biu" or rhs.dtype.kind in "biu":
                rhs = rhs.astype(out_dt, copy=False)
        if lhs.dtype.kind == "V" or rhs.dtype.kind == "V":
            # bfloat16 / float8 (ml_dtypes): products accumulate in float32 and the result is
            # rounded once, as XLA:CPU computes these dots
            lhs, rhs = lhs.astype(np.float32), rhs.astype(np.float32)
        if lhs.size * rhs.size >= _blas.ADAPT_MIN_MACS:
            _blas.adapt()
        if self._is_matmul(lhs.ndim, rhs.ndim, dimension_numbers):
            r = np.matmul(lhs, rhs)
        elif lhs.dtype.kind in "fc" and rhs.dtype == lhs.dtype:
            r = _via_matmul(lhs, rhs, dimension_numbers)
        else:
            r = np.einsum(self._spec(lhs.ndim, rhs.ndim, dimension_numbers), lhs, rhs)
        return np.asarray(r, out_dt) if r.dtype != out_dt or not isinstance(
            r, (np.ndarray, np.generic)) else r

    def abstract_eval(self, lhs, rhs, dimension_numbers, precision=None,
                      preferred_element_type=None, out_sharding=None):
        (lc, rc), (lb, rb) = dimension_numbers
        if len(lc) != len(rc) or len(lb) != len(rb):
            raise TypeError("dot_general requires equal numbers of lhs and rhs contracting and "
                            f"batch dimensions, got {dimension_numbers}.")
        for a, b in list(zip(lc, rc)) + list(zip(lb, rb)):
            if lhs.shape[a] != rhs.shape[b]:
                raise TypeError("dot_general requires contracting dimensions to have the same "
                                f"shape, got {tuple(lhs.shape[i] for i in lc)} and "
                                f"{tuple(rhs.shape[i] for i in rc)}.")
        if lhs.dtype != rhs.dtype and preferred_element_type is None:
            raise TypeError("dot_general requires operands of the same dtype, got "
                            f"{lhs.dtype.name} and {rhs.dtype.name}.")
        shape = [lhs.shape[i] for i in lb]
        shape += [s for i, s in enumerate(lhs.shape) if i not in lc and i not in lb]
        shape += [s for i, s in enumerate(rhs.shape) if i not in rc and i not in rb]
        dt = preferred_element_type or lhs.dtype
        return ShapedArray(shape, dt, lhs.weak_type and rhs.weak_type)

    def lower_py(self, ctx, ins, dimension_numbers, precision=None,
                 preferred_element_type=None, out_sharding=None):
        return None

    def lower_stmts(self, ctx, ins, outs, eqn):
        """With the shapes known at lowering time, a float contraction is the one BLAS call
        ``impl`` makes (the same ``np.matmul`` on the same views, so the same bits) with the
        transposes and reshapes worked out once instead of on every call."""
        lhs, rhs = (a.aval for a in eqn.invars)
        p = eqn.params
        dt = lhs.dtype
        if (dt.kind not in "fc" or rhs.dtype != dt or p.get("preferred_element_type")
                not in (None, dt)):
            return None
        dn = p["dimension_numbers"]
        lplan, rplan, bshape, m, n, k, _, _ = _operand_views(lhs.shape, rhs.shape, dn)
        big = int(np.prod(bshape, dtype=np.int64)) * m * n * k >= _blas.ADAPT_MIN_MACS
        pre = [f"{ctx.bind_global(_blas.adapt, 'blas_adapt')}()"] if big else []
        if self._is_matmul(lhs.ndim, rhs.ndim, dn):
            return pre + [f"{outs[0]} = np.matmul({ins[0]}, {ins[1]})"]

        a = _view_text(ins[0], lhs.ndim, lplan)
        b = _view_text(ins[1], rhs.ndim, rplan)
        out_shape = tuple(eqn.outvars[0].aval.shape)
        if k == 1:     # (as _via_matmul: an outer product is a broadcast multiply)
            r = f"np.multiply({a}, {b})"
        elif m == 1 and n == 1:
            r = f"np.einsum('...k,...k->...', {a}[..., 0, :], {b}[..., :, 0])[..., None, None]"
        else:
            if _rhs_made_contiguous(bshape, m, n, k):   # (as _via_matmul)
                b = f"np.ascontiguousarray({b})"
            r = f"np.matmul({a}, {b})"
        if tuple(bshape + [m, n]) != out_shape:
            r = f"{r}.reshape({out_shape})"
        return pre + [f"{outs[0]} = {r}"]

    def permute_output(self, perm, invars, dimension_numbers, **params):
        """Output laid out [batch, rhs free, lhs free] is the contraction with the operands
        swapped: the compiler turns ``transpose(dot_general(a, b))`` into a product whose
        result is row-major (gradients of matmuls), instead of a transposed view."""
        (lc, rc), (lb, rb) = dimension_numbers
        nb = len(lb)
        na = invars[0].aval.ndim - len(lc) - nb
        nr = invars[1].aval.ndim - len(rc) - nb
        want = (tuple(range(nb)) + tuple(range(nb + na, nb + na + nr))
                + tuple(range(nb, nb + na)))
        if tuple(perm) != want or not (na and nr):
            return None
        return [invars[1], invars[0]], dict(params, dimension_numbers=((rc, lc), (rb, lb)))

    def sum_output(self, axes, invars, dimension_numbers, **params):
        """A sum over batch dimensions of the output is a contraction over them: the
        compiler turns ``reduce_sum(dot_general(a, b), batch axes)`` into one product."""
        (lc, rc), (lb, rb) = dimension_numbers
        axes = sorted(int(a) for a in axes)
        if not axes or axes[-1] >= len(lb) or params.get("out_sharding") is not None:
            return None
        keep = [k for k in range(len(lb)) if k not in axes]
        # contracted pairs in the lhs's dimension order: a (batch, rows, k) operand summed
        # over batch and rows is then one (batch*rows, k) matrix, no copy
        pairs = sorted(list(zip(lc, rc)) + [(lb[k], rb[k]) for k in axes])
        dn = ((tuple(int(a) for a, _ in pairs), tuple(int(b) for _, b in pairs)),
              (tuple(lb[k] for k in keep), tuple(rb[k] for k in keep)))
        return list(invars), dict(params, dimension_numbers=dn)

    def pp_params(self, params):
        (lc, rc), (lb, rb) = params["dimension_numbers"]
        dn = f"(({list(lc)}, {list(rc)}), ({list(lb)}, {list(rb)}))"
        out = [("dimension_numbers", dn)]
        if params.get("precision") is not None:
            out.append(("precision", params["precision"]))
        pet = params.get("preferred_element_type")
        out.append(("preferred_element_type", None if pet is None else np.dtype(pet).name))
        return out

    def batch_changes_order(self, size, avals, dims, dimension_numbers, **params):
        """A float/complex contraction batched is another BLAS call (a gemm where each
        element's was a gemv or a dot, more rows, other blocking), whose accumulation
        order can differ; integer and bool products are exact."""
        return any(a.dtype.kind in "fc" for a in avals)

    def batch(self, size, args, dims, dimension_numbers, **params):
        """Batch dims become dot_general batch dimensions (both batched) or free dimensions
        of the batched operand, as JAX's rule."""
        (lc, rc), (lb, rb) = dimension_numbers
        ld, rd = dims
        x, y = args

        def shift(ds, b):
            return tuple(int(a) + (a >= b) for a in ds)
        if ld is not None and rd is not None:
            dn = ((shift(lc, ld), shift(rc, rd)), ((ld,) + shift(lb, ld), (rd,) + shift(rb, rd)))
            return self.bind(x, y, dimension_numbers=dn, **params), 0
        if ld is not None:
            dn = ((shift(lc, ld), rc), (shift(lb, ld), rb))
            xa = u.aval(x)
            free = [d for d in range(xa.ndim) if d not in dn[0][0] and d not in dn[1][0]]
            return self.bind(x, y, dimension_numbers=dn, **params), len(lb) + free.index(ld)
        dn = ((lc, shift(rc, rd)), (lb, shift(rb, rd)))
        xa, ya = u.aval(x), u.aval(y)
        n_lfree = xa.ndim - len(lc) - len(lb)
        free = [d for d in range(ya.ndim) if d not in dn[0][1] and d not in dn[1][1]]
        return self.bind(x, y, dimension_numbers=dn, **params), \
            len(lb) + n_lfree + free.index(rd)

    def jvp(self, primals, tangents, **params):
        x, y = primals
        tx, ty = tangents
        out = self.bind(x, y, **params)
        a = None if u.is_zero(tx) else self.bind(tx, y, **params)
        b = None if u.is_zero(ty) else self.bind(x, ty, **params)
        return out, a if b is None else b if a is None else u.add_any(a, b)

    def transpose(self, ct, x, y, dimension_numbers, **params):
        if u.is_zero(ct):
            return [None, None]
        if u.is_undefined(x) and u.is_undefined(y):
            raise ValueError("dot_general is not linear in both operands at once")
        if u.is_undefined(x):
            return [self._transpose_lhs(ct, x, y, dimension_numbers, params, False), None]
        (lc, rc), (lb, rb) = dimension_numbers
        swapped = ((rc, lc), (rb, lb))
        return [None, self._transpose_lhs(ct, y, x, swapped, params, True)]

    def _transpose_lhs(self, ct, x, y, dimension_numbers, params, swap_ans):
        """Cotangent of the lhs ``x`` of ``dot_general(x, y)`` (or, with ``swap_ans``, of
        the rhs, when the dimension numbers were swapped)."""
        (xc, yc), (xb, yb) = dimension_numbers
        xa, ya = u.aval(x), u.aval(y)
        x_kept = [d for d in range(xa.ndim) if d not in xc and d not in xb]
        y_kept = [d for d in range(ya.ndim) if d not in yc and d not in yb]
        nb = len(xb)
        if swap_ans:   # ct dims: batch, y's kept dims, x's kept dims
            ans_y = list(range(nb, nb + len(y_kept)))
        else:          # ct dims: batch, x's kept dims, y's kept dims
            ans_y = list(range(nb + len(x_kept), nb + len(x_kept) + len(y_kept)))
        dims = ((tuple(ans_y), tuple(y_kept)), (tuple(range(nb)), tuple(yb)))
        xc_by_y = [xc[k] for k in np.argsort(yc)]
        order = list(xb) + x_kept + xc_by_y
        # (over Explicit mesh axes the cotangent is typed as the operand: JAX's rule, which
        # also resolves contractions split on both sides)
        params = dict(params, out_sharding=_sharding_in_order(xa, order))
        r = self.bind(ct, y, dimension_numbers=dims, **params)
        perm = tuple(int(i) for i in np.argsort(order))
        if perm != tuple(range(len(perm))):
            from jaxlite._src.prims.shape import transpose_p
            r = transpose_p.bind(r, permutation=perm)
        return u.convert(r, xa.dtype)

    def numba(self, code, eqn, ins, dimension_numbers, precision=None,
              preferred_element_type=None, out_sharding=None):
        """Tier 2's loop code (``compiler/numba_bodies.py``): the ``np.matmul`` of tier 1 (operands of rank 1 or 2), through NumPy's own
        loop; other contractions stay with tier 1."""
        lhs, rhs = (a.aval for a in eqn.invars)
        if (lhs.dtype.kind != "f" or rhs.dtype != lhs.dtype or preferred_element_type
                not in (None, lhs.dtype) or lhs.ndim > 2 or rhs.ndim > 2
                or not self._is_matmul(lhs.ndim, rhs.ndim, dimension_numbers)
                or lhs.size * rhs.size >= _blas.ADAPT_MIN_MACS or not lhs.size
                or not rhs.size):
            return None
        return [code.matmul(ins[0], lhs, ins[1], rhs, eqn.outvars[0].aval)]



def _sharding_in_order(aval, order):
    """The sharding in ``aval``'s type with its dimensions listed in ``order`` (None when
    the type names no Explicit mesh axis)."""
    s = getattr(aval, "sharding", None)
    if s is None or not s.mesh.explicit_axes:
        return None
    spec = list(s.spec) + [None] * (aval.ndim - len(s.spec))
    return type(s)(s.mesh, type(s.spec)(*[spec[i] for i in order]))


dot_general_p = DotGeneral()

dot_general_p.jet = taylor.bilinear(dot_general_p)   # Taylor mode (jax.experimental.jet)
