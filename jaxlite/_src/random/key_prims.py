"""The primitives on typed PRNG keys, as JAX has them: ``random_seed``, ``random_wrap``,
``random_unwrap``, ``random_split``, ``random_fold_in`` and ``random_bits``.

A typed key array is one value of an extended dtype (``key<fry>``) for the transformations:
jit, vmap, grad, scan and cond carry it as a leaf with an aval such as ``key<fry>[3]``, and
jaxprs print these primitives on it. Each primitive's ``physical`` rule says what it computes
on the keys' data (uint32 words in trailing dimensions), written with the PRNG
implementation's functions (threefry hash, ``rng_bit_generator``); eager execution runs that
rule on the data, and the compiler's physical pass (compiler/physical.py) expands it in place
of the equation before lowering. Keys are not differentiable; batching moves the batch
dimension to the front of the keys (a key primitive accepts keys of any shape).
"""
from __future__ import annotations

import numpy as np

from jaxlite._src.core import dtypes
from jaxlite._src.core.avals import ShapedArray, aval_of_value
from jaxlite._src.core.primitive import NOT_DIFFERENTIABLE, Primitive
from jaxlite._src.prims.batch_util import bdim_at_front

__all__ = ["random_seed_p", "random_wrap_p", "random_unwrap_p", "random_split_p",
           "random_fold_in_p", "random_bits_p", "KeyPrimitive"]

_U32 = np.dtype(np.uint32)


def _vectorize(fn, n_lead):
    """``fn`` (on one raw key) mapped over ``n_lead`` leading axes with vmap."""
    from jaxlite._src.api.vmap import vmap
    for _ in range(n_lead):
        fn = vmap(fn)
    return fn


def _key_dtype(aval, name):
    dt = aval.dtype
    if not isinstance(dt, dtypes.ExtendedDType) or not hasattr(dt, "_impl"):
        raise TypeError(f"{name} takes a key array operand, got {aval.str_short()}")
    return dt


class KeyPrimitive(Primitive):
    """Base of the key primitives: not differentiable, no weak types, run eagerly and
    lowered through their ``physical(in_avals, *data, **params)`` rule."""
    jvp = NOT_DIFFERENTIABLE
    weak_rule = "never"
    accepts_extended = True

    def eager(self, args, params):
        avals = [aval_of_value(a) for a in args]
        data = [a.dtype.to_physical(a) if isinstance(av.dtype, dtypes.ExtendedDType) else a
                for a, av in zip(args, avals)]
        out = self.physical(avals, *data, **params)
        out_aval = self.abstract_eval(*avals, **params)
        if isinstance(out_aval.dtype, dtypes.ExtendedDType):
            return out_aval.dtype.from_physical(out)
        return out

    def physical(self, avals, *data, **params):
        raise NotImplementedError

    def sharding_rule(self, avals, **params):
        """Keys are independent of each other: each key dimension of the operand is the
        same result dimension (the dimensions a result adds per key are whole)."""
        return [tuple(range(a.ndim)) for a in avals]

    def batch(self, size, args, dims, **params):
        # every operand's batch dimension to the front (unbatched ones broadcast): the
        # primitive takes keys and messages of any leading shape
        return self.bind(*[bdim_at_front(a, d, size) for a, d in zip(args, dims)],
                         **params), 0


class RandomSeed(KeyPrimitive):
    """``random_seed[impl](seeds)``: a key per integer seed."""
    name = "random_seed"

    def abstract_eval(self, seeds, *, impl):
        if not dtypes.issubdtype(seeds.dtype, np.integer):
            raise TypeError(f"random_seed takes integer seeds, got {seeds.str_short()}")
        return ShapedArray(seeds.shape, impl.key_dtype)

    def physical(self, avals, seeds, *, impl):
        return _vectorize(impl.seed, len(avals[0].shape))(seeds)


class RandomWrap(KeyPrimitive):
    """``random_wrap[impl](data)``: the keys whose uint32 data is ``data`` (the key shape
    of ``impl`` in trailing dimensions)."""
    name = "random_wrap"

    def abstract_eval(self, data, *, impl):
        k = len(impl.key_shape)
        if data.dtype != _U32 or tuple(data.shape[len(data.shape) - k:]) != impl.key_shape:
            raise TypeError(f"random_wrap takes uint32 data ending in {impl.key_shape}, got "
                            f"{data.str_short()}")
        return ShapedArray(data.shape[:len(data.shape) - k], impl.key_dtype)

    def physical(self, avals, data, *, impl):
        return data

    def sharding_rule(self, avals, *, impl):
        """The leading dimensions of the data are the keys' dimensions; its key-data
        dimensions are whole."""
        n = avals[0].ndim - len(impl.key_shape)
        return [tuple(k if k < n else None for k in range(avals[0].ndim))]

    def batch(self, size, args, dims, **params):
        k = len(params["impl"].key_shape)
        if dims[0] is not None and dims[0] >= args[0].ndim - k:
            raise ValueError("vmap of random_wrap over a key-data dimension: map over the "
                             "leading (key array) dimensions of the data")
        return super().batch(size, args, dims, **params)


