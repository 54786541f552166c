"""One RGB-D frame as every backend receives it (arrays, not messages)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from fnmatch import fnmatchcase

import cv2
import numpy as np
from numpy.typing import NDArray

from grade_common.types import FloatArray
from grade_slam.errors import SlamInputError


@dataclass(frozen=True)
class RgbdFrame:
    """A registered colour + depth pair: same size, same optical frame, same stamp.

    rgb: (H, W, 3) uint8; depth_m: (H, W) float32 metres to the image plane, 0 = no return;
    camera_matrix: 3x3 intrinsics K; dynamic_mask: (H, W) bool, True on people and flying
    objects (from the simulator's semantic image), None when the run has no semantic stream.
    """

    stamp_ns: int
    rgb: NDArray[np.uint8]
    depth_m: NDArray[np.float32]
    camera_matrix: FloatArray
    dynamic_mask: NDArray[np.bool_] | None = None

    def __post_init__(self) -> None:
        if self.rgb.ndim != 3 or self.rgb.shape[2] != 3 or self.rgb.dtype != np.uint8:
            raise SlamInputError(
                f"frame {self.stamp_ns}: rgb must be (H, W, 3) uint8, got "
                f"{self.rgb.shape} {self.rgb.dtype}"
            )
        if self.depth_m.shape != self.rgb.shape[:2]:
            raise SlamInputError(
                f"frame {self.stamp_ns}: depth {self.depth_m.shape} and rgb "
                f"{self.rgb.shape[:2]} differ in size; the backend needs registered images"
            )
        if self.dynamic_mask is not None and self.dynamic_mask.shape != self.depth_m.shape:
            raise SlamInputError(
                f"frame {self.stamp_ns}: dynamic mask {self.dynamic_mask.shape} and depth "
                f"{self.depth_m.shape} differ in size"
            )
        k = np.asarray(self.camera_matrix)
        if k.shape != (3, 3) or not np.all(np.isfinite(k)) or k[0, 0] <= 0 or k[1, 1] <= 0:
            raise SlamInputError(
                f"frame {self.stamp_ns}: camera matrix must be 3x3 with positive focal lengths, "
                f"got {k.tolist()}"
            )


# Semantic classes that move (grade_sim.engine.semantic.BASE_CLASSES: ids are stable across
# scenes): people and the flying objects.
DYNAMIC_CLASSES = ("person", "flying_*")
_MASK_GREY = np.uint8(128)


def dynamic_class_ids(class_names: tuple[str, ...]) -> frozenset[int]:
    """Ids (index in `class_names`) of the classes matching DYNAMIC_CLASSES."""
    return frozenset(
        i
        for i, name in enumerate(class_names)
        if any(fnmatchcase(name, p) for p in DYNAMIC_CLASSES)
    )


def dynamic_mask_of(
    class_image: NDArray[np.uint16], dynamic_ids: frozenset[int]
) -> NDArray[np.bool_]:
    """True where the semantic class image shows a moving class."""
    lut = np.zeros(max(max(dynamic_ids, default=0), int(class_image.max(initial=0))) + 1, bool)
    lut[list(dynamic_ids)] = True
    return lut[class_image]


def mask_dynamic(frame: RgbdFrame, dilate_px: int) -> RgbdFrame:
    """The frame without its moving objects: an oracle DynaSLAM. Masked pixels (grown by
    `dilate_px`, so a feature's patch does not reach into a person) get no depth and one flat
    grey, so no backend finds geometry or corners on them; a frame without a mask is refused.

    Raises:
        SlamInputError: the frame has no dynamic mask (no semantic stream).
    """
    if frame.dynamic_mask is None:
        raise SlamInputError(
            f"frame {frame.stamp_ns}: mask_dynamic needs the semantic class image; add "
            "`semantic` to the camera's streams"
        )
    mask = frame.dynamic_mask
    if dilate_px > 0 and mask.any():
        kernel = np.ones((2 * dilate_px + 1, 2 * dilate_px + 1), np.uint8)
        mask = cv2.dilate(mask.astype(np.uint8), kernel).astype(bool)
    rgb = frame.rgb.copy()
    rgb[mask] = _MASK_GREY
    depth_m = frame.depth_m.copy()
    depth_m[mask] = 0.0
    return replace(frame, rgb=rgb, depth_m=depth_m, dynamic_mask=mask)
