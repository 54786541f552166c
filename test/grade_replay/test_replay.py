"""grade replay end to end on a small recorded run: exactness, changes, fidelity, bad input."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest
import yaml
from scipy.ndimage import binary_dilation

from grade_cli.main import main as grade_main
from grade_common.rotations import R_LINK_OPTICAL, quat_from_rpy, quat_to_matrix
from grade_common.tum import tum_stamp
from grade_replay.changes import CameraChange, LidarChange, ReplayChanges
from grade_replay.errors import ReplayConfigError
from grade_replay.fidelity import base_poses
from grade_replay.replay import (
    ReplayConfig,
    ReplayMode,
    ReplayOutputExistsError,
    ReplayResult,
    RunDirError,
    replay_run,
)
from grade_sim.actors.people_group import People
from grade_sim.config.scenario import scenario_from_mapping, scenario_to_mapping
from grade_sim.engine import fxaa
from grade_sim.io.record import load_record
from grade_sim.robots.model import robot_model
from grade_sim.scene import build_scene
from grade_sim.sensors.schedule import RateSchedule
from grade_sim.sim.orchestrator import stamp_ns_of
from grade_sim.sim.run import SimulatorSpec, run_scenario
from replay_kit import file_digests
from scenario_kit import small_scenario

PERSON_IDS_KEY = "person"


# The recorded run's seed: its camera sees both people (the hide test needs them in view).
RECORDED_SEED = 5


def _bag_messages(bag: Path) -> list[tuple[str, int, bytes]]:
    from rosbags.rosbag2 import Reader

    with Reader(bag) as reader:
        return [(c.topic, t, bytes(raw)) for c, t, raw in reader.messages()]


def _frames(cam_dir: Path, kind: str) -> dict[str, np.ndarray]:
    out = {}
    for line in (cam_dir / f"{kind}.txt").read_text().splitlines():
        if line.startswith("#"):
            continue
        stamp, name = line.split()
        out[stamp] = cv2.imread(str(cam_dir / name), cv2.IMREAD_UNCHANGED)
    return out


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small recorded run (160x120 camera, 2 people, 0.6 s) shared by this module."""
    out = tmp_path_factory.mktemp("recorded") / "orig"
    result = run_scenario(small_scenario(seed=RECORDED_SEED), out)
    assert result.stats.status == "complete"
    return result.path


@pytest.fixture(scope="module")
def original_state(recorded: Path) -> dict[str, str]:
    return file_digests(recorded)


@pytest.fixture
def replay(recorded: Path, tmp_path: Path) -> Callable[..., ReplayResult]:
    def run(mode: ReplayMode = ReplayMode.TELEPORT, **changes: Any) -> ReplayResult:
        return replay_run(
            ReplayConfig(recorded, tmp_path / "replay", mode, ReplayChanges(**changes))
        )

    return run


def _assert_original_untouched(recorded: Path, original_state: dict[str, str]) -> None:
    assert file_digests(recorded) == original_state


def test_unchanged_teleport_replay_is_byte_exact(
    recorded: Path, original_state: dict[str, str], replay: Callable[..., ReplayResult]
) -> None:
    result = replay()
    new = result.path
    report = result.fidelity
    assert result.complete
    assert report.exact
    (robot,) = report.robots
    assert robot.steps_compared == load_record(recorded / "record.npz").n_steps
    assert robot.position_m.max == 0.0
    assert robot.orientation_rad.max == 0.0
    (cam,) = report.cameras
    assert cam.frames_compared > 0
    assert cam.rgb_identical_frames == cam.frames_compared
    assert cam.ssim.min == 1.0
    assert cam.depth_mae_m.max == 0.0
    # Every ground-truth file is byte-identical (images, poses, boxes, lists).
    gt_a, gt_b = file_digests(recorded / "gt"), file_digests(new / "gt")
    assert gt_a == gt_b
    # The record: every robot joint and actor array is identical.
    with np.load(recorded / "record.npz") as a, np.load(new / "record.npz") as b:
        assert sorted(a.files) == sorted(b.files)
        for key in a.files:
            np.testing.assert_array_equal(a[key], b[key], err_msg=key)
    # Every bag message (IMU, TF, odometry, images...) has the same stamp and bytes.
    assert _bag_messages(recorded / "bag") == _bag_messages(new / "bag")
    run_yaml = yaml.safe_load((new / "run.yaml").read_text())
    assert run_yaml["replay"]["source"] == str(recorded)
    assert run_yaml["replay"]["mode"] == "teleport"
    assert run_yaml["status"] == "complete"
    assert (new / "fidelity.json").is_file()
    assert (new / "summary.json").is_file()
    assert "exact" in report.format_table()
    _assert_original_untouched(recorded, original_state)


