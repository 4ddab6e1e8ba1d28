"""``xjax.scipy.cluster.vq.vq`` and ``xjax.scipy.spatial.transform`` (``Rotation``,
``Slerp``) against SciPy on random inputs, under jit/vmap, gradients against central finite
differences, and (where installed) JAX 0.10.2."""

import warnings

import numpy as np
import pytest
import scipy.cluster.vq as scv
from scipy.spatial.transform import Rotation as SciRotation
from scipy.spatial.transform import Slerp as SciSlerp

import xjax
import xjax.numpy as jnp
from xjax.scipy.cluster.vq import vq
from xjax.scipy.spatial.transform import Rotation, Slerp

_TAIT_BRYAN = ["xyz", "xzy", "yxz", "yzx", "zxy", "zyx"]
_PROPER = ["xyx", "xzx", "yxy", "yzy", "zxz", "zyz"]
_ALL_SEQS = _TAIT_BRYAN + _PROPER + [s.upper() for s in _TAIT_BRYAN + _PROPER]


def _quats(rng, n):
    return rng.normal(size=(n, 4)).astype(np.float32)


def _close(got, want, tol=2e-5):
    np.testing.assert_allclose(np.asarray(got), want, rtol=tol, atol=tol)


# ---------------------------------------------------------------------------------------------
# cluster.vq


@pytest.mark.parametrize("shape_obs,shape_book", [((30, 4), (6, 4)), ((25,), (5,))])
def test_vq_matches_scipy(shape_obs, shape_book):
    rng = np.random.default_rng(0)
    obs = rng.normal(size=shape_obs).astype(np.float32)
    book = rng.normal(size=shape_book).astype(np.float32)
    code, dist = vq(jnp.asarray(obs), jnp.asarray(book))
    want_code, want_dist = scv.vq(obs.astype(np.float64), book.astype(np.float64))
    assert code.dtype == np.int32 and dist.dtype == np.float32
    np.testing.assert_array_equal(np.asarray(code), want_code)
    _close(dist, want_dist, 1e-5)


def test_vq_integer_inputs_ties_and_errors():
    # Integers promote to float; a tie goes to the first code, as in SciPy.
    code, dist = vq(jnp.array([1, 5, 9]), jnp.array([0, 4, 6]))
    np.testing.assert_array_equal(np.asarray(code), [0, 1, 2])
    assert dist.dtype == np.float32
    np.testing.assert_array_equal(np.asarray(dist), [1.0, 1.0, 3.0])
    with pytest.raises(ValueError, match="same rank"):
        vq(jnp.ones((3, 2)), jnp.ones(4))
    with pytest.raises(ValueError, match="ndim different than 1 or 2"):
        vq(jnp.ones((3, 2, 2)), jnp.ones((4, 2, 2)))
    with pytest.raises(TypeError):
        vq([[1.0, 2.0]], jnp.ones((4, 2)))


def test_vq_jit_and_vmap():
    rng = np.random.default_rng(1)
    obs = jnp.asarray(rng.normal(size=(3, 10, 2)).astype(np.float32))
    book = jnp.asarray(rng.normal(size=(4, 2)).astype(np.float32))
    code, dist = xjax.jit(vq)(obs[0], book)
    want_code, want_dist = vq(obs[0], book)
    np.testing.assert_array_equal(np.asarray(code), np.asarray(want_code))
    _close(dist, np.asarray(want_dist), 1e-6)
    codes, _ = xjax.vmap(vq, in_axes=(0, None))(obs, book)
    np.testing.assert_array_equal(np.asarray(codes),
                                  np.stack([np.asarray(vq(o, book)[0]) for o in obs]))


# ---------------------------------------------------------------------------------------------
# Rotation: conversions against SciPy


