"""Square crops around a person's box: the window in image pixels and the way back.

A window is square (MediaPipe resizes its input to a square), centred on the box, with side
`max(width, height) * (1 + 2 * margin)`; where it leaves the image the crop is padded black.
The crop is resized to `side_px` pixels. Pixel coordinates follow the camera's K (the centre of
pixel (0, 0) is (0, 0)); a crop's normalised coordinates (0..1 over the crop, as MediaPipe
returns them) map to image pixels by `window.to_image`.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np
from numpy.typing import NDArray

from grade_common.types import FloatArray


@dataclass(frozen=True)
class CropWindow:
    """A square window of the image: its left and top edges and its side, in K's pixel
    coordinates (pixel (0, 0) covers -0.5 .. 0.5)."""

    left_px: float
    top_px: float
    side_px: float

    def to_image(self, xy_norm: FloatArray) -> FloatArray:
        """(N, 2) normalised crop coordinates -> (N, 2) image pixel coordinates (K's centres)."""
        xy = np.asarray(xy_norm, dtype=np.float64)
        return np.array([self.left_px, self.top_px]) + xy[:, :2] * self.side_px


def box_window(box_xyxy: tuple[float, float, float, float], margin: float) -> CropWindow:
    """The square window around an inclusive pixel box, with `margin` (a fraction of the box's
    longer side) added on each side.

    Raises:
        ValueError: the box is empty or the margin negative.
    """
    x_min, y_min, x_max, y_max = box_xyxy
    width, height = x_max - x_min + 1, y_max - y_min + 1
    if width <= 0 or height <= 0:
        raise ValueError(f"empty box {box_xyxy}")
    if margin < 0:
        raise ValueError(f"margin = {margin} is invalid: must be >= 0")
    side = max(width, height) * (1.0 + 2.0 * margin)
    return point_window(((x_min + x_max) / 2.0, (y_min + y_max) / 2.0), side)


def point_window(centre_xy: tuple[float, float], side_px: float) -> CropWindow:
    """The square window of side `side_px` centred on a point (K's pixel coordinates)."""
    return CropWindow(centre_xy[0] - side_px / 2.0, centre_xy[1] - side_px / 2.0, side_px)


def cut(image: NDArray[np.uint8], window: CropWindow, out_px: int) -> NDArray[np.uint8]:
    """The window of an (H, W, 3) image resized to (out_px, out_px, 3), black outside the image
    (bilinear; blurred first when shrinking, so that small detail does not alias)."""
    step = window.side_px / out_px  # image pixels per crop pixel
    source = cv2.GaussianBlur(image, (0, 0), sigmaX=0.5 * step) if step > 1.0 else image
    # Crop pixel centre j sits at left + (j + 0.5) * step in the image (K's centres).
    crop_to_image = np.array(
        [
            [step, 0.0, window.left_px + 0.5 * step],
            [0.0, step, window.top_px + 0.5 * step],
        ]
    )
    return np.asarray(
        cv2.warpAffine(
            source,
            crop_to_image,
            (out_px, out_px),
            flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP,
            borderMode=cv2.BORDER_CONSTANT,
            borderValue=(0, 0, 0),
        ),
        dtype=np.uint8,
    )
