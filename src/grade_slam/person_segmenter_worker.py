"""The person-segmentation worker: run by .venv-realism's Python in a process of its own.

    python person_segmenter_worker.py JOB_DIR

It imports only the standard library, numpy, OpenCV and mediapipe (0.10.21: its legacy
solutions carry their .tflite models in the wheel, so nothing is downloaded; its environment pins
numpy < 2). It reads JOB_DIR/job.json (`model`, `threshold`, `images`: RGB image files, `out`: a
folder) and writes, for the i-th image, `out/<i>.png`: 255 where the model's person confidence is
at least `threshold`, else 0. It prints one JSON line per image on stdout:
`{"image": i, "person_px": n}`.

Models (grade_slam.person_segmenter.SegmenterModel):
- `selfie`: Selfie Segmentation, general model (256 x 256 input);
- `selfie_landscape`: Selfie Segmentation, landscape model (144 x 256 input);
- `pose`: the pose landmarker's segmentation output (pose_landmark_full, tracking one person over
  the sequence, as the video mode does).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import cv2
import numpy as np


def _emit(event: dict[str, Any]) -> None:
    print(json.dumps(event), flush=True)


def _segmenter(model: str) -> Any:
    import mediapipe as mp

    if model in ("selfie", "selfie_landscape"):
        return mp.solutions.selfie_segmentation.SelfieSegmentation(
            model_selection=0 if model == "selfie" else 1
        )
    if model == "pose":
        return mp.solutions.pose.Pose(
            static_image_mode=False, model_complexity=1, enable_segmentation=True
        )
    raise ValueError(f"model {model!r}: allowed selfie, selfie_landscape, pose")


def main(job_dir: Path) -> int:
    job = json.loads((job_dir / "job.json").read_text())
    threshold = float(job["threshold"])
    out = Path(job["out"])
    out.mkdir(parents=True, exist_ok=True)
    with _segmenter(str(job["model"])) as segmenter:
        for index, name in enumerate(job["images"]):
            bgr = cv2.imread(str(name), cv2.IMREAD_COLOR)
            if bgr is None:
                raise FileNotFoundError(f"cannot read the image {name}")
            result = segmenter.process(np.ascontiguousarray(bgr[:, :, ::-1]))
            confidence = result.segmentation_mask
            if confidence is None:  # the pose model found no person in this frame
                mask = np.zeros(bgr.shape[:2], np.uint8)
            else:
                mask = np.where(confidence >= threshold, 255, 0).astype(np.uint8)
            if not cv2.imwrite(str(out / f"{index}.png"), mask):
                raise OSError(f"cannot write {out / f'{index}.png'}")
            _emit({"image": index, "person_px": int(np.count_nonzero(mask))})
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1])))
