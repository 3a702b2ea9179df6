"""jax.scipy.spatial.transform: ``Rotation`` and ``Slerp``.

A rotation is stored as a unit quaternion ``[x, y, z, w]`` (scalar last, as SciPy), one per
leading index; composition is the Hamilton product. The conversions are the classical ones:

- rotation matrix from a quaternion, and back by Shepperd's method (build the quaternion
  from the largest of ``w^2, x^2, y^2, z^2``, read off the matrix's trace and diagonal, which
  keeps the division well conditioned), normalising the result;
- rotation vector ``theta * axis`` and modified Rodrigues parameters ``axis * tan(theta/4)``
  (series expansions near theta = 0);
- Euler angles in any of the 12 sequences, extrinsic (lowercase) or intrinsic (uppercase),
  from products of elementary rotations, and back with the quaternion-based formulas of
  Bernardes & Viollet, "Quaternion to Euler angles conversion: a direct, general and
  computationally efficient method", PLoS ONE 17(11), 2022; at gimbal lock the third angle
  is set to zero, as SciPy does;
- the mean of rotations as the principal eigenvector of ``sum_i w_i q_i q_i^T`` (Markley et
  al., "Averaging quaternions", 2007).

``Rotation`` and ``Slerp`` are NamedTuples and pytrees, so they pass through ``jit``,
``vmap`` and ``grad``.
"""
from __future__ import annotations

from typing import NamedTuple, Sequence

import numpy as np

from jaxlite._src.numpy import namespace as jnp
from jaxlite._src.tree_util import register_pytree_node

__all__ = ["Rotation", "Slerp"]


# ----------------------------------------------------------------------------- quaternions
def _check_arraylike(name, x):
    if isinstance(x, (list, tuple)):
        raise TypeError(f"{name} requires ndarray or scalar arguments, got {type(x)} at "
                        f"position 0.")
    return jnp.asarray(x)


def _float(x):
    x = jnp.asarray(x)
    if not jnp.issubdtype(x.dtype, jnp.inexact):
        x = x.astype(jnp.result_type(float))
    return x


def _float_rows(fname, x, label, n, end=""):
    """``x`` as a float array of ``n``-vectors (shape (n,) or (N, n)), or the ValueError
    naming ``label`` (``end`` closes the message as JAX's does)."""
    x = _float(_check_arraylike(fname, x))
    if x.shape[-1:] != (n,):
        raise ValueError(f"Expected `{label}` to have shape ({n},) or (N, {n}), got "
                         f"{tuple(x.shape)}{end}")
    return x


def _qmul(p, q):
    """Hamilton product ``p q`` of scalar-last quaternions (broadcasting)."""
    pv, pw = p[..., :3], p[..., 3:]
    qv, qw = q[..., :3], q[..., 3:]
    v = pw * qv + qw * pv + jnp.cross(pv, qv)
    w = pw * qw - jnp.sum(pv * qv, axis=-1, keepdims=True)
    return jnp.concatenate([v, w], axis=-1)


def _normalize(q):
    return q / jnp.linalg.norm(q, axis=-1, keepdims=True)


def _quat_to_matrix(q):
    x, y, z, w = q[..., 0], q[..., 1], q[..., 2], q[..., 3]
    xx, yy, zz, ww = x * x, y * y, z * z, w * w
    xy, xz, xw = x * y, x * z, x * w
    yz, yw, zw = y * z, y * w, z * w
    rows = [
        [ww + xx - yy - zz, 2 * (xy - zw), 2 * (xz + yw)],
        [2 * (xy + zw), ww - xx + yy - zz, 2 * (yz - xw)],
        [2 * (xz - yw), 2 * (yz + xw), ww - xx - yy + zz],
    ]
    return jnp.stack([jnp.stack(r, axis=-1) for r in rows], axis=-2)


