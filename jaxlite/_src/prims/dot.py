"""dot_general: generalized tensor contraction with batch dimensions."""
from __future__ import annotations

import numpy as np

from jaxlite._src.core.avals import ShapedArray
from jaxlite._src.core.primitive import Primitive

__all__ = ["dot_general_p"]


def _letters(n, start=0):
    return [chr(ord("a") + start + i) for i in range(n)]


class DotGeneral(Primitive):
    """Contract ``lhs`` and ``rhs`` over ``dimension_numbers = ((lc, rc), (lb, rb))``.

    Output dimensions: batch, then lhs free, then rhs free (XLA's order)."""
    name = "dot_general"

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
        if self._is_matmul(lhs.ndim, rhs.ndim, dimension_numbers):
            r = np.matmul(lhs, rhs)
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

    def pp_params(self, params):
        (lc, rc), (lb, rb) = params["dimension_numbers"]
        dn = f"(({list(lc)}, {list(rc)}), ({list(lb)}, {list(rb)}))"
        out = [("dimension_numbers", dn)]
        if params.get("precision") is not None:
            out.append(("precision", params["precision"]))
        pet = params.get("preferred_element_type")
        out.append(("preferred_element_type", None if pet is None else np.dtype(pet).name))
        return out


dot_general_p = DotGeneral()
