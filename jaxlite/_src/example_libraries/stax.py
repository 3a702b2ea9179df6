"""jax.example_libraries.stax: neural networks as ``(init_fun, apply_fun)`` pairs.

``init_fun(rng, input_shape) -> (output_shape, params)``;
``apply_fun(params, inputs, **kwargs) -> outputs``. Combinators: ``serial``, ``parallel``,
``FanOut``, ``FanInSum``, ``FanInConcat``, ``shape_dependent``.
"""
from __future__ import annotations


import functools

import numpy as np

from jaxlite._src.nn import functions as nn
from jaxlite._src.nn.initializers import glorot_normal, normal, ones, zeros

__all__ = ["Dense", "BatchNorm", "elementwise", "Tanh", "Relu", "Exp", "LogSoftmax",
           "Softmax", "Softplus", "Sigmoid", "Elu", "LeakyRelu", "Selu", "Gelu", "Flatten",
           "Identity", "FanInSum", "FanOut", "FanInConcat", "Dropout", "serial", "parallel",
           "shape_dependent", "glorot", "randn", "logsoftmax", "GeneralConv", "Conv",
           "GeneralConvTranspose", "Conv1DTranspose", "ConvTranspose", "MaxPool", "SumPool",
           "AvgPool",
           # the jax.nn functions and initializers JAX's stax module has as attributes
           "elu", "gelu", "leaky_relu", "log_softmax", "relu", "selu", "sigmoid", "softmax",
           "softplus", "standardize", "glorot_normal", "normal", "ones", "zeros"]

# JAX's stax imports these names from jax.nn at module level, so user code reaches them as
# ``stax.relu`` etc.; they are the very jax.nn functions.
elu, gelu, leaky_relu, log_softmax = nn.elu, nn.gelu, nn.leaky_relu, nn.log_softmax
relu, selu, sigmoid, softmax = nn.relu, nn.selu, nn.sigmoid, nn.softmax
softplus, standardize = nn.softplus, nn.standardize

glorot = glorot_normal
randn = normal
logsoftmax = nn.log_softmax


def _jnp():
    from jaxlite._src.numpy import namespace as jnp
    return jnp


def _split(rng, n=2):
    from jaxlite._src.random.keys import split
    return split(rng, n)


def Dense(out_dim, W_init=glorot_normal(), b_init=normal()):
    """A fully connected layer: ``inputs @ W + b``."""
    def init_fun(rng, input_shape):
        output_shape = tuple(input_shape[:-1]) + (out_dim,)
        k1, k2 = _split(rng)
        return output_shape, (W_init(k1, (input_shape[-1], out_dim)), b_init(k2, (out_dim,)))

    def apply_fun(params, inputs, **kwargs):
        W, b = params
        return _jnp().dot(inputs, W) + b
    return init_fun, apply_fun


def BatchNorm(axis=(0, 1, 2), epsilon=1e-5, center=True, scale=True, beta_init=zeros,
              gamma_init=ones):
    """Normalize over ``axis`` (batch statistics), then scale by gamma and shift by beta."""
    axis = (axis,) if np.isscalar(axis) else tuple(axis)

    def init_fun(rng, input_shape):
        shape = tuple(d for i, d in enumerate(input_shape) if i not in axis)
        k1, k2 = _split(rng)
        beta = beta_init(k1, shape) if center else ()
        gamma = gamma_init(k2, shape) if scale else ()
        return input_shape, (beta, gamma)

    def apply_fun(params, x, **kwargs):
        beta, gamma = params
        ed = tuple(None if i in axis else slice(None) for i in range(np.ndim(x)))
        z = nn.standardize(x, axis, epsilon=epsilon)
        if center and scale:
            return gamma[ed] * z + beta[ed]
        if center:
            return z + beta[ed]
        if scale:
            return gamma[ed] * z
        return z
    return init_fun, apply_fun


def _lax():
    from jaxlite._src.lax import namespace as lax
    return lax


def _conv_kernel_shape(lhs_spec, rhs_spec, out_chan, filter_shape, input_shape):
    it = iter(filter_shape)
    return [out_chan if c == "O" else input_shape[lhs_spec.index("C")] if c == "I" else
            next(it) for c in rhs_spec]


def _conv_layer(dimension_numbers, out_chan, filter_shape, strides, padding, W_init, b_init,
                transpose):
    """init/apply of a (transposed) convolution layer with a broadcast bias."""
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    one = (1,) * len(filter_shape)
    strides = strides or one
    W_init = W_init or glorot_normal(rhs_spec.index("I"), rhs_spec.index("O"))

    def init_fun(rng, input_shape):
        kernel_shape = _conv_kernel_shape(lhs_spec, rhs_spec, out_chan, filter_shape,
                                          input_shape)
        shape_fn = (_lax().conv_transpose_shape_tuple if transpose
                    else _lax().conv_general_shape_tuple)
        output_shape = shape_fn(input_shape, kernel_shape, strides, padding,
                                dimension_numbers)
        bias_shape = [out_chan if c == "C" else 1 for c in out_spec]
        k1, k2 = _split(rng)
        return output_shape, (W_init(k1, kernel_shape), b_init(k2, bias_shape))

    def apply_fun(params, inputs, **kwargs):
        W, b = params
        if transpose:
            return _lax().conv_transpose(inputs, W, strides, padding,
                                         dimension_numbers=dimension_numbers) + b
        return _lax().conv_general_dilated(inputs, W, strides, padding, one, one,
                                           dimension_numbers=dimension_numbers) + b
    return init_fun, apply_fun


