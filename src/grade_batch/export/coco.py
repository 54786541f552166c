"""COCO instance segmentation (RLE masks via pycocotools) of labelled frames.

One document per sequence (`image` ids and `annotation` ids from 1, file names relative to a
root folder), merged per split by `merge`. Boxes are COCO `[x, y, width, height]` of the tight
pixel bounds (x_max inclusive, so width = x_max - x_min + 1: what pycocotools computes from the
mask); `area` is the mask's pixel count. People carry COCO-17 `keypoints` (in COCO's pixel
convention) and `num_keypoints` where the run wrote keypoints.jsonl; a category that matches the
class `person` lists the COCO keypoint names and skeleton, as COCO's person category does.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from grade_batch.errors import ExportError
from grade_batch.export.labels import FrameLabels
from grade_batch.spec import Category
from grade_common.keypoints import COCO17_NAMES, COCO17_SKELETON, PERSON_CLASS, to_coco_pixels

INSTALL_HINT = "pip install pycocotools==2.0.11 (pinned in requirements/base.txt)"


def encode_rle(mask: NDArray[np.bool_]) -> dict[str, Any]:
    """A binary mask as COCO compressed RLE ({size: [h, w], counts: str}).

    Raises:
        ExportError: pycocotools is not installed (the message says how to install it).
    """
    try:
        from pycocotools import mask as mask_utils
    except ImportError as err:
        raise ExportError(f"COCO export needs pycocotools: {INSTALL_HINT}") from err
    rle = mask_utils.encode(np.asfortranarray(mask.astype(np.uint8)))
    return {"size": [int(v) for v in rle["size"]], "counts": rle["counts"].decode("ascii")}


def categories_table(categories: tuple[Category, ...]) -> list[dict[str, Any]]:
    """COCO categories: id = position + 1 (the YOLO class index + 1)."""
    table: list[dict[str, Any]] = []
    for i, c in enumerate(categories):
        entry: dict[str, Any] = {
            "id": i + 1,
            "name": c.name,
            "supercategory": "dynamic",
            "classes": list(c.match),
        }
        if any(fnmatch.fnmatchcase(PERSON_CLASS, pattern) for pattern in c.match):
            entry["keypoints"] = list(COCO17_NAMES)
            entry["skeleton"] = [list(edge) for edge in COCO17_SKELETON]
        table.append(entry)
    return table


def coco_document(
    frames: Iterable[FrameLabels], categories: tuple[Category, ...], sequence: str, root: Path
) -> dict[str, Any]:
    """The COCO document of one sequence; image file names relative to `root`."""
    images: list[dict[str, Any]] = []
    annotations: list[dict[str, Any]] = []
    for frame in frames:
        image_id = len(images) + 1
        images.append(
            {
                "id": image_id,
                "file_name": frame.rgb.relative_to(root).as_posix(),
                "width": frame.width,
                "height": frame.height,
                "sequence": sequence,
                "robot": frame.robot,
                "camera": frame.camera,
                "stamp": frame.stamp,
            }
        )
        for inst in frame.instances:
            x0, y0, x1, y1 = inst.box_xyxy
            annotations.append(
                {
                    "id": len(annotations) + 1,
                    "image_id": image_id,
                    "category_id": inst.category + 1,
                    "segmentation": encode_rle(inst.mask),
                    "area": inst.visible_px,
                    "bbox": [x0, y0, x1 - x0 + 1, y1 - y0 + 1],
                    "iscrowd": 0,
                    "instance_id": inst.instance_id,
                    "occlusion": round(inst.occlusion, 6),
                    **_keypoint_fields(inst.keypoints),
                }
            )
    return {
        "info": {"description": f"grade sequence {sequence}"},
        "images": images,
        "annotations": annotations,
        "categories": categories_table(categories),
    }


def _keypoint_fields(flat: tuple[float, ...] | None) -> dict[str, Any]:
    if flat is None:
        return {}
    coco = to_coco_pixels(list(flat))
    return {"keypoints": coco, "num_keypoints": sum(1 for v in coco[2::3] if v > 0)}


def merge(
    documents: Iterable[tuple[str, dict[str, Any]]],
    info: dict[str, Any],
    categories: list[dict[str, Any]],
) -> dict[str, Any]:
    """One COCO document from sequence documents, ids renumbered; each (prefix, document) puts
    `prefix` before its image file names (the sequence's folder under the common root).

    `categories` is the table (`categories_table`) every document must carry; the merged
    document carries it even with no documents (an empty split), as COCO tools expect.

    Raises:
        ExportError: a document's categories differ from `categories`.
    """
    images: list[dict[str, Any]] = []
    annotations: list[dict[str, Any]] = []
    for prefix, doc in documents:
        if doc["categories"] != categories:
            raise ExportError(
                f"{prefix}: its categories {[c['name'] for c in doc['categories']]} differ "
                f"from the sweep's {[c['name'] for c in categories]}; export it again"
            )
        offset = len(images)
        for image in doc["images"]:
            images.append(
                {**image, "id": image["id"] + offset, "file_name": prefix + image["file_name"]}
            )
        for ann in doc["annotations"]:
            annotations.append(
                {**ann, "id": len(annotations) + 1, "image_id": ann["image_id"] + offset}
            )
    return {"info": info, "images": images, "annotations": annotations, "categories": categories}
