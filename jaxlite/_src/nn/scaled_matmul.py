"""Block-scaled (microscaling) matrix products: ``jax.nn.scaled_matmul``,
``jax.nn.scaled_dot_general`` and ``jax.nn.get_scaled_dot_general_config``.

A block-scaled operand is a low-precision array plus one scale per block of ``block_size``
consecutive elements along the contracting dimension. Two formats are supported, as in
JAX 0.10.2:

* ``mxfp8`` (OCP MX): float8_e4m3fn values, float8_e8m0fnu (power-of-two) scales, blocks of
  32. A block's scale is its largest magnitude divided by 448 (the largest e4m3fn value),
  rounded *up* to a power of two (never below 2**-127).
* ``nvfp4``: float4_e2m1fn values, float8_e4m3fn scales, blocks of 16, and a float32
  ``global_scale`` the operand is divided by first (and the product multiplied by after).

JAX runs these products only through cuDNN on NVIDIA Blackwell GPUs: on CPU it traces them
but raises NotImplementedError when they execute. jaxlite computes the same mathematics
with NumPy (dequantize to float32, contract, cast), so code written for those GPUs runs here.
"""
from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

__all__ = ["BlockScaleConfig", "scaled_matmul", "scaled_dot_general",
           "get_scaled_dot_general_config", "quantize"]


@dataclasses.dataclass
class BlockScaleConfig:
    """How one operand of ``scaled_dot_general`` is quantized: the ``mode`` ('mxfp8' or
    'nvfp4'), ``block_size`` (elements per scale along the contracting dimension),
    ``data_type`` of the quantized values, ``scale_type`` of the scales, the ``global_scale``
    (float32 array of shape (1,), nvfp4 only) and ``infer_only`` (carried as in JAX; it does
    not change the computation)."""
    mode: str
    block_size: int
    data_type: Any
    scale_type: Any
    global_scale: Any
    infer_only: bool


def get_scaled_dot_general_config(mode, global_scale=None):
    """The ``BlockScaleConfig`` of a quantization ``mode`` for ``scaled_dot_general``:
    'mxfp8' (float8_e4m3fn values, e8m0 scales, blocks of 32) or 'nvfp4' (float4_e2m1fn
    values, e4m3fn scales, blocks of 16, ``global_scale`` defaulting to ``[1.0]``)."""
    from jaxlite._src.numpy.creation import asarray
    if mode == "mxfp8":
        return BlockScaleConfig(mode="mxfp8", block_size=32,
                                data_type=_ml_type("float8_e4m3fn"),
                                scale_type=_ml_type("float8_e8m0fnu"), global_scale=None,
                                infer_only=False)
    if mode == "nvfp4":
        gs = asarray([1.0], np.float32) if global_scale is None else global_scale
        return BlockScaleConfig(mode="nvfp4", block_size=16,
                                data_type=_ml_type("float4_e2m1fn"),
                                scale_type=_ml_type("float8_e4m3fn"), global_scale=gs,
                                infer_only=False)
    raise ValueError(f"Unsupported mode: {mode}")


def _ml_type(name):
    import ml_dtypes       # the scalar types (the config's repr names them as JAX's does)
    return getattr(ml_dtypes, name)


# ----------------------------------------------------------------------------- scaled_matmul

def _scaled_matmul(lhs, rhs, lhs_scales, rhs_scales, preferred_element_type):
    from jaxlite._src.prims.scaled_matmul import scaled_matmul_wrapper_p
    return scaled_matmul_wrapper_p.bind(lhs, rhs, lhs_scales, rhs_scales,
                                        preferred_element_type=preferred_element_type)


_jitted = {}


def scaled_matmul(lhs, rhs, lhs_scales, rhs_scales, preferred_element_type=np.float32):
    """Block-scaled batched matrix multiplication ``(B,M,K) x (B,N,K) -> (B,M,N)``.

    Each operand is multiplied by its scales repeated along the last (contracting) axis,
    with block sizes ``K // lhs_scales.shape[-1]`` and ``K // rhs_scales.shape[-1]``::

        lhs * repeat(lhs_scales, K // K_l, axis=-1)  contracted with
        rhs * repeat(rhs_scales, K // K_r, axis=-1)  as  einsum('BMK,BNK->BMN')

    computed in float32 and cast to ``preferred_element_type``. Operands are typically
    float8/float4 with float8 scales (see ``scaled_dot_general``), but any real dtypes
    work. Shapes must be 3-D with matching B and K (ValueError otherwise). Not
    differentiable (as in JAX); batches under ``vmap``.

    JAX 0.10.2 raises NotImplementedError when this runs on CPU (cuDNN only); jaxlite
    computes it.
    """
    from jaxlite._src.core import dtypes
    from jaxlite._src.numpy.creation import asarray
    from jaxlite._src.prims.scaled_matmul import check_scaled_matmul_shapes
    args = [asarray(x) for x in (lhs, rhs, lhs_scales, rhs_scales)]
    check_scaled_matmul_shapes(*args, same_blocks=True)
    dt = dtypes.canonicalize_dtype(np.dtype(preferred_element_type))
    return _jitted_scaled_matmul()(*args, preferred_element_type=dt)