def _matrix_to_quat(m):
    """Shepperd's method: four candidate quaternions, each exact for an orthogonal matrix;
    take the one whose largest component is best determined, then normalise."""
    m00, m11, m22 = m[..., 0, 0], m[..., 1, 1], m[..., 2, 2]
    tr = m00 + m11 + m22
    # candidate built around component i (x, y, z) or around w
    cand_x = jnp.stack([1 + 2 * m00 - tr, m[..., 1, 0] + m[..., 0, 1],
                        m[..., 2, 0] + m[..., 0, 2], m[..., 2, 1] - m[..., 1, 2]], -1)
    cand_y = jnp.stack([m[..., 0, 1] + m[..., 1, 0], 1 + 2 * m11 - tr,
                        m[..., 2, 1] + m[..., 1, 2], m[..., 0, 2] - m[..., 2, 0]], -1)
    cand_z = jnp.stack([m[..., 0, 2] + m[..., 2, 0], m[..., 1, 2] + m[..., 2, 1],
                        1 + 2 * m22 - tr, m[..., 1, 0] - m[..., 0, 1]], -1)
    cand_w = jnp.stack([m[..., 2, 1] - m[..., 1, 2], m[..., 0, 2] - m[..., 2, 0],
                        m[..., 1, 0] - m[..., 0, 1], 1 + tr], -1)
    which = jnp.argmax(jnp.stack([m00, m11, m22, tr], -1), axis=-1)[..., None]
    q = jnp.where(which == 0, cand_x, jnp.where(which == 1, cand_y,
                                                jnp.where(which == 2, cand_z, cand_w)))
    return _normalize(q)


def _rotvec_to_quat(rv):
    angle = jnp.linalg.norm(rv, axis=-1, keepdims=True)
    a2 = angle * angle
    small = angle <= 1e-3
    safe = jnp.where(small, 1.0, angle)
    scale = jnp.where(small, 0.5 - a2 / 48 + a2 * a2 / 3840, jnp.sin(safe / 2) / safe)
    return jnp.concatenate([scale * rv, jnp.cos(angle / 2)], axis=-1)


def _quat_to_rotvec(q):
    q = jnp.where(q[..., 3:] < 0, -q, q)          # the representative with w >= 0
    v = q[..., :3]
    s = jnp.linalg.norm(v, axis=-1, keepdims=True)
    angle = 2 * jnp.arctan2(s, q[..., 3:])
    a2 = angle * angle
    small = angle <= 1e-3
    safe = jnp.where(small, 1.0, angle)
    scale = jnp.where(small, 2 + a2 / 12 + 7 * a2 * a2 / 2880, safe / jnp.sin(safe / 2))
    return scale * v


def _elementary(axis, angle):
    """Quaternions of rotations by ``angle`` (any shape) about coordinate axis ``axis``."""
    half = angle / 2
    s, c = jnp.sin(half), jnp.cos(half)
    z = jnp.zeros_like(s)
    parts = [z, z, z, c]
    parts[axis] = s
    return jnp.stack(parts, axis=-1)


def _check_seq(seq):
    if not isinstance(seq, str) or not 1 <= len(seq) <= 3:
        raise ValueError(f"Expected axis specification to be a non-empty string of upto 3 "
                         f"characters, got {seq}")
    intrinsic = set(seq) <= set("XYZ")
    extrinsic = set(seq) <= set("xyz")
    if not (intrinsic or extrinsic):
        raise ValueError(f"Expected axes from `seq` to be from ['x', 'y', 'z'] or "
                         f"['X', 'Y', 'Z'], got {seq}")
    if any(a == b for a, b in zip(seq, seq[1:])):
        raise ValueError(f"Expected consecutive axes to be different, got {seq}")
    return ["xyz".index(a) for a in seq.lower()], intrinsic


