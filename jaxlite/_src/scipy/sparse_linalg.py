"""jax.scipy.sparse.linalg: the Krylov solvers cg, gmres and bicgstab.

Written here from the textbook algorithms (Saad, *Iterative Methods for Sparse Linear
Systems*, 2nd ed.: preconditioned CG, Alg. 9.1; restarted GMRES with Arnoldi/modified
Gram-Schmidt and with Givens rotations, Alg. 6.9/6.11 and section 9.3.1; BiCGSTAB, Alg. 7.7
with the preconditioning of Barrett et al., *Templates*, 1994). Each solver is a
``lax.while_loop`` over pytrees of arrays and is wrapped in ``custom_linear_solve`` so it
is differentiated implicitly (``dx = A^{-1}(db - dA x)``), in forward and reverse mode, as
JAX does; everything runs under ``jit`` and ``vmap``.

``A`` and ``M`` may be square matrices (applied as ``A @ x``) or functions of a pytree shaped
like ``b``. Convergence: ``norm(residual) <= max(tol * norm(b), atol)``.
"""
from __future__ import annotations

from functools import partial

import numpy as np

from jaxlite._src.lax import namespace as lax
from jaxlite._src.numpy import namespace as jnp
from jaxlite._src.core import dtypes
from jaxlite._src.scipy.linear_solve import custom_linear_solve
from jaxlite._src.tree_util import tree_flatten, tree_leaves, tree_map, tree_structure, \
    tree_unflatten

__all__ = ["cg", "gmres", "bicgstab"]


# ----------------------------------------------------------------------------- tree algebra
def _add(a, b):
    return tree_map(lambda u, v: u + v, a, b)


def _sub(a, b):
    return tree_map(lambda u, v: u - v, a, b)


def _axpy(alpha, x, y):
    """``alpha * x + y`` leaf by leaf (``alpha`` a scalar)."""
    return tree_map(lambda u, v: (alpha * u).astype(v.dtype) + v, x, y)


def _scale(alpha, x):
    return tree_map(lambda u: (alpha * u).astype(u.dtype), x)


def _vdot(a, b):
    """``sum(conj(a) * b)`` over all leaves."""
    return sum(jnp.vdot(u, v) for u, v in zip(tree_leaves(a), tree_leaves(b)))


def _norm2(a):
    """Squared 2-norm over all leaves (a real scalar)."""
    return sum(jnp.real(jnp.vdot(u, u)) for u in tree_leaves(a))


def _where(c, a, b):
    return tree_map(lambda u, v: jnp.where(c, u, v), a, b)


# ----------------------------------------------------------------------------- arguments
def _matmul_highest(a, x):
    return jnp.matmul(a, x, precision=lax.Precision.HIGHEST)


def _as_operator(f):
    if f is None:
        return lambda x: x
    if callable(f) and not hasattr(f, "shape"):
        return f
    if hasattr(f, "shape") or hasattr(f, "__matmul__"):
        a = jnp.asarray(f) if hasattr(f, "dtype") else f
        shape = getattr(a, "shape", None)
        if shape is not None and (len(shape) != 2 or shape[0] != shape[1]):
            raise ValueError(f"linear operator must be a square matrix, but has shape: "
                             f"{tuple(shape)}")
        return partial(_matmul_highest, a) if shape is not None else (lambda x: a @ x)
    raise TypeError(f"linear operator must be either a function or ndarray: {f}")


def _prepare(name, A, b, x0, M):
    b = tree_map(jnp.asarray, b)
    for leaf in tree_leaves(b):
        if not dtypes.issubdtype(leaf.dtype, np.inexact):
            raise TypeError(f"{name}: b must hold floating-point or complex arrays, got "
                            f"{leaf.dtype.name}; cast it, e.g. b.astype(jnp.float32).")
    if x0 is None:
        x0 = tree_map(jnp.zeros_like, b)
    else:
        x0 = tree_map(jnp.asarray, x0)
    tb, tx = tree_structure(b), tree_structure(x0)
    if tb != tx:
        raise ValueError(f"x0 and b must have matching tree structure: {tx} vs {tb}")
    sb = [tuple(v.shape) for v in tree_leaves(b)]
    sx = [tuple(v.shape) for v in tree_leaves(x0)]
    if sb != sx:
        raise ValueError(f"arrays in x0 and b must have matching shapes: {sx} vs {sb}")
    x0 = tree_map(lambda u, v: u.astype(v.dtype), x0, b)
    size = sum(int(np.prod(v.shape)) for v in tree_leaves(b))
    return _as_operator(A), b, x0, _as_operator(M), size