def test_joint_chain_poses_match_the_recorded_trajectory(recorded: Path) -> None:
    # The fidelity report measures poses through base_poses: it must agree with the engine.
    record = load_record(recorded / "record.npz")
    model = robot_model(record.scenario.robots[0])
    sched = RateSchedule(record.scenario.rates.odom_hz, record.scenario.rates.physics_hz)
    steps = [k for k in range(record.start_step, record.n_steps) if sched.due(k)]
    pos, quat = base_poses(model, record.joint_positions["uav1"][steps])
    rows = np.loadtxt(recorded / "gt" / "uav1" / "trajectory.txt")
    assert len(rows) == len(steps)
    np.testing.assert_allclose(rows[:, 1:4], pos, atol=2e-9)
    q_file = rows[:, [7, 4, 5, 6]]
    q_file *= np.sign(np.sum(q_file * quat, axis=1))[:, None]
    np.testing.assert_allclose(q_file, quat, atol=2e-9)


def test_replay_hiding_people_removes_exactly_them(
    recorded: Path, replay: Callable[..., ReplayResult]
) -> None:
    result = replay(hide_classes=(PERSON_IDS_KEY,))
    instances = yaml.safe_load((recorded / "gt" / "instances.yaml").read_text())
    people = [int(i) for i, info in instances.items() if info["class"] == "person"]
    assert len(people) == 2
    (robot,) = result.fidelity.robots
    assert robot.position_m.max == 0.0
    assert robot.orientation_rad.max == 0.0
    a_dir, b_dir = recorded / "gt/uav1/camera", result.path / "gt/uav1/camera"
    inst_a, inst_b = _frames(a_dir, "instance"), _frames(b_dir, "instance")
    rgb_a, rgb_b = _frames(a_dir, "rgb"), _frames(b_dir, "rgb")
    dep_a, dep_b = _frames(a_dir, "depth"), _frames(b_dir, "depth")
    assert inst_a.keys() == inst_b.keys()
    seen = 0
    for t in inst_a:
        person_px = np.isin(inst_a[t], people)
        seen += int(person_px.sum())
        assert not np.isin(inst_b[t], people).any(), t
        # Outside the people nothing changes: depth and the other instances. Colour changes
        # near them: within two pixels of a person's mask (their contact shadows, the mask's
        # own pixel centres), and FXAA (render.fxaa) then reaches from there one pixel across
        # an edge and REACH_ALONG_PX along it (its walk to the edge's ends); nothing further.
        near_person = binary_dilation(person_px, structure=np.ones((5, 5), dtype=bool))
        reach = 2 * fxaa.REACH_ALONG_PX + 1
        near_person = binary_dilation(near_person, structure=np.ones((3, reach), dtype=bool)) | (
            binary_dilation(near_person, structure=np.ones((reach, 3), dtype=bool))
        )
        assert not (rgb_a[t] != rgb_b[t]).any(axis=2)[~near_person].any(), t
        assert (dep_a[t] == dep_b[t])[~person_px].all(), t
        assert (inst_a[t] == inst_b[t])[~person_px].all(), t
    assert seen > 0, "the recorded camera never saw a person; the test would prove nothing"
    (cam,) = result.fidelity.cameras
    assert cam.ssim.mean < 1.0
    run_yaml = yaml.safe_load((result.path / "run.yaml").read_text())
    assert run_yaml["replay"]["hidden_instance_ids"] == sorted(people)


