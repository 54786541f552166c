"""Camera model settings: model, distortion, fov_deg, supersample; errors name field and range."""

from __future__ import annotations

from typing import Any

import pytest

from grade_common.errors import ConfigError
from grade_sim.config.scenario import CameraModel, scenario_from_mapping


def _scenario(**camera: Any) -> Any:
    return scenario_from_mapping(
        {"robots": [{"name": "uav1", "cameras": [{"name": "camera", **camera}]}]}, "my.yaml"
    )


def test_models_load() -> None:
    cam = _scenario(model="plumb_bob", distortion=[-0.1, 0.01, 0.0, 0.0, 0.0]).robots[0].cameras[0]
    assert cam.model is CameraModel.PLUMB_BOB
    assert cam.distortion == (-0.1, 0.01, 0.0, 0.0, 0.0)
    fish = _scenario(model="equidistant", hfov_deg=190, fov_deg=200).robots[0].cameras[0]
    assert fish.model is CameraModel.EQUIDISTANT
    assert fish.fov_deg == 200.0
    assert _scenario().robots[0].cameras[0].model is CameraModel.PINHOLE


P = r"robots\[0\]\.cameras\[0\]"
BAD = [
    ({"model": "fisheye"}, rf"{P}\.model: .*fisheye.*equidistant"),
    (
        {"model": "plumb_bob", "distortion": [0.1, 0.2]},
        rf"{P}\.distortion: \[0\.1, 0\.2\] has 2 .*k1, k2, p1, p2, k3",
    ),
    (
        {"model": "equidistant", "distortion": [0.1] * 5},
        rf"{P}\.distortion: .*has 5 .*k1, k2, k3, k4",
    ),
    ({"distortion": [0.1] * 5}, rf"{P}\.distortion: .*model pinhole takes \[\] \(no distortion\)"),
    ({"model": "plumb_bob", "fov_deg": 120}, rf"{P}\.fov_deg: 120\.0; only model equidistant"),
    (
        {"model": "plumb_bob", "hfov_deg": 175},
        rf"{P}\.hfov_deg: value 175\.0 with model plumb_bob .*\[10\.0, 170\.0\]",
    ),
    ({"model": "equidistant", "hfov_deg": 370}, rf"{P}\.hfov_deg: .*370.*360"),
    (
        {"model": "equidistant", "hfov_deg": 200, "fov_deg": 180},
        rf"{P}\.hfov_deg: 200\.0 is wider than fov_deg 180\.0; allowed \[10\.0, 180\.0\]",
    ),
    (
        {"model": "equidistant", "distortion": [0.0, -0.2, 0.0, 0.0]},
        rf"{P}\.distortion: .*folds the image at .* deg off-axis",
    ),
    (
        {"model": "plumb_bob", "distortion": [-0.6, 0.0, 0.0, 0.0, 0.0]},
        rf"{P}\.distortion: .*cannot be inverted at pixel \(u=0, v=0\)",
    ),
    (
        {"model": "plumb_bob", "hfov_deg": 165, "width": 1280, "height": 960, "supersample": 4},
        rf"{P}: the wide source view would be .* px \(limit 4096\); lower supersample",
    ),
    ({"model": "equidistant", "supersample": 5}, rf"{P}\.supersample: .*5.*\[0\.5, 4\.0\]"),
    (
        {"model": "plumb_bob", "distortion": [20, 0, 0, 0, 0]},
        rf"{P}\.distortion.*20.*\[-10\.0, 10\.0\]",
    ),
]


@pytest.mark.parametrize(("camera", "message"), BAD, ids=[str(c) for c, _ in BAD])
def test_bad_camera_models_name_field_value_and_range(camera: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        _scenario(**camera)
