"""``jax.fwd_and_bwd``: a function's forward and backward passes as two (jitted) functions."""
from __future__ import annotations

from jaxlite._src.api.ad import vjp
from jaxlite._src.api.jit import jit

__all__ = ["fwd_and_bwd"]


def fwd_and_bwd(fun, argnums, has_aux=False, jitted=True):
    """Split ``fun`` into a forward and a backward function: ``fwd(*args)`` returns
    ``(fun(*args), residuals)`` (plus ``aux`` with ``has_aux``) as ``jax.vjp`` does for the
    arguments in ``argnums``, and ``bwd(residuals, cotangent)`` returns their cotangents (one
    value for an int ``argnums``, a tuple for a sequence). With ``jitted`` (the default) both
    are jitted, so ``bwd`` compiles once and is reused across iterations."""
    if not callable(fun):
        raise TypeError(f"Expected a callable value, got {fun!r}")
    if isinstance(argnums, int):
        nums = (argnums,)
    else:
        nums = tuple(argnums)
        if not all(isinstance(i, int) for i in nums):
            raise TypeError(f"argnums must be an int or a sequence of ints, got {argnums!r}")

    def fwd(*args):
        n = len(args)
        try:
            idx = [i % n if -n <= i < n else None for i in nums]
        except ZeroDivisionError:
            idx = [None]
        if None in idx:
            raise ValueError(f"argnums {argnums} out of range for a function called with "
                             f"{n} positional arguments")

        def partial_fun(*dyn):
            full = list(args)
            for i, v in zip(idx, dyn):
                full[i] = v
            return fun(*full)
        return vjp(partial_fun, *[args[i] for i in idx], has_aux=has_aux)

    def bwd(f_vjp, outgrad):
        g = f_vjp(outgrad)
        return g[0] if isinstance(argnums, int) else g

    if jitted:
        return jit(fwd), jit(bwd)
    return fwd, bwd

