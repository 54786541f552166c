"""MediaPipe Pose's 33 landmarks onto COCO-17 (grade_common.keypoints order), and left/right.

MediaPipe names its landmarks by the person's side, as COCO does: `left_eye` is the person's
left eye in both.
"""

from __future__ import annotations

import numpy as np

from grade_common.keypoints import COCO17_NAMES
from grade_common.types import FloatArray

MEDIAPIPE_POSE_LANDMARKS = 33
# MediaPipe Pose landmark index of each COCO-17 keypoint, in COCO order.
MEDIAPIPE_INDEX_OF_COCO17 = {
    "nose": 0,
    "left_eye": 2,
    "right_eye": 5,
    "left_ear": 7,
    "right_ear": 8,
    "left_shoulder": 11,
    "right_shoulder": 12,
    "left_elbow": 13,
    "right_elbow": 14,
    "left_wrist": 15,
    "right_wrist": 16,
    "left_hip": 23,
    "right_hip": 24,
    "left_knee": 25,
    "right_knee": 26,
    "left_ankle": 27,
    "right_ankle": 28,
}
MEDIAPIPE_TO_COCO17 = np.array([MEDIAPIPE_INDEX_OF_COCO17[n] for n in COCO17_NAMES])


def _mirror(name: str) -> str:
    if name.startswith("left_"):
        return "right_" + name[5:]
    if name.startswith("right_"):
        return "left_" + name[6:]
    return name


# COCO index of the mirror keypoint (left <-> right), in COCO order.
COCO17_FLIP = np.array([COCO17_NAMES.index(_mirror(n)) for n in COCO17_NAMES])
COCO17_SIDED = np.array([n != _mirror(n) for n in COCO17_NAMES])


def coco17_from_mediapipe(landmarks: FloatArray) -> FloatArray:
    """(33, C) MediaPipe landmarks -> (17, C) in COCO-17 order.

    Raises:
        ValueError: not 33 landmarks.
    """
    array = np.asarray(landmarks, dtype=np.float64)
    if array.ndim != 2 or array.shape[0] != MEDIAPIPE_POSE_LANDMARKS:
        raise ValueError(f"expected ({MEDIAPIPE_POSE_LANDMARKS}, C) landmarks, got {array.shape}")
    out: FloatArray = array[MEDIAPIPE_TO_COCO17]
    return out
