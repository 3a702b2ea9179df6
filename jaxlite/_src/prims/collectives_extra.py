"""More collectives: ``ragged_all_to_all`` and the one-sided ``psend``/``precv`` pair.

``ragged_all_to_all`` is the all-to-all of ragged data (JAX's ``lax.ragged_all_to_all``).

Every member of the named axis sends slices of its ``operand`` (rows ``input_offsets[i]``
to ``input_offsets[i] + send_sizes[i]``) to member ``i // (K / axis size)``, which writes
them into its copy of ``output`` at ``output_offsets[i]`` (an offset on the *receiver*).
Like the other collectives it meets the other devices through the runtime's rendezvous
(``runtime/collectives.py``) under pmap/shard_map. Slices outside ``operand`` or
``output`` raise an error (XLA leaves them undefined).

``psend(x, axis_name, perm)`` sends each member's ``x`` along the ``(source, destination)``
pairs of ``perm`` and returns a token; ``precv(token, out_shape, axis_name, perm)`` returns
what the matching ``psend`` delivered to this member (zeros where no one sends). JAX 0.10.2
implements the pair on GPUs only (on CPU its lowering raises NotImplementedError); jaxlite
runs it on its CPU devices: ``psend`` is a rendezvous like ``ppermute`` whose results wait
in the device's mailbox for the ``precv`` with the same axes and ``perm`` (first in, first
out). Both are effects, so the compiler keeps them and their order.
"""
from __future__ import annotations

import numpy as np

from jaxlite._src.core.avals import ShapedArray
from jaxlite._src.core.primitive import NOT_DIFFERENTIABLE, Primitive
from jaxlite._src.prims import ad_util as u
from jaxlite._src.prims.batch_util import bdim_at_front, moveaxis
from jaxlite._src.prims.collectives import _check_bound, _names, _spmd, _where, all_to_all_p
from jaxlite._src.runtime import collectives as _rt

__all__ = ["ragged_all_to_all_p", "psend_p", "precv_p"]

_ARGS = ("input_offsets", "send_sizes", "output_offsets", "recv_sizes")


def _exchange(vals):
    """The results of one group: ``vals[j]`` is member j's six operands."""
    n = len(vals)
    outs = []
    for dst in range(n):
        res = np.array(vals[dst][1], copy=True)
        for src in range(n):
            op, _, in_off, send, out_off, _ = vals[src]
            k, left = divmod(len(in_off), n)
            if left:
                raise ValueError(f"ragged_all_to_all: the offsets and sizes have {len(in_off)} "
                                 f"entries, not a multiple of the axis size {n}.")
            for i in range(dst * k, (dst + 1) * k):
                a, s, b = int(in_off[i]), int(send[i]), int(out_off[i])
                if s < 0 or a < 0 or b < 0 or a + s > op.shape[0] or b + s > res.shape[0]:
                    raise ValueError(
                        f"ragged_all_to_all: member {src} sends rows [{a}, {a + s}) of an "
                        f"operand with {op.shape[0]} rows to rows [{b}, {b + s}) of member "
                        f"{dst}'s output with {res.shape[0]} rows: out of bounds (check "
                        "input_offsets, send_sizes and output_offsets).")
                res[b:b + s] = op[a:a + s]
        outs.append([res])
    return outs


def _per_group(members):
    return _exchange([[np.asarray(a) for a in v] for _, v in members])


