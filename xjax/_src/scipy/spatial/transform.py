"""``xjax.scipy.spatial.transform``: rotations in 3 dimensions (JAX's
``jax.scipy.spatial.transform``).

A :class:`Rotation` holds unit quaternions in SciPy's scalar-last order ``(x, y, z, w)``,
shape ``(4,)`` for one rotation or ``(..., 4)`` for a batch. :class:`Rotation` and
:class:`Slerp` are named tuples, hence pytrees that pass through ``jit``, ``vmap`` and
``grad``. Conventions follow SciPy: ``r.apply(v)`` rotates ``v`` actively, ``p * q`` applies
``q`` first, Euler sequences in lower case are extrinsic (fixed axes), in upper case
intrinsic (moving axes).

>>> import xjax.numpy as jnp
>>> from xjax.scipy.spatial.transform import Rotation
>>> quarter_turn = Rotation.from_euler("z", 90, degrees=True)
>>> quarter_turn.apply(jnp.array([1.0, 0.0, 0.0])).round(6)
Array([0., 1., 0.], dtype=float32)
"""

from __future__ import annotations

import re
import typing

import numpy as np

from xjax._src.numpy._promotion import promote_dtypes_inexact
import xjax._src.numpy as jnp
from xjax._src import random

__all__ = ["Rotation", "Slerp"]

# Below this angle (radians) rotation-vector conversions use Taylor series: the closed forms
# divide 0 by 0 at the identity.
_SMALL_ANGLE = 1e-3
# Euler conversion treats a middle angle within this of 0 or pi as gimbal lock.
_GIMBAL_EPS = 1e-7
_AXIS_INDEX = {"x": 0, "y": 1, "z": 2}


def _jnp():
    return jnp


def _inexact(x):
    (x,) = promote_dtypes_inexact(_jnp().asarray(x))
    return x


def _check_last_axis(name: str, x, size: int, what: str) -> None:
    if x.ndim == 0 or x.shape[-1] != size:
        raise ValueError(f"Expected `{name}` to have shape (..., {size}) ({what}), got shape "
                         f"{tuple(x.shape)}.")


# -- quaternion arithmetic on the last axis (scalar last) --


def _norm(v):
    """Euclidean norm over the last axis, with a zero (not NaN) gradient at the origin."""
    jnp = _jnp()
    squared = jnp.sum(v * v, axis=-1)
    positive = squared > 0
    return jnp.where(positive, jnp.sqrt(jnp.where(positive, squared, 1)), 0)


def _normalize(quat):
    return quat / _norm(quat)[..., None]


def _compose(p, q):
    """Hamilton product ``p q``: the rotation applying ``q`` first, then ``p``."""
    jnp = _jnp()
    p_vec, p_w = p[..., :3], p[..., 3:]
    q_vec, q_w = q[..., :3], q[..., 3:]
    vec = p_w * q_vec + q_w * p_vec + jnp.cross(p_vec, q_vec)
    w = p_w * q_w - jnp.sum(p_vec * q_vec, axis=-1, keepdims=True)
    return jnp.concatenate([vec, w], axis=-1)


def _conjugate(quat):
    return _jnp().concatenate([-quat[..., :3], quat[..., 3:]], axis=-1)


def _canonical(quat):
    """The sign of ``quat`` whose first nonzero entry in the order w, x, y, z is positive."""
    jnp = _jnp()
    x, y, z, w = (quat[..., i] for i in range(4))
    flip = (w < 0) | ((w == 0) & ((x < 0) | ((x == 0) & ((y < 0) | ((y == 0) & (z < 0))))))
    return jnp.where(flip[..., None], -quat, quat)