class RandomUnwrap(KeyPrimitive):
    """``random_unwrap(keys)``: the uint32 data of typed keys."""
    name = "random_unwrap"

    def abstract_eval(self, keys):
        dt = _key_dtype(keys, "random_unwrap")
        return dt.physical_aval(keys)

    def physical(self, avals, keys):
        return keys


class RandomSplit(KeyPrimitive):
    """``random_split[shape](keys)``: each key split into ``shape`` new keys."""
    name = "random_split"

    def abstract_eval(self, keys, *, shape):
        _key_dtype(keys, "random_split")
        return ShapedArray(tuple(keys.shape) + tuple(shape), keys.dtype)

    def physical(self, avals, keys, *, shape):
        impl = avals[0].dtype._impl
        return _vectorize(lambda k: impl.split(k, shape), len(avals[0].shape))(keys)


class RandomFoldIn(KeyPrimitive):
    """``random_fold_in(keys, msgs)``: keys with the uint32 messages hashed in (keys and
    messages broadcast against each other)."""
    name = "random_fold_in"

    def abstract_eval(self, keys, msgs):
        _key_dtype(keys, "random_fold_in")
        if msgs.dtype != _U32:
            raise TypeError(f"random_fold_in takes uint32 messages, got {msgs.str_short()}")
        try:
            shape = np.broadcast_shapes(tuple(keys.shape), tuple(msgs.shape))
        except ValueError:
            raise TypeError(f"random_fold_in: keys of shape {keys.shape} and messages of "
                            f"shape {msgs.shape} do not broadcast") from None
        return ShapedArray(shape, keys.dtype)

    def sharding_rule(self, avals):
        """Keys and messages broadcast against each other, elementwise."""
        from jaxlite._src.prims.base import elementwise_sharding_rule
        return elementwise_sharding_rule(avals)

    def physical(self, avals, keys, msgs):
        kav, mav = avals
        impl = kav.dtype._impl
        if not kav.shape and not mav.shape:
            return impl.fold_in(keys, msgs)
        from jaxlite._src.api.vmap import vmap
        from jaxlite._src.lax import shape as lax_shape
        n = max(len(kav.shape), len(mav.shape))
        ks = (1,) * (n - len(kav.shape)) + tuple(kav.shape)
        ms = (1,) * (n - len(mav.shape)) + tuple(mav.shape)
        trail = tuple(impl.key_shape)

        # As JAX: map over each dimension where an operand has more than one element; an
        # operand of size 1 there is passed unmapped (so a message shared by a batch of
        # keys is hashed once, which matters to unsafe_rbg's batching of its bit draws).
        def apply(k, m, ks, ms):
            if not ks:
                return impl.fold_in(k, m)
            kin = 0 if ks[0] != 1 else None
            min_ = 0 if ms[0] != 1 else None
            k = k if kin == 0 else lax_shape.reshape(k, tuple(ks[1:]) + trail)
            m = m if min_ == 0 else lax_shape.reshape(m, tuple(ms[1:]))
            inner = lambda kk, mm: apply(kk, mm, ks[1:], ms[1:])   # noqa: E731
            if kin is None and min_ is None:
                out = inner(k, m)
                return lax_shape.reshape(out, (1,) + tuple(out.shape))
            return vmap(inner, in_axes=(kin, min_))(k, m)

        return apply(lax_shape.reshape(keys, ks + trail), lax_shape.reshape(msgs, ms), ks, ms)

    def batch(self, size, args, dims, **params):
        from jaxlite._src.prims.batch_util import moveaxis
        from jaxlite._src.prims.shape import reshape_p
        out = []
        for a, d in zip(args, dims):
            if d is None:   # a leading unit dimension: broadcast by the rule, not copied
                shape = (1,) + tuple(a.shape)
                out.append(reshape_p.bind(a, new_sizes=shape, dimensions=None, sharding=None))
            else:
                out.append(moveaxis(a, d, 0))
        return self.bind(*out, **params), 0


class RandomBits(KeyPrimitive):
    """``random_bits[bit_width, shape](keys)``: unsigned random bits of ``bit_width`` for
    each key (``keys.shape + shape``)."""
    name = "random_bits"

    def abstract_eval(self, keys, *, bit_width, shape):
        _key_dtype(keys, "random_bits")
        if bit_width not in (8, 16, 32, 64):
            raise TypeError("requires 8-, 16-, 32- or 64-bit field width.")
        dt = np.dtype(f"uint{bit_width}")
        return ShapedArray(tuple(keys.shape) + tuple(shape), dt)

    def physical(self, avals, keys, *, bit_width, shape):
        impl = avals[0].dtype._impl
        return _vectorize(lambda k: impl.random_bits(k, bit_width, tuple(shape)),
                          len(avals[0].shape))(keys)


random_seed_p = RandomSeed()
random_wrap_p = RandomWrap()
random_unwrap_p = RandomUnwrap()
random_split_p = RandomSplit()
random_fold_in_p = RandomFoldIn()
random_bits_p = RandomBits()
