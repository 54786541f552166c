"""`grade eval ...` end to end on files written in the test (TUM, run directory, bag, maps)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import yaml

from conftest import make_trajectory, perturbed, write_run
from grade_cli.main import main as grade_main
from grade_eval.cli import main
from grade_eval.core.pointmap import PointMap
from grade_eval.core.trajectory import PoseTrajectory
from grade_eval.errors import AssociationError, EvalConfigError, OutputExistsError
from grade_eval.io.bag import read_bag_trajectory
from grade_eval.io.pointcloud import read_map, write_map
from grade_eval.io.run import CameraStream
from grade_eval.io.tum import write_tum


@pytest.fixture
def tum_pair(tmp_path: Path) -> tuple[Path, Path, PoseTrajectory]:
    gt = make_trajectory(900)  # 30 s at 30 Hz
    est = perturbed(gt, np.random.default_rng(1), 0.02, 0.005)
    keep = (gt.stamps_s < 10.0) | (gt.stamps_s > 12.0)  # 2 s lost track
    est = est.subset(np.flatnonzero(keep))
    return write_tum(tmp_path / "gt.txt", gt), write_tum(tmp_path / "est.txt", est), est


def test_traj_writes_row_and_plots(
    tmp_path: Path, tum_pair: tuple[Path, Path, PoseTrajectory], capsys: pytest.CaptureFixture[str]
) -> None:
    gt_path, est_path, est = tum_pair
    out = tmp_path / "row.json"
    code = main(
        [
            "traj",
            "--ref",
            str(gt_path),
            "--est",
            str(est_path),
            "--out",
            str(out),
            "--plot-dir",
            str(tmp_path / "plots"),
            "--sequence",
            "s1",
            "--method",
            "m",
        ]
    )
    assert code == 0
    assert "ate_rmse_m" in capsys.readouterr().out
    row = json.loads(out.read_text())[0]
    assert row["sequence"] == "s1"
    gap = est.stamps_s[est.stamps_s > 12.0][0] - est.stamps_s[est.stamps_s < 10.0][-1]
    assert row["missing_time_s"] == pytest.approx(gap, abs=1e-9)
    window_s = 899 / 30  # ground truth spans [0, 29.97] s, inside GRADE's 60 s cap
    assert row["tracking_rate"] == pytest.approx((window_s - gap) / window_s, abs=1e-9)
    assert 0.02 < row["ate_rmse_m"] < 0.05
    assert (tmp_path / "plots" / "trajectory_top.png").stat().st_size > 1000
    assert (tmp_path / "plots" / "error_over_time.png").stat().st_size > 1000
    with pytest.raises(OutputExistsError):
        main(["traj", "--ref", str(gt_path), "--est", str(est_path), "--out", str(out)])


def test_grade_cli_reports_errors_without_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.txt"
    bad.write_text("0 0 0 0 0 0 0 1\n0.1 0 0 0 0 0 1\n")
    assert grade_main(["eval", "traj", "--ref", str(bad), "--est", str(bad)]) == 1
    assert "bad.txt:2: expected 8 numbers" in capsys.readouterr().err


def test_traj_against_run_directory(tmp_path: Path) -> None:
    run = write_run(tmp_path, num_frames=8)
    cam_gt = CameraStream.open(run).trajectory
    # The estimate starts in its own frame (origin at identity) and misses the last frames.
    first_inv = np.linalg.inv(cam_gt.poses_se3[0])
    est = PoseTrajectory.from_se3(cam_gt.stamps_s[:5], first_inv @ cam_gt.poses_se3[:5])
    est_path = write_tum(tmp_path / "est.txt", est)
    out = tmp_path / "r.csv"
    assert (
        main(
            [
                "traj",
                "--ref",
                str(run),
                "--camera",
                "cam",
                "--est",
                str(est_path),
                "--align",
                "origin",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    header, values = out.read_text().splitlines()[:2]
    row = dict(zip(header.split(","), values.split(","), strict=True))
    assert float(row["ate_rmse_m"]) < 1e-6
    assert float(row["matched_poses"]) == 5
    assert float(row["missing_time_s"]) == pytest.approx(3 / 30, abs=1e-6)


def test_batch_many_runs(tmp_path: Path, tum_pair: tuple[Path, Path, PoseTrajectory]) -> None:
    gt_path, est_path, _ = tum_pair
    gt_map = PointMap(np.random.default_rng(0).uniform(0, 1, (500, 3)))
    write_map(tmp_path / "gt.ply", gt_map)
    write_map(tmp_path / "est.ply", PointMap(gt_map.points_xyz + np.array([0, 0, 0.001])))
    spec = [
        {
            "sequence": "s1",
            "method": "a",
            "reference": str(gt_path),
            "estimate": str(est_path),
            "estimate_map": str(tmp_path / "est.ply"),
            "gt_map": str(tmp_path / "gt.ply"),
        },
        {"sequence": "s1", "method": "b", "reference": str(gt_path), "estimate": str(gt_path)},
    ]
    (tmp_path / "spec.yaml").write_text(yaml.safe_dump(spec))
    assert main(["batch", str(tmp_path / "spec.yaml"), "--out", str(tmp_path / "all.json")]) == 0
    rows = json.loads((tmp_path / "all.json").read_text())
    assert [r["method"] for r in rows] == ["a", "b"]
    assert rows[0]["ame_nn_rmse_m"] == pytest.approx(0.001, abs=1e-6)
    assert rows[1]["ate_rmse_m"] < 1e-9
    assert rows[1]["tracking_rate"] == 1.0


def test_gtmap_and_map_commands(tmp_path: Path) -> None:
    run = write_run(tmp_path)
    out = tmp_path / "gt.ply"
    assert main(["gtmap", str(run), "--out", str(out), "--remove-dynamic"]) == 0
    gt_map = read_map(out)
    assert gt_map.size > 40
    write_map(tmp_path / "est.pcd", PointMap(gt_map.points_xyz + np.array([0.0, 0.0, 0.01])))
    res = tmp_path / "ame.csv"
    assert (
        main(
            [
                "map",
                "--est",
                str(tmp_path / "est.pcd"),
                "--gt",
                str(out),
                "--symmetric",
                "--out",
                str(res),
                "--plot-dir",
                str(tmp_path / "p"),
            ]
        )
        == 0
    )
    text = res.read_text()
    assert "ame_rmse_m" in text
    assert ",nn," in text
    assert (tmp_path / "p" / "map_error_nn.png").is_file()
    with pytest.raises(EvalConfigError, match="exists already"):
        main(["gtmap", str(run), "--out", str(out)])


def test_map_raycast_command(tmp_path: Path) -> None:
    floor = np.stack(
        np.meshgrid(np.arange(0, 3, 0.05), np.arange(-1, 1, 0.05), [0.0], indexing="ij"), axis=-1
    ).reshape(-1, 3)
    wall = np.stack(
        np.meshgrid([3.0], np.arange(-1, 1, 0.05), np.arange(0, 2, 0.05), indexing="ij"), axis=-1
    ).reshape(-1, 3)
    write_map(tmp_path / "gt.ply", PointMap(np.concatenate([floor, wall])))
    stamps = np.array([0.0, 1.0, 2.0])
    q = np.tile([1.0, 0, 0, 0], (3, 1))
    write_tum(tmp_path / "cam_gt.txt", PoseTrajectory(stamps, [[0, 0, 1.0]] * 3, q))
    write_tum(tmp_path / "cam_est.txt", PoseTrajectory(stamps, [[-0.5, 0, 0.05]] * 3, q))
    pts = np.array([[2.5, 0.0, 0.05], [2.5, 0.2, 0.05]])
    write_map(tmp_path / "est.ply", PointMap(pts))
    np.savez(tmp_path / "obs.npz", points_xyz=pts, stamps_s=np.array([1.0, 2.0]))
    out = tmp_path / "ame.json"
    assert (
        main(
            [
                "map",
                "--est",
                str(tmp_path / "est.ply"),
                "--gt",
                str(tmp_path / "gt.ply"),
                "--association",
                "both",
                "--observations",
                str(tmp_path / "obs.npz"),
                "--est-traj",
                str(tmp_path / "cam_est.txt"),
                "--gt-traj",
                str(tmp_path / "cam_gt.txt"),
                "--align",
                "none",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    rows = {r["association"]: r for r in json.loads(out.read_text())}
    assert rows["nn"]["ame_rmse_m"] == pytest.approx(0.05, abs=1e-9)
    assert rows["raycast"]["ame_rmse_m"] > 1.0
    assert rows["raycast"]["unmatched"] == 0


def test_overlap_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for name, x0 in (("a", 0.0), ("b", 0.5), ("c", 5.0)):
        g = np.stack(
            np.meshgrid(x0 + 0.05 * np.arange(20), 0.05 * np.arange(20), [0.0], indexing="ij"),
            axis=-1,
        ).reshape(-1, 3)
        write_map(tmp_path / f"{name}.ply", PointMap(g))
    assert main(["overlap", str(tmp_path / "a.ply"), str(tmp_path / "b.ply")]) == 0
    assert "0.333333" in capsys.readouterr().out
    out = tmp_path / "pairs.csv"
    assert (
        main(
            [
                "overlap",
                *(f"w={tmp_path / n}.ply" for n in "abc"),
                "--pairs",
                "0.1",
                "0.9",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    assert out.read_text().splitlines()[1].startswith("a,b,w,0.333")


def test_bag_topics(tmp_path: Path) -> None:
    from rosbags.rosbag2 import StoragePlugin, Writer

    from grade_common import ros_distro

    store = ros_distro.typestore()
    pose_t = store.types["geometry_msgs/msg/PoseStamped"]
    tf_t = store.types["tf2_msgs/msg/TFMessage"]
    tfs_t = store.types["geometry_msgs/msg/TransformStamped"]
    hdr_t = store.types["std_msgs/msg/Header"]
    time_t = store.types["builtin_interfaces/msg/Time"]
    pose_msg_t = store.types["geometry_msgs/msg/Pose"]
    point_t = store.types["geometry_msgs/msg/Point"]
    quat_t = store.types["geometry_msgs/msg/Quaternion"]
    vec_t = store.types["geometry_msgs/msg/Vector3"]
    tr_t = store.types["geometry_msgs/msg/Transform"]
    gt = make_trajectory(20)
    path = tmp_path / "bag"
    with Writer(path, version=9, storage_plugin=StoragePlugin.MCAP) as writer:
        c_pose = writer.add_connection("/r1/cam/pose", pose_t.__msgtype__, typestore=store)
        c_tf = writer.add_connection("/tf", tf_t.__msgtype__, typestore=store)
        for k in range(gt.num_poses):
            sec = int(gt.stamps_s[k])
            stamp = time_t(sec=sec, nanosec=round((gt.stamps_s[k] - sec) * 1e9))
            p = gt.positions_xyz[k]
            w, x, y, z = gt.orientations_quat_wxyz[k]
            msg = pose_t(
                header=hdr_t(stamp=stamp, frame_id="world"),
                pose=pose_msg_t(
                    position=point_t(x=p[0], y=p[1], z=p[2]), orientation=quat_t(x=x, y=y, z=z, w=w)
                ),
            )
            ns = int(gt.stamps_s[k] * 1e9)
            writer.write(c_pose, ns, store.serialize_cdr(msg, pose_t.__msgtype__))
            tf = tfs_t(
                header=hdr_t(stamp=stamp, frame_id="r1/odom"),
                child_frame_id="r1/base_link",
                transform=tr_t(
                    translation=vec_t(x=p[0], y=p[1], z=p[2]), rotation=quat_t(x=x, y=y, z=z, w=w)
                ),
            )
            writer.write(c_tf, ns, store.serialize_cdr(tf_t(transforms=[tf]), tf_t.__msgtype__))
    for traj in (
        read_bag_trajectory(path, "/r1/cam/pose"),
        read_bag_trajectory(path, "/tf", "r1/base_link"),
    ):
        np.testing.assert_allclose(traj.stamps_s, gt.stamps_s, atol=1e-9)
        np.testing.assert_allclose(traj.positions_xyz, gt.positions_xyz, atol=1e-12)
        np.testing.assert_allclose(
            traj.orientations_quat_wxyz, gt.orientations_quat_wxyz, atol=1e-12
        )
    from grade_eval.errors import FormatError

    with pytest.raises(FormatError, match=r"no topic '/nope'.*'/r1/cam/pose', '/tf'"):
        read_bag_trajectory(path, "/nope")
    with pytest.raises(FormatError, match=r"has no transform to 'x'"):
        read_bag_trajectory(path, "/tf", "x")


def test_no_overlap_in_cli(tmp_path: Path) -> None:
    gt = make_trajectory(50)
    late = PoseTrajectory(gt.stamps_s + 100, gt.positions_xyz, gt.orientations_quat_wxyz)
    a, b = write_tum(tmp_path / "a.txt", gt), write_tum(tmp_path / "b.txt", late)
    with pytest.raises(AssociationError, match="no overlapping time"):
        main(["traj", "--ref", str(a), "--est", str(b)])


def test_benchmark_runs_small(capsys: pytest.CaptureFixture[str]) -> None:
    from grade_eval.bench import main as bench_main

    assert bench_main(["--poses", "600", "--points", "6000", "--rays", "300"]) == 0
    out = capsys.readouterr().out
    assert "speed ratio evo / grade_eval" in out
    diff = float(out.split("max |difference| ")[1].split(";")[0])
    assert diff < 1e-9
