"""The people of a recorded run to show the pose model: crops around ground-truth boxes.

Read from the run directory (docs/conventions.md): gt/instances.yaml (which instances are
people), each camera folder's rgb.txt and rgb/ images, boxes2d.jsonl (tight boxes) and
keypoints.jsonl (our COCO-17 keypoints). Every `frame_stride`-th frame; a person counts when its
tight box is at least `min_box_px` high, it is at most `max_occlusion` hidden (1 - tight area /
loose area, as the dataset exports filter), no other person's box covers more than
`max_overlap` of its crop window, and at least `min_visible_keypoints` of its keypoints are visible.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cv2
import numpy as np
from numpy.typing import NDArray

from grade_common import tum
from grade_common.keypoints import PERSON_CLASS, read_keypoints
from grade_common.rundir import RunLayout, read_instance_classes
from grade_common.tum import ImageKind
from grade_common.types import FloatArray
from grade_eval.errors import RealismError
from grade_eval.realism.crops import CropWindow, box_window, cut, point_window
from grade_eval.realism.scoring import VISIBLE, face_visible


@dataclass(frozen=True)
class SampleSettings:
    """Which people to crop and how."""

    frame_stride: int = 3
    min_box_px: int = 64
    max_occlusion: float = 0.5
    min_visible_keypoints: int = 8
    # MediaPipe Pose finds one person per crop, the most prominent: a person whose crop window
    # another person's box covers by more than this fraction (of the window's area) is left
    # out, or the model would be scored on whoever stands next to or in front of them.
    max_overlap: float = 0.1
    margin: float = 0.25  # of the box's longer side, on each side
    crop_px: int = 256  # body crops are resized to this (MediaPipe Pose works at 256)
    # Face crops: a square of this fraction of the box height around the eyes and nose (the
    # head is about 1/7 of the body, so it fills about a third of the crop).
    face_window: float = 0.4
    face_px: int = 128  # MediaPipe's short-range face detector works at 128

    def __post_init__(self) -> None:
        for name, low in (("frame_stride", 1), ("min_box_px", 1), ("crop_px", 32), ("face_px", 32)):
            if getattr(self, name) < low:
                raise RealismError(f"{name} = {getattr(self, name)} is invalid: must be >= {low}")
        for name in ("max_occlusion", "max_overlap"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise RealismError(f"{name} = {getattr(self, name)} is invalid: must be in [0, 1]")


@dataclass(frozen=True)
class PersonSample:
    """One person in one frame: our keypoints, the box, the crops and their windows."""

    camera: str  # robot/camera
    stamp: str
    instance_id: int
    keypoints_uvv: FloatArray  # (17, 3) [u, v, vis] in K's pixels
    box_side_px: float  # the longer side of the tight box (PCK's normaliser)
    body_window: CropWindow
    body: NDArray[np.uint8]  # (crop_px, crop_px, 3) RGB
    face_window: CropWindow | None  # None: nose or eyes not visible
    face: NDArray[np.uint8] | None


def overlap(window: CropWindow, instance_id: int, others: list[dict[str, Any]]) -> float:
    """The largest fraction of the window's area that the box of one other person (a boxes2d
    entry with a different `id`; inclusive pixel bounds) covers."""
    most = 0.0
    right, bottom = window.left_px + window.side_px, window.top_px + window.side_px
    for other in others:
        if int(other["id"]) == instance_id:
            continue
        w = min(right, other["x_max"] + 0.5) - max(window.left_px, other["x_min"] - 0.5)
        h = min(bottom, other["y_max"] + 0.5) - max(window.top_px, other["y_min"] - 0.5)
        if w > 0 and h > 0:
            most = max(most, w * h / window.side_px**2)
    return most


def run_samples(run_dir: Path, settings: SampleSettings) -> Iterator[PersonSample]:
    """The person samples of every camera of a run, in camera, frame and instance order.

    Raises:
        RealismError: the run has no camera with keypoints, or a file is missing or malformed.
    """
    run = RunLayout(run_dir)
    if not run.run_yaml.is_file():
        raise RealismError(f"{run_dir}: not a grade run directory (no run.yaml)")
    classes = read_instance_classes(run.instances, error=RealismError)
    people = {iid for iid, cls in classes.items() if cls == PERSON_CLASS}
    folders = [
        (f"{robot}/{camera}", run.camera_dir(robot, camera))
        for robot in run.robots()
        for camera in run.cameras(robot)
        if (run.camera_dir(robot, camera) / tum.KEYPOINTS_JSONL).is_file()
    ]
    if not folders:
        raise RealismError(f"{run_dir}: no camera folder has {tum.KEYPOINTS_JSONL}; record people")
    for name, folder in folders:
        yield from _camera_samples(name, folder, people, settings)


def _camera_samples(
    name: str, folder: Path, people: set[int], settings: SampleSettings
) -> Iterator[PersonSample]:
    keypoints = read_keypoints(folder / tum.KEYPOINTS_JSONL, error=RealismError)
    boxes = tum.read_boxes_2d(folder / tum.BOXES_2D_JSONL, error=RealismError)
    frames = tum.read_list(folder / tum.list_file(ImageKind.RGB), error=RealismError)
    for stamp, file in frames[:: settings.frame_stride]:
        t = float(stamp)
        chosen = []
        person_boxes = [b for b in boxes.get(t, []) if int(b["id"]) in people]
        for box in boxes.get(t, []):
            iid = int(box["id"])
            person = keypoints.get(t, {}).get(iid)
            if iid not in people or person is None:
                continue
            truth = np.asarray(person["keypoints"], dtype=np.float64).reshape(17, 3)
            if box["y_max"] - box["y_min"] + 1 < settings.min_box_px:
                continue
            if tum.box_occlusion(box) > settings.max_occlusion:
                continue
            if np.count_nonzero(truth[:, 2] == VISIBLE) < settings.min_visible_keypoints:
                continue
            xyxy = (box["x_min"], box["y_min"], box["x_max"], box["y_max"])
            window = box_window(xyxy, settings.margin)
            if overlap(window, iid, person_boxes) > settings.max_overlap:
                continue
            chosen.append((iid, box, truth, window))
        if not chosen:
            continue
        bgr = cv2.imread(str(folder / file), cv2.IMREAD_COLOR)
        if bgr is None:
            raise RealismError(f"{folder / file}: not a readable image")
        rgb: NDArray[np.uint8] = np.ascontiguousarray(bgr[:, :, ::-1], dtype=np.uint8)
        for iid, box, truth, window in chosen:
            height = box["y_max"] - box["y_min"] + 1
            side = float(max(box["x_max"] - box["x_min"] + 1, height))
            face_win = face = None
            if face_visible(truth):
                centre = truth[:3, :2].mean(axis=0)
                face_win = point_window((centre[0], centre[1]), settings.face_window * height)
                face = cut(rgb, face_win, settings.face_px)
            yield PersonSample(
                name,
                stamp,
                iid,
                truth,
                side,
                window,
                cut(rgb, window, settings.crop_px),
                face_win,
                face,
            )
