"""Poses between physics steps: linear positions, slerp rotations (against scipy's Slerp), the
short way round, several bodies at once, and the track's clamping at its ends."""

from __future__ import annotations

import numpy as np
from scipy.spatial.transform import Rotation, Slerp

from grade_sim.sensors.lidar.pose_track import PoseTrack, interpolate


def wxyz(r: Rotation) -> np.ndarray:
    q = r.as_quat()
    return np.concatenate([q[..., 3:], q[..., :3]], axis=-1)


def test_interpolate_matches_scipy_slerp_for_several_bodies() -> None:
    rng = np.random.default_rng(1)
    r0, r1 = Rotation.random(3, random_state=2), Rotation.random(3, random_state=3)
    p0, p1 = rng.normal(size=(3, 3)), rng.normal(size=(3, 3))
    times = np.array([1000, 1250, 1500, 2000], dtype=np.int64)
    n = len(times)
    t0, t1 = np.full(n, 1000, np.int64), np.full(n, 2000, np.int64)
    pos, rot = interpolate(
        t0,
        t1,
        (np.broadcast_to(p0, (n, 3, 3)), np.broadcast_to(wxyz(r0), (n, 3, 4))),
        (np.broadcast_to(p1, (n, 3, 3)), np.broadcast_to(wxyz(r1), (n, 3, 4))),
        times,
    )
    assert pos.shape == (n, 3, 3)
    assert rot.shape == (n, 3, 3, 3)
    alpha = (times - 1000) / 1000
    np.testing.assert_allclose(pos, p0 + alpha[:, None, None] * (p1 - p0), atol=1e-12)
    for b in range(3):
        pair = Rotation.concatenate([r0[b], r1[b]])
        expected = Slerp([0.0, 1.0], pair)(alpha).as_matrix()
        np.testing.assert_allclose(rot[:, b], expected, atol=1e-12)


def test_slerp_goes_the_short_way_round() -> None:
    # q and -q are the same rotation: halfway between identity and a 90 deg turn is 45 deg,
    # whichever sign the second quaternion comes with.
    q0 = np.array([[1.0, 0.0, 0.0, 0.0]])
    c, s = np.cos(np.pi / 4), np.sin(np.pi / 4)
    for q1 in (np.array([[c, 0.0, 0.0, s]]), -np.array([[c, 0.0, 0.0, s]])):
        _, rot = interpolate(
            np.array([0]), np.array([10]), (np.zeros((1, 3)), q0), (np.zeros((1, 3)), q1),
            np.array([5]),
        )  # fmt: skip
        angle = np.degrees(np.arctan2(rot[0, 1, 0], rot[0, 0, 0]))
        assert abs(angle - 45.0) < 1e-9


def test_track_is_exact_on_steps_and_clamps_outside_them() -> None:
    track = PoseTrack(physics_hz=240.0, keep=4)
    for step in range(10):
        q = wxyz(Rotation.from_euler("z", 0.1 * step))
        track.add(step, np.array([step * 1.0, 0.0, 0.0]), q)
    kept = [6, 7, 8, 9]
    stamps = np.array([round(k * 1e9 / 240.0) for k in kept], dtype=np.int64)
    pos, rot = track.at(stamps)
    np.testing.assert_allclose(pos[:, 0], kept, atol=1e-12)
    yaw = np.arctan2(rot[:, 1, 0], rot[:, 0, 0])
    np.testing.assert_allclose(yaw, 0.1 * np.array(kept), atol=1e-12)
    # Halfway between two steps, and before/after the kept steps (clamped to the ends).
    pos, _ = track.at(np.array([(stamps[0] + stamps[1]) // 2, 0, 10**12]))
    np.testing.assert_allclose(pos[:, 0], [6.5, 6.0, 9.0], atol=1e-6)
