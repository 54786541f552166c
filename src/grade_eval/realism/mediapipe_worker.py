"""The MediaPipe worker: run by .venv-realism's Python in a process of its own.

    python mediapipe_worker.py JOB_DIR

It imports only the standard library, numpy and mediapipe (0.10.21, whose legacy solutions
carry their .tflite models; its environment pins numpy < 2: see docs/people.md). It reads
JOB_DIR/job.json (settings) and JOB_DIR/crops.npz (`body`: (N, S, S, 3) and `face`:
(M, F, F, 3) RGB uint8 crops) and prints one JSON line per crop on stdout:
`{"body": i, "landmarks": [[x, y, visibility] * 33] or null}` with x, y normalised over the
crop, then `{"face": j, "boxes": [[x_min, y_min, width, height, score], ...]}` (normalised).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import numpy as np


def _emit(event: dict[str, Any]) -> None:
    print(json.dumps(event), flush=True)


def main(job_dir: Path) -> int:
    import mediapipe as mp

    job = json.loads((job_dir / "job.json").read_text())
    with np.load(job_dir / "crops.npz") as data:
        body, face = data["body"], data["face"]
    with mp.solutions.pose.Pose(
        static_image_mode=True,
        model_complexity=int(job["pose_model_complexity"]),
        min_detection_confidence=float(job["min_pose_confidence"]),
    ) as pose:
        for index, crop in enumerate(body):
            result = pose.process(np.ascontiguousarray(crop))
            marks = None
            if result.pose_landmarks is not None:
                marks = [[m.x, m.y, m.visibility] for m in result.pose_landmarks.landmark]
            _emit({"body": index, "landmarks": marks})
    with mp.solutions.face_detection.FaceDetection(
        model_selection=int(job["face_model"]),
        min_detection_confidence=float(job["min_face_confidence"]),
    ) as detector:
        for index, crop in enumerate(face):
            result = detector.process(np.ascontiguousarray(crop))
            boxes = []
            for detection in result.detections or []:
                box = detection.location_data.relative_bounding_box
                boxes.append([box.xmin, box.ymin, box.width, box.height, detection.score[0]])
            _emit({"face": index, "boxes": boxes})
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1])))