def test_added_camera_renders_at_the_recorded_poses(
    recorded: Path, replay: Callable[..., ReplayResult]
) -> None:
    mount_xyz, mount_rpy = (0.1, 0.05, -0.02), (0.0, 0.2, 0.5)
    result = replay(
        cameras=(
            CameraChange(
                "uav1",
                "wide",
                (
                    ("width", 200),
                    ("height", 100),
                    ("hfov_deg", 110.0),
                    ("rate_hz", 20.0),
                    ("mount_x", mount_xyz[0]),
                    ("mount_y", mount_xyz[1]),
                    ("mount_z", mount_xyz[2]),
                    ("mount_pitch", mount_rpy[1]),
                    ("mount_yaw", mount_rpy[2]),
                ),
            ),
        )
    )
    record = load_record(recorded / "record.npz")
    phys = record.scenario.rates.physics_hz
    sched = RateSchedule(20.0, phys)
    steps = [k for k in range(record.start_step, record.n_steps) if sched.due(k)]
    cam_dir = result.path / "gt/uav1/wide"
    rows = [
        line.split()
        for line in (cam_dir / "groundtruth.txt").read_text().splitlines()
        if not line.startswith("#")
    ]
    assert [r[0] for r in rows] == [tum_stamp(stamp_ns_of(k, phys)) for k in steps]
    rgb = _frames(cam_dir, "rgb")
    assert len(rgb) == len(steps)
    assert all(im.shape == (100, 200, 3) for im in rgb.values())
    # Optical frame = recorded base pose * mount * (link -> optical).
    pos_b, quat_b = base_poses(
        robot_model(record.scenario.robots[0]), record.joint_positions["uav1"][steps]
    )
    r_mount = quat_to_matrix(quat_from_rpy(*mount_rpy))
    for row, p, q in zip(rows, pos_b, quat_b, strict=True):
        r_base = quat_to_matrix(q)
        np.testing.assert_allclose(
            [float(v) for v in row[1:4]], p + r_base @ np.array(mount_xyz), atol=2e-9
        )
        qx, qy, qz, qw = (float(v) for v in row[4:8])
        np.testing.assert_allclose(
            quat_to_matrix(np.array([qw, qx, qy, qz])), r_base @ r_mount @ R_LINK_OPTICAL, atol=1e-8
        )
    # The draw is untouched: robot and actor trajectories are the recorded ones, bit for bit.
    with np.load(recorded / "record.npz") as a, np.load(result.path / "record.npz") as b:
        for key in a.files:
            if key.startswith(("person/", "object/", "robot/")):
                np.testing.assert_array_equal(a[key], b[key], err_msg=key)
    by_name = {c.camera: c for c in result.fidelity.cameras}
    assert not by_name["wide"].compared
    assert by_name["camera"].compared
    assert by_name["camera"].pose_position_m.max == 0.0


def test_added_camera_at_another_rate_leaves_existing_frames_unchanged(
    replay: Callable[..., ReplayResult],
) -> None:
    result = replay(
        cameras=(
            CameraChange("uav1", "slow", (("width", 160), ("height", 120), ("rate_hz", 20.0))),
        )
    )
    by_name = {c.camera: c for c in result.fidelity.cameras}
    assert by_name["camera"].rgb_identical_frames == by_name["camera"].frames_compared


def test_velocity_mode_reports_its_deviation(replay: Callable[..., ReplayResult]) -> None:
    result = replay(ReplayMode.VELOCITY)
    assert result.fidelity.mode == "velocity"
    (robot,) = result.fidelity.robots
    assert robot.steps_compared > 0
    for stats in (robot.position_m, robot.orientation_rad):
        assert stats.n == robot.steps_compared
        assert np.isfinite([stats.mean, stats.std, stats.max]).all()
    # The same commands through the same deterministic physics: no drift at all.
    assert robot.position_m.max < 1e-9
    assert robot.final_position_m < 1e-9
    run_yaml = yaml.safe_load((result.path / "run.yaml").read_text())
    assert run_yaml["replay"]["mode"] == "velocity"


