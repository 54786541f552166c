"""Reading a run's people into crops (a hand-written run directory), and the MediaPipe worker."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from grade_eval.errors import RealismError, RealismSetupError
from grade_eval.realism.crops import CropWindow
from grade_eval.realism.samples import SampleSettings, overlap, run_samples
from grade_eval.realism.worker import ModelSettings, mediapipe_python, run_mediapipe

STAMPS = ("1.000000", "1.033333")


def _keypoints(u0: float, v0: float, face: bool) -> list[float]:
    flat: list[float] = []
    for index in range(17):
        vis = 2 if face or index >= 3 else 1
        flat += [u0 + (index % 2) * 10, v0 + 6 * index, vis]
    return flat


def _make_run(root: Path) -> Path:
    (root / "run.yaml").write_text("status: complete\nscenario: {}\n")
    gt = root / "gt"
    camera = gt / "uav1" / "camera"
    (camera / "rgb").mkdir(parents=True)
    (gt / "instances.yaml").write_text(
        "5: {class: person, name: person_0}\n6: {class: person, name: person_1}\n"
        "7: {class: chair, name: chair_0}\n"
    )
    (gt / "uav1" / "trajectory.txt").write_text("1.0 0 0 0 0 0 0 1\n")
    (camera / "groundtruth.txt").write_text("1.0 0 0 0 0 0 0 1\n")
    lines, boxes, points = [], [], []
    for stamp in STAMPS:
        image = np.full((120, 160, 3), 90, np.uint8)
        cv2.imwrite(str(camera / "rgb" / f"{stamp}.png"), image)
        lines.append(f"{stamp} rgb/{stamp}.png")
        boxes.append(
            {
                "t": float(stamp),
                "boxes": [
                    {"id": 5, "x_min": 20, "y_min": 10, "x_max": 50, "y_max": 110},
                    # 20 px high: below min_box_px
                    {"id": 6, "x_min": 90, "y_min": 10, "x_max": 100, "y_max": 29},
                    {"id": 7, "x_min": 100, "y_min": 10, "x_max": 150, "y_max": 110},
                ],
            }
        )
        people = [
            {"id": 5, "keypoints": _keypoints(25, 12, face=stamp == STAMPS[0])},
            {"id": 6, "keypoints": _keypoints(92, 12, face=True)},
        ]
        points.append({"t": float(stamp), "people": people})
    (camera / "rgb.txt").write_text("\n".join(lines) + "\n")
    (camera / "boxes2d.jsonl").write_text("".join(json.dumps(b) + "\n" for b in boxes))
    (camera / "keypoints.jsonl").write_text("".join(json.dumps(p) + "\n" for p in points))
    return root


def test_samples_are_the_people_passing_the_filters(tmp_path: Path) -> None:
    run = _make_run(tmp_path)
    samples = list(run_samples(run, SampleSettings(frame_stride=1, min_box_px=64, crop_px=64)))
    assert [(s.stamp, s.instance_id) for s in samples] == [(STAMPS[0], 5), (STAMPS[1], 5)]
    first, second = samples
    assert first.body.shape == (64, 64, 3)
    assert first.box_side_px == 101.0
    assert first.face is not None  # nose and eyes visible in the first frame only
    assert second.face is None
    np.testing.assert_array_equal(first.keypoints_uvv[0], [25, 12, 2])


def test_frame_stride_and_not_a_run(tmp_path: Path) -> None:
    (tmp_path / "run").mkdir()
    run = _make_run(tmp_path / "run")
    assert len(list(run_samples(run, SampleSettings(frame_stride=2)))) == 1
    with pytest.raises(RealismError, match="not a grade run"):
        list(run_samples(tmp_path, SampleSettings()))


@pytest.mark.parametrize(
    ("field", "value", "match"),
    [("frame_stride", 0, "frame_stride = 0"), ("max_occlusion", 1.5, r"max_occlusion = 1.5")],
)
def test_settings_name_the_bad_field(field: str, value: float, match: str) -> None:
    with pytest.raises(RealismError, match=match):
        SampleSettings(**{field: value})  # type: ignore[arg-type]


def _has_mediapipe() -> bool:
    try:
        mediapipe_python()
    except RealismSetupError:
        return False
    return True


@pytest.mark.slow
@pytest.mark.realism
@pytest.mark.skipif(not _has_mediapipe(), reason="mediapipe is not installed: make setup-realism")
def test_worker_answers_every_crop() -> None:
    # A flat grey crop has no person and no face: MediaPipe must say so for each crop.
    body = np.full((2, 64, 64, 3), 128, np.uint8)
    face = np.full((1, 32, 32, 3), 128, np.uint8)
    result = run_mediapipe(body, face, ModelSettings())
    assert result.landmarks == [None, None]
    assert len(result.faces) == 1
    assert result.faces[0].shape == (0, 5)


def test_overlap_is_the_largest_share_of_the_window_another_person_covers() -> None:
    window = CropWindow(left_px=-0.5, top_px=-0.5, side_px=100.0)  # pixels 0..99
    others = [
        {"id": 1, "x_min": 0, "y_min": 0, "x_max": 99, "y_max": 99},  # the person itself
        {"id": 2, "x_min": 50, "y_min": 0, "x_max": 149, "y_max": 49},  # 50 x 50 inside
        {"id": 3, "x_min": 90, "y_min": 90, "x_max": 99, "y_max": 99},  # 10 x 10
        {"id": 4, "x_min": 200, "y_min": 0, "x_max": 210, "y_max": 10},  # outside
    ]
    assert overlap(window, 1, others) == pytest.approx(0.25)
    assert overlap(window, 2, others[2:]) == pytest.approx(0.01)
    assert overlap(window, 1, others[3:]) == 0.0
