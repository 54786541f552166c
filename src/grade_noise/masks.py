"""A-GRADE: masks and boxes blurred like the images they label.

A motion-blurred image mixes each object with what lies behind it along the motion; the exact
masks of the simulator no longer match it. Each label's indicator image (255 on its pixels) goes
through the very blur and rolling shutter of its RGB frame (`NoisePipeline.rgb_geometry`), which
gives a coverage in [0, 255] per label and pixel: how much of the pixel's exposure that label
filled. The blurred label image takes, per pixel, the label of largest coverage (ties go to the
lower id); a label's blurred box is the extent of all pixels it covers at all (coverage > 0), so
boxes grow along the motion like the smear in the image.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numpy.typing import NDArray

Blur = Callable[[NDArray[np.uint8]], NDArray[np.uint8]]


def blurred_labels(
    labels: NDArray[np.uint16], blur: Blur
) -> tuple[NDArray[np.uint16], dict[int, tuple[int, int, int, int]]]:
    """The label image after the blur, and the box (x_min, y_min, x_max, y_max) covered by each
    label (0 = background included)."""
    ids = np.unique(labels)
    best = np.zeros(labels.shape, dtype=np.uint8)
    out = np.zeros_like(labels)
    boxes: dict[int, tuple[int, int, int, int]] = {}
    for label in ids.tolist():
        coverage = blur(np.where(labels == label, np.uint8(255), np.uint8(0)))
        wins = coverage > best
        out[wins] = label
        best[wins] = coverage[wins]
        ys, xs = np.nonzero(coverage)
        if len(xs):
            boxes[label] = (int(xs.min()), int(ys.min()), int(xs.max()), int(ys.max()))
    return out, boxes