def test_quat_matrix_rotvec_mrp_magnitude_match_scipy():
    rng = np.random.default_rng(2)
    quats = _quats(rng, 40)
    ours, ref = Rotation.from_quat(jnp.asarray(quats)), SciRotation.from_quat(quats)
    _close(jnp.linalg.norm(ours.quat, axis=-1), np.ones(40))
    _close(ours.as_quat(), ref.as_quat())
    _close(ours.as_quat(canonical=True), ref.as_quat(canonical=True))
    _close(ours.as_quat(canonical=True, scalar_first=True),
           ref.as_quat(canonical=True, scalar_first=True))
    _close(ours.as_matrix(), ref.as_matrix())
    _close(ours.as_rotvec(), ref.as_rotvec(), 5e-5)
    _close(ours.as_rotvec(degrees=True), ref.as_rotvec(degrees=True), 5e-5)
    _close(ours.as_mrp(), ref.as_mrp())
    _close(ours.magnitude(), ref.magnitude())
    _close(ours.inv().as_matrix(), ref.inv().as_matrix())

    matrices = ref.as_matrix().astype(np.float32)
    _close(Rotation.from_matrix(jnp.asarray(matrices)).as_quat(canonical=True),
           SciRotation.from_matrix(matrices).as_quat(canonical=True))
    rotvecs = ref.as_rotvec().astype(np.float32)
    _close(Rotation.from_rotvec(jnp.asarray(rotvecs)).as_matrix(),
           SciRotation.from_rotvec(rotvecs).as_matrix())
    _close(Rotation.from_rotvec(jnp.asarray(np.rad2deg(rotvecs)), degrees=True).as_matrix(),
           ref.as_matrix(), 5e-5)
    mrps = ref.as_mrp().astype(np.float32)
    _close(Rotation.from_mrp(jnp.asarray(mrps)).as_matrix(),
           SciRotation.from_mrp(mrps).as_matrix())


def test_canonical_quaternion_sign_rules():
    # w == 0 cases: the first nonzero of x, y, z decides the sign.
    quats = np.array([[-1, 0, 0, 0], [0, -1, 2, 0], [0, 0, -3, 0], [1, -1, 0, -2],
                      [0, 2, -1, 0]], dtype=np.float32)
    _close(Rotation.from_quat(jnp.asarray(quats)).as_quat(canonical=True),
           SciRotation.from_quat(quats).as_quat(canonical=True))


def test_small_and_zero_rotation_vectors_match_scipy():
    rng = np.random.default_rng(3)
    directions = rng.normal(size=(6, 3))
    directions /= np.linalg.norm(directions, axis=-1, keepdims=True)
    scales = np.array([0.0, 1e-7, 1e-4, 9e-4, 1.1e-3, 0.5])[:, None]
    with xjax.config.override(jax_enable_x64=True):
        rotvecs = directions * scales
        ours = Rotation.from_rotvec(jnp.asarray(rotvecs))
        ref = SciRotation.from_rotvec(rotvecs)
        np.testing.assert_allclose(np.asarray(ours.quat), ref.as_quat(), rtol=1e-13,
                                   atol=1e-15)
        np.testing.assert_allclose(np.asarray(ours.as_rotvec()), rotvecs, rtol=1e-12,
                                   atol=1e-15)


@pytest.mark.parametrize("seq", _ALL_SEQS)
def test_euler_matches_scipy(seq):
    rng = np.random.default_rng(sum(map(ord, seq)))
    quats = _quats(rng, 12)
    ref = SciRotation.from_quat(quats)
    angles = ref.as_euler(seq)
    ours = Rotation.from_quat(jnp.asarray(quats))
    _close(ours.as_euler(seq), angles, 5e-5)
    _close(ours.as_euler(seq, degrees=True), ref.as_euler(seq, degrees=True), 5e-3)
    rebuilt = Rotation.from_euler(seq, jnp.asarray(angles.astype(np.float32)))
    _close(rebuilt.as_matrix(), SciRotation.from_euler(seq, angles).as_matrix())
    in_degrees = Rotation.from_euler(seq, jnp.asarray(np.rad2deg(angles)), degrees=True)
    _close(in_degrees.as_matrix(), ref.as_matrix(), 5e-5)


@pytest.mark.parametrize("seq", ["xyz", "ZYX", "zxz", "YXY"])
def test_euler_gimbal_lock_matches_scipy(seq):
    middle = (0.0, np.pi) if seq[0] == seq[2] else (np.pi / 2, -np.pi / 2)
    angles = np.array([[0.4, m, 0.3] for m in middle] + [[-2.0, m, 1.1] for m in middle])
    with xjax.config.override(jax_enable_x64=True):
        got = Rotation.from_euler(seq, jnp.asarray(angles)).as_euler(seq)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # SciPy warns at gimbal lock
        want = SciRotation.from_euler(seq, angles).as_euler(seq)
    np.testing.assert_allclose(np.asarray(got), want, atol=1e-9)


