"""``jnp.vectorize``: NumPy's vectorize built on ``vmap`` (with generalized-ufunc
signatures)."""
from __future__ import annotations

import functools
import re

import numpy as np

__all__ = ["vectorize"]

_DIM = r"\w+"
_CORE = rf"(?:{_DIM}(?:,{_DIM})*)?"
_ARG = rf"\({_CORE}\)"
_LIST = rf"{_ARG}(?:,{_ARG})*"
_SIG = rf"^{_LIST}->{_LIST}$"


def _parse(signature):
    sig = signature.replace(" ", "")
    if not re.match(_SIG, sig):
        raise ValueError(f"not a valid gufunc signature: {signature}")
    ins, outs = sig.split("->")
    parse = lambda s: [tuple(re.findall(_DIM, a)) for a in re.findall(_ARG, s)]  # noqa: E731
    return parse(ins), parse(outs)


def vectorize(pyfunc, *, excluded=frozenset(), signature=None):
    """Vectorize ``pyfunc`` over the leading (broadcast) dimensions of its array arguments,
    as ``np.vectorize``; ``signature`` (e.g. ``"(n),(n)->()"``) names core dimensions that
    ``pyfunc`` sees whole. Implemented with ``vmap``, so it works under jit and grad."""
    excluded = frozenset(excluded)

    @functools.wraps(pyfunc)
    def wrapped(*args, **kwargs):
        from jaxlite._src.api.vmap import vmap
        from jaxlite._src.numpy.creation import asarray
        from jaxlite._src.numpy.shape_ops import expand_dims, squeeze
        fixed_pos = {i: a for i, a in enumerate(args) if i in excluded}
        fixed_kw = {k: v for k, v in kwargs.items() if k in excluded}
        dyn_kw_names = [k for k in kwargs if k not in excluded]
        dyn = [asarray(a) for i, a in enumerate(args) if i not in excluded] + \
            [asarray(kwargs[k]) for k in dyn_kw_names]
        n_pos = len(args) - len(fixed_pos)
        if signature is not None:
            in_core, out_core = _parse(signature)
            if len(in_core) != len(dyn):
                raise TypeError(f"wrong number of positional arguments: expected "
                                f"{len(in_core)}, got {len(dyn)}")
        else:
            in_core, out_core = [()] * len(dyn), None
        sizes: dict = {}
        loop_shapes = []
        for a, core in zip(dyn, in_core):
            if a.ndim < len(core):
                raise ValueError(f"input with shape {a.shape} does not have enough dimensions "
                                 f"for its core dimensions {core} in signature {signature}")
            for name, n in zip(core, a.shape[a.ndim - len(core):]):
                if sizes.setdefault(name, n) != n:
                    raise ValueError(f"inconsistent size for core dimension {name!r}: "
                                     f"{n} vs {sizes[name]}")
            loop_shapes.append(a.shape[:a.ndim - len(core)])
        bshape = tuple(np.broadcast_shapes(*loop_shapes)) if loop_shapes else ()
        # as JAX: squeeze size-1 loop dimensions and let vmap broadcast (in_axes None)
        # instead of materialising broadcast copies
        rev_filled, squeezed = [], []
        for a, loop in zip(dyn, loop_shapes):
            rev_filled.append(((1,) * (len(bshape) - len(loop)) + tuple(loop))[::-1])
            ones = tuple(i for i, n in enumerate(loop) if n == 1)
            squeezed.append(squeeze(a, axis=ones) if ones else a)

        def core_fn(*xs):
            it = iter(xs[:n_pos])
            full = [fixed_pos[i] if i in fixed_pos else next(it) for i in range(len(args))]
            kw = dict(fixed_kw)
            kw.update(zip(dyn_kw_names, xs[n_pos:]))
            out = pyfunc(*full, **kw)
            if out_core is not None:
                outs = out if isinstance(out, tuple) else (out,)
                if len(outs) != len(out_core):
                    raise ValueError(f"wrong number of outputs from pyfunc: expected "
                                     f"{len(out_core)}, got {len(outs)}")
                for o, core in zip(outs, out_core):
                    if np.ndim(o) != len(core):
                        raise ValueError(f"output shape {np.shape(o)} does not match core "
                                         f"dimensions {core} on vectorized function with "
                                         f"excluded={excluded} and signature={signature!r}")
            return out

        fn, expand = core_fn, []
        for negdim, sizes_ in enumerate(zip(*rev_filled)):
            in_axes = tuple(None if n == 1 else 0 for n in sizes_)
            if all(ax is None for ax in in_axes):
                expand.append(len(bshape) - 1 - negdim)
            else:
                fn = vmap(fn, in_axes)
        out = fn(*squeezed)
        if not expand:
            return out
        if isinstance(out, tuple):
            return tuple(expand_dims(r, axis=expand) for r in out)
        return expand_dims(out, axis=expand)

    return wrapped


def piecewise(x, condlist, funclist, *args, **kw):
    """``funclist[i](x)`` where ``condlist[i]`` holds (later conditions win; an extra last
    function or value is the default), as ``np.piecewise``; built on ``lax.switch`` so it
    traces, differentiates and batches."""
    from jaxlite._src.lax import elementwise as ew
    from jaxlite._src.lax.control_flow import switch
    from jaxlite._src.numpy.creation import asarray
    from jaxlite._src.numpy.reductions import argmax
    from jaxlite._src.numpy.cumulative import cumsum
    from jaxlite._src.numpy.joining import concatenate
    x = asarray(x)
    conds = asarray(condlist, dtype=bool)
    if conds.ndim == x.ndim:
        conds = conds.reshape((1,) + tuple(conds.shape))
    nc, nf = conds.shape[0], len(funclist)
    if nf == nc + 1:
        funcs = list(funclist[-1:]) + list(funclist[:-1])
    elif nf == nc:
        funcs = [0] + list(funclist)
    else:
        raise ValueError(f"with {nc} condition(s), either {nc} or {nc + 1} functions are "
                         f"expected; got {nf}")
    dtype = x.dtype
    zeros = ew._convert_element_type(conds[:1] * False, np.bool_, False)
    indices = argmax(cumsum(concatenate([zeros, conds], 0), 0), 0)

    def call(f):
        if callable(f):
            return lambda v: ew._convert_element_type(asarray(f(v, *args, **kw)), dtype, False)
        return lambda v: ew._convert_element_type(asarray(f), dtype, False)
    branches = [call(f) for f in funcs]
    return vectorize(lambda i, v: switch(i, branches, v))(indices, x)


__all__ += ["piecewise"]
