"""Buffer donation for ``jit`` (``donate_argnums`` / ``donate_argnames``), as JAX does on CPU.

* At ``jit`` time the donated arguments are resolved against the function's signature
  (numbers give names and names give numbers) and checked as JAX checks them.
* Per specialisation, ``plan`` matches each donated leaf to an output: first one of the same
  shape and dtype, then one of the same number of elements (as XLA, which may reuse a buffer
  of another shape). Donated leaves matching no output are not donated, and the compile warns
  "Some donated buffers were not usable" once, as JAX's lowering does.
* The tier-1 program of a donating specialisation is generated with the donated inputs
  marked as its own (``codegen.reuse_plan``): an elementwise op where a donated input dies
  writes its result into that input's buffer (``out=``), so a training step's update lands in
  the old parameters' memory without allocating. ``owned_value`` hands the program each
  donated buffer, or a private copy where something else still references it.
* Per call, ``check_call`` refuses a donated buffer that is also passed elsewhere in the same
  call (JAX's "Attempt to use a buffer that was previously donated" errors), and ``finish``
  deletes the donated arrays after the program ran. Outputs the program did not place in a
  donated buffer (tier 2's fused kernels allocate their own) are not copied there: the copy
  would cost a pass over memory and lower no peak.
"""
from __future__ import annotations

import inspect
import sys
import warnings

import numpy as np

from jaxlite._src import tree_util
from jaxlite._src.runtime.argnums import (
    as_index_tuple,
    infer_argnums_and_argnames,
    validate_argnames,
    validate_argnums,
)
from jaxlite._src.core.errors import JaxRuntimeError
from jaxlite._src.runtime.array import ArrayImpl

__all__ = ["resolve_donation", "donation_mask", "Plan", "plan", "check_call", "finish",
           "owned_value", "run_donating"]

_POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
_FAQ = "See an explanation at https://docs.jax.dev/en/latest/faq.html#buffer-donation."


def resolve_donation(sig, static_argnums, static_argnames, donate_argnums, donate_argnames):
    """(donate_argnums, donate_argnames) completed from each other through ``sig`` (when
    only one of them is given) and validated; raises JAX's ValueErrors for numbers past the
    positional parameters, names the function does not take, and donated static arguments."""
    if sig is None:
        nums = () if donate_argnums is None else as_index_tuple(donate_argnums)
        if donate_argnames is not None:
            raise ValueError("Getting the signature of the jitted function failed. Pass "
                             "donate_argnums instead of donate_argnames.")
        return tuple(sorted(set(nums))), ()
    nums, names = infer_argnums_and_argnames(sig, donate_argnums, donate_argnames)
    if not nums and not names:
        return (), ()
    validate_argnums(sig, nums, "donate_argnums")
    validate_argnames(sig, names, "donate_argnames")
    params = list(sig.parameters.values())
    positional = [p.name for p in params if p.kind in _POSITIONAL]
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
    """One specialisation's donation: ``donated``, the leaf indices whose arrays are
    deleted after a call (and whose buffers its tier-1 program may write into)."""
    __slots__ = ("donated",)

    def __init__(self, donated):
        self.donated = donated

    def owned(self, n):
        """Per input of ``n``: whether the program may write into it (donated)."""
        d = set(self.donated)
        return tuple(i in d for i in range(n))


def plan(mask, in_avals, out_avals):
    """The ``Plan`` of a specialisation; warns (once, at compile) about donated leaves that
    match no output, which are then neither deleted nor written."""
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
    return Plan(tuple(sorted(donated)))


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


def finish(leaves, outs, plan_):
    """Delete the donated arrays among ``leaves``; returns ``outs`` (the program's outputs).
    (An output the program did not write into a donated buffer is not copied there: that
    would cost a pass over memory and save nothing, the fresh output being allocated
    already.)"""
    for i in plan_.donated:
        x = leaves[i]
        if isinstance(x, ArrayImpl):
            x.delete()
    return outs


def owned_value(x, convert):
    """The NumPy value to pass for a donated leaf ``x``: its buffer when the program may
    write into it (owns its memory, writeable, C-contiguous, referenced only by ``x``),
    otherwise a private copy of ``convert(x)`` (a user's NumPy array is never written)."""
    if type(x) is ArrayImpl and x._sharding is None:
        v = x._value
        # refcount 3: x's slot, ``v`` here and getrefcount's argument
        # (flags.carray: C-contiguous, aligned and writeable)
        if type(v) is np.ndarray and v.base is None and sys.getrefcount(v) == 3 and \
                v.flags.carray:
            return v
        del v
    v = convert(x)
    return np.array(v, order="C", copy=True) if type(v) is np.ndarray and v.ndim else v


def run_donating(fn, vals, leaves, plan_):
    """Run ``fn(*vals)`` (``vals`` is cleared, so only the program's outputs reference the
    donated buffers), delete the donated arrays and return the outputs (``finish``). The
    donated arrays are deleted even when the program raises: it may have written into
    them."""
    try:
        outs = fn(*vals)
    except BaseException:
        vals.clear()
        finish(leaves, [], plan_)
        raise
    vals.clear()
    return finish(leaves, outs, plan_)
