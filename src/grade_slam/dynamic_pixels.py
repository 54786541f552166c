"""How much of a recorded sequence moves, and how well a learned mask finds its people.

From the camera folder's semantic class images (the camera's `semantic` stream): the share of
each frame covered by people and flying objects (`frames.DYNAMIC_CLASSES`, what the oracle
masks) and by people alone, averaged over the frames; with learned person masks, their score
against the ground-truth person pixels (`person_segmenter.MaskScore`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import cv2
import numpy as np
from numpy.typing import NDArray

from grade_common.tum import read_list
from grade_sim.engine.semantic import BASE_CLASSES
from grade_slam.camera_folder import SEMANTIC, stamp_ns_of
from grade_slam.errors import SlamInputError
from grade_slam.frames import dynamic_class_ids, dynamic_mask_of
from grade_slam.person_segmenter import LearnedMasks, MaskScore

PERSON_IDS = frozenset(i for i, name in enumerate(BASE_CLASSES) if name == "person")


@dataclass
class SequencePixels:
    """Per-frame shares, averaged, and the learned mask's score (empty without masks)."""

    frames: int = 0
    dynamic_share_mean: float = 0.0  # people + flying objects, share of the frame
    dynamic_share_max: float = 0.0
    person_share_mean: float = 0.0
    segmenter: MaskScore = field(default_factory=MaskScore)


def sequence_pixels(camera_dir: str | Path, masks: LearnedMasks | None = None) -> SequencePixels:
    """Measure every frame of the camera folder's semantic images.

    Raises:
        SlamInputError: no semantic.txt (the camera lacks the `semantic` stream) or an unreadable
            image.
    """
    root = Path(camera_dir)
    listing = root / f"{SEMANTIC}.txt"
    if not listing.is_file():
        raise SlamInputError(
            f"{listing} is missing: the dynamic-pixel share needs the camera's `{SEMANTIC}` stream"
        )
    dynamic_ids = dynamic_class_ids(BASE_CLASSES)
    dynamic, person = [], []
    result = SequencePixels()
    for stamp, name in read_list(listing, error=SlamInputError):
        classes = cv2.imread(str(root / name), cv2.IMREAD_UNCHANGED)
        if classes is None:
            raise SlamInputError(f"{root / name}: cannot read the semantic image")
        class_ids: NDArray[np.uint16] = np.asarray(classes, dtype=np.uint16)
        truth = dynamic_mask_of(class_ids, PERSON_IDS)
        dynamic.append(float(dynamic_mask_of(class_ids, dynamic_ids).mean()))
        person.append(float(truth.mean()))
        if masks is not None:
            result.segmenter.add(masks.mask(stamp_ns_of(stamp), truth.shape), truth)
    if not dynamic:
        raise SlamInputError(f"{listing}: no frames")
    result.frames = len(dynamic)
    result.dynamic_share_mean = float(np.mean(dynamic))
    result.dynamic_share_max = float(np.max(dynamic))
    result.person_share_mean = float(np.mean(person))
    return result
