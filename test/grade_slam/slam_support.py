"""Shared by the live SLAM tests: the small two-room scenario, the installed executables, and
sim_node in lockstep with a follower's acknowledgement."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import yaml

from grade_slam.backends import BACKENDS, BackendSpec

# A registered backend whose package does not exist (the real import path, a missing package).
MISSING_BACKEND = BackendSpec(
    module="grade_no_such_slam_package",
    install="pip install grade-no-such-slam-package==1.0",
    build=BACKENDS["open3d_rgbd"].build,
    description="test",
)


def executable(name: str) -> str:
    from ament_index_python.packages import get_package_prefix

    return str(Path(get_package_prefix("grade")) / "lib" / "grade" / name)


def two_room_scenario(
    duration_s: float,
    *,
    realtime: bool,
    cameras: list[dict[str, Any]] | None = None,
    lidars: list[dict[str, Any]] | None = None,
    corner_x_m: float = 3.4,
) -> dict[str, Any]:
    """Two plain rooms, no actors, uav1 flying an L at 0.6 m/s: along x from 2.5 to
    `corner_x_m`, then towards +y (SE(3) alignment needs the turn)."""
    robot: dict[str, Any] = {
        "name": "uav1",
        "type": "uav",
        "start_xyz": [2.5, 2.5, 1.4],
        "motion": {
            "mode": "path",
            "speed_mps": 0.6,
            "altitude_m": 1.4,
            "waypoints": [[corner_x_m, 2.5, 1.4], [corner_x_m, 3.4, 1.4]],
        },
        "cameras": cameras or [],
    }
    if lidars:
        robot["lidars"] = lidars
    return {
        "seed": 11,
        "duration_s": duration_s,
        "bootstrap_s": 0.2,
        "realtime": realtime,
        "environment": {
            "procedural": {
                "rooms_x": 2,
                "rooms_y": 1,
                "room_size_m": [5.0, 5.0],
                "furniture_per_room": [2, 2],
            }
        },
        "people": {"count": 0},
        "flying_objects": {"count": 0},
        "robots": [robot],
        "record": {"bag": False, "ground_truth": True, "experiment_record": False},
    }


def run_sim(
    scenario: dict[str, Any], tmp_path: Path, *params: str, timeout_s: float = 400
) -> tuple[subprocess.CompletedProcess[str], Path]:
    """sim_node on `scenario` (written to tmp_path) with extra `name:=value` parameters; the
    finished process and its run directory."""
    path = tmp_path / "scenario.yaml"
    path.write_text(yaml.safe_dump(scenario))
    run_dir = tmp_path / "run"
    args = [f"scenario:={path}", f"output_dir:={run_dir}", *params]
    sim = subprocess.run(
        [executable("sim_node"), "--ros-args", *[a for p in args for a in ("-p", p)]],
        capture_output=True,
        text=True,
        timeout=timeout_s,
        check=False,
    )
    return sim, run_dir


def lockstep(input_topic: str, ack_topic: str) -> tuple[str, ...]:
    """sim_node parameters: wait for the follower's acknowledgement of each message."""
    return (
        "lockstep:=true",
        f"lockstep_acks:={input_topic}:{ack_topic}",
        "lockstep_timeout_s:=60.0",
        "start_delay_s:=1.0",
    )
