"""``scaled_matmul_wrapper``: block-scaled batched matmul ``(B,M,K) x (B,N,K) -> (B,M,N)``.

Each operand is multiplied by its scales repeated along the contracting dimension (block
size ``K // scales.shape[-1]``), then the two are contracted in float32 and the result is
cast to ``preferred_element_type``. This is the mathematical definition JAX documents for
``jax.nn.scaled_matmul``; JAX 0.10.2 has a kernel for it only through cuDNN on NVIDIA GPUs
(on CPU it raises NotImplementedError when run), jaxlite computes it with NumPy.
"""
from __future__ import annotations

import numpy as np

from jaxlite._src.core.avals import ShapedArray
from jaxlite._src.core.primitive import Primitive
from jaxlite._src.prims.batch_util import bdim_at_front

__all__ = ["scaled_matmul_wrapper_p", "ScaledMatmulWrapper", "check_scaled_matmul_shapes"]


def check_scaled_matmul_shapes(a, b, a_scales, b_scales, same_blocks=False):
    """Raise JAX's ValueError for operand/scale shapes ``scaled_matmul`` cannot take;
    ``same_blocks`` (the public function's check) also requires both operands to have the
    same number of scale blocks."""
    shapes = [tuple(x.shape) for x in (a, b, a_scales, b_scales)]
    if any(len(s) != 3 for s in shapes):
        raise ValueError("scaled_matmul requires all inputs to be 3-dimensional arrays")
    sa, sb, ssa, ssb = shapes
    if sa[0] != sb[0] or sa[2] != sb[2]:
        raise ValueError("scaled_matmul requires inputs a and b to have matching batch (B) "
                         f"and contract (K) dimensions, but got shapes {sa} and {sb}")
    if ssa[0] != ssb[0] or (same_blocks and ssa[2] != ssb[2]):
        raise ValueError("scaled_matmul requires scales to have matching batch (B) and "
                         f"contract (K) dimensions, but got shapes {ssa} and {ssb}")
    if ssa[:2] != sa[:2] or ssb[:2] != sb[:2]:
        raise ValueError("scaled_matmul requires scales to match non-contract dimensions of "
                         f"inputs, but got shapes a: {sa}, b: {sb}, a_scales: {ssa}, "
                         f"b_scales: {ssb}")
    k = sa[2]
    for ks in (ssa[2], ssb[2]):
        if ks == 0 or k % ks:
            raise ValueError(
                f"scaled_matmul requires the contracting dimension of the inputs ({k}) to be "
                f"a multiple of that of the scales ({ks}): each scale covers a block of "
                f"K // K_s consecutive elements. Pad K or choose K_s dividing it.")


class ScaledMatmulWrapper(Primitive):
    """Block-scaled batched matmul (JAX's ``scaled_matmul_wrapper``)."""
    name = "scaled_matmul_wrapper"
    weak_rule = "never"

    def impl(self, a, b, a_scales, b_scales, preferred_element_type):
        def dequant(x, s):
            x = np.asarray(x).astype(np.float32)
            s = np.asarray(s).astype(np.float32)
            return x * np.repeat(s, x.shape[-1] // s.shape[-1], axis=-1)
        out = np.matmul(dequant(a, a_scales), np.swapaxes(dequant(b, b_scales), -1, -2))
        return np.asarray(out.astype(np.float32), dtype=preferred_element_type)

    def abstract_eval(self, a, b, a_scales, b_scales, preferred_element_type):
        check_scaled_matmul_shapes(a, b, a_scales, b_scales)
        return ShapedArray((a.shape[0], a.shape[1], b.shape[1]),
                           np.dtype(preferred_element_type), False)

    def check_operands(self, vals, params):
        check_scaled_matmul_shapes(*[np.asarray(v) for v in vals])

    def jvp(self, primals, tangents, **params):
        raise NotImplementedError(
            "Differentiation rule for 'scaled_matmul_wrapper' not implemented (as in JAX): "
            "jax.nn.scaled_matmul works on already-quantized operands. Differentiate "
            "jax.nn.scaled_dot_general instead, which quantizes inside and defines the "
            "gradient.")

    def batch(self, size, args, dims, preferred_element_type):
        # fold the vmapped dimension into the matmul's batch dimension B
        from jaxlite._src.prims.shape import reshape_p
        folded = []
        for a, d in zip(args, dims):
            a = bdim_at_front(a, d, size)
            shp = tuple(a.shape)
            folded.append(reshape_p.bind(a, new_sizes=(size * shp[1],) + shp[2:],
                                         dimensions=None, sharding=None))
        out = self.bind(*folded, preferred_element_type=preferred_element_type)
        shp = tuple(out.shape)
        return reshape_p.bind(out, new_sizes=(size, shp[0] // size) + shp[1:],
                              dimensions=None, sharding=None), 0


scaled_matmul_wrapper_p = ScaledMatmulWrapper()
