"""Projection of keypoints into an image and COCO visibility from depth or instance buffers."""

from __future__ import annotations

import numpy as np
import pytest

from grade_sim.sensors.keypoints2d import SELF_DEPTH_M, VisibilitySource, project_keypoints

K = np.array([[100.0, 0.0, 79.5], [0.0, 100.0, 59.5], [0.0, 0.0, 1.0]])
W, H = 160, 120
EYE = np.eye(3)  # optical frame = world frame: z forward, x right, y down


def _points(*xyz: tuple[float, float, float]) -> np.ndarray:
    return np.array([list(xyz)], dtype=np.float64)


def test_projection_and_outside_flags() -> None:
    pts = _points((0, 0, 2), (1, 0.5, 2), (0, 0, -1), (10, 0, 2))
    out = project_keypoints(pts, np.zeros(3), EYE, K, W, H, None, None)
    np.testing.assert_allclose(out.uv[0, 0], [79.5, 59.5])
    np.testing.assert_allclose(out.uv[0, 1], [129.5, 84.5])
    assert np.isnan(out.uv[0, 2]).all()  # behind the camera
    assert out.visibility.tolist() == [[2, 2, 0, 0]]
    assert out.source is VisibilitySource.NONE


def test_camera_pose_is_applied() -> None:
    # Camera 1 m to the left (x = -1) looking along world z: a point at x = 0 is right of centre.
    out = project_keypoints(_points((0, 0, 2)), np.array([-1.0, 0, 0]), EYE, K, W, H, None, None)
    np.testing.assert_allclose(out.uv[0, 0], [129.5, 59.5])


@pytest.mark.parametrize(
    ("surface_m", "joint_m", "expected"),
    [
        (2.0, 2.1, 2),  # the skin in front of the joint: visible
        (2.0, 2.0 + SELF_DEPTH_M - 0.01, 2),
        (2.0, 2.0 + SELF_DEPTH_M + 0.01, 1),  # something else in front
        (1.0, 3.0, 1),
        (0.0, 3.0, 2),  # no return (sky): nothing in front
    ],
)
def test_depth_visibility(surface_m: float, joint_m: float, expected: int) -> None:
    depth = np.full((H, W), surface_m, dtype=np.float32)
    out = project_keypoints(_points((0, 0, joint_m)), np.zeros(3), EYE, K, W, H, depth, None)
    assert out.visibility[0, 0] == expected
    assert out.source is VisibilitySource.DEPTH


def test_instance_visibility_without_depth() -> None:
    mask = np.zeros((H, W), dtype=np.uint16)
    mask[:, :80] = 7
    pts = np.array([[[-0.5, 0, 2], [0.5, 0, 2]]])
    out = project_keypoints(pts, np.zeros(3), EYE, K, W, H, None, mask, np.array([7]))
    assert out.visibility.tolist() == [[2, 1]]
    assert out.source is VisibilitySource.INSTANCE
    with pytest.raises(ValueError, match="instance_ids"):
        project_keypoints(pts, np.zeros(3), EYE, K, W, H, None, mask)


def test_depth_tolerance_per_keypoint() -> None:
    """A face point just under the skin is hidden by the head in front of it; a joint deep in
    the torso is not hidden by the torso's own surface."""
    depth = np.full((H, W), 2.0, dtype=np.float32)
    pts = np.array([[[0, 0, 2.1], [0, 0, 2.1]]])
    out = project_keypoints(
        pts, np.zeros(3), EYE, K, W, H, depth, None, None, np.array([0.05, 0.2])
    )
    assert out.visibility.tolist() == [[1, 2]]
