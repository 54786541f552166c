"""The keypoints format of a camera folder (`keypoints.jsonl`) and the COCO-17 layout.

Written by grade_sim (`grade_sim.io.keypoint_writer`), read by the dataset exporters. One JSON
line per frame: `{"t", "visibility_from", "people": [{"id", "name", "num_keypoints",
"keypoints": [u, v, vis] * 17, "keypoints_world": [[x, y, z]] * 17}]}`. Pixel coordinates use
the camera's K (the centre of pixel (0, 0) is (0, 0)); COCO's own convention puts that centre at
(0.5, 0.5), see `to_coco_pixels`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from grade_common.errors import FormatError, GradeError

# COCO person keypoints, in the order of the COCO dataset's `keypoints` list.
COCO17_NAMES = (
    "nose",
    "left_eye",
    "right_eye",
    "left_ear",
    "right_ear",
    "left_shoulder",
    "right_shoulder",
    "left_elbow",
    "right_elbow",
    "left_wrist",
    "right_wrist",
    "left_hip",
    "right_hip",
    "left_knee",
    "right_knee",
    "left_ankle",
    "right_ankle",
)
# COCO's `skeleton` (1-based keypoint indices), as in person_keypoints_*.json.
COCO17_SKELETON = (
    (16, 14),
    (14, 12),
    (17, 15),
    (15, 13),
    (12, 13),
    (6, 12),
    (7, 13),
    (6, 7),
    (6, 8),
    (7, 9),
    (8, 10),
    (9, 11),
    (2, 3),
    (1, 2),
    (1, 3),
    (2, 4),
    (3, 5),
)
PERSON_CLASS = "person"  # the instance class (gt/instances.yaml) that has keypoints
# K (ROS, pixel centres on integers) -> COCO (pixel centres at +0.5).
COCO_PIXEL_OFFSET = 0.5


def to_coco_pixels(flat: list[float]) -> list[float]:
    """`[u, v, vis] * 17` of keypoints.jsonl in COCO's pixel convention (and COCO's zeros for
    keypoints outside the image)."""
    out: list[float] = []
    for i in range(0, len(flat), 3):
        u, v, vis = flat[i : i + 3]
        if vis > 0:
            out += [round(float(u) + COCO_PIXEL_OFFSET, 3), round(float(v) + COCO_PIXEL_OFFSET, 3)]
        else:
            out += [0, 0]
        out.append(int(vis))
    return out


def read_keypoints(
    path: str | Path, *, error: type[GradeError] = FormatError
) -> dict[float, dict[int, dict[str, Any]]]:
    """keypoints.jsonl as {t: {instance id: person entry}}.

    Raises:
        `error`: the file is unreadable or a line is malformed (names the file and line).
    """
    out: dict[float, dict[int, dict[str, Any]]] = {}
    try:
        text = Path(path).read_text()
    except OSError as err:
        raise error(f"{path}: cannot read keypoints: {err}") from err
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
            people = {int(p["id"]): p for p in entry["people"]}
            for person in people.values():
                if len(person["keypoints"]) != 3 * len(COCO17_NAMES):
                    raise ValueError(f"{len(person['keypoints'])} keypoint values, expected 51")
            out[float(entry["t"])] = people
        except (ValueError, KeyError, TypeError) as err:
            raise error(f"{path}:{number}: malformed keypoints line: {err}") from err
    return out