def _quat_to_matrix(quat):
    jnp = _jnp()
    x, y, z, w = (quat[..., i] for i in range(4))
    # The homogeneous form: exact for unit quaternions, as SciPy's.
    rows = [
        [x * x - y * y - z * z + w * w, 2 * (x * y - z * w), 2 * (x * z + y * w)],
        [2 * (x * y + z * w), -x * x + y * y - z * z + w * w, 2 * (y * z - x * w)],
        [2 * (x * z - y * w), 2 * (y * z + x * w), -x * x - y * y + z * z + w * w],
    ]
    return jnp.stack([jnp.stack(row, axis=-1) for row in rows], axis=-2)


def _matrix_to_quat(matrix):
    """Shepperd's method: of the four ways to read a quaternion off a rotation matrix, use
    the one dividing by the largest of ``1 + trace`` and ``1 + 2 m_ii - trace``."""
    jnp = _jnp()
    m = [[matrix[..., r, c] for c in range(3)] for r in range(3)]
    trace = m[0][0] + m[1][1] + m[2][2]
    candidates = []
    for i in range(3):
        j, k = (i + 1) % 3, (i + 2) % 3
        quat = [None] * 4
        quat[i] = 1 - trace + 2 * m[i][i]
        quat[j] = m[j][i] + m[i][j]
        quat[k] = m[k][i] + m[i][k]
        quat[3] = m[k][j] - m[j][k]
        candidates.append(jnp.stack(quat, axis=-1))
    candidates.append(jnp.stack([m[2][1] - m[1][2], m[0][2] - m[2][0], m[1][0] - m[0][1],
                                 1 + trace], axis=-1))
    choice = jnp.argmax(jnp.stack([m[0][0], m[1][1], m[2][2], trace], axis=-1), axis=-1)
    stacked = jnp.stack(candidates, axis=-2)  # (..., candidate, 4)
    chosen = jnp.take_along_axis(stacked, choice[..., None, None], axis=-2)[..., 0, :]
    return _normalize(chosen)


def _rotvec_to_quat(rotvec):
    jnp = _jnp()
    angle_sq = jnp.sum(rotvec * rotvec, axis=-1)
    angle = _norm(rotvec)
    small = angle <= _SMALL_ANGLE
    safe_angle = jnp.where(small, 1, angle)  # keeps the unused branch's gradient finite
    # sin(angle / 2) / angle and its Taylor series at 0.
    scale = jnp.where(small, 0.5 - angle_sq / 48 + angle_sq * angle_sq / 3840,
                      jnp.sin(safe_angle / 2) / safe_angle)
    return jnp.concatenate([scale[..., None] * rotvec, jnp.cos(angle / 2)[..., None]], axis=-1)


def _quat_to_rotvec(quat):
    jnp = _jnp()
    quat = jnp.where(quat[..., 3:] < 0, -quat, quat)  # w >= 0 gives angles in [0, pi]
    angle = 2 * jnp.arctan2(_norm(quat[..., :3]), quat[..., 3])
    small = angle <= _SMALL_ANGLE
    safe_angle = jnp.where(small, 1, angle)
    angle_sq = angle * angle
    # angle / sin(angle / 2) and its Taylor series at 0.
    scale = jnp.where(small, 2 + angle_sq / 12 + 7 * angle_sq * angle_sq / 2880,
                      safe_angle / jnp.sin(safe_angle / 2))
    return scale[..., None] * quat[..., :3]


def _quat_to_mrp(quat):
    jnp = _jnp()
    # The sign making w >= 0 picks the MRP of norm <= 1.
    sign = jnp.where(quat[..., 3:] < 0, -1, 1).astype(quat.dtype)
    return sign * quat[..., :3] / (1 + sign * quat[..., 3:])


def _mrp_to_quat(mrp):
    jnp = _jnp()
    norm_sq = jnp.sum(mrp * mrp, axis=-1, keepdims=True)
    return jnp.concatenate([2 * mrp, 1 - norm_sq], axis=-1) / (1 + norm_sq)


# -- Euler angles --