def _euler_from_quat(q, axes, intrinsic):
    """Euler angles of the extrinsic sequence ``axes`` (or the intrinsic one, by reversal),
    after Bernardes & Viollet (2022)."""
    if intrinsic:
        axes = axes[::-1]
    i, j, k = axes
    symmetric = i == k
    if symmetric:
        k = 3 - i - j
    sign = (i - j) * (j - k) * (k - i) // 2     # parity of the permutation (i, j, k)
    w = q[..., 3]
    qi, qj, qk = q[..., i], q[..., j], q[..., k] * sign
    if symmetric:
        a, b, c, d = w, qi, qj, qk
    else:
        a, b, c, d = w - qj, qi + qk, qj + w, qk - qi
    middle = 2 * jnp.arctan2(jnp.hypot(c, d), jnp.hypot(a, b))
    half_sum = jnp.arctan2(b, a)
    half_diff = jnp.arctan2(d, c)
    eps = 1e-7 if q.dtype == np.float64 else 1e-3
    at_zero = jnp.abs(middle) <= eps
    at_pi = jnp.abs(middle - np.pi) <= eps
    # general case; at gimbal lock the last angle (in time order) is zero
    first = half_sum - half_diff
    third = half_sum + half_diff
    lock = at_zero | at_pi
    locked_first = jnp.where(at_zero, 2 * half_sum, 2 * half_diff * (-1 if not intrinsic
                                                                    else 1))
    if intrinsic:
        # reversed sequence: the angle that is last in time is the first one computed
        locked_third = jnp.where(at_zero, 2 * half_sum, 2 * half_diff)
        first = jnp.where(lock, 0.0, first)
        third = jnp.where(lock, locked_third, third)
    else:
        first = jnp.where(lock, locked_first, first)
        third = jnp.where(lock, 0.0, third)
    if not symmetric:
        third = third * sign
        middle = middle - np.pi / 2
    angles = jnp.stack([first, middle, third], axis=-1)
    angles = (angles + np.pi) % (2 * np.pi) - np.pi
    if intrinsic:
        angles = angles[..., ::-1]
    return angles