def GeneralConv(dimension_numbers, out_chan, filter_shape, strides=None, padding="VALID",
                W_init=None, b_init=normal(1e-6)):
    """A convolution layer with layouts ``dimension_numbers = (lhs_spec, rhs_spec,
    out_spec)`` (e.g. ``('NHWC', 'HWIO', 'NHWC')``), ``out_chan`` output channels and a
    ``filter_shape`` kernel; params ``(W, b)`` (glorot-normal kernel, tiny normal bias)."""
    return _conv_layer(dimension_numbers, out_chan, filter_shape, strides, padding, W_init,
                       b_init, transpose=False)


Conv = functools.partial(GeneralConv, ("NHWC", "HWIO", "NHWC"))


def GeneralConvTranspose(dimension_numbers, out_chan, filter_shape, strides=None,
                         padding="VALID", W_init=None, b_init=normal(1e-6)):
    """A transposed-convolution layer (``lax.conv_transpose``); arguments as GeneralConv."""
    return _conv_layer(dimension_numbers, out_chan, filter_shape, strides, padding, W_init,
                       b_init, transpose=True)


Conv1DTranspose = functools.partial(GeneralConvTranspose, ("NHC", "HIO", "NHC"))
ConvTranspose = functools.partial(GeneralConvTranspose, ("NHWC", "HWIO", "NHWC"))


def _pooling_layer(reducer_name, init_val, rescaler=None):
    def PoolingLayer(window_shape, strides=None, padding="VALID", spec=None):
        """A pooling layer over ``window_shape`` (spatial dims; inputs default to NHWC, or
        the layout ``spec`` such as 'NCHW')."""
        strides = strides or (1,) * len(window_shape)
        rescale = rescaler(window_shape, strides, padding) if rescaler else None
        if spec is None:
            non_spatial_axes = 0, len(window_shape) + 1
        else:
            non_spatial_axes = spec.index("N"), spec.index("C")
        for i in sorted(non_spatial_axes):
            window_shape = tuple(window_shape[:i]) + (1,) + tuple(window_shape[i:])
            strides = tuple(strides[:i]) + (1,) + tuple(strides[i:])

        def init_fun(rng, input_shape):
            lax = _lax()
            pads = lax.padtype_to_pads(input_shape, window_shape, strides, padding)
            ones = (1,) * len(window_shape)
            out_shape = lax.reduce_window_shape_tuple(input_shape, window_shape, strides,
                                                      pads, ones, ones)
            return out_shape, ()

        def apply_fun(params, inputs, **kwargs):
            lax = _lax()
            out = lax.reduce_window(inputs, init_val, getattr(lax, reducer_name),
                                    window_shape, strides, padding)
            return rescale(out, inputs, spec) if rescale else out
        return init_fun, apply_fun
    PoolingLayer.__name__ = {"max": "MaxPool", "add": "SumPool"}[reducer_name]
    return PoolingLayer


MaxPool = _pooling_layer("max", -np.inf)
SumPool = _pooling_layer("add", 0.)


def _normalize_by_window_size(dims, strides, padding):
    def rescale(outputs, inputs, spec):
        jnp, lax = _jnp(), _lax()
        if spec is None:
            non_spatial_axes = 0, inputs.ndim - 1
        else:
            non_spatial_axes = spec.index("N"), spec.index("C")
        spatial_shape = tuple(inputs.shape[i] for i in range(inputs.ndim)
                              if i not in non_spatial_axes)
        one = jnp.ones(spatial_shape, dtype=inputs.dtype)
        window_sizes = lax.reduce_window(one, 0., lax.add, dims, strides, padding)
        for i in sorted(non_spatial_axes):
            window_sizes = jnp.expand_dims(window_sizes, i)
        return outputs / window_sizes
    return rescale


AvgPool = _pooling_layer("add", 0., _normalize_by_window_size)
AvgPool.__name__ = "AvgPool"


def elementwise(fun, **fun_kwargs):
    """A layer applying ``fun`` elementwise (no parameters)."""
    def init_fun(rng, input_shape):
        return input_shape, ()

    def apply_fun(params, inputs, **kwargs):
        return fun(inputs, **fun_kwargs)
    return init_fun, apply_fun