class RaggedAllToAll(Primitive):
    """See the module docstring. Operands: ``operand``, ``output``, ``input_offsets``,
    ``send_sizes``, ``output_offsets``, ``recv_sizes``; the result has ``output``'s type."""
    name = "ragged_all_to_all"
    collective = True
    runs_per_device = True   # (no vmap rule over its own axis: never the batched form)
    no_fold = True     # its value depends on the device running it

    def impl(self, operand, output, input_offsets, send_sizes, output_offsets, recv_sizes, *,
             axis_name, axis_index_groups=None):
        axes = _names(axis_name)
        if _spmd(axes) is None:
            _check_bound(axes)
            raise RuntimeError("ragged_all_to_all must be used within a mapped context like "
                               "vmap or shard_map.")
        vals = [np.asarray(a) for a in (operand, output, input_offsets, send_sizes,
                                        output_offsets, recv_sizes)]
        return _rt.collective("ragged_all_to_all", axes, _where(), vals, _per_group,
                              index_groups=axis_index_groups)[0]

    def abstract_eval(self, operand, output, *idx, axis_name, axis_index_groups=None):
        for name, a in zip(_ARGS, idx):
            if a.dtype.kind not in "iu":
                raise ValueError(f"ragged_all_to_all {name} must be integer type.")
        for name, a in zip(_ARGS, idx):
            if len(a.shape) != 1 or a.shape[0] < 1:
                raise ValueError(f"ragged_all_to_all {name} must be rank 1 with positive "
                                 f"dimension size, but got shape {a.shape}")
        _check_bound(_names(axis_name))
        if operand.dtype != output.dtype or operand.shape[1:] != output.shape[1:]:
            raise TypeError(f"ragged_all_to_all: operand {operand.str_short()} and output "
                            f"{output.str_short()} must have the same dtype and trailing "
                            "dimensions.")
        return ShapedArray(output.shape, output.dtype, False)

    def vma_rule(self, avals, axis_name, **params):
        """Inside shard_map the result varies over the collective's axes."""
        from jaxlite._src.sharding.vma import axes_tuple
        return [set(avals[0].vma) | set(avals[1].vma) | set(axes_tuple(axis_name))]

    def jvp(self, primals, tangents, **params):
        operand, output, *rest = primals
        dop, dout = tangents[:2]
        out = self.bind(operand, output, *rest, **params)
        if u.is_zero(dop) and u.is_zero(dout):
            return out, u.Zero(u.tangent_aval(u.aval(out)))
        return out, self.bind(u.instantiate(dop), u.instantiate(dout), *rest, **params)

    def transpose(self, ct, operand, output, input_offsets, send_sizes, output_offsets,
                  recv_sizes, *, axis_name, axis_index_groups=None):
        params = dict(axis_name=axis_name, axis_index_groups=axis_index_groups)
        op_aval = operand.aval if u.is_undefined(operand) else u.aval(operand)
        if u.is_zero(ct):
            return [None] * 6
        ct = u.instantiate(ct)
        a2a = dict(axis_name=axis_name, split_axis=0, concat_axis=0,
                   axis_index_groups=axis_index_groups, tiled=True)
        # the operand's cotangent: the same exchange backwards (received rows go home)
        out_off = all_to_all_p.bind(output_offsets, **a2a)
        in_off = all_to_all_p.bind(input_offsets, **a2a)
        operand_t = self.bind(ct, u.zeros(op_aval), out_off, recv_sizes, in_off, send_sizes,
                              **params) if u.is_undefined(operand) else None
        output_t = None
        if u.is_undefined(output):
            # rows overwritten by received data do not reach the result: mask them out
            dt = u.aval(ct).dtype
            written = self.bind(u.full(op_aval.shape, 1, dt), u.zeros(u.aval(ct)),
                                input_offsets, send_sizes, output_offsets, recv_sizes,
                                **params)
            output_t = u.mul(ct, u.sub(u.full(u.aval(ct).shape, 1, dt), written))
        return [operand_t, output_t, None, None, None, None]

    def batch_collective(self, trace, vals, dims, axis_name, axis_index_groups=None):
        raise NotImplementedError(
            "ragged_all_to_all over an axis name bound by vmap is not supported (nor is it in "
            "JAX): use it under shard_map or pmap.")

    def batch(self, size, args, dims, axis_name, axis_index_groups=None):
        """A vmap over another axis: the batch elements are laid end to end along the
        leading dimension (their offsets shifted), exchanged at once, and split again."""
        if axis_index_groups:
            raise NotImplementedError("ragged_all_to_all with axis_index_groups under vmap is "
                                      "not supported (nor is it in JAX).")
        from jaxlite._src.prims.shape import reshape_p
        operand = bdim_at_front(args[0], dims[0], size)
        output = bdim_at_front(args[1], dims[1], size)
        n_rows, m_rows = u.aval(operand).shape[1], u.aval(output).shape[1]

        def merge(x):
            shape = u.aval(x).shape
            return reshape_p.bind(x, new_sizes=(shape[0] * shape[1],) + tuple(shape[2:]),
                                  dimensions=None, sharding=None)

        def per_slice(x, d, shift):
            # (K, size) with the batch second, so slices keep their destination order
            x = moveaxis(bdim_at_front(x, d, size), 0, 1)
            if shift:
                dt = u.aval(x).dtype
                off = u.broadcasted_iota(dt, u.aval(x).shape, 1)
                x = u.add(x, u.mul(off, u.full(u.aval(x).shape, shift, dt)))
            return merge(x)

        idx = [per_slice(x, d, s) for x, d, s in
               zip(args[2:], dims[2:], (n_rows, 0, m_rows, 0))]
        out = self.bind(merge(operand), merge(output), *idx, axis_name=axis_name,
                        axis_index_groups=None)
        shape = u.aval(args[1]).shape if dims[1] is None else \
            tuple(s for k, s in enumerate(u.aval(args[1]).shape) if k != dims[1])
        return reshape_p.bind(out, new_sizes=(size,) + tuple(shape), dimensions=None,
                              sharding=None), 0


ragged_all_to_all_p = RaggedAllToAll()


# ------------------------------------------------------------------------------ psend/precv


def _mailbox(axes, perm):
    """This device's queue of values delivered by psend over ``axes``/``perm`` (kept on the
    run's SPMD context, so nothing outlives the program)."""
    ctx = _rt.current()
    boxes = getattr(ctx, "_mailboxes", None)
    if boxes is None:
        boxes = ctx._mailboxes = {}
    return boxes.setdefault((axes, perm), [])


