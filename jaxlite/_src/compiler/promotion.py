"""Tier 1's run of a long loop handed over to the loop compiled whole while it runs (on-stack
replacement): ``promotion(eqn)`` gives the object a loop primitive's tier-1 runner reports
its time to (``LoopPromotion``; a scan: ``ChunkedPromotion``), which writes the loop's
kernel (``array_loops``), has it compiled once earned (``LazyKernel``) and then runs it
from the state the loop reached."""
from __future__ import annotations

import logging
import os

import numpy as np

from jaxlite._src.compiler.array_loops import array_loop_kernel, lazy_kernel
from jaxlite._src.compiler.codegen import _src_comment
from jaxlite._src.compiler.numba_kernels import kernel_cached
from jaxlite._src.compiler.tiers import _log, tier_setting
from jaxlite._src.core.ir import has_effects

__all__ = ["LoopPromotion", "ChunkedPromotion", "promotion"]


class LoopPromotion:
    """Tier 1's run of one loop equation handing its state to the loop compiled whole while
    it runs (on-stack replacement): a long loop on a first call (an ODE solve of millions
    of steps) would otherwise run every step in tier 1's Python until it ends, tier 2
    serving only later calls. The loop reports the seconds it spends (``charge``); once it
    has spent ``WRITE_AFTER`` the kernel's source is written (``array_loop_kernel``), and
    its ``LazyKernel`` compiles it in the background once earned; the loop then calls
    ``run`` on its current operands (a while loop: the constants and the carry) and returns
    what the kernel returns. Same results: the kernel computes tier 1's operations in tier
    1's order."""
    WRITE_AFTER = 0.25      # (seconds in the loop before its kernel's source is written)
    CHECK_EVERY = 0.05      # (seconds between the loop's reports)

    def __init__(self, eqn):
        self.eqn = eqn
        self.kernel = self.lazy = None
        self.spent = 0.0
        self.failed = False
        self._consts = None

    def charge(self, seconds):
        """Add ``seconds`` the loop spent in tier 1; the compiled loop's ``run`` once it is
        ready, else None."""
        lazy = self.lazy
        if lazy is not None:
            if lazy.fn is None:
                lazy.charge(seconds)
            return self._handing(seconds)
        if self.failed:
            return None
        self.spent += seconds
        if self.spent < self.WRITE_AFTER:
            return None
        from jaxlite._src.compiler.numba_kernels import numba_module
        try:
            kernel = array_loop_kernel(self.kernel_eqn()) if numba_module() is not None \
                else None
        except Exception as e:  # noqa: BLE001 - the loop stays tier 1's
            logging.getLogger("jaxlite").debug("tier 2: no kernel for the %s loop (%s)",
                                               self.eqn.primitive.name, e)
            kernel = None
        if kernel is None:
            self.failed = True
            return None
        self.kernel, self.lazy = kernel, lazy_kernel(kernel.source, self.eqn)
        if self.lazy.state == "cold" and kernel_cached(kernel.source):
            self.lazy.build()       # (on disk already: loading it takes milliseconds)
        else:
            self.lazy.charge(self.spent)
        return self._handing(0.0)

    def _handing(self, seconds):
        """``run`` (logged as a compilation, see ``jax_log_compiles``) once the compiled
        loop is ready, else None."""
        self.spent += seconds
        if self.lazy.fn is None:
            return None
        _log("tier 2: the %s loop%s ran %.2f s as tier 1's; it goes on compiled whole",
             self.eqn.primitive.name, _src_comment(self.eqn).replace("  #", ""), self.spent)
        return self.run

    def kernel_eqn(self):
        """The equation the kernel computes: the loop itself."""
        return self.eqn

    def run(self, *args):
        """The compiled loop on the kernel equation's operands ``args`` (the state reached
        so far)."""
        k = self.kernel
        eqn = k.eqn
        if self._consts is None:
            self._consts = [np.array(c, copy=True).ravel() for c, _ in k.consts]
        call = [np.ravel(a) if v.aval.shape else np.asarray(a, v.aval.dtype)[()]
                for a, v in zip(args, eqn.invars)]
        outs = [np.empty(max(v.aval.size, 1), v.aval.dtype) for v in eqn.outvars]
        self.lazy.fn(k.ptrs, k.kid, *call, *self._consts, *outs)
        return tuple(o[:v.aval.size].reshape(v.aval.shape)
                     for o, v in zip(outs, eqn.outvars))


class ChunkedPromotion(LoopPromotion):
    """``LoopPromotion`` of a loop over a fixed number of steps whose primitive can state
    the same loop over fewer (``chunk_eqn``: a scan over ``CHUNK`` steps): its kernel is
    that one source whatever the loop's length or the step reached (compiled once, kept on
    disk), called on successive chunks from the step reached; the steps left after the last
    whole chunk run as tier 1's."""
    CHUNK = 1024
    _chunked = None

    def _chunk_pair(self):
        if self._chunked is None:   # (the primitive says how many steps a chunk has)
            self._chunked = self.eqn.primitive.chunk_eqn(self.eqn, self.CHUNK)
        return self._chunked

    @property
    def chunk(self):
        """Steps per kernel call: ``CHUNK``, or fewer when the loop is shorter."""
        return self._chunk_pair()[1]

    def kernel_eqn(self):
        """The loop over ``chunk`` steps."""
        return self._chunk_pair()[0]


def promotion(eqn):
    """A ``LoopPromotion`` for a loop equation tier 1 runs, or None where tier 2 cannot take
    it over (``jaxlite_tier`` 1, numba turned off, effects, no ``numba_loop`` rule; whether
    numba is installed is asked only once the loop has run long: importing it costs ~0.2 s)."""
    if getattr(eqn.primitive, "numba_loop", None) is None or has_effects(eqn) or \
            not eqn.outvars or tier_setting() == 1 or \
            os.environ.get("JAXLITE_NUMBA", "1") == "0":
        return None
    chunked = getattr(eqn.primitive, "chunk_eqn", None) is not None
    return (ChunkedPromotion if chunked else LoopPromotion)(eqn)
