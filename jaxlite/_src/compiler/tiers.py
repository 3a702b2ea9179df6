"""Tiered compilation for jit: tier 1 (generated NumPy, op by op) runs a new specialisation at
once; once it proves hot (``HOT_CALLS`` calls or ``HOT_SECONDS`` spent in it), tier 2 (fused
kernels, ``fusion.py``) is built on a background thread and swapped in atomically: the
program's ``fn`` attribute, which jit's call path reads on every call, is replaced by one
assignment. Calls made meanwhile, from any thread, keep running tier 1; the two tiers give
the same results (fusion keeps every op and its order).

``jaxlite_tier`` forces a tier: 1 never builds tier 2, 2 builds it at the first call.
"""
from __future__ import annotations

import contextlib
import logging
import threading
import time

from jaxlite._src.config import config
from jaxlite._src.core.fpe import quiet
from jaxlite._src.runtime import build_threads

__all__ = ["Program", "tier_setting", "HOT_CALLS", "HOT_SECONDS"]

HOT_CALLS = 8
HOT_SECONDS = 0.02
# calls of tier 1 taking this long on average wait for tier 2 while it is built (a long
# loop run again by tier 1 costs more than the build): the call that makes such a function
# hot returns once tier 2 is in (JAX's first call compiles: a warm-up call then timed calls
# see compiled code), and calls from other threads meanwhile wait too
WAIT_SECONDS = 1.0
WAIT_LIMIT = 600.0     # (seconds a call waits for the build at most)

logger = logging.getLogger("jaxlite._src.dispatch")


def _log(msg, *args):
    level = logging.WARNING if (config._flags["jax_log_compiles"].value or
                                config._flags["jax_explain_cache_misses"].value) \
        else logging.DEBUG
    if logger.isEnabledFor(level):
        logger.log(level, msg, *args)


def tier_setting():
    """The ``jaxlite_tier`` flag: "auto", 1 or 2 (anything else raises ValueError)."""
    t = config._flags["jaxlite_tier"].value
    if t in ("auto", 1, 2):
        return t
    if t in ("1", "2"):
        return int(t)
    raise ValueError(f"jaxlite_tier must be 'auto', 1 or 2, got {t!r}. Fix: "
                     "jax.config.update('jaxlite_tier', 'auto') (or set JAXLITE_TIER).")


def _worth_fusing(jaxpr):
    """A cheap test run at the first compile: two elementwise equations of one shape, one
    with a numba twin of its own (XLA's math: a NumPy emulation in tier 1) on arrays, a loop
    primitive that may compile whole, an equation asking for a kernel of its own
    (``numba_alone``), or a nested body (planned when tier 2 is built)."""
    from jaxlite._src.compiler.fusion import fusible
    from jaxlite._src.core.ir import jaxprs_in_params
    seen = set()
    for e in jaxpr.eqns:
        alone = getattr(e.primitive, "numba_alone", None)
        if getattr(e.primitive, "numba_loop", None) is not None or \
                any(True for _ in jaxprs_in_params(e.params)) or \
                alone is not None and alone(e):
            return True
        if fusible(e):
            s = e.outvars[0].aval.shape
            if s and (s in seen or getattr(e.primitive, "numba_scalar", None) is not None
                      and e.primitive.numba_scalar(e) is not None):
                return True
            seen.add(s)
    return False


