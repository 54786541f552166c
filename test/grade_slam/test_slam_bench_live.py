"""`grade bench slam --live` without running it: which node follows which sensor, and the
scenario each backend gets (a LiDAR instead of the camera for the LiDAR backends)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import yaml

from grade_common.share import shipped_file
from grade_eval.core.align import AlignMode
from grade_eval.core.trajectory import PoseTrajectory
from grade_sim.config.scenario import scenario_from_mapping
from grade_slam.bench_live import (
    BENCH_LIDAR,
    LIDAR_BACKENDS,
    LIVE_BACKENDS,
    live_setup,
    score,
    sim_node_parameters,
)
from grade_slam.bench_worlds import bench_scenario


def _data(world: str = "people+flying") -> dict[str, object]:
    base = yaml.safe_load(shipped_file("config/slam_benchmark.yaml").read_text())
    return bench_scenario(base, world, 42, 10.0, (640, 480), ("rgb", "depth", "semantic"))


@pytest.mark.parametrize("backend", sorted(LIDAR_BACKENDS))
def test_lidar_backends_fly_a_vlp16_instead_of_the_camera(backend: str) -> None:
    data = _data()
    setup = live_setup(data, backend)
    robot = data["robots"][0]  # type: ignore[index]
    assert robot["cameras"] == []
    assert robot["lidars"] == [BENCH_LIDAR]
    assert setup.node == "lidar_odometry_node"
    assert setup.lockstep_acks == "/uav1/lidar/points:/uav1/lidar_odometry/ack"
    assert setup.params == {"backend": backend, "robot": "uav1", "lidar": "lidar"}
    # the scenario validates, and its LiDAR publishes at the rate the table counts with
    scenario = scenario_from_mapping(data)
    assert scenario.robots[0].lidars[0].preset == "vlp16"
    assert setup.rate_hz == 10.0
    assert data["people"]["count"] == 8  # type: ignore[index]  # the world's actors stay


@pytest.mark.parametrize("backend", sorted(set(LIVE_BACKENDS) - LIDAR_BACKENDS))
def test_camera_backends_follow_the_depth_image(backend: str) -> None:
    data = _data("static")
    setup = live_setup(data, backend)
    assert setup.node == "slam_node"
    assert setup.lockstep_acks == "/uav1/camera/depth/image_raw:/uav1/slam/ack"
    assert setup.rate_hz == 30.0
    assert "lidars" not in data["robots"][0]  # type: ignore[index]
    inertial = setup.params.get("imu_rate_hz")
    assert inertial == ("240.0" if backend == "orb_slam3_rgbd_inertial" else None)


def _trajectory(positions: np.ndarray) -> PoseTrajectory:
    n = positions.shape[0]
    return PoseTrajectory(
        np.arange(n) * 0.1, positions, np.tile([1.0, 0.0, 0.0, 0.0], (n, 1)), name="t"
    )


def test_a_straight_flight_is_scored_after_origin_alignment_a_turning_one_after_se3() -> None:
    t = np.linspace(0.0, 4.0, 41)
    straight = np.stack([t, np.zeros_like(t), np.full_like(t, 1.5)], axis=1)
    # the estimate starts at its own origin, as an odometry's does
    summary, align = score(
        _trajectory(straight), _trajectory(straight - straight[0]), "line", rate_hz=10.0
    )
    assert align is AlignMode.ORIGIN
    assert summary["ate_rmse_m"] == pytest.approx(0.0, abs=1e-9)
    turning = np.stack([np.cos(t), np.sin(t), np.full_like(t, 1.5)], axis=1)
    summary, align = score(_trajectory(turning), _trajectory(turning + 3.0), "turn", rate_hz=10.0)
    assert align is AlignMode.SE3
    assert summary["ate_rmse_m"] == pytest.approx(0.0, abs=1e-9)
    # poses every 0.1 s: nothing lost at 10 Hz, everything at 30 Hz (GRADE's camera gap)
    assert summary["tracking_rate"] == pytest.approx(1.0)
    summary, _ = score(_trajectory(turning), _trajectory(turning), "turn", rate_hz=30.0)
    assert summary["tracking_rate"] < 0.5


def test_pacing_picks_lockstep_acks_or_wall_clock_pace(tmp_path: Path) -> None:
    setup = live_setup(_data("static"), "orb_slam3_rgbd")
    lockstep = sim_node_parameters(tmp_path / "s.yaml", tmp_path / "run", setup, "lockstep", 60.0)
    assert "lockstep:=true" in lockstep
    assert f"lockstep_acks:={setup.lockstep_acks}" in lockstep
    assert "realtime:=true" not in lockstep
    realtime = sim_node_parameters(tmp_path / "s.yaml", tmp_path / "run", setup, "realtime", 60.0)
    assert "realtime:=true" in realtime
    assert not any(a.startswith("lockstep") for a in realtime)
    assert realtime[realtime.index(f"scenario:={tmp_path / 's.yaml'}") - 1] == "-p"
    with pytest.raises(
        ValueError, match=r"--pacing 'fast': allowed values \['lockstep', 'realtime'\]"
    ):
        sim_node_parameters(tmp_path / "s.yaml", tmp_path / "run", setup, "fast", 60.0)