def test_lights_rates_and_noise_seed(recorded: Path, replay: Callable[..., ReplayResult]) -> None:
    result = replay(
        light_scale=0.5,
        light_color_rgb=(1.0, 0.8, 0.8),
        rates_hz=(("imu_hz", 60.0), ("odom_hz", 30.0)),
        noise_seed=123,
    )
    (cam,) = result.fidelity.cameras
    assert cam.rgb_identical_frames == 0
    assert cam.ssim.mean < 1.0
    assert cam.depth_mae_m.max == 0.0  # lights change colours, never geometry
    topics = result.run.summary["topics"]
    steps = result.run.stats.steps
    assert topics["/uav1/imu"]["count"] == sum(
        RateSchedule(60.0, 240.0).due(k) for k in range(steps)
    )
    assert topics["/uav1/odom"]["count"] == sum(
        RateSchedule(30.0, 240.0).due(k) for k in range(steps)
    )
    run_yaml = yaml.safe_load((result.path / "run.yaml").read_text())
    assert run_yaml["noise_seed"] == 123
    assert run_yaml["scenario"]["seed"] == RECORDED_SEED  # the world seed stays
    assert run_yaml["replay"]["changes"]["light_scale"] == 0.5


def test_interrupted_record_replays_up_to_its_last_step(tmp_path: Path) -> None:
    spec = SimulatorSpec(build_scene(small_scenario()))

    def stop_at_50(step: int, total: int) -> None:
        if step >= 50:
            spec.stop_event.set()

    short = run_scenario(spec, tmp_path / "short", progress=stop_at_50)
    assert short.stats.status == "interrupted"
    assert short.stats.steps == 50
    result = replay_run(ReplayConfig(short.path, tmp_path / "again"))
    assert result.complete
    assert result.run.stats.steps == 50
    assert result.fidelity.exact


def test_replay_of_a_kinematic_teleport_run_reproduces_the_imu(tmp_path: Path) -> None:
    scenario = small_scenario()
    data = scenario_to_mapping(scenario)
    data["robots"][0]["motion"]["mode"] = "teleport"
    original = run_scenario(scenario_from_mapping(data), tmp_path / "kinematic")
    result = replay_run(ReplayConfig(original.path, tmp_path / "again"))
    assert result.fidelity.exact  # poses and images are exact either way
    imu_a = [m for m in _bag_messages(original.path / "bag") if m[0] == "/uav1/imu"]
    imu_b = [m for m in _bag_messages(result.path / "bag") if m[0] == "/uav1/imu"]
    assert imu_a == imu_b


