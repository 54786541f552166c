"""The replication aid: a live camera image blended with the scene's reference image.

out = live_weight * live + reference_weight * reference (SceneReplica: 0.4 and 0.6), per pixel
and channel in float64, rounded to the nearest integer and clipped to 0..255. The reference is
resized to the live image's size once (area interpolation) when the sizes differ.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import cv2
import numpy as np
from numpy.typing import NDArray

from grade_common.schema import Checked, Wording, bounds
from grade_scenes.errors import ObjectSetError, ScenesError


@dataclass(frozen=True)
class OverlayConfig(Checked):
    WORDING = Wording(error=ObjectSetError, root="overlay")

    reference_image: str = field(metadata={"pattern": None, "allow_empty": False})
    live_weight: float = field(default=0.4, metadata=bounds(0.0, 1.0))
    reference_weight: float = field(default=0.6, metadata=bounds(0.0, 1.0))


def load_rgb(path: str | Path) -> NDArray[np.uint8]:
    """An image file as RGB uint8 (h, w, 3).

    Raises:
        ScenesError: the file is missing or not an image OpenCV reads.
    """
    image = cv2.imread(str(path), cv2.IMREAD_COLOR)
    if image is None:
        raise ScenesError(f"{path}: missing or not an image file")
    return np.asarray(cv2.cvtColor(image, cv2.COLOR_BGR2RGB), dtype=np.uint8)


def blend(
    live: NDArray[np.uint8],
    reference: NDArray[np.uint8],
    live_weight: float = 0.4,
    reference_weight: float = 0.6,
) -> NDArray[np.uint8]:
    """live_weight * live + reference_weight * reference, rounded (see module doc).

    Raises:
        ScenesError: the images do not have the same number of channels.
    """
    if live.shape[2:] != reference.shape[2:]:
        raise ScenesError(
            f"live image {live.shape} and reference {reference.shape} differ in channels"
        )
    if live.shape[:2] != reference.shape[:2]:
        size = (live.shape[1], live.shape[0])
        reference = np.asarray(
            cv2.resize(reference, size, interpolation=cv2.INTER_AREA), dtype=np.uint8
        )
    mixed = live_weight * live.astype(np.float64) + reference_weight * reference.astype(np.float64)
    out: NDArray[np.uint8] = np.clip(np.rint(mixed), 0, 255).astype(np.uint8)
    return out
