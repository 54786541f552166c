"""Fixtures of the grade_batch tests: a hand-made run directory with known labels."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest
import yaml

from grade_common import tum
from grade_common.rundir import RunLayout

STAMPS = ("0.100000", "0.200000")


def make_run(root: Path) -> Path:
    """A run directory with one camera (40 x 30) and two frames.

    Frame 1: a person (id 5, 12 x 10 px, loose box 2x its area: occlusion 0.5), a flying box
    (id 7, 3 x 2 px) and furniture (id 2, not an actor: no boxes2d entry).
    Frame 2: the person only, two separate blobs (one instance split by an occluder).
    """
    run = RunLayout(root)
    camera = run.camera_dir("uav1", "camera")
    for kind in ("rgb", "instance"):
        (camera / kind).mkdir(parents=True)
    (root / "run.yaml").write_text("status: complete\n")
    run.instances.write_text(
        yaml.safe_dump(
            {
                2: {"name": "table_0", "class": "furniture"},
                5: {"name": "person_0", "class": "person"},
                7: {"name": "flying_0", "class": "flying_box"},
            }
        )
    )
    run.trajectory("uav1").write_text(tum.pose_header("base_link in world"))
    masks = [np.zeros((30, 40), np.uint16), np.zeros((30, 40), np.uint16)]
    masks[0][0:30, 30:40] = 2
    masks[0][5:15, 10:22] = 5
    masks[0][20:22, 2:5] = 7
    masks[1][3:6, 4:8] = 5
    masks[1][10:20, 20:25] = 5
    boxes = [
        [
            {"id": 5, "x_min": 10, "y_min": 5, "x_max": 21, "y_max": 14, "loose": [10, 5, 21, 24]},
            {"id": 7, "x_min": 2, "y_min": 20, "x_max": 4, "y_max": 21},
        ],
        [{"id": 5, "x_min": 4, "y_min": 3, "x_max": 24, "y_max": 19}],
    ]
    lines = {"rgb": tum.list_header("rgb"), "instance": tum.list_header("instance")}
    with (camera / tum.BOXES_2D_JSONL).open("w") as out:
        for stamp, mask, frame_boxes in zip(STAMPS, masks, boxes, strict=True):
            cv2.imwrite(str(camera / "rgb" / f"{stamp}.png"), np.full((30, 40, 3), 90, np.uint8))
            cv2.imwrite(str(camera / "instance" / f"{stamp}.png"), mask)
            for kind in lines:
                lines[kind] += tum.list_line(stamp, kind)
            out.write(json.dumps({"t": float(stamp), "boxes": frame_boxes}) + "\n")
    for kind, text in lines.items():
        (camera / tum.list_file(kind)).write_text(text)
    (camera / tum.GROUNDTRUTH_TXT).write_text(tum.pose_header("optical frame in world"))
    return root


@pytest.fixture
def tiny_run(tmp_path: Path) -> Path:
    return make_run(tmp_path / "run")