def _jitted_scaled_matmul():
    fn = _jitted.get("fn")
    if fn is None:
        from jaxlite._src.api.jit import jit
        fn = _jitted["fn"] = jit(_scaled_matmul, static_argnames=("preferred_element_type",))
    return fn


# ----------------------------------------------------------------------------- quantization

_E8M0_MIN = float(2.0 ** -127)


def _e8m0_exponent(s):
    """The biased exponent byte (uint8) of the smallest power of two >= ``s`` (float32,
    non-negative), clamped to e8m0's range [2**-127, 2**127]."""
    from jaxlite._src.numpy import namespace as jnp
    from jaxlite._src.lax import namespace as lax
    from jaxlite._src.prims.conversion import bitcast_convert_type_p
    bits = bitcast_convert_type_p.bind(s, new_dtype=np.dtype(np.uint32))
    exponent = lax.shift_right_logical(bits, jnp.uint32(23))
    mantissa = lax.bitwise_and(bits, jnp.uint32(0x7FFFFF))
    # not already a power of two, not at the top of the range, and (for a subnormal s) above
    # 2**-127, which e8m0 represents with exponent byte 0
    tiny = (exponent == 0) & (mantissa <= jnp.uint32(0x400000))
    bump = (mantissa > 0) & (exponent != 254) & ~tiny
    return jnp.where(bump, exponent + jnp.uint32(1), exponent).astype(jnp.uint8)


def _pow2_of_exponent(e):
    """float32 2**(e - 127) for an exponent byte ``e`` (0 gives 2**-127, as e8m0 reads it)."""
    from jaxlite._src.numpy import namespace as jnp
    from jaxlite._src.lax import namespace as lax
    from jaxlite._src.prims.conversion import bitcast_convert_type_p
    bits = lax.shift_left(e.astype(jnp.uint32), jnp.uint32(23))
    f = bitcast_convert_type_p.bind(bits, new_dtype=np.dtype(np.float32))
    return jnp.where(f == 0.0, jnp.float32(_E8M0_MIN), f)


