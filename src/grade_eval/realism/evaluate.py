"""A run's realism numbers: MediaPipe on crops around its people, scored against our keypoints."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from grade_common.types import FloatArray
from grade_eval.errors import RealismError
from grade_eval.realism.crops import CropWindow
from grade_eval.realism.landmarks import coco17_from_mediapipe
from grade_eval.realism.samples import PersonSample, SampleSettings, run_samples
from grade_eval.realism.scoring import PoseScore, RealismSummary, score_pose, summarise
from grade_eval.realism.worker import ModelSettings, run_mediapipe


def face_found(boxes: FloatArray, nose_px: FloatArray, window: CropWindow) -> bool:
    """Whether a detection (normalised [x_min, y_min, w, h, score] rows) contains our nose."""
    nose = (
        np.asarray(nose_px, dtype=np.float64) - [window.left_px, window.top_px]
    ) / window.side_px
    return any(
        x <= nose[0] <= x + w and y <= nose[1] <= y + h for x, y, w, h, _ in np.asarray(boxes)
    )


def evaluate_run(
    run_dir: Path,
    samples: SampleSettings | None = None,
    model: ModelSettings | None = None,
    python: str | None = None,
) -> RealismSummary:
    """MediaPipe Pose and face detection on every sampled person of a run, scored.

    Raises:
        RealismError: the run has no person to score, or it cannot be read.
        RealismSetupError: MediaPipe is not installed.
    """
    people: list[PersonSample] = list(run_samples(run_dir, samples or SampleSettings()))
    if not people:
        raise RealismError(f"{run_dir}: no person passes the sample filters")
    with_face = [p for p in people if p.face is not None and p.face_window is not None]
    result = run_mediapipe(
        np.stack([p.body for p in people]),
        np.stack([p.face for p in with_face if p.face is not None])
        if with_face
        else np.zeros((0, 8, 8, 3), np.uint8),
        model or ModelSettings(),
        python,
    )
    poses: list[PoseScore] = []
    for person, marks in zip(people, result.landmarks, strict=True):
        if marks is not None:
            predicted = person.body_window.to_image(coco17_from_mediapipe(marks)[:, :2])
            poses.append(score_pose(predicted, person.keypoints_uvv, person.box_side_px))
    faces = sum(
        face_found(boxes, p.keypoints_uvv[0, :2], p.face_window)
        for p, boxes in zip(with_face, result.faces, strict=True)
        if p.face_window is not None
    )
    return summarise(len(people), poses, len(with_face), int(faces))