def _isolve(name, solver, A, b, x0, tol, atol, maxiter, M, symmetric, **kw):
    matvec, b, x0, precond, size = _prepare(name, A, b, x0, M)
    if maxiter is None:
        maxiter = 10 * size
    solve = partial(solver, x0=x0, tol=tol, atol=atol, maxiter=maxiter, M=precond, **kw)
    if symmetric:
        return custom_linear_solve(matvec, b, solve, symmetric=True)
    # the transposed system is solved by the same method with the transposed operator
    # (and the preconditioner left as given, as JAX does)
    return custom_linear_solve(matvec, b, solve, transpose_solve=solve)


def _tolerance2(b, tol, atol):
    """The squared residual norm at which to stop: ``max(tol * |b|, atol)**2``."""
    return jnp.maximum(jnp.square(tol) * _norm2(b), jnp.square(atol))


# ----------------------------------------------------------------------------- CG
def _cg_solve(A, b, x0, *, tol, atol, maxiter, M):
    stop2 = _tolerance2(b, tol, atol)
    r = _sub(b, A(x0))
    z = M(r)
    rz = _vdot(r, z)
    state = (x0, r, z, rz, jnp.asarray(0))

    def cond(s):
        _, r, _, _, k = s
        return (_norm2(r) > stop2) & (k < maxiter)

    def body(s):
        x, r, p, rz, k = s
        q = A(p)
        alpha = rz / _vdot(p, q)
        x = _axpy(alpha, p, x)
        r = _axpy(-alpha, q, r)
        z = M(r)
        rz_new = _vdot(r, z)
        p = _axpy(rz_new / rz, p, z)
        return x, r, p, rz_new, k + 1

    return lax.while_loop(cond, body, state)[0]


def cg(A, b, x0=None, *, tol=1e-5, atol=0.0, maxiter=None, M=None):
    """Use Conjugate Gradient iteration to solve ``Ax = b``.

    ``A`` (a matrix or a function ``x -> A x`` on pytrees shaped like ``b``) must be
    Hermitian positive definite. Stops when ``norm(r) <= max(tol * norm(b), atol)`` or after
    ``maxiter`` (default ``10 * size(b)``) iterations; ``M`` is a preconditioner
    approximating ``A^{-1}``. Derivatives come from implicit differentiation (another CG
    solve), not from the iterations.

    Returns:
      ``(x, None)``; ``x`` has the structure of ``b``.
    """
    x = _isolve("cg", _cg_solve, A, b, x0, tol, atol, maxiter, M, symmetric=True)
    return x, None


# ----------------------------------------------------------------------------- BiCGSTAB
def _bicgstab_solve(A, b, x0, *, tol, atol, maxiter, M):
    stop2 = _tolerance2(b, tol, atol)
    r0 = _sub(b, A(x0))
    dt = jnp.result_type(*tree_leaves(b))
    one = jnp.ones((), dt)
    zeros = tree_map(jnp.zeros_like, b)
    state = (x0, r0, zeros, zeros, one, one, one, jnp.asarray(0))

    def cond(s):
        x, r, _, _, rho, alpha, omega, k = s
        return (_norm2(r) > stop2) & (k < maxiter) & (rho != 0) & (omega != 0)

    def body(s):
        x, r, p, v, rho_prev, alpha, omega, k = s
        rho = _vdot(r0, r)
        beta = (rho / rho_prev) * (alpha / omega)
        p = _add(r, _scale(beta, _axpy(-omega, v, p)))
        phat = M(p)
        v = A(phat)
        alpha = rho / _vdot(r0, v)
        s_ = _axpy(-alpha, v, r)
        early = _norm2(s_) <= stop2
        shat = M(s_)
        t = A(shat)
        tt = _vdot(t, t)
        omega = jnp.where(early, one, _vdot(t, s_) / jnp.where(tt == 0, one, tt))
        x_half = _axpy(alpha, phat, x)
        x = _where(early, x_half, _axpy(omega, shat, x_half))
        r = _where(early, s_, _axpy(-omega, t, s_))
        return x, r, p, v, rho, alpha, omega, k + 1

    return lax.while_loop(cond, body, state)[0]