Tanh = elementwise(lambda x: _jnp().tanh(x))
Relu = elementwise(nn.relu)
Exp = elementwise(lambda x: _jnp().exp(x))
LogSoftmax = elementwise(nn.log_softmax, axis=-1)
Softmax = elementwise(nn.softmax, axis=-1)
Softplus = elementwise(nn.softplus)
Sigmoid = elementwise(nn.sigmoid)
Elu = elementwise(nn.elu)
LeakyRelu = elementwise(nn.leaky_relu)
Selu = elementwise(nn.selu)
Gelu = elementwise(nn.gelu)


def _flatten_layer():
    def init_fun(rng, input_shape):
        return (input_shape[0], int(np.prod(input_shape[1:]))), ()

    def apply_fun(params, inputs, **kwargs):
        return _jnp().reshape(inputs, (inputs.shape[0], -1))
    return init_fun, apply_fun


Flatten = _flatten_layer()


def _identity_layer():
    def init_fun(rng, input_shape):
        return input_shape, ()

    def apply_fun(params, inputs, **kwargs):
        return inputs
    return init_fun, apply_fun


Identity = _identity_layer()


def FanOut(num):
    """A layer copying its input ``num`` times (for ``parallel``)."""
    def init_fun(rng, input_shape):
        return [input_shape] * num, ()

    def apply_fun(params, inputs, **kwargs):
        return [inputs] * num
    return init_fun, apply_fun


def _fan_in_sum():
    def init_fun(rng, input_shape):
        return input_shape[0], ()

    def apply_fun(params, inputs, **kwargs):
        return sum(inputs)
    return init_fun, apply_fun


FanInSum = _fan_in_sum()


def FanInConcat(axis=-1):
    """A layer concatenating its list of inputs along ``axis``."""
    def init_fun(rng, input_shape):
        ax = axis % len(input_shape[0])
        concat_size = sum(shape[ax] for shape in input_shape)
        out_shape = input_shape[0][:ax] + (concat_size,) + input_shape[0][ax + 1:]
        return out_shape, ()

    def apply_fun(params, inputs, **kwargs):
        return _jnp().concatenate(inputs, axis)
    return init_fun, apply_fun


def Dropout(rate, mode="train"):
    """Keep each input with probability ``rate`` (scaled by ``1 / rate``) in train mode;
    needs ``rng=`` at apply time."""
    def init_fun(rng, input_shape):
        return input_shape, ()

    def apply_fun(params, inputs, **kwargs):
        rng = kwargs.get("rng", None)
        if rng is None:
            raise ValueError("Dropout layer requires apply_fun to be called with a PRNG key "
                             "argument. That is, instead of `apply_fun(params, inputs)`, call "
                             "it like `apply_fun(params, inputs, rng)` where `rng` is a "
                             "PRNG key (e.g. from `jax.random.key`).")
        if mode == "train":
            from jaxlite._src.random.samplers import bernoulli
            keep = bernoulli(rng, rate, inputs.shape)
            return _jnp().where(keep, inputs / rate, 0)
        return inputs
    return init_fun, apply_fun


def serial(*layers):
    """Layers applied in sequence (the rng is split once per layer)."""
    nlayers = len(layers)
    init_funs, apply_funs = zip(*layers) if layers else ((), ())

    def init_fun(rng, input_shape):
        params = []
        for init in init_funs:
            rng, layer_rng = _split(rng)
            input_shape, param = init(layer_rng, input_shape)
            params.append(param)
        return input_shape, params

    def apply_fun(params, inputs, **kwargs):
        rng = kwargs.pop("rng", None)
        rngs = _split(rng, nlayers) if rng is not None else (None,) * nlayers
        for fun, param, r in zip(apply_funs, params, rngs):
            inputs = fun(param, inputs, rng=r, **kwargs)
        return inputs
    return init_fun, apply_fun


def parallel(*layers):
    """Layers applied side by side to a list of inputs (pair with FanOut / FanIn*)."""
    nlayers = len(layers)
    init_funs, apply_funs = zip(*layers)

    def init_fun(rng, input_shape):
        rngs = _split(rng, nlayers)
        return zip(*[init(r, shape) for init, r, shape in zip(init_funs, rngs, input_shape)])

    def apply_fun(params, inputs, **kwargs):
        rng = kwargs.pop("rng", None)
        rngs = _split(rng, nlayers) if rng is not None else (None,) * nlayers
        return [f(p, x, rng=r, **kwargs) for f, p, x, r in zip(apply_funs, params, inputs,
                                                               rngs)]
    return init_fun, apply_fun


def shape_dependent(make_layer):
    """A layer built from the input shape at init and at apply time."""
    def init_fun(rng, input_shape):
        return make_layer(input_shape)[0](rng, input_shape)

    def apply_fun(params, inputs, **kwargs):
        return make_layer(inputs.shape)[1](params, inputs, **kwargs)
    return init_fun, apply_fun



