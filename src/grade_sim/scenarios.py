"""The shared scenario fixtures: the default scenario file, the benchmarks' small scene, and the
variants benchmarks and tools derive from a scenario (camera streams, an added lidar)."""

from __future__ import annotations

import argparse
from dataclasses import replace
from pathlib import Path

from grade_common.errors import ConfigError
from grade_common.share import shipped_file
from grade_sim.config.lidar import LidarConfig
from grade_sim.config.scenario import Scenario, Stream, scenario_from_mapping


def default_scenario_path() -> Path:
    """config/indoor_uav.yaml from the installed package share, else from the source tree."""
    return shipped_file("config/indoor_uav.yaml")


def add_scenario_argument(parser: argparse.ArgumentParser) -> None:
    """`--scenario`: the scenario a benchmark simulates; None means `default_scenario_path()`."""
    parser.add_argument("--scenario", type=Path, default=None, help="default: indoor_uav.yaml")


def small_scenario(
    *,
    duration_s: float,
    bootstrap_s: float,
    people: int,
    flying_objects: int,
    width: int,
    height: int,
) -> Scenario:
    """The other tools' benchmark scene: two procedural rooms, one UAV with one camera (seed 7)."""
    return scenario_from_mapping(
        {
            "seed": 7,
            "duration_s": duration_s,
            "bootstrap_s": bootstrap_s,
            "environment": {"procedural": {"rooms_x": 2, "rooms_y": 1}},
            "people": {"count": people},
            "flying_objects": {"count": flying_objects},
            "robots": [
                {
                    "name": "uav1",
                    "cameras": [{"name": "camera", "width": width, "height": height}],
                }
            ],
        },
        "bench scenario",
    )


def with_camera_streams(scenario: Scenario, streams: str) -> Scenario:
    """The scenario with every camera's streams replaced (names as in the scenario file)."""
    try:
        chosen = tuple(Stream(s.strip()) for s in streams.split(","))
    except ValueError as err:
        allowed = ", ".join(s.value for s in Stream)
        raise ConfigError(f"--camera-streams: {err}; allowed: {allowed}") from err
    robots = tuple(
        replace(r, cameras=tuple(replace(c, streams=chosen) for c in r.cameras))
        for r in scenario.robots
    )
    return replace(scenario, robots=robots)


def with_lidar(scenario: Scenario, preset: str) -> Scenario:
    """The scenario with a lidar of this preset (e.g. hdl64e) on every robot."""
    from grade_common.schema import from_mapping

    try:
        lidar = from_mapping(LidarConfig, {"name": "bench_lidar", "preset": preset})
    except ConfigError as err:
        raise ConfigError(f"--lidar: {err}") from err
    robots = tuple(replace(r, lidars=(*r.lidars, lidar)) for r in scenario.robots)
    return replace(scenario, robots=robots)
