"""Drawing what the perception saw: the segments and the estimated poses over the head image.

Each cluster's pixels are tinted in its own colour; each estimate is drawn where it puts the
object: the known model's surface points (model-based) or the outline of the estimated hull
(model-free: the observed points and their shadow on the table), projected with the head
camera; the label names the object (and the ADD-S against the ground truth when there is a
pose), the target of the attempt in yellow.
"""

from __future__ import annotations

import cv2
import numpy as np

from grade_common.types import FloatArray
from grade_scenes.perceive.cloud import CameraView
from grade_scenes.pick.perception import Look

PALETTE = np.array(
    [
        (230, 25, 75),
        (60, 180, 75),
        (0, 130, 200),
        (245, 130, 48),
        (145, 30, 180),
        (70, 240, 240),
        (240, 50, 230),
        (210, 245, 60),
    ],
    dtype=np.float64,
)


def _pixels(view: CameraView, points_world: FloatArray) -> np.ndarray:
    return np.round(view.project(points_world)).astype(np.int32)


def draw_look(
    rgb: np.ndarray,
    look: Look,
    names: tuple[str, ...],
    target: int,
    model_points: list[FloatArray],
    add_s_m: dict[int, float],
) -> np.ndarray:
    """The head image (RGB uint8, at the look's resolution) with segments and estimates."""
    if look.segments is None or look.view is None:
        raise ValueError("draw_look: the look has no segments (ground-truth perception)")
    view, segments = look.view, look.segments
    out = rgb.astype(np.float64).reshape(-1, 3)
    for j, cluster in enumerate(segments.clusters):
        flat = segments.pixels[cluster]
        out[flat] = 0.45 * out[flat] + 0.55 * PALETTE[j % len(PALETTE)]
    image = np.ascontiguousarray(out.reshape(rgb.shape).round().astype(np.uint8))
    for k, estimate in sorted(look.estimates.items()):
        t = estimate.transform_world_object
        if estimate.fit is not None:
            points = model_points[k] @ t[:3, :3].T + t[:3, 3]
            for u, v in _pixels(view, points):
                cv2.circle(image, (int(u), int(v)), 1, (255, 255, 255), -1)
        else:
            corners = np.asarray(estimate.hull.vertices) @ t[:3, :3].T + t[:3, 3]
            outline = cv2.convexHull(_pixels(view, corners))
            cv2.polylines(image, [outline], True, (255, 255, 255), 2, cv2.LINE_AA)
        u, v = _pixels(view, t[:3, 3][None])[0]
        label = names[k] + (f" {1000 * add_s_m[k]:.1f} mm" if k in add_s_m else "")
        colour = (255, 230, 0) if k == target else (255, 255, 255)
        for ink, thickness in (((0, 0, 0), 6), (colour, 2)):  # dark outline, then the text
            cv2.putText(
                image,
                label,
                (int(u) + 25, int(v)),
                cv2.FONT_HERSHEY_SIMPLEX,
                0.9,
                ink,
                thickness,
                cv2.LINE_AA,
            )
    return image
