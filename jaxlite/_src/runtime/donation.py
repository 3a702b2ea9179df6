"""Buffer donation for ``jit`` (``donate_argnums`` / ``donate_argnames``), as JAX does on CPU.

* At ``jit`` time the donated arguments are resolved against the function's signature
  (numbers give names and names give numbers) and checked as JAX checks them.
* Per specialisation, ``plan`` matches each donated leaf to an output: first one of the same
  shape and dtype, then one of the same number of elements (as XLA, which may reuse a buffer
  of another shape). Donated leaves matching no output are not donated, and the compile warns
  "Some donated buffers were not usable" once, as JAX's lowering does.
* Per call, ``check_call`` refuses a donated buffer that is also passed elsewhere in the same
  call (JAX's "Attempt to use a buffer that was previously donated" errors), and ``finish``
  deletes the donated arrays after the program ran and writes each output of a donated
  buffer's shape and dtype into that buffer, so ``params = step(params, ...)`` keeps reusing
  the same memory. A buffer is only written when nothing else can see it: it owns its memory,
  is writeable, and no other object (a view, a NumPy array the user holds, another jaxlite
  array sharing it, a program constant) references it.
"""
from __future__ import annotations

import inspect
import sys
import warnings

import numpy as np

from jaxlite._src import tree_util
from jaxlite._src.core.errors import JaxRuntimeError
from jaxlite._src.runtime.array import ArrayImpl, _Deleted

__all__ = ["resolve_donation", "donation_mask", "Plan", "plan", "check_call", "finish"]

_POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
_FAQ = "See an explanation at https://docs.jax.dev/en/latest/faq.html#buffer-donation."


def _as_tuple(x, kind):
    if x is None:
        return ()
    if isinstance(x, kind):
        return (x,)
    return tuple(x)


