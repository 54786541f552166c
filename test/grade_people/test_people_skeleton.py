"""The skeleton: hierarchy, seeded proportions, forward kinematics, COCO-17 keypoints."""

from __future__ import annotations

import numpy as np
import pytest

from grade_common.keypoints import COCO17_NAMES
from grade_common.rotations import matrices_to_quats, quats_to_matrices
from grade_people.skeleton import (
    JOINT_INDEX,
    JOINT_NAMES,
    N_JOINTS,
    PARENTS,
    BodyParams,
    coco17_world,
    euler_to_matrix,
    forward_kinematics,
    random_body,
    rest_offsets,
    rest_positions,
)

REQUIRED = [
    "pelvis",
    "spine",
    "chest",
    "neck",
    "head",
    "shoulder_l",
    "shoulder_r",
    "elbow_l",
    "elbow_r",
    "wrist_l",
    "wrist_r",
    "hip_l",
    "hip_r",
    "knee_l",
    "knee_r",
    "ankle_l",
    "ankle_r",
    "toe_l",
    "toe_r",
]


def _body(height: float = 1.75) -> BodyParams:
    return BodyParams(height, 0.5, 1.0, 1.0, 1.0)


def test_hierarchy_has_every_required_joint_and_parents_come_first() -> None:
    assert set(REQUIRED) <= set(JOINT_NAMES)
    assert PARENTS[0] == -1
    assert all(0 <= PARENTS[j] < j for j in range(1, N_JOINTS))
    assert JOINT_NAMES[PARENTS[JOINT_INDEX["knee_l"]]] == "hip_l"
    assert JOINT_NAMES[PARENTS[JOINT_INDEX["head"]]] == "neck"


@pytest.mark.parametrize("height", [1.5, 1.75, 2.0])
def test_rest_pose_stands_on_the_floor_at_its_height(height: float) -> None:
    body = _body(height)
    pos = rest_positions(body)
    crown = pos[JOINT_INDEX["head"], 2] + 0.16 * body.scale
    assert crown == pytest.approx(height, abs=1e-9)
    assert pos[JOINT_INDEX["toe_l"], 2] > 0.0
    assert pos[JOINT_INDEX["ankle_l"], 2] == pytest.approx(0.085 * body.scale)
    assert pos[JOINT_INDEX["shoulder_l"], 1] > 0 > pos[JOINT_INDEX["shoulder_r"], 1]


def test_identity_rotations_give_the_rest_pose() -> None:
    body = _body()
    eye = np.broadcast_to(np.eye(3), (N_JOINTS, 3, 3))
    pos, rot = forward_kinematics(rest_offsets(body), eye, rest_positions(body)[0])
    np.testing.assert_allclose(pos, rest_positions(body), atol=1e-12)
    np.testing.assert_allclose(rot, eye, atol=1e-12)


def test_forward_kinematics_keeps_bone_lengths_and_follows_the_root() -> None:
    rng = np.random.default_rng(4)
    body = _body()
    off = rest_offsets(body)
    angles = rng.uniform(-1.0, 1.0, (5, N_JOINTS, 3))
    root = rng.uniform(-3, 3, (5, 3))
    pos, rot = forward_kinematics(off, euler_to_matrix(angles), root)
    for j in range(1, N_JOINTS):
        length = np.linalg.norm(pos[:, j] - pos[:, PARENTS[j]], axis=1)
        np.testing.assert_allclose(length, np.linalg.norm(off[j]), atol=1e-12)
    np.testing.assert_allclose(pos[:, 0], root)
    np.testing.assert_allclose(
        rot @ np.swapaxes(rot, -1, -2), np.broadcast_to(np.eye(3), rot.shape), atol=1e-12
    )
    # A yaw of the root turns the whole body about it.
    yaw = np.zeros((N_JOINTS, 3))
    yaw[0, 2] = np.pi / 2
    turned, _ = forward_kinematics(off, euler_to_matrix(yaw), np.zeros(3))
    rest = rest_positions(body) - rest_positions(body)[0]
    np.testing.assert_allclose(turned[:, 0], -rest[:, 1], atol=1e-12)
    np.testing.assert_allclose(turned[:, 1], rest[:, 0], atol=1e-12)


def test_random_body_is_seeded_and_in_range() -> None:
    a = random_body(1.7, np.random.default_rng(3))
    b = random_body(1.7, np.random.default_rng(3))
    c = random_body(1.7, np.random.default_rng(4))
    assert a == b
    assert a != c
    assert 0.0 <= a.build <= 1.0


def test_quaternion_conversions_round_trip() -> None:
    rng = np.random.default_rng(0)
    rot = euler_to_matrix(rng.uniform(-3, 3, (7, 4, 3)))
    q = matrices_to_quats(rot)
    assert q.shape == (7, 4, 4)
    assert (q[..., 0] >= 0).all()
    np.testing.assert_allclose(quats_to_matrices(q), rot, atol=1e-12)


def test_coco17_keypoints_sit_on_the_skeleton() -> None:
    body = _body()
    eye = np.broadcast_to(np.eye(3), (2, N_JOINTS, 3, 3))
    pos, rot = forward_kinematics(rest_offsets(body), eye, np.array([[0, 0, 0.975], [1, 2, 0.975]]))
    kp = coco17_world(pos, rot, np.array([1.0, 1.0]))
    assert kp.shape == (2, 17, 3)
    assert len(COCO17_NAMES) == 17
    names = list(COCO17_NAMES)
    k = kp[0]
    assert k[names.index("nose"), 0] > pos[0, JOINT_INDEX["head"], 0] + 0.05  # faces +x
    assert k[names.index("left_eye"), 1] > 0 > k[names.index("right_eye"), 1]
    assert k[names.index("left_ear"), 1] > k[names.index("left_eye"), 1]
    np.testing.assert_allclose(k[names.index("left_knee")], pos[0, JOINT_INDEX["knee_l"]])
    np.testing.assert_allclose(kp[1] - kp[0], np.broadcast_to([1, 2, 0], (17, 3)), atol=1e-12)
