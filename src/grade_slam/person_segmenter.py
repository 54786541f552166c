"""A person segmenter trained on real photographs (MediaPipe), for DynaSLAM-style masking.

DynaSLAM runs a segmentation network on each frame and drops the features on people before
tracking. Here the network is one of MediaPipe 0.10.21's bundled models, run by
`person_segmenter_worker.py` in .venv-realism (MediaPipe wants numpy < 2; grade pins 2.x), reached
through `grade_common.venv_worker`. Its masks then take the place of the ground-truth masks in
the oracle's mechanism (`frames.mask_dynamic`): the learned-mask backend differs from the oracle
only in where the mask comes from. Against the ground-truth person masks it is scored by IoU and
by the share of person pixels it misses (`MaskScore`).
"""

from __future__ import annotations

import dataclasses
import enum
import json
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cv2
import numpy as np
from numpy.typing import NDArray

from grade_common.tum import ImageKind, list_file, read_list
from grade_common.venv_worker import log_tail
from grade_eval.realism.worker import MEDIAPIPE as REALISM_MEDIAPIPE
from grade_slam.camera_folder import stamp_ns_of
from grade_slam.errors import SlamConfigError, SlamError, SlamInputError

WORKER = Path(__file__).with_name("person_segmenter_worker.py")
# The realism score's MediaPipe (.venv-realism, $GRADE_MEDIAPIPE_PYTHON), failing as a SLAM set-up.
MEDIAPIPE = dataclasses.replace(REALISM_MEDIAPIPE, error=SlamConfigError)


class SegmenterModel(enum.StrEnum):
    """MediaPipe's person-segmentation models bundled in the 0.10.21 wheel (no download)."""

    SELFIE = "selfie"  # modules/selfie_segmentation/selfie_segmentation.tflite, 256 x 256
    SELFIE_LANDSCAPE = "selfie_landscape"  # selfie_segmentation_landscape.tflite, 144 x 256
    POSE = "pose"  # modules/pose_landmark/pose_landmark_full.tflite's segmentation, one person


# The model the learned-mask backend uses: the better one on our frames at room distances
# (docs/slam.md, "The learned person segmenter").
DEFAULT_MODEL = SegmenterModel.SELFIE
DEFAULT_THRESHOLD = 0.5


@dataclass(frozen=True)
class LearnedMasks:
    """A segmenter's person masks of a camera folder's frames, one PNG per RGB stamp."""

    files: dict[int, Path]  # RGB stamp (ns) -> mask PNG

    def mask(self, stamp_ns: int, shape: tuple[int, int]) -> NDArray[np.bool_]:
        """The mask of the frame `stamp` (True on people).

        Raises:
            SlamInputError: no mask for the stamp, or not the image's size.
        """
        path = self.files.get(stamp_ns)
        image = None if path is None else cv2.imread(str(path), cv2.IMREAD_UNCHANGED)
        if image is None:
            raise SlamInputError(f"no readable learned mask for the frame {stamp_ns} ns ({path})")
        if image.shape != shape:
            raise SlamInputError(f"learned mask {path}: {image.shape}, the frame is {shape}")
        return np.asarray(image > 0)


def segment_folder(
    camera_dir: str | Path,
    out_dir: str | Path,
    model: SegmenterModel = DEFAULT_MODEL,
    threshold: float = DEFAULT_THRESHOLD,
    python: str | None = None,
) -> LearnedMasks:
    """Segment people in every RGB image of a recorded camera folder into `out_dir`.

    Raises:
        SlamConfigError: no interpreter imports mediapipe (names `make setup-realism`), or the
            threshold is outside (0, 1).
        SlamInputError: the folder has no rgb.txt.
        SlamError: the worker failed or answered incompletely.
    """
    if not 0.0 < threshold < 1.0:
        raise SlamConfigError(f"segmenter threshold = {threshold} is invalid: allowed (0, 1)")
    root = Path(camera_dir)
    entries = read_list(root / list_file(ImageKind.RGB), error=SlamInputError)
    run_worker([root / name for _, name in entries], Path(out_dir), model, threshold, python)
    return masks_in(camera_dir, out_dir)


def masks_in(camera_dir: str | Path, mask_dir: str | Path) -> LearnedMasks:
    """The masks `segment_folder` wrote for a camera folder into `mask_dir`.

    Raises:
        SlamInputError: the folder has no rgb.txt.
    """
    entries = read_list(Path(camera_dir) / list_file(ImageKind.RGB), error=SlamInputError)
    out = Path(mask_dir)
    return LearnedMasks({stamp_ns_of(s): out / f"{i}.png" for i, (s, _) in enumerate(entries)})


def run_worker(
    images: Sequence[Path],
    out_dir: Path,
    model: SegmenterModel,
    threshold: float,
    python: str | None = None,
) -> None:
    """Run the worker on `images`, writing `out_dir/<i>.png` for the i-th one.

    Raises:
        SlamConfigError: the interpreter cannot import mediapipe.
        SlamError: the worker failed or answered incompletely.
    """
    exe = python or MEDIAPIPE.python()
    seen: list[int] = []

    def on_event(event: dict[str, Any]) -> None:
        if "image" in event:
            seen.append(int(event["image"]))

    with tempfile.TemporaryDirectory(prefix="grade-segmenter-") as tmp:
        job_dir = Path(tmp)
        job = {
            "model": model.value,
            "threshold": threshold,
            "images": [str(p) for p in images],
            "out": str(out_dir),
        }
        (job_dir / "job.json").write_text(json.dumps(job))
        log = MEDIAPIPE.run_job(
            exe, WORKER, job_dir, on_event, failure=SlamError, name="person segmenter worker"
        )
    if len(seen) != len(images):
        raise SlamError(
            f"the person segmenter worker answered {len(seen)} of {len(images)} images:\n"
            f"{log_tail(log)}"
        )


@dataclass
class MaskScore:
    """A learned mask against the ground-truth person mask, summed over frames."""

    frames: int = 0
    intersection_px: int = 0
    union_px: int = 0
    person_px: int = 0  # ground-truth person pixels
    missed_px: int = 0  # ground-truth person pixels the learned mask left out

    def add(self, learned: NDArray[np.bool_], truth: NDArray[np.bool_]) -> None:
        """Count one frame."""
        self.frames += 1
        self.intersection_px += int(np.count_nonzero(learned & truth))
        self.union_px += int(np.count_nonzero(learned | truth))
        self.person_px += int(np.count_nonzero(truth))
        self.missed_px += int(np.count_nonzero(truth & ~learned))

    @property
    def iou(self) -> float:
        """Intersection over union of all frames' pixels (NaN: no person, no detection)."""
        return self.intersection_px / self.union_px if self.union_px else float("nan")

    @property
    def missed_share(self) -> float:
        """Share of the ground-truth person pixels missed (NaN: no person was in view)."""
        return self.missed_px / self.person_px if self.person_px else float("nan")


def score_masks(pairs: Iterable[tuple[NDArray[np.bool_], NDArray[np.bool_]]]) -> MaskScore:
    """Sum (learned, ground truth) mask pairs into one score."""
    score = MaskScore()
    for learned, truth in pairs:
        score.add(learned, truth)
    return score