def test_from_euler_shapes():
    one_axis = Rotation.from_euler("z", 90, degrees=True)
    assert one_axis.single
    _close(one_axis.as_matrix(), SciRotation.from_euler("z", 90, degrees=True).as_matrix())
    two_axes = Rotation.from_euler("XZ", jnp.array([[0.1, 0.2], [0.3, -0.4]]))
    assert len(two_axes) == 2
    _close(two_axes.as_matrix(),
           SciRotation.from_euler("XZ", [[0.1, 0.2], [0.3, -0.4]]).as_matrix())
    stacked = Rotation.from_euler("z", jnp.array([[0.1], [0.2], [0.3]]))
    assert stacked.quat.shape == (3, 4)
    with pytest.raises(ValueError, match=r"shape \(\.\.\., 1\)"):
        Rotation.from_euler("z", jnp.array([0.1, 0.2, 0.3]))


# ---------------------------------------------------------------------------------------------
# Rotation: composition, application, sequences, mean, random


def test_compose_apply_and_sequence_protocol_match_scipy():
    rng = np.random.default_rng(4)
    p, q = _quats(rng, 5), _quats(rng, 5)
    vectors = rng.normal(size=(5, 3)).astype(np.float32)
    ours_p, ours_q = Rotation.from_quat(jnp.asarray(p)), Rotation.from_quat(jnp.asarray(q))
    ref_p, ref_q = SciRotation.from_quat(p), SciRotation.from_quat(q)
    _close((ours_p * ours_q).as_matrix(), (ref_p * ref_q).as_matrix())
    _close((ours_p * ours_q[2]).as_matrix(), (ref_p * ref_q[2]).as_matrix())
    _close(ours_p.apply(jnp.asarray(vectors)), ref_p.apply(vectors))
    _close(ours_p.apply(jnp.asarray(vectors), inverse=True), ref_p.apply(vectors, inverse=True))
    _close(ours_p[1].apply(jnp.asarray(vectors)), ref_p[1].apply(vectors))
    _close(ours_p.apply(jnp.asarray(vectors[0])), ref_p.apply(vectors[0]))
    assert len(ours_p) == 5 and len(ours_p[1:4]) == 3 and ours_p[0].single
    joined = Rotation.concatenate([ours_p[:2], ours_q[3], ours_q])
    _close(joined.as_matrix(),
           SciRotation.concatenate([ref_p[:2], ref_q[3], ref_q]).as_matrix())
    identity = Rotation.identity()
    assert identity.single and identity.quat.dtype == np.float32
    _close(Rotation.identity(3).as_matrix(), np.broadcast_to(np.eye(3), (3, 3, 3)))
    _close((ours_p * ours_p.inv()).magnitude(), np.zeros(5), 1e-3)


def test_mean_matches_scipy():
    rng = np.random.default_rng(5)
    # Rotations clustered around one, so the mean is well defined.
    rotvecs = (rng.normal(size=(8, 3)) * 0.3 + [0.5, -1.0, 0.2]).astype(np.float32)
    weights = rng.uniform(0.1, 2.0, size=8).astype(np.float32)
    ours = Rotation.from_rotvec(jnp.asarray(rotvecs))
    ref = SciRotation.from_rotvec(rotvecs)
    _close(ours.mean().as_matrix(), ref.mean().as_matrix(), 1e-4)
    _close(ours.mean(jnp.asarray(weights)).as_matrix(), ref.mean(weights).as_matrix(), 1e-4)


def test_random_rotations_are_uniform():
    key = xjax.random.key(0)
    single = Rotation.random(key)
    assert single.single
    many = Rotation.random(key, 4000)
    assert many.quat.shape == (4000, 4)
    _close(jnp.linalg.norm(many.quat, axis=-1), np.ones(4000), 1e-5)
    # Uniform on SO(3): matrix entries average 0, the angle has mean pi/2 + 2/pi.
    np.testing.assert_allclose(np.asarray(many.as_matrix()).mean(axis=0), np.zeros((3, 3)),
                               atol=0.05)
    assert abs(float(many.magnitude().mean()) - (np.pi / 2 + 2 / np.pi)) < 0.03
    other = Rotation.random(xjax.random.key(1), 4000)
    assert not np.allclose(np.asarray(other.quat), np.asarray(many.quat))


