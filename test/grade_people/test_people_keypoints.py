"""COCO-17 keypoints of the rigid-part people: joints at the limb ends, face on the head."""

from __future__ import annotations

import math

import numpy as np
import pytest

from grade_common.keypoints import COCO17_NAMES, COCO17_SKELETON
from grade_people.keypoints import rigid_coco17_world
from grade_people.people import (
    HIP_Y,
    HIP_Z,
    LOWER_ARM,
    LOWER_LEG,
    SHOULDER_Y,
    SHOULDER_Z,
    UPPER_ARM,
    UPPER_LEG,
)

IDX = {name: i for i, name in enumerate(COCO17_NAMES)}


def _people(n: int, seed: int) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(seed)
    return (
        rng.uniform(0.85, 1.1, n),
        rng.uniform(-5, 5, (n, 2)),
        rng.uniform(-math.pi, math.pi, n),
        rng.uniform(0, 20, n),
        rng.uniform(0, 1, n),
    )


def test_layout_is_coco() -> None:
    assert len(COCO17_NAMES) == 17
    assert COCO17_NAMES[0] == "nose"
    assert COCO17_NAMES[-1] == "right_ankle"
    assert all(1 <= a <= 17 and 1 <= b <= 17 for a, b in COCO17_SKELETON)


def test_limb_lengths_hold_in_every_pose() -> None:
    scale, xy, heading, phase, amp = _people(50, 1)
    kp = rigid_coco17_world(scale, xy, heading, phase, amp)
    assert kp.shape == (50, 17, 3)
    assert np.isfinite(kp).all()

    def length(a: str, b: str) -> np.ndarray:
        return np.linalg.norm(kp[:, IDX[a]] - kp[:, IDX[b]], axis=1)

    for side in ("left", "right"):
        np.testing.assert_allclose(length(f"{side}_shoulder", f"{side}_elbow"), UPPER_ARM * scale)
        np.testing.assert_allclose(length(f"{side}_elbow", f"{side}_wrist"), LOWER_ARM * scale)
        np.testing.assert_allclose(length(f"{side}_hip", f"{side}_knee"), UPPER_LEG * scale)
        np.testing.assert_allclose(length(f"{side}_knee", f"{side}_ankle"), LOWER_LEG * scale)


def test_standing_person_at_origin_facing_x() -> None:
    s = np.array([1.0])
    kp = rigid_coco17_world(s, np.zeros((1, 2)), np.zeros(1), np.zeros(1), np.zeros(1))[0]
    # REP 103 body frame: x forward, y left.
    np.testing.assert_allclose(kp[IDX["left_shoulder"]], [0, SHOULDER_Y, SHOULDER_Z], atol=1e-12)
    np.testing.assert_allclose(kp[IDX["right_hip"]], [0, -HIP_Y, HIP_Z], atol=1e-12)
    assert kp[IDX["nose"], 0] > 0.05  # the face looks forward
    assert kp[IDX["left_eye"], 1] > 0 > kp[IDX["right_eye"], 1]
    assert kp[IDX["left_ear"], 1] > kp[IDX["left_eye"], 1]
    # Legs straight: ankles straight below the hips, near the ground.
    assert kp[IDX["left_ankle"], 2] == pytest.approx(HIP_Z - UPPER_LEG - LOWER_LEG)
    assert kp[IDX["left_ankle"], 2] > 0.0


def test_heading_and_position_move_the_skeleton_rigidly() -> None:
    scale, xy, _, phase, amp = _people(5, 2)
    base = rigid_coco17_world(scale, np.zeros_like(xy), np.zeros(5), phase, amp)
    turned = rigid_coco17_world(scale, xy, np.full(5, math.pi / 2), phase, amp)
    expected = np.stack([-base[..., 1], base[..., 0], base[..., 2]], axis=-1)
    expected[..., :2] += xy[:, None, :]
    np.testing.assert_allclose(turned, expected, atol=1e-12)


def test_walking_swings_the_limbs() -> None:
    s, xy, heading = np.ones(2), np.zeros((2, 2)), np.zeros(2)
    kp = rigid_coco17_world(s, xy, heading, np.array([math.pi / 2, -math.pi / 2]), np.ones(2))
    # Opposite phases: the left knee is ahead in one and behind in the other.
    assert kp[0, IDX["left_knee"], 0] > 0.05 > -0.05 > kp[1, IDX["left_knee"], 0]
    # Arms swing against the legs.
    assert kp[0, IDX["left_wrist"], 0] < kp[0, IDX["right_wrist"], 0]