def _check_perm(name, perm, n):
    srcs, dsts = [s for s, _ in perm], [d for _, d in perm]
    for i in srcs + dsts:
        if not 0 <= i < n:
            raise ValueError(f"{name}: perm {perm} names index {i}, outside the axis of size "
                             f"{n}.")
    if len(set(srcs)) != len(srcs) or len(set(dsts)) != len(dsts):
        raise ValueError(f"{name} sources and destinations must be unique, got {perm}.")


class PSend(Primitive):
    """One-sided send along ``perm`` (see the module docstring); returns a token."""
    name = "psend"
    collective = True
    runs_per_device = True   # (each device sends: never the batched shard_map form)
    effectful = True   # (kept and ordered by the compiler, as a send must be)
    no_fold = True
    jvp = NOT_DIFFERENTIABLE

    def impl(self, x, axis_name, perm):
        axes = _names(axis_name)
        if _spmd(axes) is None:
            _check_bound(axes)
            raise RuntimeError("psend must be used within a mapped context like shard_map or "
                               "pmap.")
        src_of = {d: s for s, d in perm}

        def per_group(members):
            vals = [np.asarray(v) for _, v in members]
            _check_perm("psend", perm, len(vals))
            return [vals[src_of[i]] if i in src_of else np.zeros_like(vals[i])
                    for i in range(len(vals))]
        got = _rt.collective("psend", axes, _where(), np.asarray(x), per_group)
        _mailbox(axes, perm).append(got)
        return np.asarray(True)   # the token's data

    def eager(self, args, params):
        from jaxlite._src.prims.tokens import Token
        from jaxlite._src.runtime.array import ArrayImpl
        return Token(ArrayImpl(self.impl(*[np.asarray(a) for a in args], **params), False))

    def abstract_eval(self, x, axis_name, perm):
        from jaxlite._src.prims.tokens import TOKEN
        _check_bound(_names(axis_name))
        return ShapedArray((), TOKEN)

    def physical(self, avals, x, axis_name, perm):
        """In compiled code a token is its bool data: the send that returns it."""
        return psend_data_p.bind(x, axis_name=axis_name, perm=perm)

    def batch_collective(self, trace, vals, dims, axis_name, perm):
        raise NotImplementedError("psend over an axis name bound by vmap is not supported: "
                                  "use it under shard_map or pmap.")

    def batch(self, size, args, dims, axis_name, perm):
        raise NotImplementedError("psend under vmap is not supported (precv could not tell "
                                  "the batch): call it outside the vmap.")


class PRecv(Primitive):
    """The receiving side of ``psend`` (see the module docstring)."""
    name = "precv"
    collective = True
    runs_per_device = True
    effectful = True
    no_fold = True
    jvp = NOT_DIFFERENTIABLE
    accepts_extended = True   # (its operand is a token)

    def impl(self, token, out_shape, axis_name, perm):
        axes = _names(axis_name)
        if _spmd(axes) is None:
            _check_bound(axes)
            raise RuntimeError("precv must be used within a mapped context like shard_map or "
                               "pmap.")
        box = _mailbox(axes, perm)
        if not box:
            raise RuntimeError(f"precv over axis {axis_name} with perm {perm}: no psend with "
                               "the same axis and perm ran before it on this device; call "
                               "psend first (precv receives what psend sent).")
        v = box.pop(0)
        if v.shape != tuple(out_shape.shape) or v.dtype != out_shape.dtype:
            raise TypeError(f"precv: out_shape {out_shape.str_short()} does not match what "
                            f"psend sent ({v.dtype}{list(v.shape)}).")
        return v

    def abstract_eval(self, token, out_shape, axis_name, perm):
        from jaxlite._src.prims.tokens import TokenTy
        if not isinstance(token.dtype, TokenTy):
            if token.dtype != np.dtype(bool) or token.shape:   # (bool: the physical pass)
                raise TypeError(f"precv expects a token (from psend or lax.create_token), "
                                f"got {token.str_short()}")
        else:
            _check_bound(_names(axis_name))
        return ShapedArray(out_shape.shape, out_shape.dtype)

    def physical(self, avals, token, **params):
        """In compiled code the token operand is its bool data."""
        return self.bind(token, **params)

    def batch_collective(self, trace, vals, dims, axis_name, **params):
        raise NotImplementedError("precv over an axis name bound by vmap is not supported: "
                                  "use it under shard_map or pmap.")

    def batch(self, size, args, dims, **params):
        raise NotImplementedError("precv under vmap is not supported: call it outside the "
                                  "vmap.")


class PSendData(PSend):
    """``psend`` in compiled code, where its token is the token's bool data."""
    name = "psend_data"

    def abstract_eval(self, x, axis_name, perm):
        # (made by the compiler's physical pass from a psend already checked when traced)
        return ShapedArray((), np.dtype(bool))

    eager = Primitive.eager
    physical = None


psend_p = PSend()
psend_data_p = PSendData()
precv_p = PRecv()