def test_rotation_errors():
    single = Rotation.from_quat(jnp.array([0.0, 0.0, 0.0, 1.0]))
    with pytest.raises(TypeError, match="not subscriptable"):
        single[0]
    with pytest.raises(TypeError, match="no len"):
        len(single)
    with pytest.raises(ValueError, match="upto 3 characters, got xyzx"):
        Rotation.from_euler("xyzx", jnp.ones(4))
    with pytest.raises(ValueError, match="from \\['x', 'y', 'z'\\]"):
        Rotation.from_euler("xY", jnp.ones(2))
    with pytest.raises(ValueError, match="consecutive axes to be different, got xx"):
        Rotation.from_euler("xx", jnp.ones(2))
    with pytest.raises(ValueError, match="Expected 3 axes, got xy"):
        single.as_euler("xy")
    with pytest.raises(ValueError, match="quat"):
        Rotation.from_quat(jnp.ones(3))
    with pytest.raises(ValueError, match="rotvec"):
        Rotation.from_rotvec(jnp.ones((2, 4)))
    with pytest.raises(ValueError, match=r"\(\.\.\., 3, 3\)"):
        Rotation.from_matrix(jnp.eye(4))
    several = Rotation.from_quat(jnp.ones((3, 4)))
    with pytest.raises(ValueError, match="1 dimensional, got shape \\(3, 1\\)"):
        several.mean(jnp.ones((3, 1)))
    with pytest.raises(ValueError, match="got 2 values and 3 rotations"):
        several.mean(jnp.ones(2))


# ---------------------------------------------------------------------------------------------
# Slerp


def test_slerp_matches_scipy():
    rng = np.random.default_rng(6)
    quats = _quats(rng, 5)
    times = np.array([0.0, 0.5, 1.7, 2.0, 3.5], dtype=np.float32)
    ours = Slerp.init(jnp.asarray(times), Rotation.from_quat(jnp.asarray(quats)))
    ref = SciSlerp(times, SciRotation.from_quat(quats))
    query = np.concatenate([times, rng.uniform(0, 3.5, size=10)]).astype(np.float32)
    _close(ours(jnp.asarray(query)).as_matrix(), ref(query).as_matrix(), 5e-5)
    at_one = ours(1.2)
    assert at_one.single
    _close(at_one.as_matrix(), ref(1.2).as_matrix(), 5e-5)
    # Past the last key time the last interval is extended.
    last = Slerp.init(jnp.asarray(times[-2:]), Rotation.from_quat(jnp.asarray(quats[-2:])))
    _close(ours(jnp.array([3.9])).as_matrix(), last(jnp.array([3.9])).as_matrix(), 5e-5)


def test_slerp_errors():
    rotations = Rotation.from_quat(jnp.ones((3, 4)))
    with pytest.raises(TypeError, match="must be a `Rotation` instance"):
        Slerp.init(jnp.arange(3.0), jnp.ones((3, 4)))
    with pytest.raises(ValueError, match="at least 2 rotations"):
        Slerp.init(jnp.arange(1.0), rotations[:1])
    with pytest.raises(ValueError, match="1 dimensional array, got 2 dimensions"):
        Slerp.init(jnp.ones((1, 3)), rotations)
    with pytest.raises(ValueError, match="got 3 rotations and 2 timestamps"):
        Slerp.init(jnp.arange(2.0), rotations)
    with pytest.raises(ValueError, match="at most 1-dimensional"):
        Slerp.init(jnp.arange(3.0), rotations)(jnp.ones((2, 2)))


# ---------------------------------------------------------------------------------------------
# transformations


def test_rotation_and_slerp_are_pytrees_under_jit_and_vmap():
    rng = np.random.default_rng(7)
    rotations = Rotation.from_quat(jnp.asarray(_quats(rng, 6)))
    vectors = jnp.asarray(rng.normal(size=(6, 3)).astype(np.float32))
    assert len(xjax.tree_util.tree_leaves(rotations)) == 1

    applied = xjax.jit(lambda r, v: r.apply(v))(rotations, vectors)
    _close(applied, np.asarray(rotations.apply(vectors)), 1e-6)
    composed = xjax.jit(lambda a, b: a * b)(rotations, rotations[::-1])
    assert isinstance(composed, Rotation)
    _close(composed.quat, np.asarray((rotations * rotations[::-1]).quat), 1e-6)
    euler = xjax.vmap(lambda r: r.as_euler("ZYZ"))(rotations)
    _close(euler, np.asarray(rotations.as_euler("ZYZ")), 1e-5)

    slerp = Slerp.init(jnp.arange(6.0), rotations)
    assert len(xjax.tree_util.tree_leaves(slerp)) == 4
    times = jnp.array([0.3, 2.5, 4.9])
    jitted = xjax.jit(lambda s, t: s(t).as_quat())(slerp, times)
    _close(jitted, np.asarray(slerp(times).as_quat()), 1e-5)
    mapped = xjax.vmap(lambda t: slerp(t).as_quat())(times)
    _close(mapped, np.asarray(slerp(times).as_quat()), 1e-5)