def bicgstab(A, b, x0=None, *, tol=1e-5, atol=0.0, maxiter=None, M=None):
    """Use Bi-Conjugate Gradient Stable iteration to solve ``Ax = b``.

    ``A`` need not be symmetric. Stops when ``norm(r) <= max(tol * norm(b), atol)`` or after
    ``maxiter`` (default ``10 * size(b)``) iterations; ``M`` is a preconditioner
    approximating ``A^{-1}``. Derivatives come from implicit differentiation.

    Returns:
      ``(x, None)``; ``x`` has the structure of ``b``.
    """
    x = _isolve("bicgstab", _bicgstab_solve, A, b, x0, tol, atol, maxiter, M,
                symmetric=False)
    return x, None


# ----------------------------------------------------------------------------- GMRES
def _ravel(tree):
    leaves, td = tree_flatten(tree)
    shapes = [v.shape for v in leaves]
    sizes = [int(np.prod(s)) for s in shapes]
    dt = jnp.result_type(*leaves)
    flat = jnp.concatenate([jnp.ravel(v).astype(dt) for v in leaves]) if len(leaves) > 1 \
        else jnp.ravel(leaves[0]).astype(dt)
    dts = [v.dtype for v in leaves]

    def unravel(vec):
        out, i = [], 0
        for s, n, d in zip(shapes, sizes, dts):
            out.append(vec[i:i + n].reshape(s).astype(d))
            i += n
        return tree_unflatten(td, out)
    return flat, unravel


def _safe_div(a, b):
    return a / jnp.where(b == 0, jnp.ones_like(b), b)


def _arnoldi_step(op, V, H, j):
    """Column ``j`` of the Arnoldi process: orthogonalise ``op(V[j])`` against ``V[:j+1]``
    by classical Gram-Schmidt applied twice ("twice is enough": as accurate as modified
    Gram-Schmidt, and two matrix-vector products instead of a loop), store the
    coefficients in ``H[:, j]`` and the normalised vector in ``V[j+1]``. Rows of ``V``
    past ``j`` are zero, so they contribute nothing to the projections."""
    w = op(V[j])
    m = V.shape[0]
    live = (jnp.arange(m) <= j)[:, None]
    Vj = jnp.where(live, V, 0)
    h = jnp.zeros((m,), V.dtype)
    for _ in range(2):
        coef = jnp.conj(Vj) @ w
        w = w - coef @ Vj
        h = h + coef
    nrm = jnp.sqrt(jnp.real(jnp.vdot(w, w)))
    h = h.at[j + 1].set(nrm.astype(V.dtype))
    V = V.at[j + 1].set(_safe_div(w, nrm.astype(V.dtype)))
    return V, H.at[:, j].set(h), nrm


def _givens(a, b):
    """(c, s) with ``[[c, s], [-conj(s), c]] @ [a, b] = [r, 0]`` (c real)."""
    absa = jnp.abs(a)
    nrm = jnp.sqrt(absa ** 2 + jnp.abs(b) ** 2)
    nrm_s = jnp.where(nrm == 0, 1.0, nrm)
    phase = jnp.where(absa == 0, jnp.ones_like(a), a / jnp.where(absa == 0, 1.0, absa))
    c = jnp.where(nrm == 0, 1.0, absa / nrm_s)
    s = jnp.where(nrm == 0, 0.0, phase * jnp.conj(b) / nrm_s)
    return c.astype(a.dtype), s.astype(a.dtype)