class Program:
    """A jit specialisation's compiled code across tiers. ``fn`` is what runs; ``raw`` the
    same for a caller that has set NumPy's quiet floating-point state itself (jit's fast
    path), needed only when ``needs_quiet``; ``tier`` says which tier it is (1 or 2);
    ``tier1``/``tier2`` hold the ``CompiledFunction``s."""
    __slots__ = ("name", "optimized", "tier1", "tier2", "fn", "raw", "needs_quiet", "tier",
                 "calls", "spent", "state", "lock", "thread", "error", "exact_sums",
                 "__weakref__")

    def __init__(self, optimized, tier1, name, exact_sums=False):
        self.name = name
        self.exact_sums = exact_sums   # build tier 2 under passes.keep_sum_order too
        self.optimized = optimized
        self.tier1 = tier1
        self.tier2 = None
        self.tier = 1
        self.calls = 0
        self.spent = 0.0
        self.lock = threading.Lock()
        self.thread = None
        self.error = None
        self.needs_quiet = tier1.needs_quiet   # (the same jaxpr in both tiers)
        setting = tier_setting()
        if setting == 1 or not _worth_fusing(optimized.jaxpr):
            self.state = "final"
            self.install(tier1.raw, tier1.fn)
        elif setting == 2:
            self.state = "building"
            self.install(tier1.raw, tier1.fn)
            self._build()
        else:
            self.state = "cold"
            self.install(self._counting(tier1.raw))

    def install(self, raw, fn=None):
        """Make ``raw`` (a function run in the quiet floating-point state) what runs:
        ``raw`` first, then ``fn`` (default: ``raw`` in that state), each one assignment,
        so a concurrent call runs one tier or the other, whichever it reads."""
        self.raw = raw
        self.fn = fn if fn is not None else quiet(raw) if self.needs_quiet else raw

    def _counting(self, fn1):
        perf = time.perf_counter

        def tier1_counting(*args):
            t0 = perf()
            out = fn1(*args)
            self.spent += perf() - t0
            self.calls += 1
            if (self.calls >= HOT_CALLS or self.spent >= HOT_SECONDS) and self.state == "cold":
                # slow calls (a long loop): this call waits for the build, as JAX's first
                # call compiles, so the calls after it run tier 2 at once
                self.promote(wait=self.spent >= WAIT_SECONDS * self.calls)
            return out
        return tier1_counting

    def promote(self, wait=False):
        """Build tier 2 on a background thread (once); ``wait`` joins it (at most
        ``WAIT_LIMIT`` seconds)."""
        with self.lock:
            if self.state == "cold":
                self.state = "building"
                self.install(self.tier1.raw, self.tier1.fn)   # stop counting
                _log("jit(%s) is hot after %d calls (%.3f s): building tier 2 in the "
                     "background", self.name, self.calls, self.spent)
                self.thread = build_threads.start(self._build, f"jaxlite-tier2-{self.name}")
                if self.spent >= WAIT_SECONDS * max(self.calls, 1):
                    self.install(self._waiting(self.thread))
        t = self.thread
        if wait and t is not None:
            t.join(timeout=WAIT_LIMIT)

    def _waiting(self, thread):
        """Tier 1 behind a wait for the build of tier 2 on ``thread`` (then whichever tier
        the build installed runs)."""
        def wait_for_tier2(*args):
            thread.join(timeout=WAIT_LIMIT)
            if thread.is_alive():            # (a build this slow: tier 1 meanwhile)
                return self.tier1.raw(*args)
            if self.raw is wait_for_tier2:   # (the build installed nothing)
                self.install(self.tier1.raw, self.tier1.fn)
            return self.raw(*args)
        return wait_for_tier2

    def _build(self):
        from jaxlite._src.compiler.array_loops import earned
        from jaxlite._src.compiler.fusion import lower_tier2
        from jaxlite._src.compiler.passes import keep_sum_order
        t0 = time.perf_counter()
        try:
            with keep_sum_order() if self.exact_sums else contextlib.nullcontext(), \
                    earned(self.spent):
                compiled, n = lower_tier2(self.optimized, self.name)
        except Exception as e:   # tier 1 stays: it computes the same values
            self.error = e
            self.state = "final"
            logger.warning("jit(%s): building tier 2 failed (tier 1 keeps running): %s: %s",
                           self.name, type(e).__name__, e)
            return
        if compiled is not None:
            self.tier2 = compiled
            self.tier = 2
            self.install(self._guarded(compiled.raw))   # the atomic swap
            _log("jit(%s): tier 2 running (%d fused kernels, built in %.3f s)", self.name, n,
                 time.perf_counter() - t0)
        else:
            _log("jit(%s): tier 2 finds nothing to fuse; tier 1 stays", self.name)
            self.install(self.tier1.raw, self.tier1.fn)
        self.state = "final"

    def _guarded(self, fn2):
        """Tier 2 as run (both bare, run in the quiet floating-point state): should it fail
        where tier 1 does not (a kernel meeting an argument it was not built for), tier 1
        answers and takes over for good. Programs with effects run tier 2 unguarded (a retry
        would repeat their effects)."""
        from jaxlite._src.core.ir import has_effects
        if any(has_effects(e) for e in self.optimized.jaxpr.eqns):
            return fn2
        fn1 = self.tier1.raw

        def tier2(*args):
            try:
                return fn2(*args)
            except Exception as e:
                out = fn1(*args)   # raises too if the error is the program's own
                self.install(self.tier1.raw, self.tier1.fn)
                self.tier = 1
                logger.warning("jit(%s): tier 2 failed where tier 1 runs (%s: %s); back to "
                               "tier 1", self.name, type(e).__name__, e)
                return out
        return tier2

    def source(self):
        """Tier 1's source, followed by tier 2's when it is built."""
        text = self.tier1.source
        if self.tier2 is not None:
            text += ("\n# ---- tier 2 (fused kernels; same ops, same order, same results) "
                     "----\n" + self.tier2.source)
        return text