def _damage(kind: str, run: Path) -> None:
    if kind == "missing_record":
        (run / "record.npz").unlink()
    elif kind == "truncated_record":
        data = (run / "record.npz").read_bytes()
        (run / "record.npz").write_bytes(data[: len(data) // 2])
    elif kind == "missing_run_yaml":
        (run / "run.yaml").unlink()
    elif kind == "bad_run_yaml":
        (run / "run.yaml").write_text("status: [unclosed\n")


@pytest.mark.parametrize(
    ("kind", "match"),
    [
        ("missing_record", r"record\.npz' does not exist"),
        ("truncated_record", r"record\.npz' is unreadable \(truncated or corrupt\)"),
        ("missing_run_yaml", r"run\.yaml' is missing"),
        ("bad_run_yaml", r"run\.yaml' is not valid YAML"),
    ],
)
def test_broken_run_directory_is_refused_naming_the_file(
    recorded: Path, tmp_path: Path, kind: str, match: str
) -> None:
    run = tmp_path / "copy"
    shutil.copytree(recorded, run)
    _damage(kind, run)
    out = tmp_path / "out"
    with pytest.raises(RunDirError, match=match):
        replay_run(ReplayConfig(run, out))
    assert not out.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["copy"]


@pytest.mark.parametrize(
    ("changes", "error", "match"),
    [
        (
            ReplayChanges(rates_hz=(("physics_hz", 480.0),)),
            ReplayConfigError,
            r"rates\.physics_hz: 480\.0 Hz differs from the recorded 240\.0 Hz",
        ),
        (
            ReplayChanges(remove_cameras=("uav1/nope",)),
            ReplayConfigError,
            r"camera 'nope' is unknown on robot 'uav1'",
        ),
        (
            ReplayChanges(cameras=(CameraChange("ugv9", "cam", ()),)),
            ReplayConfigError,
            r"robot 'ugv9' is not in the recorded run",
        ),
        (ReplayChanges(hide_classes=("dragon",)), ReplayConfigError, r"--hide 'dragon'"),
        (ReplayChanges(hide_ids=(4242,)), ReplayConfigError, r"--hide-id 4242"),
    ],
)
def test_bad_changes_write_nothing(
    recorded: Path,
    original_state: dict[str, str],
    tmp_path: Path,
    changes: ReplayChanges,
    error: type[Exception],
    match: str,
) -> None:
    out = tmp_path / "out"
    with pytest.raises(error, match=match):
        replay_run(ReplayConfig(recorded, out, changes=changes))
    assert list(tmp_path.iterdir()) == []
    _assert_original_untouched(recorded, original_state)


def test_existing_output_and_output_inside_the_original_are_refused(
    recorded: Path, original_state: dict[str, str], tmp_path: Path
) -> None:
    existing = tmp_path / "exists"
    existing.mkdir()
    with pytest.raises(ReplayOutputExistsError, match=r"exists already"):
        replay_run(ReplayConfig(recorded, existing))
    assert list(existing.iterdir()) == []
    with pytest.raises(ReplayConfigError, match=r"inside the original run"):
        replay_run(ReplayConfig(recorded, recorded / "sub"))
    with pytest.raises(RunDirError, match=r"run directory '.*nowhere' does not exist"):
        replay_run(ReplayConfig(tmp_path / "nowhere", tmp_path / "o"))
    _assert_original_untouched(recorded, original_state)


def test_grade_replay_cli(
    recorded: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "cli"
    code = grade_main(
        [
            "replay",
            str(recorded),
            "--out",
            str(out),
            "--quiet",
            "--hide-id",
            "16",
            "--camera",
            "uav1/camera:far_m=3.0",
        ]
    )
    printed = capsys.readouterr().out
    assert code == 0, printed
    assert "replay complete" in printed
    assert "fidelity (teleport replay)" in printed
    assert "uav1/camera" in printed
    assert (out / "fidelity.json").is_file()
    code = grade_main(["replay", str(recorded), "--out", str(out), "--quiet"])
    captured = capsys.readouterr()
    assert code == 1
    assert "grade replay: error: output directory" in captured.err
    code = grade_main(
        [
            "replay",
            str(recorded),
            "--out",
            str(tmp_path / "x"),
            "--quiet",
            "--rate",
            "physics_hz=100",
        ]
    )
    assert code == 1
    assert "rates.physics_hz" in capsys.readouterr().err
    assert not (tmp_path / "x").exists()


def test_added_lidar_scans_exactly_what_a_run_with_it_would_have(
    tmp_path: Path, recorded: Path, replay: Callable[..., ReplayResult]
) -> None:
    # GRADE's "add a LiDAR and regenerate": the replay casts from the recorded poses, so its
    # scans are byte for byte those of a run that carried the lidar from the start.
    lidar = {"preset": "vlp16", "columns": 360, "mount": {"xyz": [0.0, 0.05, 0.2]}}
    values = (("preset", "vlp16"), ("columns", 360), ("mount_y", 0.05), ("mount_z", 0.2))
    result = replay(lidars=(LidarChange("uav1", "lidar", values),))
    data = scenario_to_mapping(small_scenario(seed=RECORDED_SEED))
    data["robots"][0]["lidars"] = [{"name": "lidar", **lidar}]
    direct = run_scenario(scenario_from_mapping(data), tmp_path / "direct").path
    got, want = result.path / "gt/uav1/lidar", direct / "gt/uav1/lidar"
    scans = sorted(p.name for p in (want / "velodyne").iterdir())
    assert len(scans) >= 3
    assert sorted(p.name for p in (got / "velodyne").iterdir()) == scans
    for name in ("poses.txt", "times.txt", "classes.yaml"):
        assert (got / name).read_bytes() == (want / name).read_bytes(), name
    for sub in ("velodyne", "labels"):
        for p in (want / sub).iterdir():
            assert (got / sub / p.name).read_bytes() == p.read_bytes(), f"{sub}/{p.name}"
    # The people are in the scans (the actor poses come from the recorded draw too).
    ids = np.concatenate([np.fromfile(p, dtype="<u4") >> 16 for p in (got / "labels").iterdir()])
    drawn = build_scene(small_scenario(seed=RECORDED_SEED)).group(People)
    people = {o.instance_id for o in drawn.specs}
    assert people & set(ids.tolist())
    assert yaml.safe_load((result.path / "run.yaml").read_text())["replay"]["changes"]["lidars"]
