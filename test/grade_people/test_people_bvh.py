"""BVH import: parse, write, round trip through the skeleton, retarget a T-pose capture."""

from __future__ import annotations

import math

import numpy as np
import pytest

from grade_people.bvh import BvhError, grounded, parse_bvh, retarget, write_bvh
from grade_people.motion import animation_track, pose, pose_inputs
from grade_people.people import PersonTimeline, cadence_hz
from grade_people.skeleton import (
    JOINT_INDEX,
    PARENTS,
    BodyParams,
    forward_kinematics,
    rest_offsets,
)

BODY = BodyParams(1.7, 0.4, 1.01, 0.97, 1.03)
DT_S = 1 / 100


def _walk_angles(n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Joint rotations, root positions and world joint positions of a turning walk."""
    t = np.arange(n) * DT_S
    heading = 0.4 * t
    xy = np.cumsum(1.1 * DT_S * np.stack([np.cos(heading), np.sin(heading)], 1), axis=0)
    phase = math.pi * float(cadence_hz(1.1, BODY.height_m)) * np.arange(n) * DT_S
    code = np.zeros(n, dtype=np.int8)
    tl = PersonTimeline(xy, heading, phase, np.ones(n), code, np.full(n, np.nan))
    track = animation_track(tl, DT_S)
    pos, rot = pose([BODY] * n, pose_inputs(tl, track, DT_S, np.arange(n)))
    local = rot.copy()
    for j in range(1, len(PARENTS)):
        local[:, j] = np.swapaxes(rot[:, PARENTS[j]], -1, -2) @ rot[:, j]
    return local, pos[:, 0], pos


def test_a_written_motion_reads_back_onto_the_same_joint_positions() -> None:
    local, root, world = _walk_angles(120)
    text = write_bvh(BODY, local, root, DT_S)
    motion = parse_bvh(text)
    assert motion.n_frames == 120
    assert motion.frame_time_s == pytest.approx(DT_S)
    assert len(motion.joints) == 21
    back = retarget(motion, BODY)
    assert set(back.mapped) == set(JOINT_INDEX)
    pos, _ = forward_kinematics(rest_offsets(BODY), back.local_rot, back.root_position)
    np.testing.assert_allclose(pos, world, atol=2e-5)
    # And the text itself round-trips.
    again = parse_bvh(write_bvh(BODY, back.local_rot, back.root_position, DT_S))
    np.testing.assert_allclose(again.values, motion.values, atol=2e-5)


@pytest.mark.parametrize(("lift_m", "ramp_m"), [(0.06, 0.0), (-0.03, 0.0), (0.05, 0.03)])
def test_grounding_puts_a_lifted_clip_back_on_the_floor(lift_m: float, ramp_m: float) -> None:
    local, root, world = _walk_angles(120)  # the walk's feet are on the floor
    # Lifted by lift_m, plus a drift of up to ramp_m over the clip (a retargeting error).
    lift = lift_m + ramp_m * np.linspace(0.0, 1.0, len(root))
    lifted = root + np.stack([np.zeros_like(lift), np.zeros_like(lift), lift], axis=1)
    motion = grounded(parse_bvh(write_bvh(BODY, local, lifted, DT_S)), BODY)
    back = retarget(motion, BODY)
    pos, _ = forward_kinematics(rest_offsets(BODY), back.local_rot, back.root_position)
    # Back where the walk was: every frame is a ground contact, its lowest foot on the floor.
    np.testing.assert_allclose(pos, world, atol=5e-3)
    np.testing.assert_allclose(pos[:, :, :2], world[:, :, :2], atol=2e-5)


T_POSE = """HIERARCHY
ROOT Hips
{
  OFFSET 0 0 0
  CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation
  JOINT LeftUpLeg
  {
    OFFSET 10 0 0
    CHANNELS 3 Zrotation Xrotation Yrotation
    JOINT LeftLeg
    {
      OFFSET 0 -45 0
      CHANNELS 3 Zrotation Xrotation Yrotation
      JOINT LeftFoot
      {
        OFFSET 0 -45 0
        CHANNELS 3 Zrotation Xrotation Yrotation
        End Site
        {
          OFFSET 0 -5 12
        }
      }
    }
  }
  JOINT Spine
  {
    OFFSET 0 10 0
    CHANNELS 3 Zrotation Xrotation Yrotation
    JOINT mixamorig:LeftArm
    {
      OFFSET 18 40 0
      CHANNELS 3 Zrotation Xrotation Yrotation
      JOINT LeftForeArm
      {
        OFFSET 28 0 0
        CHANNELS 3 Zrotation Xrotation Yrotation
        JOINT LeftHand
        {
          OFFSET 25 0 0
          CHANNELS 3 Zrotation Xrotation Yrotation
          End Site
          {
            OFFSET 8 0 0
          }
        }
      }
    }
  }
}
MOTION
Frames: 2
Frame Time: 0.033333
0 95 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0
20 95 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 -90 0 0 0 0 0 0 0 0
"""


def test_a_t_pose_capture_drives_a_hanging_arm_skeleton() -> None:
    motion = parse_bvh(T_POSE)
    out = retarget(motion, BODY)
    assert out.mapped["shoulder_l"] == "mixamorig:LeftArm"
    assert "chest" not in out.mapped  # unmatched joints follow their parent
    pos, _ = forward_kinematics(rest_offsets(BODY), out.local_rot, out.root_position)
    sh, wr = pos[:, JOINT_INDEX["shoulder_l"]], pos[:, JOINT_INDEX["wrist_l"]]
    # Frame 0, T-pose: the arm points to the body's left (+y), level with the shoulder.
    d0 = (wr[0] - sh[0]) / np.linalg.norm(wr[0] - sh[0])
    np.testing.assert_allclose(d0, [0, 1, 0], atol=1e-9)
    # Frame 1: rotated -90 deg about the file's Z (forward), the arm hangs down.
    d1 = (wr[1] - sh[1]) / np.linalg.norm(wr[1] - sh[1])
    np.testing.assert_allclose(d1, [0, 0, -1], atol=1e-9)
    # 20 file units sideways (+X, the character's left) at the file's leg scale.
    ratio = (pos[0, 0, 2] - pos[0, JOINT_INDEX["ankle_l"], 2]) / 90.0
    assert out.root_position[1, 1] == pytest.approx(20 * ratio)
    assert np.all(pos[:, JOINT_INDEX["ankle_l"], 2] > -1e-9)  # feet on or above the floor


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("HIERARCHY ROOT Hips { OFFSET 0 0 0 CHANNELS 1 Wrotation } MOTION", "unknown channel"),
        (T_POSE.replace("Frames: 2", "Frames: 3"), "need 81 values"),
        (T_POSE.replace("Hips", "Root").replace("Spine", "Torso"), "no joint matches the pelvis"),
        ("HIERARCHY ROOT Hips { OFFSET 0 0", "file ends"),
    ],
)
def test_bad_files_say_what_is_wrong(text: str, message: str) -> None:
    with pytest.raises(BvhError, match=message):
        retarget(parse_bvh(text), BODY)
