"""Per-frame instance labels of a run's camera folders, filtered like GRADE's post-processing.

Read from the run directory (docs/conventions.md): `gt/instances.yaml` (instance id -> class),
each camera folder's `rgb.txt` / `instance.txt` lists, `instance/<t>.png` masks and
`boxes2d.jsonl` (tight box from the mask, loose box = projected 3D box). The instances of a frame
are those of its boxes2d line (people and flying objects), mapped onto the categories of the
export by their class; filters drop small, occluded or unlisted instances.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np
from numpy.typing import NDArray

from grade_batch.errors import ExportError
from grade_batch.spec import Category, ExportSettings
from grade_common import tum
from grade_common.keypoints import COCO17_NAMES, PERSON_CLASS, read_keypoints
from grade_common.rundir import RunLayout, read_instance_classes
from grade_common.tum import ImageKind


@dataclass(frozen=True)
class InstanceLabel:
    """One visible instance in one frame."""

    instance_id: int
    category: int  # index into the export's categories
    mask: NDArray[np.bool_]  # (H, W)
    box_xyxy: tuple[int, int, int, int]  # tight, inclusive pixel bounds
    visible_px: int
    occlusion: float  # 1 - tight box area / loose box area (0 when no loose box)
    # keypoints.jsonl's [u, v, vis] * 17 of a person (K's pixel convention); None: no skeleton
    keypoints: tuple[float, ...] | None = None


@dataclass(frozen=True)
class FrameLabels:
    """The labels of one camera frame."""

    robot: str
    camera: str
    stamp: str  # as the frame files are named
    rgb: Path  # the RGB image, absolute
    width: int
    height: int
    instances: tuple[InstanceLabel, ...]


def category_of(label: str, categories: tuple[Category, ...]) -> int | None:
    """Index of the first category whose patterns match an instance class, or None."""
    for index, category in enumerate(categories):
        if any(fnmatch.fnmatchcase(label, pattern) for pattern in category.match):
            return index
    return None


def read_classes(run: RunLayout) -> dict[int, str]:
    """instance id -> class of gt/instances.yaml.

    Raises:
        ExportError: the file is missing or malformed.
    """
    return read_instance_classes(run.instances, error=ExportError)


def camera_frames(
    run_dir: Path, robot: str, camera: str, settings: ExportSettings
) -> Iterator[FrameLabels]:
    """The labelled frames of one camera, every `frame_stride`-th, with the filters applied.

    Raises:
        ExportError: a list, mask or box file is missing or malformed.
    """
    run = RunLayout(run_dir)
    classes = read_classes(run)
    folder = run.camera_dir(robot, camera)
    instance_list = folder / tum.list_file(ImageKind.INSTANCE)
    if not instance_list.is_file():
        raise ExportError(f"{folder}: no instance masks ({instance_list.name}); record them")
    boxes = tum.read_boxes_2d(folder / tum.BOXES_2D_JSONL, error=ExportError)
    keypoints_file = folder / tum.KEYPOINTS_JSONL
    keypoints = (
        read_keypoints(keypoints_file, error=ExportError) if keypoints_file.is_file() else {}
    )
    rgb_names = dict(tum.read_list(folder / tum.list_file(ImageKind.RGB), error=ExportError))
    frames = tum.read_list(instance_list, error=ExportError)
    for stamp, mask_name in frames[:: settings.frame_stride]:
        if stamp not in rgb_names:
            raise ExportError(f"{folder}: frame {stamp} has an instance mask but no RGB image")
        mask_ids = cv2.imread(str(folder / mask_name), cv2.IMREAD_UNCHANGED)
        if mask_ids is None or mask_ids.ndim != 2:
            raise ExportError(f"{folder / mask_name}: not a single-channel instance PNG")
        labels = []
        for box in boxes.get(float(stamp), []):
            iid = int(box["id"])
            category = category_of(classes.get(iid, ""), settings.categories)
            if category is None:
                continue
            mask = mask_ids == iid
            visible = int(np.count_nonzero(mask))
            occlusion = tum.box_occlusion(box)
            if visible == 0 or visible < settings.min_visible_px:
                continue
            if occlusion > settings.max_occlusion:
                continue
            xyxy = (int(box["x_min"]), int(box["y_min"]), int(box["x_max"]), int(box["y_max"]))
            skeleton = None
            if keypoints_file.is_file() and classes.get(iid) == PERSON_CLASS:
                # A person whose joints are all outside the image has no line entry: COCO
                # still wants its 17 keypoints, all unlabelled.
                person = keypoints.get(float(stamp), {}).get(iid)
                skeleton = tuple(person["keypoints"]) if person else (0,) * 3 * len(COCO17_NAMES)
            labels.append(InstanceLabel(iid, category, mask, xyxy, visible, occlusion, skeleton))
        height, width = mask_ids.shape
        yield FrameLabels(
            robot,
            camera,
            stamp,
            folder / rgb_names[stamp],
            int(width),
            int(height),
            tuple(labels),
        )


def run_cameras(run_dir: Path) -> list[tuple[str, str]]:
    """(robot, camera) of every camera folder of a run that has instance masks."""
    run = RunLayout(run_dir)
    return [
        (robot, camera)
        for robot in run.robots()
        for camera in run.cameras(robot)
        if (run.camera_dir(robot, camera) / tum.list_file(ImageKind.INSTANCE)).is_file()
    ]
