"""A run with a plumb_bob and a fisheye camera: images, CameraInfo and camera_info.yaml agree."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest
import yaml

from grade_common.tum import read_camera_info
from grade_sim.config.scenario import scenario_from_mapping
from grade_sim.optics.lens import lens_of
from grade_sim.sensors.messages import typestore
from grade_sim.sim.run import run_scenario

Bag = dict[str, list[tuple[int, str, bytes]]]
CAMERAS = [
    {
        "name": "wide",
        "width": 160,
        "height": 120,
        "hfov_deg": 90.0,
        "model": "plumb_bob",
        "distortion": [-0.2, 0.04, 0.001, -0.001, 0.0],
    },
    {
        "name": "fisheye",
        "width": 160,
        "height": 160,
        "hfov_deg": 190.0,
        "fov_deg": 190.0,
        "model": "equidistant",
        "distortion": [0.01, -0.002, 0.0, 0.0],
    },
]


@pytest.mark.slow
def test_distorted_cameras_publish_matching_camera_info(
    tmp_path: Path,
    small_data: Callable[..., dict[str, Any]],
    read_bag: Callable[[Path], Bag],
) -> None:
    data = small_data(duration_s=0.1, bootstrap_s=0.0, people={"count": 1})
    data["robots"][0]["cameras"] = CAMERAS
    scenario = scenario_from_mapping(data)
    result = run_scenario(scenario, tmp_path / "run")
    bag = read_bag(result.path / "bag")
    instances = set(yaml.safe_load((result.path / "gt" / "instances.yaml").read_text()))
    for cfg in scenario.robots[0].cameras:
        lens = lens_of(cfg)
        folder = result.path / "gt" / "uav1" / cfg.name
        info = read_camera_info(folder / "camera_info.yaml")
        assert info.distortion_model == cfg.model.value
        np.testing.assert_allclose(info.distortion, cfg.distortion)
        np.testing.assert_allclose(info.camera_matrix, lens.k)
        assert info.depth_kind == ("range" if cfg.model.value == "equidistant" else "planar")
        raw = yaml.safe_load((folder / "camera_info.yaml").read_text())
        assert raw["distortion_coefficients"]["cols"] == len(cfg.distortion)
        np.testing.assert_allclose(
            np.array(raw["projection_matrix"]["data"]).reshape(3, 4)[:, :3], lens.k
        )
        _, msgtype, msg_raw = bag[f"/uav1/{cfg.name}/camera_info"][-1]
        msg = typestore().deserialize_cdr(msg_raw, msgtype)
        assert msg.distortion_model == cfg.model.value
        np.testing.assert_allclose(msg.d, cfg.distortion)
        np.testing.assert_allclose(np.asarray(msg.k).reshape(3, 3), lens.k)
        np.testing.assert_allclose(np.asarray(msg.p).reshape(3, 4)[:, :3], lens.k)
        pngs = sorted((folder / "instance").glob("*.png"))
        assert pngs
        for png in pngs:
            ids = cv2.imread(str(png), cv2.IMREAD_UNCHANGED)
            assert ids.shape == (cfg.height, cfg.width)
            assert set(np.unique(ids).tolist()) - {0} <= instances
        rgb = cv2.imread(str(sorted((folder / "rgb").glob("*.png"))[-1]))
        assert rgb.shape == (cfg.height, cfg.width, 3)
        outside = ~lens.pixel_rays[1]
        assert not rgb[outside].any()  # outside the fisheye's image circle: black
        assert rgb[~outside].mean() > 10