def _central_difference(f, x, eps=1e-6):
    x = np.asarray(x, dtype=np.float64)
    grad = np.zeros_like(x)
    for idx in np.ndindex(x.shape):
        step = np.zeros_like(x)
        step[idx] = eps
        grad[idx] = (f(x + step) - f(x - step)) / (2 * eps)
    return grad


@pytest.mark.parametrize("rotvec_scale", [0.0, 1e-4, 1.3])
def test_apply_grad_matches_finite_differences(rotvec_scale):
    rng = np.random.default_rng(8)
    with xjax.config.override(jax_enable_x64=True):
        rotvec = rng.normal(size=3) * rotvec_scale
        vectors = rng.normal(size=(4, 3))
        weights = rng.normal(size=(4, 3))

        def loss(rv, v):
            return jnp.sum(Rotation.from_rotvec(rv).apply(v, inverse=True) * weights)

        d_rotvec, d_vectors = xjax.grad(loss, argnums=(0, 1))(jnp.asarray(rotvec),
                                                              jnp.asarray(vectors))
        fd_rotvec = _central_difference(lambda r: float(loss(jnp.asarray(r), vectors)),
                                        rotvec)
        fd_vectors = _central_difference(lambda v: float(loss(rotvec, jnp.asarray(v))),
                                         vectors)
    np.testing.assert_allclose(np.asarray(d_rotvec), fd_rotvec, atol=1e-7)
    np.testing.assert_allclose(np.asarray(d_vectors), fd_vectors, atol=1e-7)


# ---------------------------------------------------------------------------------------------
# JAX as a differential reference


def test_vq_matches_jax():
    jax = pytest.importorskip("jax")
    rng = np.random.default_rng(9)
    obs = rng.normal(size=(20, 3)).astype(np.float32)
    book = rng.normal(size=(5, 3)).astype(np.float32)
    code, dist = vq(jnp.asarray(obs), jnp.asarray(book))
    want_code, want_dist = jax.scipy.cluster.vq.vq(obs, book)
    np.testing.assert_array_equal(np.asarray(code), np.asarray(want_code))
    _close(dist, np.asarray(want_dist), 1e-6)


def test_rotation_and_slerp_match_jax():
    pytest.importorskip("jax")
    from jax.scipy.spatial.transform import Rotation as JaxRotation
    from jax.scipy.spatial.transform import Slerp as JaxSlerp

    rng = np.random.default_rng(10)
    quats = _quats(rng, 8)
    vectors = rng.normal(size=(8, 3)).astype(np.float32)
    ours, theirs = Rotation.from_quat(jnp.asarray(quats)), JaxRotation.from_quat(quats)
    _close(ours.quat, np.asarray(theirs.quat), 1e-6)
    for seq in ("xyz", "ZXZ", "yxy", "YZX"):
        _close(ours.as_euler(seq), np.asarray(theirs.as_euler(seq)), 5e-5)
    _close(ours.as_rotvec(), np.asarray(theirs.as_rotvec()), 5e-5)
    _close(ours.as_mrp(), np.asarray(theirs.as_mrp()), 1e-5)
    _close(ours.as_quat(canonical=True, scalar_first=True),
           np.asarray(theirs.as_quat(canonical=True, scalar_first=True)), 1e-6)
    _close(ours.apply(jnp.asarray(vectors), inverse=True),
           np.asarray(theirs.apply(vectors, inverse=True)), 1e-5)
    _close(Rotation.from_matrix(ours.as_matrix()).quat,
           np.asarray(JaxRotation.from_matrix(theirs.as_matrix()).quat), 1e-5)
    _close((ours * ours[::-1]).quat, np.asarray((theirs * theirs[::-1]).quat), 1e-5)
    times = np.sort(rng.uniform(0, 5, size=8)).astype(np.float32)
    query = rng.uniform(times[0], times[-1], size=6).astype(np.float32)
    _close(Slerp.init(jnp.asarray(times), ours)(jnp.asarray(query)).as_matrix(),
           np.asarray(JaxSlerp.init(times, theirs)(query).as_matrix()), 5e-5)
