"""camera_info.yaml follows the camera_calibration_parsers YAML format and round-trips.

`load_like_camera_calibration_parsers` re-implements, independently of grade_common.tum, the
rules of camera_calibration_parsers' parse_yml.cpp (ROS 2), which camera_info_manager uses:
camera_name optional ("unknown"), image_width/image_height as ints, camera_matrix 3x3,
rectification_matrix 3x3 and projection_matrix 3x4 each {rows, cols, data} with exactly these
sizes, distortion_model optional (plumb_bob), distortion_coefficients {rows, cols, data} of
rows*cols numbers.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

from grade_common.errors import FormatError
from grade_common.tum import CameraInfo, read_camera_info

K = np.array([[320.0, 0.0, 319.5], [0.0, 320.0, 239.5], [0.0, 0.0, 1.0]])


def _fixed_matrix(doc: dict[str, Any], key: str, rows: int, cols: int) -> list[float]:
    node = doc[key]
    assert (int(node["rows"]), int(node["cols"])) == (rows, cols), key
    data = node["data"]
    return [float(data[i]) for i in range(rows * cols)]


def load_like_camera_calibration_parsers(text: str) -> dict[str, Any]:
    """A sensor_msgs/CameraInfo (as a dict) read by camera_calibration_parsers' rules."""
    doc = yaml.safe_load(text)
    d_node = doc["distortion_coefficients"]
    n_d = int(d_node["rows"]) * int(d_node["cols"])
    return {
        "camera_name": str(doc["camera_name"]) if "camera_name" in doc else "unknown",
        "width": int(doc["image_width"]),
        "height": int(doc["image_height"]),
        "k": _fixed_matrix(doc, "camera_matrix", 3, 3),
        "r": _fixed_matrix(doc, "rectification_matrix", 3, 3),
        "p": _fixed_matrix(doc, "projection_matrix", 3, 4),
        "distortion_model": str(doc.get("distortion_model", "plumb_bob")),
        "d": [float(d_node["data"][i]) for i in range(n_d)],
    }


def write_like_camera_calibration_parsers(info: dict[str, Any]) -> str:
    """The file writeCalibrationYml would write for that CameraInfo."""

    def matrix(rows: int, cols: int, data: list[float]) -> dict[str, Any]:
        return {"rows": rows, "cols": cols, "data": data}

    return yaml.safe_dump(
        {
            "image_width": info["width"],
            "image_height": info["height"],
            "camera_name": info["camera_name"],
            "camera_matrix": matrix(3, 3, info["k"]),
            "distortion_model": info["distortion_model"],
            "distortion_coefficients": matrix(1, len(info["d"]), info["d"]),
            "rectification_matrix": matrix(3, 3, info["r"]),
            "projection_matrix": matrix(3, 4, info["p"]),
        }
    )


def test_grade_file_loads_with_the_standard_rules_and_round_trips(tmp_path: Path) -> None:
    info = CameraInfo(640, 480, K, 5000.0, "uav1/camera_optical_frame", 90.0, 73.7)
    text = info.to_yaml()
    std = load_like_camera_calibration_parsers(text)
    assert std == {
        "camera_name": "uav1_camera_optical_frame",
        "width": 640,
        "height": 480,
        "k": K.ravel().tolist(),
        "r": np.eye(3).ravel().tolist(),
        "p": [320.0, 0.0, 319.5, 0.0, 0.0, 320.0, 239.5, 0.0, 0.0, 0.0, 1.0, 0.0],
        "distortion_model": "plumb_bob",
        "d": [0.0] * 5,
    }
    # grade's own keys are kept beside the standard ones.
    doc = yaml.safe_load(text)
    assert (doc["frame_id"], doc["depth_scale"], doc["hfov_deg"]) == (
        "uav1/camera_optical_frame",
        5000.0,
        90.0,
    )
    # Through the standard writer and back into grade: the same camera.
    path = tmp_path / "camera_info.yaml"
    path.write_text(write_like_camera_calibration_parsers(std))
    back = read_camera_info(path)
    assert (back.width, back.height, back.camera_name) == (640, 480, "uav1_camera_optical_frame")
    np.testing.assert_array_equal(back.camera_matrix, K)
    assert load_like_camera_calibration_parsers(back.to_yaml())["k"] == std["k"]


def test_old_grade_format_is_still_read(tmp_path: Path) -> None:
    path = tmp_path / "camera_info.yaml"
    path.write_text(yaml.safe_dump({"width": 64, "height": 48, "K": K.ravel().tolist()}))
    info = read_camera_info(path)
    assert (info.width, info.height) == (64, 48)
    np.testing.assert_array_equal(info.camera_matrix, K)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"camera_matrix": {"rows": 2, "cols": 3, "data": [1] * 6}}, "must be 3x3"),
        ({"image_width": "wide"}, "invalid literal"),
        ({"camera_matrix": {"rows": 3, "cols": 3, "data": [0.0] * 9}}, "non-positive focal"),
    ],
)
def test_bad_standard_files_are_refused(
    tmp_path: Path, change: dict[str, Any], message: str
) -> None:
    doc = yaml.safe_load(CameraInfo(64, 48, K).to_yaml())
    path = tmp_path / "camera_info.yaml"
    path.write_text(yaml.safe_dump({**doc, **change}))
    with pytest.raises(FormatError, match=message):
        read_camera_info(path)