def _parse_euler_seq(seq: str, *, exactly_three: bool) -> tuple[bool, list[int]]:
    """``(extrinsic, axis indices)`` of an Euler sequence such as ``'xyz'`` or ``'ZXZ'``."""
    if exactly_three and len(seq) != 3:
        raise ValueError(f"Expected 3 axes, got {seq}.")
    if not 1 <= len(seq) <= 3:
        raise ValueError("Expected axis specification to be a non-empty string of upto 3 "
                         f"characters, got {seq}")
    extrinsic = re.fullmatch(r"[xyz]{1,3}", seq) is not None
    if not extrinsic and re.fullmatch(r"[XYZ]{1,3}", seq) is None:
        raise ValueError("Expected axes from `seq` to be from ['x', 'y', 'z'] or "
                         f"['X', 'Y', 'Z'], got {seq}")
    if any(a == b for a, b in zip(seq, seq[1:])):
        raise ValueError(f"Expected consecutive axes to be different, got {seq}")
    return extrinsic, [_AXIS_INDEX[c] for c in seq.lower()]


def _elementary_quat(axis: int, angle):
    jnp = _jnp()
    half = angle / 2
    parts = [jnp.zeros_like(angle)] * 3 + [jnp.cos(half)]
    parts[axis] = jnp.sin(half)
    return jnp.stack(parts, axis=-1)


def _euler_to_quat(angles, axes: list[int], extrinsic: bool):
    quat = _elementary_quat(axes[0], angles[..., 0])
    for n, axis in enumerate(axes[1:], start=1):
        step = _elementary_quat(axis, angles[..., n])
        # Extrinsic: each rotation about a fixed axis comes after (left of) the ones before.
        quat = _compose(step, quat) if extrinsic else _compose(quat, step)
    return quat


def _quat_to_euler(quat, axes: list[int], extrinsic: bool):
    """Bernardes & Viollet (2022), "Quaternion to Euler angles conversion: a direct,
    general and computationally efficient method", as SciPy implements it."""
    jnp = _jnp()
    if not extrinsic:  # an intrinsic sequence is the reversed extrinsic one
        axes = axes[::-1]
    i, j, k = axes
    symmetric = i == k  # proper Euler angles (e.g. 'zxz') rather than Tait-Bryan
    if symmetric:
        k = 3 - i - j
    sign = (i - j) * (j - k) * (k - i) // 2  # +1 for an even permutation of (x, y, z)
    w = quat[..., 3]
    if symmetric:
        a, b, c, d = w, quat[..., i], quat[..., j], sign * quat[..., k]
    else:
        a, b = w - quat[..., j], quat[..., i] + sign * quat[..., k]
        c, d = quat[..., j] + w, sign * quat[..., k] - quat[..., i]
    middle = 2 * jnp.arctan2(jnp.hypot(c, d), jnp.hypot(a, b))
    half_sum = jnp.arctan2(b, a)
    half_diff = jnp.arctan2(d, c)
    at_zero = jnp.abs(middle) <= _GIMBAL_EPS
    at_pi = jnp.abs(middle - np.pi) <= _GIMBAL_EPS
    locked = at_zero | at_pi
    # At gimbal lock only the sum (or difference) of the outer angles is determined:
    # SciPy puts all of it in the first output angle and sets the last to zero.
    locked_first = jnp.where(at_zero, 2 * half_sum,
                             2 * half_diff * (-1 if extrinsic else 1))
    first, third = half_sum - half_diff, half_sum + half_diff
    if not extrinsic:
        first, third = third, first
    first = jnp.where(locked, locked_first, first)
    third = jnp.where(locked, 0, third)
    if not symmetric:
        # The Tait-Bryan form was derived from a proper one with a shifted middle axis.
        if extrinsic:
            third = sign * third
        else:
            first = sign * first
        middle = middle - np.pi / 2
    angles = jnp.stack([first, middle, third], axis=-1)
    # Into [-pi, pi] as SciPy does (JAX's modular wrap would turn a middle angle of pi,
    # legitimate for proper Euler sequences, into -pi).
    return jnp.where(angles < -np.pi, angles + 2 * np.pi,
                     jnp.where(angles > np.pi, angles - 2 * np.pi, angles))


