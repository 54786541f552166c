"""Scores of a pose model against our COCO-17 keypoints: PCK, left/right swaps, face finds.

PCK@alpha counts a predicted keypoint as correct when it lies within alpha * the longer side of
the person's tight 2D box (boxes2d.jsonl: the box of the visible mask) of ours; only keypoints
that are visible in our ground truth (COCO flag 2) count. A pose is swapped when its keypoints
mirrored left <-> right match ours better than as predicted, by more than `SWAP_MARGIN` of the
box's longer side in mean error over the sided keypoints (a person seen side-on, whose left and
right keypoints nearly coincide, is not counted as swapped by noise).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from grade_common.types import FloatArray
from grade_eval.realism.landmarks import COCO17_FLIP, COCO17_SIDED

PCK_ALPHA = 0.2
SWAP_MARGIN = 0.05
MIN_SIDED_FOR_SWAP = 4  # visible left/right keypoints needed to call a swap
VISIBLE = 2  # COCO's flag of a visible keypoint


@dataclass(frozen=True)
class PoseScore:
    """One person's pose against ours."""

    correct: int  # visible keypoints within the PCK threshold
    counted: int  # visible keypoints
    swapped: bool
    facing: bool  # towards the camera, by our keypoints (see `is_facing`)


def pck_counts(
    predicted_px: FloatArray, truth_px: FloatArray, counted: NDArray[np.bool_], threshold_px: float
) -> tuple[int, int]:
    """(correct, counted) of (17, 2) predictions against (17, 2) truth over the `counted` mask."""
    error = np.linalg.norm(np.asarray(predicted_px) - np.asarray(truth_px), axis=1)
    return int(np.count_nonzero(counted & (error <= threshold_px))), int(np.count_nonzero(counted))


def is_swapped(
    predicted_px: FloatArray, truth_px: FloatArray, counted: NDArray[np.bool_], box_side_px: float
) -> bool:
    """Whether the mirrored prediction matches ours clearly better than the prediction."""
    pred = np.asarray(predicted_px, dtype=np.float64)
    truth = np.asarray(truth_px, dtype=np.float64)
    # Both a keypoint and its mirror must be visible, so the two sums cover the same points.
    use = counted & COCO17_SIDED & counted[COCO17_FLIP]
    if np.count_nonzero(use) < MIN_SIDED_FOR_SWAP:
        return False
    direct = np.linalg.norm(pred[use] - truth[use], axis=1).mean()
    mirrored = np.linalg.norm(pred[COCO17_FLIP][use] - truth[use], axis=1).mean()
    return bool(mirrored + SWAP_MARGIN * box_side_px < direct)


def score_pose(
    predicted_px: FloatArray, truth_uvv: FloatArray, box_side_px: float, alpha: float = PCK_ALPHA
) -> PoseScore:
    """Score (17, 2) predicted pixels against our (17, 3) [u, v, vis] keypoints."""
    truth = np.asarray(truth_uvv, dtype=np.float64)
    counted = truth[:, 2] == VISIBLE
    correct, n = pck_counts(predicted_px, truth[:, :2], counted, alpha * box_side_px)
    swapped = is_swapped(predicted_px, truth[:, :2], counted, box_side_px)
    return PoseScore(correct, n, swapped, is_facing(truth))


def is_facing(truth_uvv: FloatArray) -> bool:
    """Whether the person faces the camera by our keypoints: both shoulders visible and the
    person's left shoulder on the image's right (as we see someone who faces us)."""
    truth = np.asarray(truth_uvv, dtype=np.float64)
    left, right = truth[5], truth[6]  # COCO left_shoulder, right_shoulder
    return bool(left[2] == VISIBLE and right[2] == VISIBLE and left[0] > right[0])


def _fraction(part: int, whole: int) -> float:
    """part / whole; NaN where there is nothing to count (no crop, pose or face of that kind)."""
    return part / whole if whole else float("nan")


@dataclass(frozen=True)
class RealismSummary:
    """The benchmark's numbers for one run."""

    people: int  # person crops tried
    found: int  # crops on which the model found a pose
    correct: int  # PCK hits over found poses
    counted: int  # visible keypoints of found poses
    swapped: int  # found poses that are mirrored
    facing: int  # found poses of people facing the camera
    swapped_facing: int  # of those, mirrored
    faces_tried: int  # people with nose and both eyes visible
    faces_found: int

    @property
    def found_fraction(self) -> float:
        return _fraction(self.found, self.people)

    @property
    def pck(self) -> float:
        """PCK over the keypoints of the poses found (missed people do not count)."""
        return _fraction(self.correct, self.counted)

    @property
    def swapped_fraction(self) -> float:
        return _fraction(self.swapped, self.found)

    @property
    def face_fraction(self) -> float:
        return _fraction(self.faces_found, self.faces_tried)


def summarise(
    people: int, poses: list[PoseScore], faces_tried: int, faces_found: int
) -> RealismSummary:
    """The summary of a run: `poses` are the scores of the people on whom a pose was found."""
    return RealismSummary(
        people=people,
        found=len(poses),
        correct=sum(p.correct for p in poses),
        counted=sum(p.counted for p in poses),
        swapped=sum(p.swapped for p in poses),
        facing=sum(p.facing for p in poses),
        swapped_facing=sum(p.swapped and p.facing for p in poses),
        faces_tried=faces_tried,
        faces_found=faces_found,
    )


def face_visible(truth_uvv: FloatArray) -> bool:
    """Nose and both eyes visible in our keypoints (COCO indices 0, 1, 2)."""
    return bool(np.all(np.asarray(truth_uvv)[:3, 2] == VISIBLE))
