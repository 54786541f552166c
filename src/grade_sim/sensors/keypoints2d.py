"""Keypoints in a camera image: pinhole projection and COCO visibility from the render buffers.

Pixel coordinates follow the ROS convention of the camera's K: the centre of pixel (0, 0) is at
(0, 0), so a keypoint falls on pixel (round(u), round(v)). COCO's visibility flag is
0 = outside the image (or behind the camera), 1 = in the image but hidden, 2 = visible.

A joint lies inside the body, behind the skin the camera sees, so "visible" cannot mean that
the rendered depth equals the joint's depth. With a depth buffer it means: nothing is in front
of the joint by more than the body's own thickness there (`self_depth_m` per keypoint: about
the torso's radius for a joint, a few centimetres for a point just under the skin of the face).
A joint behind a wall, another actor or the person's own torso seen from the side is hidden
(1), and so is the nose of a head seen from behind. Without depth, the instance mask decides
(the pixel shows the same body), which marks a wrist one pixel off a thin forearm as hidden;
with neither, every keypoint in the image is visible. Each result names the buffer it came
from (`VisibilitySource`). The depth rule leaves the mask free to check it: the tests require
visible keypoints to land on their body's mask.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from grade_common.types import FloatArray

# How far the rendered surface may lie in front of a joint that still counts as visible: the
# radius of the thickest body part at the joint (the torso, 0.15 m for a 1.75 m person) plus
# margin for a body taller than that.
SELF_DEPTH_M = 0.2
NEAR_M = 1e-3


class VisibilitySource(enum.Enum):
    """The render buffer the visibility flags come from."""

    DEPTH = "depth"  # visible where nothing in the depth image lies in front of the joint
    INSTANCE = "instance"  # visible where the instance mask shows the body's own id
    NONE = "none"  # no buffer: every keypoint inside the image counts as visible


@dataclass(frozen=True)
class ImageKeypoints:
    """Keypoints of P bodies in one image."""

    uv: FloatArray  # (P, K, 2) pixel coordinates (ROS convention), NaN behind the camera
    depth_m: FloatArray  # (P, K) along the optical axis
    visibility: NDArray[np.uint8]  # (P, K) COCO: 0 outside, 1 hidden, 2 visible
    source: VisibilitySource


def project_keypoints(
    points_world: FloatArray,
    position_world_optical: FloatArray,
    r_world_optical: FloatArray,
    k: FloatArray,
    width: int,
    height: int,
    depth_m: NDArray[np.float32] | None,
    instance: NDArray[np.uint16] | None,
    instance_ids: NDArray[np.integer] | None = None,
    self_depth_m: FloatArray | float = SELF_DEPTH_M,
) -> ImageKeypoints:
    """Project world keypoints (P, K, 3) into a camera and flag their visibility.

    Args:
        r_world_optical: rotation of the optical frame in the world (3x3).
        depth_m: the frame's planar depth (0 = no return); None if not rendered.
        instance: the frame's instance mask; None if not rendered.
        instance_ids: (P,) instance id of each body (used with `instance` and no depth).
        self_depth_m: (K,) or one value: how far in front of each keypoint the rendered
            surface may be for it to count as visible (its depth below the body's surface).
    """
    pts = np.asarray(points_world, dtype=np.float64)
    cam = (pts - position_world_optical) @ r_world_optical
    z = cam[..., 2]
    in_front = z > NEAR_M
    safe_z = np.where(in_front, z, 1.0)
    uv = (cam @ k.T)[..., :2] / safe_z[..., None]
    uv[~in_front] = np.nan
    col = np.rint(np.nan_to_num(uv[..., 0], nan=-1.0)).astype(np.int64)
    row = np.rint(np.nan_to_num(uv[..., 1], nan=-1.0)).astype(np.int64)
    inside = in_front & (col >= 0) & (col < width) & (row >= 0) & (row < height)
    visible = inside.copy()
    c = np.where(inside, col, 0)
    r = np.where(inside, row, 0)
    if depth_m is not None:
        source = VisibilitySource.DEPTH
        surface = depth_m[r, c].astype(np.float64)
        # 0 = no return (sky): nothing in front of the joint.
        visible &= (surface <= 0.0) | (surface >= z - np.asarray(self_depth_m))
    elif instance is not None:
        if instance_ids is None:
            raise ValueError("project_keypoints: an instance mask needs instance_ids")
        source = VisibilitySource.INSTANCE
        ids = np.asarray(instance_ids, dtype=np.int64)[:, None]
        visible &= instance[r, c].astype(np.int64) == ids
    else:
        source = VisibilitySource.NONE
    visibility = np.where(visible, 2, np.where(inside, 1, 0)).astype(np.uint8)
    return ImageKeypoints(uv, z, visibility, source)
