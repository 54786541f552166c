"""YOLO labels (one text file per image): detection boxes or segmentation polygons.

Coordinates are normalised by the image size. A tight box with inclusive pixel bounds
x_min..x_max covers [x_min, x_max + 1) in continuous image coordinates, so its centre is
(x_min + x_max + 1) / 2 and its width x_max - x_min + 1. A segmentation line is the instance's
largest outer contour (YOLO takes one polygon per instance).
"""

from __future__ import annotations

import cv2
import numpy as np

from grade_batch.export.labels import FrameLabels, InstanceLabel
from grade_batch.spec import YoloTask


def _box_line(inst: InstanceLabel, width: int, height: int) -> str:
    x0, y0, x1, y1 = inst.box_xyxy
    cx = (x0 + x1 + 1) / 2 / width
    cy = (y0 + y1 + 1) / 2 / height
    w, h = (x1 - x0 + 1) / width, (y1 - y0 + 1) / height
    return f"{inst.category} {cx:.6f} {cy:.6f} {w:.6f} {h:.6f}"


def _polygon_line(inst: InstanceLabel, width: int, height: int) -> str | None:
    contours, _ = cv2.findContours(
        inst.mask.astype(np.uint8), cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE
    )
    if not contours:
        return None
    outline = max(contours, key=cv2.contourArea).reshape(-1, 2)
    if len(outline) < 3:
        return None
    coords = " ".join(f"{x / width:.6f} {y / height:.6f}" for x, y in outline)
    return f"{inst.category} {coords}"


def label_text(frame: FrameLabels, task: YoloTask) -> str:
    """The label file of one frame (empty for a frame without instances: a background image)."""
    lines: list[str] = []
    for inst in frame.instances:
        if task is YoloTask.DETECT:
            lines.append(_box_line(inst, frame.width, frame.height))
        else:
            line = _polygon_line(inst, frame.width, frame.height)
            if line is not None:
                lines.append(line)
    return "".join(line + "\n" for line in lines)