# ----------------------------------------------------------------------------- Rotation
class Rotation(NamedTuple):
    """Rotation in 3 dimensions (``jax.scipy.spatial.transform.Rotation``).

    Build one with a ``from_*`` constructor; ``quat`` holds unit quaternions
    ``[x, y, z, w]`` of shape ``(4,)`` (a single rotation) or ``(N, 4)``.
    """
    quat: jnp.ndarray

    @classmethod
    def concatenate(cls, rotations: Sequence):
        """Concatenate a sequence of ``Rotation`` objects into one."""
        return cls(jnp.concatenate([r.quat for r in rotations]))

    @classmethod
    def from_euler(cls, seq: str, angles, degrees: bool = False):
        """Rotations from Euler angles: ``seq`` of up to 3 axes, lowercase for extrinsic
        (fixed frame) or uppercase for intrinsic (rotating frame) rotations; ``angles`` of
        shape ``(..., len(seq))`` (a scalar for one axis)."""
        axes, intrinsic = _check_seq(seq)
        angles = jnp.atleast_1d(_float(_check_arraylike("atleast_1d", angles)))
        if angles.shape[-1] != len(seq):
            raise ValueError(f"Expected `angles` to have {len(seq)} values per rotation for "
                             f"seq {seq!r}, got shape {tuple(angles.shape)}.")
        if degrees:
            angles = jnp.deg2rad(angles)
        q = None
        for n, ax in enumerate(axes):
            e = _elementary(ax, angles[..., n])
            # extrinsic: each new rotation acts after the previous ones (left product)
            q = e if q is None else (_qmul(q, e) if intrinsic else _qmul(e, q))
        return cls(q)

    @classmethod
    def from_matrix(cls, matrix):
        """Rotations from rotation matrices of shape ``(3, 3)`` or ``(N, 3, 3)`` (matrices
        that are not exactly orthogonal give the nearest-by-construction quaternion)."""
        m = _float(_check_arraylike("from_matrix", matrix))
        if m.ndim < 2 or m.shape[-2:] != (3, 3):
            raise ValueError(f"Expected `matrix` to have shape (3, 3) or (N, 3, 3), got "
                             f"{tuple(m.shape)}")
        return cls(_matrix_to_quat(m))

    @classmethod
    def from_mrp(cls, mrp):
        """Rotations from Modified Rodrigues Parameters ``axis * tan(angle / 4)``."""
        p = _float_rows("from_mrp", mrp, "mrp", 3)
        p2 = jnp.sum(p * p, axis=-1, keepdims=True)
        return cls(jnp.concatenate([2 * p, 1 - p2], axis=-1) / (1 + p2))

    @classmethod
    def from_quat(cls, quat):
        """Rotations from quaternions ``[x, y, z, w]`` (normalised here)."""
        q = _float_rows("from_quat", quat, "quat", 4, ".")
        return cls(_normalize(q))

    @classmethod
    def from_rotvec(cls, rotvec, degrees: bool = False):
        """Rotations from rotation vectors ``angle * axis`` (radians unless ``degrees``)."""
        rv = _float_rows("from_rotvec", rotvec, "rot_vec", 3)
        if degrees:
            rv = jnp.deg2rad(rv)
        return cls(_rotvec_to_quat(rv))

    @classmethod
    def identity(cls, num: int | None = None, dtype=float):
        """The identity rotation (JAX supports only ``num=None``)."""
        if num is not None:
            raise AssertionError("Rotation.identity supports only num=None (as in JAX); "
                                 "stack with Rotation.from_quat for several identities.")
        return cls(jnp.array([0, 0, 0, 1], dtype=dtype))

    @classmethod
    def random(cls, random_key, num: int | None = None):
        """Not implemented in JAX 0.10.2, nor here."""
        raise NotImplementedError(
            "Rotation.random is not implemented (as in JAX); draw normal 4-vectors with "
            "jax.random.normal(key, (num, 4)) and pass them to Rotation.from_quat.")

    def __getitem__(self, indexer):
        """The rotation(s) at ``indexer``."""
        if self.single:
            raise TypeError("Single rotation is not subscriptable.")
        return Rotation(self.quat[indexer])

    def __len__(self):
        """The number of rotations."""
        if self.single:
            raise TypeError("Single rotation has no len().")
        return self.quat.shape[0]

    def __mul__(self, other) -> "Rotation":
        """Composition: ``(p * q).apply(v) == p.apply(q.apply(v))``."""
        a, b = self.quat.shape[:-1], other.quat.shape[:-1]
        try:
            np.broadcast_shapes(a, b)
        except ValueError:
            raise ValueError(f"Incompatible shapes for broadcasting: shapes=[{a}, {b}]") \
                from None
        return Rotation(_qmul(self.quat, other.quat))

    def apply(self, vectors, inverse: bool = False):
        """Rotate ``vectors`` (shape ``(3,)`` or ``(N, 3)``, broadcast against the
        rotations); ``inverse`` applies the inverse rotations."""
        v = _float_rows("apply", vectors, "vectors", 3)
        m = self.as_matrix()
        if inverse:
            m = jnp.swapaxes(m, -1, -2)
        return jnp.matmul(m, v[..., None])[..., 0]

    def as_euler(self, seq: str, degrees: bool = False):
        """Euler angles of the sequence ``seq`` (see ``from_euler``); the middle angle lies
        in ``[0, pi]`` (symmetric sequences) or ``[-pi/2, pi/2]``, the others in
        ``[-pi, pi]``."""
        if not isinstance(seq, str) or len(seq) != 3:
            raise ValueError(f"Expected 3 axes, got {seq}.")
        axes, intrinsic = _check_seq(seq)
        angles = _euler_from_quat(self.quat, axes, intrinsic)
        return jnp.rad2deg(angles) if degrees else angles

    def as_matrix(self):
        """Rotation matrices, shape ``(3, 3)`` or ``(N, 3, 3)``."""
        return _quat_to_matrix(self.quat)

    def as_mrp(self):
        """Modified Rodrigues Parameters (the representative with ``|mrp| <= 1``)."""
        q = self.quat
        sign = jnp.where(q[..., 3:] < 0, -1, 1).astype(q.dtype)
        return sign * q[..., :3] / (1 + sign * q[..., 3:])

    def as_quat(self, canonical: bool = False, scalar_first: bool = False):
        """The quaternions; ``canonical`` picks the sign with ``w >= 0`` (ties broken by the
        first nonzero of x, y, z), ``scalar_first`` orders them ``[w, x, y, z]``."""
        q = self.quat
        if canonical:
            x, y, z, w = q[..., 0], q[..., 1], q[..., 2], q[..., 3]
            flip = (w < 0) | ((w == 0) & ((x < 0) | ((x == 0) & (
                (y < 0) | ((y == 0) & (z < 0))))))
            q = jnp.where(flip[..., None], -q, q)
        if scalar_first:
            q = jnp.concatenate([q[..., 3:], q[..., :3]], axis=-1)
        return q

    def as_rotvec(self, degrees: bool = False):
        """Rotation vectors ``angle * axis`` with ``angle`` in ``[0, pi]``."""
        rv = _quat_to_rotvec(self.quat)
        return jnp.rad2deg(rv) if degrees else rv

    def inv(self):
        """The inverse rotations."""
        q = self.quat
        return Rotation(jnp.concatenate([-q[..., :3], q[..., 3:]], axis=-1))

    def magnitude(self):
        """The rotation angles in ``[0, pi]``."""
        q = self.quat
        return 2 * jnp.arctan2(jnp.linalg.norm(q[..., :3], axis=-1), jnp.abs(q[..., 3]))

    def mean(self, weights=None):
        """The (weighted) mean rotation: the unit quaternion maximising
        ``sum_i w_i (q . q_i)^2``, i.e. the principal eigenvector of ``sum w_i q_i q_i^T``."""
        q = jnp.atleast_2d(self.quat)
        if weights is None:
            weights = jnp.ones(q.shape[:-1], q.dtype)
        else:
            weights = jnp.asarray(weights)
            if weights.ndim != 1:
                raise ValueError(f"Expected `weights` to be 1 dimensional, got shape "
                                 f"{tuple(weights.shape)}.")
            if weights.shape[0] != q.shape[0]:
                raise ValueError(f"Expected `weights` to have number of values equal to "
                                 f"number of rotations, got {weights.shape[0]} values and "
                                 f"{q.shape[0]} rotations.")
        k = jnp.einsum("n,ni,nj->ij", weights.astype(q.dtype), q, q)
        _, vecs = jnp.linalg.eigh(k)
        return Rotation(vecs[:, -1])

    @property
    def single(self):
        """Whether this holds a single rotation (``quat`` of shape ``(4,)``)."""
        return self.quat.ndim == 1