def quantize(x, config):
    """Quantize ``x`` along its last axis in blocks of ``config.block_size``: returns
    (values of ``config.data_type`` shaped like ``x``, scales of ``config.scale_type``
    with last dimension ``K // block_size``)."""
    from jaxlite._src.numpy import namespace as jnp
    from jaxlite._src.lax import namespace as lax
    *lead, k = x.shape
    bs = config.block_size
    if k < bs or k % bs:
        raise ValueError(
            f"scaled_dot_general quantizes in blocks of {bs} ({config.mode}) along the "
            f"contracted dimension, which must be a multiple of {bs}; got {k}. (For "
            f"gradients, the non-contracting dimensions of the operands are contracted and "
            f"need the same.) Pad the operands or pass configs=None for lax.dot_general.")
    data_max = float(jnp.finfo(config.data_type).max)
    blocks = x.reshape(*lead, k // bs, bs)
    if config.mode == "mxfp8":
        amax = jnp.max(jnp.abs(blocks), axis=-1, keepdims=True)
        e = _e8m0_exponent((amax / data_max).astype(jnp.float32))
        scale = _pow2_of_exponent(e).astype(x.dtype)
        q = jnp.clip(blocks / scale, -data_max, data_max).astype(config.data_type)
        scales = _bitcast(e, config.scale_type)
    elif config.mode == "nvfp4":
        scale_max = float(jnp.finfo(config.scale_type).max)
        gs = jnp.asarray(config.global_scale)
        blocks = blocks / gs.reshape((1,) * blocks.ndim)
        amax = jnp.max(jnp.abs(blocks), axis=-1, keepdims=True)
        s = jnp.clip(amax / data_max, 0, scale_max).astype(config.scale_type)
        s = lax.optimization_barrier(s)
        q = jnp.clip(blocks / s.astype(jnp.float32), -data_max, data_max)
        q = q.astype(config.data_type)
        scales = s
    else:
        raise ValueError(f"Unsupported mode: {config.mode}")
    return q.reshape(*lead, k), scales.reshape(*lead, k // bs)


def _bitcast(x, dtype):
    from jaxlite._src.prims.conversion import bitcast_convert_type_p
    return bitcast_convert_type_p.bind(x, new_dtype=np.dtype(dtype))


def _global_scale(config):
    return None if config.mode != "nvfp4" else config.global_scale


def _quantized_bmk(lhs, rhs, lhs_config, rhs_config, preferred_element_type,
                   global_scales=True):
    """(B,M,K) x (B,N,K) -> (B,M,N) with both operands quantized; the nvfp4 global scales
    the operands were divided by multiply the product back unless ``global_scales`` is
    False (JAX's quantized gradients leave them out)."""
    from jaxlite._src.numpy import namespace as jnp
    ql, sl = quantize(lhs, lhs_config)
    qr, sr = quantize(rhs, rhs_config)
    out = _jitted_scaled_matmul()(ql, qr, sl, sr,
                                  preferred_element_type=np.dtype(preferred_element_type))
    if global_scales and lhs_config.mode == "nvfp4":
        # as JAX: an nvfp4 lhs brings the product of both global scales back (an mxfp8
        # lhs none, even with an nvfp4 rhs)
        gs_r = _global_scale(rhs_config)
        if gs_r is None:
            raise TypeError(
                "scaled_dot_general with an nvfp4 lhs config needs an nvfp4 rhs config too "
                f"(its global_scale rescales the product); got rhs mode {rhs_config.mode!r}.")
        factor = jnp.asarray(_global_scale(lhs_config)) * jnp.asarray(gs_r)
        out = out * factor.reshape(1, 1, -1).astype(out.dtype)
    return out


def _make_bmk(configs, preferred_element_type):
    """The custom_vjp (B,M,K) x (B,N,K) -> (B,M,N) product for ``configs``."""
    from jaxlite._src.api.custom_derivatives import custom_vjp
    c_lhs, c_rhs, c_grad = configs

    def scaled_dot_general_fn(lhs, rhs):
        return _quantized_bmk(lhs, rhs, c_lhs, c_rhs, preferred_element_type)

    def scaled_dot_fwd(lhs, rhs):
        return scaled_dot_general_fn(lhs, rhs), (lhs, rhs)

    def scaled_dot_bwd(res, g):
        from jaxlite._src.numpy import namespace as jnp
        from jaxlite._src.lax.dot import dot_general
        lhs, rhs = res
        if c_grad.mode == "mxfp8":
            # both gradients are themselves products quantized with the gradient config,
            # contracting over N and M
            g_t = jnp.swapaxes(g, 1, 2)
            d_lhs = _quantized_bmk(g, jnp.swapaxes(rhs, 1, 2), c_grad, c_rhs,
                                   preferred_element_type, global_scales=False)
            d_rhs = _quantized_bmk(g_t, jnp.swapaxes(lhs, 1, 2), c_grad, c_lhs,
                                   preferred_element_type, global_scales=False)
            return d_lhs, d_rhs
        # nvfp4: straight-through estimator in full precision, zero where an operand
        # exceeds what its quantization can represent
        d_lhs = dot_general(g, rhs, (((2,), (1,)), ((0,), (0,))),
                            preferred_element_type=preferred_element_type)
        d_rhs = dot_general(g, lhs, (((1,), (1,)), ((0,), (0,))),
                            preferred_element_type=preferred_element_type)
        out = []
        for d, x, cfg in ((d_lhs, lhs, c_lhs), (d_rhs, rhs, c_rhs)):
            gs = _global_scale(cfg)
            if gs is None:
                raise ValueError(
                    "scaled_dot_general with an nvfp4 gradient config (configs[2]) needs "
                    "nvfp4 configs (with a global_scale) for both operands; got "
                    f"{cfg.mode!r}.")
            limit = (jnp.asarray(gs) * float(jnp.finfo(cfg.data_type).max)
                     * float(jnp.finfo(cfg.scale_type).max))
            keep = jnp.abs(x).astype(jnp.float32) <= limit.reshape(1, 1, -1)
            out.append(jnp.where(keep, d, 0))
        return tuple(out)

    fn = custom_vjp(scaled_dot_general_fn)
    fn.defvjp(scaled_dot_fwd, scaled_dot_bwd)
    return fn


# ----------------------------------------------------------------------------- dot_general

_PREFERRED = (np.dtype(np.float32), np.dtype("bfloat16"), np.dtype(np.float16))


def scaled_dot_general(lhs, rhs, dimension_numbers, preferred_element_type=np.float32,
                       configs=None, implementation=None):
    """``lax.dot_general`` with block-scaled quantization of both operands.

    With ``configs=None`` this is ``lax.dot_general(lhs, rhs, dimension_numbers,
    preferred_element_type=preferred_element_type)``. Otherwise ``configs`` is a list of
    three ``BlockScaleConfig`` (from ``get_scaled_dot_general_config``): for ``lhs``,
    ``rhs`` and the output gradient. The operands are brought to (batch, free, contract)
    layout, quantized along the contracted dimensions (whose total size must be a multiple
    of the block size), multiplied with ``scaled_matmul`` and reshaped to dot_general's
    output layout (batch dims, then lhs free dims, then rhs free dims).

    Gradients (of ``preferred_element_type``): with an 'mxfp8' gradient config both operand
    gradients are quantized products too, the output cotangent quantized with ``configs[2]``
    and each operand with its own config (the free dimensions, contracted there, must also
    be block multiples; as in JAX, nvfp4 global scales are not applied there); with
    'nvfp4' they are full-precision products masked to zero where an operand exceeds what
    its format can represent (a straight-through estimator).

    ``preferred_element_type`` must be float32, bfloat16 or float16 when quantizing
    (TypeError otherwise). ``implementation`` is ignored (deprecated in JAX).

    JAX 0.10.2 on CPU traces this but raises NotImplementedError when it runs; jaxlite
    computes it.
    """
    from jaxlite._src.numpy import namespace as jnp
    from jaxlite._src.lax.dot import dot_general
    if configs is None:
        return dot_general(lhs, rhs, dimension_numbers,
                           preferred_element_type=preferred_element_type)
    pref = np.dtype(preferred_element_type)
    if pref not in _PREFERRED:
        raise TypeError("Only support preferred_element_type in (f32, bf16, f16), but got "
                        f"{pref.name}")
    configs = list(configs)
    if len(configs) != 3 or not all(isinstance(c, BlockScaleConfig) for c in configs):
        raise ValueError("scaled_dot_general needs configs = [lhs_config, rhs_config, "
                         "grad_config], three BlockScaleConfig objects from "
                         f"jax.nn.get_scaled_dot_general_config; got {configs!r}.")
    lhs, rhs = jnp.asarray(lhs), jnp.asarray(rhs)
    (lc, rc), (lb, rb) = dimension_numbers
    lc, rc, lb, rb = (tuple(int(d) % n for d in ds) for ds, n in
                      ((lc, lhs.ndim), (rc, rhs.ndim), (lb, lhs.ndim), (rb, rhs.ndim)))
    if len(lc) != len(rc) or len(lb) != len(rb):
        raise TypeError("dot_general requires equal numbers of lhs and rhs contracting and "
                        f"batch dimensions, got {dimension_numbers}.")
    if [lhs.shape[d] for d in lc] != [rhs.shape[d] for d in rc]:
        raise TypeError("dot_general requires contracting dimensions to have the same shape, "
                        f"got {[lhs.shape[d] for d in lc]} and {[rhs.shape[d] for d in rc]}.")
    if [lhs.shape[d] for d in lb] != [rhs.shape[d] for d in rb]:
        raise TypeError("dot_general requires lhs batch dimensions and rhs batch dimensions "
                        f"to have the same shape, got {[lhs.shape[d] for d in lb]} and "
                        f"{[rhs.shape[d] for d in rb]}.")
    lf = [d for d in range(lhs.ndim) if d not in lc and d not in lb]
    rf = [d for d in range(rhs.ndim) if d not in rc and d not in rb]
    batch_shape = [lhs.shape[d] for d in lb]
    lf_shape, rf_shape = [lhs.shape[d] for d in lf], [rhs.shape[d] for d in rf]
    k = int(np.prod([lhs.shape[d] for d in lc], dtype=np.int64))
    b = int(np.prod(batch_shape, dtype=np.int64))
    lhs3 = jnp.transpose(lhs, lb + tuple(lf) + lc).reshape(
        b, int(np.prod(lf_shape, dtype=np.int64)), k)
    rhs3 = jnp.transpose(rhs, rb + tuple(rf) + rc).reshape(
        b, int(np.prod(rf_shape, dtype=np.int64)), k)
    out = _make_bmk(configs, pref)(lhs3, rhs3)
    return out.reshape(*batch_shape, *lf_shape, *rf_shape)
