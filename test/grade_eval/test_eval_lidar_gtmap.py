"""Ground-truth map from lidar scans: per-point poses undo the rolling-shutter smear (synthetic
sweep against a wall, computed by hand), and on a real run the map lies on the world's boxes."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from grade_common.types import FloatArray
from grade_eval.core.gtmap import GtMapConfig
from grade_eval.core.lidar_map import (
    BaseTrajectory,
    LidarFrame,
    build_lidar_map,
    mount_from_scans,
    scan_points_world,
)
from grade_eval.errors import MapError

WALL_X = 5.0
SPEED = np.array([2.0, 0.5, 0.0])  # m/s
YAW_RATE = 1.0  # rad/s
MOUNT = np.eye(4)
MOUNT[:3, 3] = [0.1, 0.0, 0.3]
MOUNT[:3, :3] = Rotation.from_euler("z", 0.2).as_matrix()


def base_at(t: FloatArray) -> FloatArray:
    out = np.tile(np.eye(4), (len(t), 1, 1))
    out[:, :3, :3] = Rotation.from_euler("z", YAW_RATE * t[:, None]).as_matrix()
    out[:, :3, 3] = t[:, None] * SPEED
    return out


def base() -> BaseTrajectory:
    t = np.arange(0.0, 1.0, 1 / 60)  # the run's 60 Hz ground truth
    poses = base_at(t)
    quats = Rotation.from_matrix(poses[:, :3, :3]).as_quat()
    return BaseTrajectory(t, poses[:, :3, 3], quats)


def wall_scan(stamp_s: float) -> LidarFrame:
    """A sweep (0.1 s) of rays at +-40 deg of the base's heading meeting the wall x = WALL_X,
    each point in the sensor frame at its own firing time."""
    n = 400
    offset = np.linspace(0.0, 0.0999, n)
    sensor = base_at(stamp_s + offset) @ MOUNT
    az = np.linspace(-0.7, 0.7, n) - 0.2 - YAW_RATE * (stamp_s + offset)
    el = np.tile([-0.1, 0.0, 0.1, 0.2], n // 4)
    d_world = np.stack([np.cos(el) * np.cos(az), np.cos(el) * np.sin(az), np.sin(el)], axis=1)
    d_world = np.einsum("nij,nj->ni", sensor[:, :3, :3], d_world)
    o = sensor[:, :3, 3]
    hit = o + d_world * ((WALL_X - o[:, 0]) / d_world[:, 0])[:, None]
    local = np.einsum("nji,nj->ni", sensor[:, :3, :3], hit - o)
    ids = np.where(np.arange(n) % 10 == 0, 7, 1).astype(np.uint16)
    return LidarFrame(stamp_s, local, sensor[0], offset, ids)


def test_per_point_poses_put_every_return_on_the_wall() -> None:
    frames = [wall_scan(s) for s in (0.1, 0.2, 0.3)]
    traj = base()
    mount = mount_from_scans(frames, traj)
    np.testing.assert_allclose(mount, MOUNT, atol=1e-9)
    cfg = GtMapConfig(max_range_m=50.0)
    for f in frames:
        # Interpolating the 60 Hz trajectory: a curved path's chord error is below 0.1 mm.
        pts = scan_points_world(f, cfg, traj, mount)
        assert np.abs(pts[:, 0] - WALL_X).max() < 1e-4
        # At the stamp pose the sweep smears by the motion: centimetres, not tenths of mm.
        smeared = scan_points_world(f, cfg)
        assert np.abs(smeared[:, 0] - WALL_X).max() > 0.05


def test_dynamic_ids_are_dropped_and_the_map_is_voxelised() -> None:
    frames = [wall_scan(0.1)]
    cfg = GtMapConfig(voxel_size_m=0.05, max_range_m=50.0, dynamic_ids=frozenset({7}))
    kept = scan_points_world(frames[0], cfg, base(), MOUNT)
    assert len(kept) == 400 - 40
    gt = build_lidar_map(frames, cfg, base=base(), mount=MOUNT)
    assert np.allclose(gt.points_xyz / 0.05, np.round(gt.points_xyz / 0.05))
    assert np.abs(gt.points_xyz[:, 0] - WALL_X).max() <= 0.025 + 1e-9
    no_labels = LidarFrame(0.1, frames[0].points_xyz, frames[0].pose_world_sensor)
    with pytest.raises(MapError, match="needs its labels"):
        scan_points_world(no_labels, cfg)
    with pytest.raises(MapError, match="empty"):
        build_lidar_map(frames, GtMapConfig(max_range_m=0.5))


@pytest.mark.slow
def test_grade_eval_gtmap_from_a_runs_lidar_lies_on_the_world(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from grade_cli.main import main as grade_main
    from grade_eval.io.pointcloud import read_map
    from grade_sim.config.scenario import scenario_from_mapping
    from grade_sim.scene import build_scene
    from grade_sim.sim.run import run_scenario

    scenario = scenario_from_mapping(
        {
            "seed": 5,
            "duration_s": 1.0,
            "bootstrap_s": 0.1,
            "environment": {"procedural": {"rooms_x": 2, "rooms_y": 1}},
            "people": {"count": 2},
            "flying_objects": {"count": 0},
            "robots": [
                {
                    "name": "uav1",
                    "cameras": [{"name": "camera", "width": 64, "height": 48}],
                    "lidars": [{"name": "lidar", "preset": "vlp16", "columns": 720}],
                }
            ],
        }
    )
    run = run_scenario(scenario, tmp_path / "run").path
    out = tmp_path / "lidar_map.ply"
    assert (
        grade_main(["eval", "gtmap", str(run), "--lidar", "uav1/lidar", "--out", str(out),
                    "--remove-dynamic", "--voxel", "0.02", "--max-range", "30"])
        == 0
    )  # fmt: skip
    assert "per-point poses" in capsys.readouterr().out
    pts = read_map(out).points_xyz
    assert len(pts) > 1000
    # Distance of each voxel centre to the nearest static box surface (an independent model
    # of the world: the scene's boxes, not the meshes Embree cast against).
    boxes = build_scene(scenario).world.boxes
    dist = np.full(len(pts), np.inf)
    for b in boxes:
        c, s = np.cos(b.yaw_rad), np.sin(b.yaw_rad)
        rel = pts - np.asarray(b.center_xyz)
        local = np.stack(
            [c * rel[:, 0] + s * rel[:, 1], -s * rel[:, 0] + c * rel[:, 1], rel[:, 2]], 1
        )
        q = np.abs(local) - np.asarray(b.half_size_xyz)
        sdf = np.linalg.norm(np.maximum(q, 0), axis=1) + np.minimum(q.max(axis=1), 0)
        dist = np.minimum(dist, np.abs(sdf))
    # Voxel centres are within half a voxel diagonal (17 mm) plus the range noise (10 mm, 3 sigma).
    assert np.quantile(dist, 0.99) < 0.017 + 0.03
    assert np.median(dist) < 0.012