class Rotation(typing.NamedTuple):
    """Rotation(s) in 3 dimensions, stored as unit quaternions ``(x, y, z, w)``.

    xjax's (and JAX's) version of :class:`scipy.spatial.transform.Rotation`. Build one with
    the ``from_*`` class methods; ``quat`` has shape ``(4,)`` for a single rotation and
    ``(N, 4)`` (or any ``(..., 4)``) for several. As a named tuple it is a pytree.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> r = Rotation.from_euler("z", 90, degrees=True)
    >>> r.as_rotvec()
    Array([0.       , 0.       , 1.5707964], dtype=float32)
    >>> (r * Rotation.from_euler("x", 90, degrees=True)).as_matrix().round(6)
    Array([[0., 0., 1.],
           [1., 0., 0.],
           [0., 1., 0.]], dtype=float32)
    """

    quat: typing.Any

    # -- constructors --

    @classmethod
    def concatenate(cls, rotations: typing.Sequence[Rotation]) -> Rotation:
        """Stack rotations (single ones count as one each) into one ``Rotation``."""
        jnp = _jnp()
        return cls(jnp.concatenate([jnp.atleast_2d(r.quat) for r in rotations]))

    @classmethod
    def from_euler(cls, seq: str, angles, degrees: bool = False) -> Rotation:
        """From Euler angles about the axes in ``seq``: up to 3 of ``'xyz'`` (extrinsic,
        fixed axes) or ``'XYZ'`` (intrinsic); ``angles`` has shape ``(..., len(seq))``, a
        scalar being allowed for one axis."""
        extrinsic, axes = _parse_euler_seq(seq, exactly_three=False)
        angles = _jnp().atleast_1d(_inexact(angles))
        if angles.shape[-1] != len(axes):
            raise ValueError(f"Expected `angles` to have shape (..., {len(axes)}) for "
                             f"seq {seq!r}, got shape {tuple(angles.shape)}.")
        if degrees:
            angles = _jnp().deg2rad(angles)
        return cls(_euler_to_quat(angles, axes, extrinsic))

    @classmethod
    def from_matrix(cls, matrix) -> Rotation:
        """From rotation matrices, shape ``(..., 3, 3)``."""
        matrix = _inexact(matrix)
        if matrix.ndim < 2 or matrix.shape[-2:] != (3, 3):
            raise ValueError("Expected `matrix` to have shape (..., 3, 3), got shape "
                             f"{tuple(matrix.shape)}.")
        return cls(_matrix_to_quat(matrix))

    @classmethod
    def from_mrp(cls, mrp) -> Rotation:
        """From Modified Rodrigues Parameters ``axis * tan(angle / 4)``, shape ``(..., 3)``."""
        mrp = _inexact(mrp)
        _check_last_axis("mrp", mrp, 3, "Modified Rodrigues Parameters")
        return cls(_mrp_to_quat(mrp))

    @classmethod
    def from_quat(cls, quat) -> Rotation:
        """From quaternions ``(x, y, z, w)`` (scalar last), shape ``(..., 4)``; normalized."""
        quat = _inexact(quat)
        _check_last_axis("quat", quat, 4, "scalar-last quaternions")
        return cls(_normalize(quat))

    @classmethod
    def from_rotvec(cls, rotvec, degrees: bool = False) -> Rotation:
        """From rotation vectors ``axis * angle``, shape ``(..., 3)``."""
        rotvec = _inexact(rotvec)
        _check_last_axis("rotvec", rotvec, 3, "rotation vectors")
        if degrees:
            rotvec = _jnp().deg2rad(rotvec)
        return cls(_rotvec_to_quat(rotvec))

    @classmethod
    def identity(cls, num: int | None = None, dtype=float) -> Rotation:
        """The identity rotation, or ``num`` of them."""
        quat = _jnp().array([0.0, 0.0, 0.0, 1.0], dtype=dtype)
        return cls(quat if num is None else _jnp().tile(quat, (num, 1)))

    @classmethod
    def random(cls, random_key, num: int | None = None) -> Rotation:
        """Rotations drawn uniformly from SO(3): normalized 4-D Gaussian vectors are uniform
        on the unit sphere of quaternions."""

        shape = (4,) if num is None else (num, 4)
        return cls(_normalize(random.normal(random_key, shape)))

    # -- sequence protocol and composition --

    @property
    def single(self) -> bool:
        """Whether this holds one rotation (``quat`` of shape ``(4,)``)."""
        return self.quat.ndim == 1

    def __getitem__(self, indexer) -> Rotation:
        """The rotation(s) at ``indexer``."""
        if self.single:
            raise TypeError("Single rotation is not subscriptable.")
        return Rotation(self.quat[indexer])

    def __len__(self) -> int:
        """The number of rotations held."""
        if self.single:
            raise TypeError("Single rotation has no len().")
        return self.quat.shape[0]

    def __mul__(self, other: Rotation) -> Rotation:
        """The composition applying ``other`` first, then ``self`` (broadcast over
        batches)."""
        return Rotation.from_quat(_compose(self.quat, other.quat))

    def inv(self) -> Rotation:
        """The inverse rotation(s)."""
        return Rotation(_conjugate(self.quat))

    def apply(self, vectors, inverse: bool = False):
        """Rotate ``vectors`` (shape ``(..., 3)``, broadcast against the rotations); with
        ``inverse=True`` apply the inverse rotation."""
        jnp = _jnp()
        vectors = jnp.asarray(vectors)
        _check_last_axis("vectors", vectors, 3, "3-vectors")
        matrix = self.as_matrix()
        if inverse:
            matrix = jnp.swapaxes(matrix, -1, -2)
        return jnp.sum(matrix * vectors[..., None, :], axis=-1)

    # -- conversions --

    def as_euler(self, seq: str, degrees: bool = False):
        """Euler angles about the 3 axes of ``seq`` (as in :meth:`from_euler`), in
        ``[-pi, pi]``; the middle one in ``[0, pi]`` for proper Euler sequences and in
        ``[-pi/2, pi/2]`` for Tait-Bryan ones."""
        extrinsic, axes = _parse_euler_seq(seq, exactly_three=True)
        angles = _quat_to_euler(self.quat, axes, extrinsic)
        return _jnp().rad2deg(angles) if degrees else angles

    def as_matrix(self):
        """Rotation matrices, shape ``(..., 3, 3)``."""
        return _quat_to_matrix(self.quat)

    def as_mrp(self):
        """Modified Rodrigues Parameters, of norm at most 1."""
        return _quat_to_mrp(self.quat)

    def as_rotvec(self, degrees: bool = False):
        """Rotation vectors ``axis * angle`` with ``angle`` in ``[0, pi]``."""
        rotvec = _quat_to_rotvec(self.quat)
        return _jnp().rad2deg(rotvec) if degrees else rotvec

    def as_quat(self, canonical: bool = False, scalar_first: bool = False):
        """Quaternions, scalar last ``(x, y, z, w)`` unless ``scalar_first``; with
        ``canonical`` the sign with ``w > 0`` (or, when ``w == 0``, the first nonzero of
        x, y, z positive)."""
        quat = _canonical(self.quat) if canonical else self.quat
        return _jnp().roll(quat, 1, axis=-1) if scalar_first else quat

    def magnitude(self):
        """Rotation angle(s) in radians, in ``[0, pi]``."""
        jnp = _jnp()
        return 2 * jnp.arctan2(_norm(self.quat[..., :3]), jnp.abs(self.quat[..., 3]))

    def mean(self, weights=None) -> Rotation:
        """The rotation minimizing the weighted sum of squared chordal distances: the
        principal eigenvector of ``sum_i weights_i q_i q_i^T`` (Markley et al. 2007)."""
        jnp = _jnp()
        count = len(self)
        if weights is None:
            weights = jnp.ones(count, dtype=self.quat.dtype)
        else:
            weights = jnp.asarray(weights, dtype=self.quat.dtype)
        if weights.ndim != 1:
            raise ValueError(f"Expected `weights` to be 1 dimensional, got shape "
                             f"{tuple(weights.shape)}.")
        if weights.shape[0] != count:
            raise ValueError("Expected `weights` to have number of values equal to number "
                             f"of rotations, got {weights.shape[0]} values and {count} "
                             "rotations.")
        scatter = (weights[:, None] * self.quat).T @ self.quat
        _, eigenvectors = jnp.linalg.eigh(scatter)
        return Rotation(eigenvectors[:, -1])


