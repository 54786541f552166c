"""Rotation helpers (wxyz Hamilton quaternions) against scipy, and the camera conventions."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from grade_common.rotations import (
    R_LINK_MJCAM,
    R_LINK_OPTICAL,
    matrix_to_quat,
    quat_from_rpy,
    quat_mul,
    quat_to_matrix,
    rotation_between,
)

RNG = np.random.default_rng(0)
RPY = [tuple(v) for v in RNG.uniform(-np.pi, np.pi, (20, 3))] + [
    (0.0, 0.0, 0.0),
    (np.pi, 0.0, 0.0),
    (0.0, np.pi / 2, 0.0),
    (0.0, 0.0, -np.pi),
]


def wxyz(r: Rotation) -> np.ndarray:
    x, y, z, w = r.as_quat()
    return np.array([w, x, y, z])


@pytest.mark.parametrize("rpy", RPY)
def test_quat_from_rpy_is_rz_ry_rx(rpy: tuple[float, float, float]) -> None:
    q = quat_from_rpy(*rpy)
    expected = Rotation.from_euler("xyz", rpy)  # extrinsic x, y, z = Rz Ry Rx
    np.testing.assert_allclose(quat_to_matrix(q), expected.as_matrix(), atol=1e-12)
    assert np.linalg.norm(q) == pytest.approx(1.0)


@pytest.mark.parametrize("rpy", RPY)
def test_matrix_quat_round_trip(rpy: tuple[float, float, float]) -> None:
    m = Rotation.from_euler("xyz", rpy).as_matrix()
    q = matrix_to_quat(m)
    assert q[0] >= 0
    assert np.linalg.norm(q) == pytest.approx(1.0)
    np.testing.assert_allclose(quat_to_matrix(q), m, atol=1e-12)


def test_quat_mul_composes_like_matrices() -> None:
    for _ in range(20):
        a, b = Rotation.random(2, random_state=RNG.integers(1 << 30))
        np.testing.assert_allclose(
            quat_to_matrix(quat_mul(wxyz(a), wxyz(b))), (a * b).as_matrix(), atol=1e-12
        )


def test_camera_frame_conventions() -> None:
    # Optical frame (z forward, x right, y down) in the camera link (x forward, y left, z up).
    np.testing.assert_array_equal(R_LINK_OPTICAL @ [0, 0, 1], [1, 0, 0])
    np.testing.assert_array_equal(R_LINK_OPTICAL @ [1, 0, 0], [0, -1, 0])
    np.testing.assert_array_equal(R_LINK_OPTICAL @ [0, 1, 0], [0, 0, -1])
    # MuJoCo cameras look along -z with y up.
    np.testing.assert_array_equal(R_LINK_MJCAM @ [0, 0, -1], [1, 0, 0])
    np.testing.assert_array_equal(R_LINK_MJCAM @ [0, 1, 0], [0, 0, 1])
    for r in (R_LINK_OPTICAL, R_LINK_MJCAM):
        np.testing.assert_allclose(r @ r.T, np.eye(3))
        assert np.linalg.det(r) == pytest.approx(1.0)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        *[(RNG.normal(size=3), RNG.normal(size=3)) for _ in range(10)],
        ((0.0, 0.0, 2.0), (0.0, 0.0, 0.5)),  # the same direction: no turn
        ((0.0, 0.0, 1.0), (0.0, 0.0, -3.0)),  # opposite, along z
        ((1.0, 0.0, 0.0), (-1.0, 0.0, 0.0)),  # opposite, along x (the other helper axis)
    ],
)
def test_rotation_between_is_the_smallest_turn(a: tuple[float, ...], b: tuple[float, ...]) -> None:
    a_dir = np.asarray(a) / np.linalg.norm(a)
    b_dir = np.asarray(b) / np.linalg.norm(b)
    rot = rotation_between(np.asarray(a), np.asarray(b))
    np.testing.assert_allclose(rot @ rot.T, np.eye(3), atol=1e-12)
    assert np.linalg.det(rot) == pytest.approx(1.0)
    np.testing.assert_allclose(rot @ a_dir, b_dir, atol=1e-12)
    # The smallest turn is the angle between the directions (a half turn when opposite).
    angle = Rotation.from_matrix(rot).magnitude()
    assert angle == pytest.approx(np.arccos(np.clip(a_dir @ b_dir, -1.0, 1.0)), abs=1e-7)
