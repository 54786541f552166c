"""Finding .venv-realism's Python and running the MediaPipe worker on a batch of crops."""

from __future__ import annotations

import json
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from grade_common.types import FloatArray
from grade_common.venv_worker import WorkerEnvironment, log_tail
from grade_eval.errors import RealismError, RealismSetupError
from grade_eval.realism.landmarks import MEDIAPIPE_POSE_LANDMARKS

WORKER = Path(__file__).with_name("mediapipe_worker.py")
PYTHON_ENV = "GRADE_MEDIAPIPE_PYTHON"
# `make setup-realism` puts mediapipe in its own environment: 0.10.21 wants numpy < 2.
REALISM_VENV = ".venv-realism"
SETUP_COMMAND = "make setup-realism"


@dataclass(frozen=True)
class ModelSettings:
    """MediaPipe's settings (the legacy solutions' own defaults, and its bundled models)."""

    pose_model_complexity: int = 1  # 1 = pose_landmark_full, the one the wheel bundles
    min_pose_confidence: float = 0.5
    face_model: int = 0  # 0 = short range (faces within ~2 m, i.e. large in the crop)
    min_face_confidence: float = 0.5


@dataclass(frozen=True)
class WorkerResult:
    """Per body crop its (33, 3) landmarks (x, y normalised over the crop, visibility) or None;
    per face crop its detections as (K, 5) [x_min, y_min, width, height, score], normalised."""

    landmarks: list[FloatArray | None]
    faces: list[FloatArray]


MEDIAPIPE = WorkerEnvironment(
    module="mediapipe",
    env_var=PYTHON_ENV,
    venv=REALISM_VENV,
    setup_command=SETUP_COMMAND,
    missing="MediaPipe is not installed (its own environment .venv-realism, about 0.4 GB)",
    wanted="mediapipe 0.10.21",
    error=RealismSetupError,
)


def mediapipe_python() -> str:
    """The interpreter that imports mediapipe: $GRADE_MEDIAPIPE_PYTHON, this one, or
    .venv-realism's.

    Raises:
        RealismSetupError: none has mediapipe (the message names the set-up command).
    """
    return MEDIAPIPE.python()


def run_mediapipe(
    body: NDArray[np.uint8],
    face: NDArray[np.uint8],
    settings: ModelSettings,
    python: str | None = None,
) -> WorkerResult:
    """Run MediaPipe Pose on (N, S, S, 3) RGB body crops and face detection on (M, F, F, 3).

    Raises:
        RealismSetupError: the interpreter cannot import mediapipe.
        RealismError: the worker failed or answered incompletely.
    """
    exe = python or mediapipe_python()
    landmarks: list[FloatArray | None] = [None] * len(body)
    faces: list[FloatArray] = [np.zeros((0, 5))] * len(face)
    seen = {"body": 0, "face": 0}

    def on_event(event: dict[str, Any]) -> None:
        if "body" in event:
            marks = event["landmarks"]
            if marks is not None:
                array = np.asarray(marks, dtype=np.float64)
                if array.shape != (MEDIAPIPE_POSE_LANDMARKS, 3):
                    raise RealismError(f"the MediaPipe worker sent landmarks {array.shape}")
                landmarks[int(event["body"])] = array
            seen["body"] += 1
        elif "face" in event:
            faces[int(event["face"])] = np.asarray(event["boxes"], dtype=np.float64).reshape(-1, 5)
            seen["face"] += 1

    with tempfile.TemporaryDirectory(prefix="grade-realism-") as tmp:
        job_dir = Path(tmp)
        (job_dir / "job.json").write_text(json.dumps(settings.__dict__))
        np.savez(job_dir / "crops.npz", body=body, face=face)
        err = MEDIAPIPE.run_job(
            exe, WORKER, job_dir, on_event, failure=RealismError, name="MediaPipe worker"
        )
    if seen["body"] != len(body) or seen["face"] != len(face):
        raise RealismError(
            f"the MediaPipe worker answered {seen['body']}/{len(body)} body and "
            f"{seen['face']}/{len(face)} face crops:\n{log_tail(err)}"
        )
    return WorkerResult(landmarks, faces)