def _gmres_cycle(op, r, restart, stop, incremental):
    """One GMRES cycle from the (preconditioned) residual ``r``: the Krylov basis V, the
    coefficients y of the update ``V[:restart].T @ y``, and the residual-norm estimate."""
    n = r.shape[0]
    dt = r.dtype
    beta = jnp.sqrt(jnp.real(jnp.vdot(r, r)))
    V = jnp.zeros((restart + 1, n), dt).at[0].set(_safe_div(r, beta.astype(dt)))
    H = jnp.zeros((restart + 1, restart), dt)
    g = jnp.zeros((restart + 1,), dt).at[0].set(beta.astype(dt))
    if not incremental:
        def step(j, c):
            V, H = c
            V, H, _ = _arnoldi_step(op, V, H, j)
            return V, H
        V, H = lax.fori_loop(0, restart, step, (V, H))
        y = jnp.linalg.lstsq(H, g)[0]
        res = jnp.sqrt(jnp.real(jnp.vdot(g - H @ y, g - H @ y)))
        return V, y, res

    # incremental: QR of H by Givens rotations as columns arrive, with the product of the
    # rotations kept as the unitary matrix Qh (so a new column is rotated by one product);
    # g = beta Qh e1 and |g[j+1]| is the residual norm
    def cond(c):
        _, _, _, j, res = c
        return (j < restart) & (res > stop)

    def body(c):
        V, R, Qh, j, _ = c
        V, H, _ = _arnoldi_step(op, V, jnp.zeros_like(R), j)
        col = Qh @ H[:, j]
        c_j, s_j = _givens(col[j], col[j + 1])
        row_j, row_n = Qh[j], Qh[j + 1]
        Qh = Qh.at[j].set(c_j * row_j + s_j * row_n).at[j + 1].set(
            -jnp.conj(s_j) * row_j + c_j * row_n)
        col = col.at[j].set(c_j * col[j] + s_j * col[j + 1]).at[j + 1].set(0.0)
        return V, R.at[:, j].set(col), Qh, j + 1, beta * jnp.abs(Qh[j + 1, 0])

    V, R, Qh, j, res = lax.while_loop(
        cond, body, (V, H, jnp.eye(restart + 1, dtype=dt), jnp.asarray(0), beta))
    g = beta.astype(dt) * Qh[:, 0]
    # back substitution on the leading j x j triangle (the rest is padded with identity)
    idx = jnp.arange(restart)
    active = idx < j
    Rt = R[:restart]
    Rt = jnp.where(active[:, None] & active[None, :], Rt, jnp.eye(restart, dtype=dt))
    Rt = jnp.where(jnp.eye(restart, dtype=bool) & (Rt == 0), jnp.ones_like(Rt), Rt)
    gt = jnp.where(active, g[:restart], 0.0)
    y = _solve_upper(Rt, gt)
    return V, y, res


def _solve_upper(R, g):
    """Solve the upper-triangular system ``R y = g``."""
    from jaxlite._src.scipy.linalg import solve_triangular
    return solve_triangular(R, g, lower=False)


def _gmres_solve(A, b, x0, *, tol, atol, maxiter, M, restart, solve_method):
    b_vec, unravel = _ravel(b)
    x_vec, _ = _ravel(x0)
    n = b_vec.shape[0]
    restart = int(min(restart, n))

    def op(v):
        return _ravel(M(A(unravel(v))))[0]

    def resid(x):
        return _ravel(M(_sub(b, A(unravel(x)))))[0]

    # JAX measures the preconditioned residual against the preconditioned b
    mb = _ravel(M(b))[0]
    stop = jnp.sqrt(jnp.maximum(jnp.square(tol) * jnp.real(jnp.vdot(mb, mb)),
                                jnp.square(atol)))
    incremental = solve_method == "incremental"
    r0 = resid(x_vec)
    state = (x_vec, r0, jnp.sqrt(jnp.real(jnp.vdot(r0, r0))), jnp.asarray(0))

    def cond(s):
        _, _, res, k = s
        return (res > stop) & (k < maxiter)

    def body(s):
        x, r, _, k = s
        V, y, _ = _gmres_cycle(op, r, restart, stop, incremental)
        x = x + y @ V[:restart]
        r = resid(x)
        return x, r, jnp.sqrt(jnp.real(jnp.vdot(r, r))), k + 1

    x = lax.while_loop(cond, body, state)[0]
    return unravel(x)


def gmres(A, b, x0=None, *, tol=1e-5, atol=0.0, restart=20, maxiter=None, M=None,
          solve_method="batched"):
    """GMRES solves the linear system ``A x = b`` for ``x``, given ``A`` and ``b``.

    Restarted GMRES: each of at most ``maxiter`` cycles builds a Krylov space of dimension
    ``restart`` for the left-preconditioned operator ``M A`` and takes the least-squares
    update in it. ``solve_method='incremental'`` keeps a QR factorisation of the Hessenberg
    matrix by Givens rotations and stops a cycle as soon as the residual estimate is below
    tolerance; ``'batched'`` solves the least-squares problem at the end of each cycle.
    Stops when ``norm(M r) <= max(tol * norm(M b), atol)``. Derivatives come from implicit
    differentiation.

    Returns:
      ``(x, info)`` with ``info = 0``; ``x`` has the structure of ``b``.
    """
    if solve_method not in ("incremental", "batched"):
        raise ValueError(f"invalid solve_method {solve_method}, must be either "
                         f"'incremental' or 'batched'")
    x = _isolve("gmres", _gmres_solve, A, b, x0, tol, atol, maxiter, M, symmetric=False,
                restart=restart, solve_method=solve_method)
    return x, jnp.asarray(0)