class Slerp(typing.NamedTuple):
    """Spherical linear interpolation between key rotations at increasing times.

    xjax's (and JAX's) version of :class:`scipy.spatial.transform.Slerp`. Build it with
    :meth:`Slerp.init` (a named tuple cannot take SciPy's constructor arguments); it is a
    pytree holding the key times, the interval lengths, the first key rotation of each
    interval and the rotation vector leading to the next key.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> keys = Rotation.from_euler("z", jnp.array([[0.0], [90.0]]), degrees=True)
    >>> slerp = Slerp.init(jnp.array([0.0, 1.0]), keys)
    >>> slerp(jnp.array([0.5, 1.0])).as_rotvec(degrees=True)
    Array([[ 0.      ,  0.      , 45.000004],
           [ 0.      ,  0.      , 90.00001 ]], dtype=float32)
    """

    times: typing.Any
    timedelta: typing.Any
    rotations: Rotation
    rotvecs: typing.Any

    @classmethod
    def init(cls, times, rotations: Rotation) -> Slerp:
        """Interpolator through ``rotations[n]`` at ``times[n]`` (strictly increasing; not
        checked, as values cannot be under ``jit``)."""
        if not isinstance(rotations, Rotation):
            raise TypeError("`rotations` must be a `Rotation` instance.")
        if rotations.single or len(rotations) == 1:
            raise ValueError("`rotations` must be a sequence of at least 2 rotations.")
        times = _jnp().asarray(times, dtype=rotations.quat.dtype)
        if times.ndim != 1:
            raise ValueError("Expected times to be specified in a 1 dimensional array, got "
                             f"{times.ndim} dimensions.")
        if times.shape[0] != len(rotations):
            raise ValueError("Expected number of rotations to be equal to number of "
                             f"timestamps given, got {len(rotations)} rotations and "
                             f"{times.shape[0]} timestamps.")
        starts, ends = rotations[:-1], rotations[1:]
        return cls(times=times, timedelta=times[1:] - times[:-1], rotations=starts,
                   rotvecs=(starts.inv() * ends).as_rotvec())

    def __call__(self, times) -> Rotation:
        """The interpolated rotation(s) at ``times`` (a scalar or a 1-D array). Times
        outside the key range extrapolate the first or last interval."""
        jnp = _jnp()
        times = jnp.asarray(times, dtype=self.times.dtype)
        if times.ndim > 1:
            raise ValueError("`times` must be at most 1-dimensional.")
        query = jnp.atleast_1d(times)
        interval = jnp.clip(jnp.searchsorted(self.times, query) - 1,
                            0, self.timedelta.shape[0] - 1)
        fraction = (query - self.times[interval]) / self.timedelta[interval]
        step = Rotation.from_rotvec(self.rotvecs[interval] * fraction[:, None])
        result = self.rotations[interval] * step
        return result[0] if times.ndim == 0 else result