# ----------------------------------------------------------------------------- Slerp
class Slerp(NamedTuple):
    """Spherical Linear Interpolation of Rotations (``jax.scipy.spatial.transform.Slerp``).

    Build with ``Slerp.init(times, rotations)``; calling it with times returns the
    rotations interpolated at constant angular velocity between the key rotations.
    """
    times: jnp.ndarray
    timedelta: jnp.ndarray
    rotations: Rotation
    rotvecs: jnp.ndarray

    @classmethod
    def init(cls, times, rotations: Rotation):
        """Interpolator through the key ``rotations`` (at least 2) at 1-D ``times``."""
        if not isinstance(rotations, Rotation):
            raise TypeError("`rotations` must be a `Rotation` instance.")
        if rotations.single or len(rotations) == 1:
            raise ValueError("`rotations` must be a sequence of at least 2 rotations.")
        times = jnp.asarray(times, dtype=rotations.quat.dtype)
        if times.ndim != 1:
            raise ValueError(f"Expected times to be specified in a 1 dimensional array, got "
                             f"{times.ndim} dimensions.")
        if times.shape[0] != len(rotations):
            raise ValueError(f"Expected number of rotations to be equal to number of "
                             f"timestamps given, got {len(rotations)} rotations and "
                             f"{times.shape[0]} timestamps.")
        start = Rotation(rotations.quat[:-1])
        steps = (start.inv() * Rotation(rotations.quat[1:])).as_rotvec()
        return cls(times=times, timedelta=jnp.diff(times), rotations=start, rotvecs=steps)

    def __call__(self, times):
        """The interpolated rotations at ``times`` (scalar: a single rotation)."""
        t = jnp.asarray(times)
        if t.ndim > 1:
            raise ValueError("`times` must be at most 1-dimensional.")
        seg = jnp.maximum(jnp.searchsorted(self.times, t) - 1, 0)
        frac = (t - self.times[seg]) / self.timedelta[seg]
        step = Rotation.from_rotvec(self.rotvecs[seg] * frac[..., None])
        return Rotation(self.rotations.quat[seg]) * step


def _rot_flatten(r):
    return (r.quat,), None


def _rot_unflatten(_, children):
    return Rotation(*children)


# ``Rotation`` redefines ``__len__`` (the number of rotations), so it is registered
# explicitly instead of relying on the generic namedtuple handling (which takes len()).
register_pytree_node(Rotation, _rot_flatten, _rot_unflatten)
