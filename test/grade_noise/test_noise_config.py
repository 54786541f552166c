"""The noise configuration (parameters file) and the per-topic pipeline."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from grade_noise.config import ModelKind, config_from_parameters, load_config
from grade_noise.errors import NoiseConfigError, NoiseInputError
from grade_noise.pipeline import NoisePipeline

BASE: dict[str, Any] = {
    "seed": 1,
    "input_topics": ["/r/imu", "/r/cam/rgb/image_raw", "/r/cam/depth/image_raw"],
    "output_topics": ["/r/imu_noisy", "/r/cam/rgb_noisy", "/r/cam/depth_noisy"],
    "models": ["imu", "rgb", "depth"],
    "presets": ["drone", "online", "stereo_3_5m"],
    "motion_topic": "/r/imu",
}


def test_shipped_parameters_file_loads(repo_root: Path) -> None:
    config = load_config(repo_root / "config" / "noise.yaml")
    assert {t.model for t in config.topics} == set(ModelKind)
    assert load_config(repo_root / "config" / "noise.yaml", seed=7).seed == 7


@pytest.mark.parametrize(
    ("change", "match"),
    [
        ({"models": ["imu", "rgb", "lidar"]}, "unknown model 'lidar'.*allowed"),
        ({"presets": ["drone", "online", "kinect"]}, "'kinect' is not a depth preset.*stereo_3_5m"),
        ({"output_topics": ["/r/imu", "/a", "/b"]}, "reuses input topics"),
        ({"presets": ["drone"]}, "equal lengths"),
        ({"motion_topic": ""}, "motion_topic' is empty"),
        ({"seed": "x"}, "'seed'"),
        ({"camera_hfov_deg": 200.0}, "camera_hfov_deg"),
        ({"motion_type": "gps"}, "motion_type"),
        ({"input_topics": ["r/imu", "/b", "/c"]}, "absolute"),
        ({"bogus": 1}, "unknown noise parameters \\['bogus'\\]"),
    ],
)
def test_bad_parameters(change: dict[str, Any], match: str) -> None:
    with pytest.raises(NoiseConfigError, match=match):
        config_from_parameters({**BASE, **change})


def test_bad_parameters_file(tmp_path: Path) -> None:
    path = tmp_path / "p.yaml"
    path.write_text("other_node:\n  ros__parameters: {}\n")
    with pytest.raises(NoiseConfigError, match="noise_node: ros__parameters"):
        load_config(path)


def test_pipeline_reports_bad_input() -> None:
    pipe = NoisePipeline(config_from_parameters(BASE))
    img = np.zeros((48, 64, 3), np.uint8)
    with pytest.raises(NoiseInputError, match="no sample arrived yet on motion topic '/r/imu'"):
        pipe.rgb("/r/cam/rgb/image_raw", 0, img, "rgb8")
    with pytest.raises(NoiseInputError, match="unsupported encoding 'mono8'"):
        pipe.rgb("/r/cam/rgb/image_raw", 0, img, "mono8")
    with pytest.raises(NoiseInputError, match="unsupported encoding 'rgb8'"):
        pipe.depth("/r/cam/depth/image_raw", img, "rgb8")
    with pytest.raises(NoiseConfigError, match="not configured"):
        pipe.imu("/other", 0, np.zeros(3), np.zeros(3))
    with pytest.raises(NoiseConfigError, match="configured as 'imu', not rgb"):
        pipe.rgb("/r/imu", 0, img, "rgb8")
    with pytest.raises(NoiseInputError, match="NaN"):
        pipe.update_motion(0, np.array([np.nan, 0, 0]), None)
    pipe.update_motion(0, np.zeros(3), None)
    with pytest.raises(NoiseInputError, match=r"is 2\.000 s away"):
        pipe.rgb("/r/cam/rgb/image_raw", 2_000_000_000, img, "rgb8")
    assert pipe.rgb("/r/cam/rgb/image_raw", 100_000_000, img, "rgb8").shape == img.shape
    pipe.imu("/r/imu", 10, np.zeros(3), np.zeros(3))
    with pytest.raises(NoiseInputError, match="not after the previous"):
        pipe.imu("/r/imu", 10, np.zeros(3), np.zeros(3))


def test_streams_are_independent_of_other_topics() -> None:
    full = NoisePipeline(config_from_parameters(BASE))
    only_imu = NoisePipeline(
        config_from_parameters(
            {
                **BASE,
                "input_topics": ["/r/imu"],
                "output_topics": ["/n"],
                "models": ["imu"],
                "presets": ["drone"],
            }
        )
    )
    for k in range(5):
        a = full.imu("/r/imu", k + 1, np.zeros(3), np.zeros(3))
        b = only_imu.imu("/r/imu", k + 1, np.zeros(3), np.zeros(3))
        np.testing.assert_array_equal(a[0], b[0])
