"""Lidar entries of the scenario: presets, overrides, and clear errors for bad beam tables."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from grade_common.errors import ConfigError
from grade_sim.config.lidar import PRESETS, LidarKind
from grade_sim.config.scenario import Scenario, scenario_from_mapping


def with_lidar(small_data: Callable[..., dict[str, Any]], **lidar: Any) -> dict[str, Any]:
    data = small_data()
    data["robots"][0]["lidars"] = [{"name": "lidar", **lidar}]
    return data


def test_hdl64e_preset_is_64_beams_by_2048_at_10_hz(small_data: Callable[..., Any]) -> None:
    sc: Scenario = scenario_from_mapping(with_lidar(small_data, preset="hdl64e"))
    table = sc.robots[0].lidars[0].resolved()
    assert (len(table.elevations_deg), table.columns, table.rate_hz) == (64, 2048, 10.0)
    assert table.kind is LidarKind.ROTATING
    assert {"vlp16", "hdl32e", "hdl64e", "os1_64", "os1_128", "livox_mid40", "utm30lx"} <= set(
        PRESETS
    )


def test_fields_override_the_preset_and_custom_tables_work(small_data: Callable[..., Any]) -> None:
    sc = scenario_from_mapping(with_lidar(small_data, preset="vlp16", rate_hz=20.0))
    assert sc.robots[0].lidars[0].resolved().rate_hz == 20.0
    custom = dict(
        preset="custom",
        kind="rotating",
        elevations_deg=[-5.0, 0.0, 5.0],
        columns=100,
        fov_deg=360.0,
        rate_hz=5.0,
        range_min_m=0.2,
        range_max_m=30.0,
    )
    table = scenario_from_mapping(with_lidar(small_data, **custom)).robots[0].lidars[0].resolved()
    assert table.elevations_deg == (-5.0, 0.0, 5.0)


@pytest.mark.parametrize(
    ("lidar", "message"),
    [
        ({"preset": "custom", "kind": "rotating", "elevations_deg": [], "columns": 10,
          "fov_deg": 360.0, "rate_hz": 10.0, "range_min_m": 0.1, "range_max_m": 10.0},
         r"elevations_deg: the beam table is empty"),
        ({"preset": "vlp16", "range_min_m": 5.0, "range_max_m": 5.0},
         r"range_max_m: 5.0 must be above range_min_m 5.0"),
        ({"preset": "vlp16", "rate_hz": 500.0},
         r"robots\[0\]\.lidars\[0\]\.rate_hz: 500.0 Hz exceeds physics_hz 240.0"),
        ({"preset": "hdl65"}, r"preset: unknown preset 'hdl65'; allowed \[.*'hdl64e'"),
        ({"preset": "custom", "columns": 10}, r"preset 'custom' needs \['kind', 'elevations_deg'"),
        ({"preset": "vlp16", "ray_drop": "learned"}, r"ray_drop_model: required"),
        ({"preset": "vlp16", "name": "a/b"}, r"name"),
        ({"preset": "vlp16", "beam_divergence_mrad": -1.0}, r"beam_divergence_mrad.*-1\.0"),
        ({"preset": "vlp16", "beam_subrays": 2}, r"beam_subrays.*2"),
        ({"preset": "vlp16", "return_mode": "loudest"}, r"return_mode.*loudest"),
    ],
)  # fmt: skip
def test_bad_lidar_entries_say_what_is_wrong(
    small_data: Callable[..., Any], lidar: dict[str, Any], message: str
) -> None:
    with pytest.raises(ConfigError, match=message):
        scenario_from_mapping(with_lidar(small_data, **lidar))


def test_a_lidar_may_not_share_a_camera_name(small_data: Callable[..., Any]) -> None:
    data = with_lidar(small_data, preset="vlp16")
    data["robots"][0]["lidars"][0]["name"] = "camera"
    with pytest.raises(ConfigError, match="lidars: names must differ"):
        scenario_from_mapping(data)
