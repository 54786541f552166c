"""COCO and YOLO labels of a hand-made run: masks, boxes, categories and the filters."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import cv2
import numpy as np
import pytest

from grade_batch.errors import ExportError
from grade_batch.export.coco import merge
from grade_batch.export.labels import camera_frames
from grade_batch.export.sequence import export_sequence
from grade_batch.spec import Category, ExportSettings, YoloTask
from grade_common.tum import box_occlusion

mask_utils = pytest.importorskip("pycocotools.mask")


def _mask(run: Path, stamp: str) -> np.ndarray:
    return cv2.imread(str(run / f"gt/uav1/camera/instance/{stamp}.png"), cv2.IMREAD_UNCHANGED)


def test_coco_masks_decode_to_the_instance_masks(tiny_run: Path, tmp_path: Path) -> None:
    out = tmp_path / "export"
    counts = export_sequence(tiny_run, out, "seq", ExportSettings(), tiny_run.parent)
    assert (counts.frames, counts.instances) == (2, 3)
    doc = json.loads((out / "coco.json").read_text())
    assert [c["name"] for c in doc["categories"]] == ["person", "flying_object"]
    images = {im["id"]: im for im in doc["images"]}
    for ann in doc["annotations"]:
        stamp = images[ann["image_id"]]["stamp"]
        truth = _mask(tiny_run, stamp) == ann["instance_id"]
        decoded = mask_utils.decode(ann["segmentation"]).astype(bool)
        assert np.array_equal(decoded, truth)
        assert ann["area"] == int(truth.sum()) == int(mask_utils.area(ann["segmentation"]))
        assert ann["bbox"] == [float(v) for v in mask_utils.toBbox(ann["segmentation"])]
    assert {a["instance_id"] for a in doc["annotations"]} == {5, 7}  # furniture has no box
    assert [a["category_id"] for a in doc["annotations"]] == [1, 2, 1]


def test_yolo_boxes_are_the_tight_boxes(tiny_run: Path, tmp_path: Path) -> None:
    out = tmp_path / "export"
    export_sequence(tiny_run, out, "seq", ExportSettings(), tiny_run.parent)
    lines = (out / "yolo/labels/uav1_camera_0.100000.txt").read_text().splitlines()
    cls, cx, cy, w, h = lines[0].split()
    # person: x 10..21, y 5..14 inclusive in a 40 x 30 image
    assert int(cls) == 0
    assert float(cx) == pytest.approx(16.0 / 40, abs=1e-6)
    assert float(cy) == pytest.approx(10.0 / 30, abs=1e-6)
    assert (float(w), float(h)) == pytest.approx((12 / 40, 10 / 30), abs=1e-6)
    assert (out / "yolo/images/uav1_camera_0.100000.png").is_file()


def test_yolo_segment_is_the_outline(tiny_run: Path, tmp_path: Path) -> None:
    out = tmp_path / "export"
    settings = ExportSettings(yolo_task=YoloTask.SEGMENT, coco=False)
    export_sequence(tiny_run, out, "seq", settings, tiny_run.parent)
    line = (out / "yolo/labels/uav1_camera_0.200000.txt").read_text().splitlines()[0]
    values = [float(v) for v in line.split()[1:]]
    xs, ys = np.array(values[0::2]) * 40, np.array(values[1::2]) * 30
    # the larger of the two blobs: x 20..24, y 10..19
    assert (xs.min(), xs.max(), ys.min(), ys.max()) == pytest.approx((20, 24, 10, 19))
    assert not (out / "coco.json").exists()


@pytest.mark.parametrize(
    ("settings", "expected"),
    [
        (ExportSettings(min_visible_px=7), {("0.100000", 5), ("0.200000", 5)}),
        (ExportSettings(max_occlusion=0.4), {("0.100000", 7), ("0.200000", 5)}),
        (
            ExportSettings(categories=(Category("person", ("person",)),)),
            {("0.100000", 5), ("0.200000", 5)},
        ),
        (ExportSettings(frame_stride=2), {("0.100000", 5), ("0.100000", 7)}),
    ],
)
def test_filters(tiny_run: Path, settings: ExportSettings, expected: set[tuple[str, int]]) -> None:
    got = {
        (frame.stamp, inst.instance_id)
        for frame in camera_frames(tiny_run, "uav1", "camera", settings)
        for inst in frame.instances
    }
    assert got == expected


def test_occlusion_proxy() -> None:
    box = {"x_min": 0, "y_min": 0, "x_max": 9, "y_max": 9, "loose": [0, 0, 19, 9]}
    assert box_occlusion(box) == pytest.approx(0.5)
    assert box_occlusion({k: v for k, v in box.items() if k != "loose"}) == 0.0


def test_merge_renumbers_and_prefixes(tiny_run: Path, tmp_path: Path) -> None:
    out = tmp_path / "export"
    export_sequence(tiny_run, out, "seq", ExportSettings(), tiny_run.parent)
    doc = json.loads((out / "coco.json").read_text())
    merged = merge([("a/", doc), ("b/", doc)], {"description": "x"}, doc["categories"])
    assert [im["id"] for im in merged["images"]] == [1, 2, 3, 4]
    assert [a["id"] for a in merged["annotations"]] == list(range(1, 7))
    assert merged["annotations"][3]["image_id"] == 3
    assert merged["images"][2]["file_name"].startswith("b/run/gt/uav1/camera/rgb/")
    other = {**doc, "categories": doc["categories"][:1]}
    with pytest.raises(ExportError, match=r"b/: its categories \['person'\] differ"):
        merge([("a/", doc), ("b/", other)], {}, doc["categories"])
    assert merge([], {}, doc["categories"])["categories"] == doc["categories"]


def test_export_settings_are_checked() -> None:
    with pytest.raises(Exception, match="max_occlusion: value 2"):
        replace(ExportSettings(), max_occlusion=2.0)


def test_coco_keypoints_of_people(tiny_run: Path, tmp_path: Path) -> None:
    """keypoints.jsonl becomes COCO keypoints: COCO's pixel convention (+0.5), zeros for
    keypoints outside the image, 17 unlabelled keypoints for a person without a line."""
    flat = [0.0] * 51
    flat[0:3] = [12.0, 7.0, 2]  # nose, visible
    flat[15:18] = [20.0, 13.0, 1]  # left shoulder, hidden
    flat[18:21] = [55.0, 3.0, 0]  # right shoulder, outside (written as 0, 0, 0)
    line = {"t": 0.1, "visibility_from": "depth", "people": [{"id": 5, "keypoints": flat}]}
    (tiny_run / "gt/uav1/camera/keypoints.jsonl").write_text(json.dumps(line) + "\n")
    out = tmp_path / "export"
    export_sequence(tiny_run, out, "seq", ExportSettings(), tiny_run.parent)
    doc = json.loads((out / "coco.json").read_text())
    person, flying = doc["categories"]
    assert person["keypoints"][0] == "nose"
    assert len(person["keypoints"]) == 17
    assert [1, 2] in person["skeleton"]
    assert "keypoints" not in flying
    first, box, second = doc["annotations"]
    assert first["keypoints"][:3] == [12.5, 7.5, 2]
    assert first["keypoints"][15:21] == [20.5, 13.5, 1, 0, 0, 0]
    assert first["num_keypoints"] == 2
    assert "keypoints" not in box
    assert second["keypoints"] == [0] * 51
    assert second["num_keypoints"] == 0