def resolve_donation(sig, static_argnums, static_argnames, donate_argnums, donate_argnames):
    """(donate_argnums, donate_argnames) completed from each other through ``sig`` (when
    only one of them is given) and validated; raises JAX's ValueErrors for numbers past the
    positional parameters, names the function does not take, and donated static arguments."""
    nums = _as_tuple(donate_argnums, int)
    names = _as_tuple(donate_argnames, str)
    if not nums and not names:
        return (), ()
    if sig is None:
        return tuple(sorted(set(nums))), tuple(sorted(set(names)))
    params = list(sig.parameters.values())
    positional = [p.name for p in params if p.kind in _POSITIONAL]
    var_pos = any(p.kind is p.VAR_POSITIONAL for p in params)
    var_kw = any(p.kind is p.VAR_KEYWORD for p in params)
    if donate_argnames is None:       # names from numbers
        names = tuple(positional[n] for n in nums
                      if -len(positional) <= n < len(positional))
    elif donate_argnums is None:      # numbers from names
        nums = tuple(positional.index(n) for n in names if n in positional)
    if nums and not var_pos and (-min(nums) > len(positional) or max(nums) >= len(positional)):
        raise ValueError(f"Jitted function has donate_argnums={nums}, but only accepts "
                         f"{len(positional)} positional arguments.")
    pos_only = {p.name for p in params if p.kind is p.POSITIONAL_ONLY}
    if bad := pos_only & set(names):
        raise ValueError(f"Jitted function has invalid argnames {bad} in donate_argnames. "
                         "These are positional-only")
    valid = {p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
    if not var_kw and (bad := set(names) - valid):
        raise ValueError(f"Jitted function has invalid argnames {bad} in donate_argnames. "
                         "Function does not take these args.")
    if both := set(static_argnames) & set(names):
        raise ValueError("static_argnames and donate_argnames cannot intersect. Argument "
                         f"names {both} appear in both static_argnames and donate_argnames")
    n = len(positional)
    st = {s % n if n and s < 0 else s for s in static_argnums}
    dn = {d % n if n and d < 0 else d for d in nums}
    if st & dn:
        raise ValueError(f"`static_argnums` {sorted(st)} and `donate_argnums` {sorted(dn)} "
                         "cannot intersect.")
    return tuple(sorted(set(nums))), tuple(sorted(set(names)))


def _nleaves(x):
    return len(tree_util.tree_flatten(x)[0])


def donation_mask(args, kwargs, static_argnums, static_argnames, donate_argnums,
                  donate_argnames):
    """Which leaves of the call's dynamic pytree ``(args without statics, kwargs without
    statics)`` are donated, in ``tree_flatten`` order; None when none is."""
    mask = []
    n = len(args)
    for i, a in enumerate(args):
        if i in static_argnums or (i - n) in static_argnums:
            continue
        d = i in donate_argnums or (i - n) in donate_argnums
        mask.extend([d] * _nleaves(a))
    dyn_kwargs = {k: v for k, v in kwargs.items() if k not in static_argnames}
    if dyn_kwargs:
        children, keys = tree_util.flatten_one_level(dyn_kwargs)
        for k, c in zip(keys, children):
            mask.extend([k in donate_argnames] * _nleaves(c))
    return tuple(mask) if any(mask) else None


class Plan:
    """One specialisation's donation: ``donated`` (leaf indices whose arrays are deleted
    after a call) and ``reuse`` ((leaf index, output index) pairs of one shape and dtype,
    whose output is written into the leaf's buffer)."""
    __slots__ = ("donated", "reuse")

    def __init__(self, donated, reuse):
        self.donated = donated
        self.reuse = reuse


def plan(mask, in_avals, out_avals):
    """The ``Plan`` of a specialisation; warns (once, at compile) about donated leaves that
    match no output, which are then neither deleted nor reused."""
    pending = {}
    for i, (d, a) in enumerate(zip(mask, in_avals)):
        if d:
            pending.setdefault((a.shape, a.dtype), []).append(i)
    taken_out = set()
    matched = {}
    for j, a in enumerate(out_avals):
        q = pending.get((a.shape, a.dtype))
        if q:
            matched[q.pop(0)] = j
            taken_out.add(j)
    reuse = tuple(sorted(matched.items()))
    # then, as XLA may, a buffer of as many elements for an output of another shape
    by_size = {}
    for j, a in enumerate(out_avals):
        if j not in taken_out:
            by_size.setdefault(int(np.prod(a.shape, dtype=np.int64)), []).append(j)
    donated = set(matched)
    unusable = []
    for i, (d, a) in enumerate(zip(mask, in_avals)):
        if not d or i in donated:
            continue
        q = by_size.get(int(np.prod(a.shape, dtype=np.int64)))
        if q:
            q.pop(0)
            donated.add(i)
        else:
            unusable.append(f"{np.dtype(a.dtype).name}[{','.join(map(str, a.shape))}]")
    if unusable:
        warnings.warn(f"Some donated buffers were not usable: {', '.join(unusable)}.\n{_FAQ}",
                      stacklevel=4)
    return Plan(tuple(sorted(donated)), reuse)


def check_call(leaves, plan_):
    """Raise JAX's runtime error when a donated leaf's buffer is passed twice in one call
    (``f(donate(a), a)`` or ``f(donate(a), donate(a))``)."""
    donated = set(plan_.donated)
    first = {}
    for i, x in enumerate(leaves):
        if type(x) is not ArrayImpl:
            continue
        k = id(x._value)
        j = first.get(k)
        if j is None:
            first[k] = i
            continue
        if i in donated and j in donated:
            raise JaxRuntimeError(
                "INVALID_ARGUMENT: Attempt to donate the same buffer twice in Execute() "
                f"(flattened argument {i}, replica 0, partition 0, first use: {j}). Toy "
                "example for this bug: `f(donate(a), donate(a))`.")
        if i in donated or j in donated:
            raise JaxRuntimeError(
                "INVALID_ARGUMENT: Attempt to use a buffer that was previously donated in "
                f"the same call to Execute() (flattened argument {i}, replica 0, partition "
                f"0, first use: {j}). Toy example for this bug: `f(donate(a), a)`.")


def _private(buf):
    # refcount 3: the caller's list, this frame's argument and getrefcount's own argument;
    # any other reference (an array, a view's base, a user's ndarray) means it is shared
    return (type(buf) is np.ndarray and buf.base is None and buf.flags.writeable and
            buf.flags.c_contiguous and sys.getrefcount(buf) == 3)


def finish(leaves, outs, plan_):
    """Delete the donated arrays among ``leaves`` and return ``outs`` (the program's NumPy
    outputs, a list) with each reusable output copied into its donated buffer."""
    if not plan_.reuse:
        for i in plan_.donated:
            x = leaves[i]
            if type(x) is ArrayImpl or isinstance(x, ArrayImpl):
                x.delete()
        return outs
    bufs = {}
    for i in plan_.donated:
        x = leaves[i]
        if type(x) is ArrayImpl and x._sharding is None:
            v = x._value
            if type(v) is not _Deleted:
                bufs[i] = v
            x.delete()
            del v
        elif isinstance(x, ArrayImpl):
            x.delete()
    held = [None]
    for i, j in plan_.reuse:
        b = bufs.pop(i, None)
        if b is None:
            continue
        held[0] = b
        del b
        o = outs[j]
        if o is held[0] or not _private(held[0]):
            continue
        if np.shape(o) != held[0].shape or getattr(o, "dtype", None) != held[0].dtype:
            continue
        if type(o) is np.ndarray and np.may_share_memory(o, held[0]):
            continue
        np.copyto(held[0], o, casting="no")
        outs[j] = held[0]
    return outs
