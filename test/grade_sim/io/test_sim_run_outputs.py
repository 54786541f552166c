"""What one run writes: the bag (read back with rosbags), TUM ground truth, boxes, the record.

One small run (160x120 camera, 3 people, 2 flying objects, 0.6 s) is shared by every test here.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest
import yaml

from grade_common.rotations import quat_to_matrix
from grade_common.tum import DEPTH_SCALE, tum_stamp
from grade_people.body_mesh import body_mesh, skin_vertices
from grade_people.skeleton import rest_positions
from grade_sim.actors.flying import FlyingObjects
from grade_sim.actors.people_group import People
from grade_sim.config.scenario import Scenario, scenario_from_mapping
from grade_sim.io.record import load_record
from grade_sim.scene import Scene, build_scene
from grade_sim.sensors.boxes import (
    STRUCTURE_LABELS,
    Box3D,
    actor_boxes,
    loose_box_2d,
    static_boxes,
)
from grade_sim.sensors.camera import intrinsics
from grade_sim.sensors.messages import typestore
from grade_sim.sim.orchestrator import stamp_ns_of
from grade_sim.sim.run import RunResult, run_scenario

Bag = dict[str, list[tuple[int, str, bytes]]]
PHYSICS_HZ = 240.0
N_STEPS = 145  # (0.1 s bootstrap + 0.5 s) * 240 Hz + 1
START_STEP = 24
CAM = "gt/uav1/camera"


@dataclass(frozen=True)
class Run:
    scenario: Scenario
    scene: Scene
    result: RunResult
    bag: Bag

    @property
    def path(self) -> Path:
        return self.result.path


@pytest.fixture(scope="module")
def run(
    tmp_path_factory: pytest.TempPathFactory,
    small_data: Callable[..., dict[str, Any]],
    read_bag: Callable[[Path], Bag],
) -> Run:
    scenario = scenario_from_mapping(
        small_data(seed=9, people={"count": 3}, flying_objects={"count": 2})
    )
    result = run_scenario(scenario, tmp_path_factory.mktemp("outputs") / "run")
    return Run(scenario, build_scene(scenario), result, read_bag(result.path / "bag"))


def decode(raw: bytes, msgtype: str) -> Any:
    return typestore().deserialize_cdr(raw, msgtype)


def stamp_of(msg: Any) -> int:
    return int(msg.header.stamp.sec) * 1_000_000_000 + int(msg.header.stamp.nanosec)


def expected_count(rate_hz: float) -> int:
    return (N_STEPS - 1) * int(rate_hz) // int(PHYSICS_HZ) + 1


def tum_rows(path: Path) -> list[list[str]]:
    lines = path.read_text().splitlines()
    return [line.split() for line in lines if line and not line.startswith("#")]


def image_array(msg: Any) -> np.ndarray:
    dtype, channels = {"rgb8": (np.uint8, 3), "32FC1": (np.float32, 1), "mono16": (np.uint16, 1)}[
        msg.encoding
    ]
    arr = np.frombuffer(bytes(msg.data), dtype=dtype)
    shape = (msg.height, msg.width, channels) if channels > 1 else (msg.height, msg.width)
    return arr.reshape(shape)


def bag_images(run: Run, stream: str) -> dict[str, np.ndarray]:
    """TUM stamp -> image array of a camera stream in the bag."""
    out = {}
    for _, msgtype, raw in run.bag[f"/uav1/camera/{stream}/image_raw"]:
        msg = decode(raw, msgtype)
        out[tum_stamp(stamp_of(msg))] = image_array(msg)
    return out


# -- run directory ---------------------------------------------------------------------------------
def test_layout_follows_the_conventions(run: Run) -> None:
    root = run.path
    for rel in (
        "run.yaml",
        "summary.json",
        "record.npz",
        "placement.yaml",
        "bag/metadata.yaml",
        "gt/instances.yaml",
        "gt/uav1/trajectory.txt",
    ):
        assert (root / rel).is_file(), rel
    cam = root / CAM
    for rel in (
        "rgb.txt",
        "depth.txt",
        "instance.txt",
        "groundtruth.txt",
        "camera_info.yaml",
        "boxes2d.jsonl",
        "boxes3d.jsonl",
    ):
        assert (cam / rel).is_file(), rel
    for sub in ("rgb", "depth", "instance"):
        assert len(list((cam / sub).glob("*.png"))) == 16
    leftovers = [p for p in root.rglob("*") if ".tmp" in p.name or ".partial" in p.name]
    assert leftovers == []
    assert [p.name for p in root.parent.iterdir()] == ["run"]
    info = yaml.safe_load((root / "run.yaml").read_text())
    assert info["status"] == "complete"
    assert scenario_from_mapping(info["scenario"]) == run.scenario
    # The scripted people's whole trace was checked with FCL before the run.
    placement = yaml.safe_load((root / "placement.yaml").read_text())
    assert placement["checked"] is True
    assert placement["steps_checked"] == run.scene.n_steps
    assert placement["rejected"] == []


def test_summary_counts_match_the_bag(run: Run) -> None:
    summary = json.loads((run.path / "summary.json").read_text())
    assert summary == run.result.summary
    assert summary["status"] == "complete"
    assert summary["steps"] == N_STEPS
    assert summary["sim_time_s"] == pytest.approx(0.6)
    assert summary["ground_truth_frames_written"] == 16
    assert summary["camera_frames_rendered"] == 19
    assert {t: v["count"] for t, v in summary["topics"].items()} == {
        t: len(v) for t, v in run.bag.items()
    }
    assert summary["real_time_factor"] > 0
    assert summary["peak_memory_mb"] > 0


# -- bag -----------------------------------------------------------------------------------------
TOPICS = {
    "/clock": ("rosgraph_msgs/msg/Clock", 240.0),
    "/tf": ("tf2_msgs/msg/TFMessage", 120.0),
    "/uav1/imu": ("sensor_msgs/msg/Imu", 240.0),
    "/uav1/odom": ("nav_msgs/msg/Odometry", 60.0),
    "/uav1/ground_truth/odom": ("nav_msgs/msg/Odometry", 60.0),
    "/uav1/ground_truth/pose": ("geometry_msgs/msg/PoseStamped", 60.0),
    "/uav1/joint_states": ("sensor_msgs/msg/JointState", 120.0),
    "/uav1/camera/pose": ("geometry_msgs/msg/PoseStamped", 60.0),
    "/uav1/camera/rgb/image_raw": ("sensor_msgs/msg/Image", 30.0),
    "/uav1/camera/depth/image_raw": ("sensor_msgs/msg/Image", 30.0),
    "/uav1/camera/instance/image_raw": ("sensor_msgs/msg/Image", 30.0),
    "/uav1/camera/camera_info": ("sensor_msgs/msg/CameraInfo", 30.0),
}


def test_bag_metadata_is_rosbag2_v9_mcap(run: Run) -> None:
    meta = yaml.safe_load((run.path / "bag" / "metadata.yaml").read_text())
    info = meta["rosbag2_bagfile_information"]
    assert info["version"] == 9
    assert info["storage_identifier"] == "mcap"
    assert info["message_count"] == sum(len(v) for v in run.bag.values())


def test_bag_has_every_topic_with_its_type_and_count(run: Run) -> None:
    for topic, (msgtype, rate) in TOPICS.items():
        msgs = run.bag[topic]
        assert {m[1] for m in msgs} == {msgtype}, topic
        assert len(msgs) == expected_count(rate), topic
        stamps = [m[0] for m in msgs]
        assert stamps == sorted(stamps), topic
        assert len(set(stamps)) == len(stamps), topic
    assert [m[1] for m in run.bag["/tf_static"]] == ["tf2_msgs/msg/TFMessage"]
    ((stamp, msgtype, raw),) = run.bag["/starting_experiment"]
    assert msgtype == "std_msgs/msg/String"
    assert decode(raw, msgtype).data == "starting"
    assert stamp == stamp_ns_of(START_STEP, PHYSICS_HZ)
    assert set(run.bag) == {*TOPICS, "/tf_static", "/starting_experiment"}


def test_bag_stamps_are_simulated_time(run: Run) -> None:
    clock = [decode(raw, t) for _, t, raw in run.bag["/clock"]]
    expected = [stamp_ns_of(k, PHYSICS_HZ) for k in range(N_STEPS)]
    assert [int(c.clock.sec) * 10**9 + int(c.clock.nanosec) for c in clock] == expected
    assert [m[0] for m in run.bag["/clock"]] == expected
    for topic in TOPICS:
        if topic in ("/clock", "/tf"):
            continue
        for stamp, msgtype, raw in run.bag[topic]:
            assert stamp_of(decode(raw, msgtype)) == stamp, topic


def test_bag_message_contents(run: Run) -> None:
    _, t, raw = run.bag["/uav1/imu"][-1]
    imu = decode(raw, t)
    assert imu.header.frame_id == "uav1/imu_link"
    assert imu.orientation_covariance[0] == -1  # no orientation from this IMU
    assert 5.0 < imu.linear_acceleration.z < 15.0
    _, t, raw = run.bag["/uav1/odom"][-1]
    odom = decode(raw, t)
    assert (odom.header.frame_id, odom.child_frame_id) == ("uav1/odom", "uav1/base_link")
    _, t, raw = run.bag["/uav1/joint_states"][-1]
    assert list(decode(raw, t).name) == ["x", "y", "z", "yaw", "pitch", "roll"]
    _, t, raw = run.bag["/tf_static"][0]
    static = {(tr.header.frame_id, tr.child_frame_id) for tr in decode(raw, t).transforms}
    assert static == {
        ("world", "uav1/odom"),
        ("uav1/base_link", "uav1/imu_link"),
        ("uav1/base_link", "uav1/camera_link"),
        ("uav1/camera_link", "uav1/camera_optical_frame"),
    }
    _, t, raw = run.bag["/tf"][-1]
    dynamic = {(tr.header.frame_id, tr.child_frame_id) for tr in decode(raw, t).transforms}
    assert dynamic == {("uav1/odom", "uav1/base_link")}
    cam_cfg = run.scenario.robots[0].cameras[0]
    _, t, raw = run.bag["/uav1/camera/camera_info"][-1]
    info = decode(raw, t)
    assert (info.width, info.height, info.distortion_model) == (160, 120, "plumb_bob")
    np.testing.assert_allclose(np.asarray(info.k).reshape(3, 3), intrinsics(cam_cfg))
    for stream, encoding, step in (
        ("rgb", "rgb8", 480),
        ("depth", "32FC1", 640),
        ("instance", "mono16", 320),
    ):
        _, t, raw = run.bag[f"/uav1/camera/{stream}/image_raw"][0]
        img = decode(raw, t)
        assert (img.encoding, img.width, img.height, img.step) == (encoding, 160, 120, step)
        assert img.header.frame_id == "uav1/camera_optical_frame"


# -- TUM ground truth ----------------------------------------------------------------------------
def test_tum_lists_parse_and_match_the_files(run: Run) -> None:
    cam = run.path / CAM
    camera_stamps = [stamp_ns_of(k, PHYSICS_HZ) for k in range(START_STEP, N_STEPS, 8)]
    expected = [tum_stamp(s) for s in camera_stamps]
    for stream in ("rgb", "depth", "instance"):
        rows = tum_rows(cam / f"{stream}.txt")
        assert [r[0] for r in rows] == expected
        assert [r[1] for r in rows] == [f"{stream}/{t}.png" for t in expected]
        assert all((cam / r[1]).is_file() for r in rows)
        times = [float(r[0]) for r in rows]
        assert all(b > a for a, b in itertools.pairwise(times))
    # File names are the stamps as "%.6f" (docs/conventions.md), rounded like every other tool.
    assert expected == [f"{s / 1e9:.6f}" for s in camera_stamps]


def test_groundtruth_is_the_optical_frame_pose(run: Run) -> None:
    rows = tum_rows(run.path / CAM / "groundtruth.txt")
    assert [r[0] for r in rows] == [r[0] for r in tum_rows(run.path / CAM / "rgb.txt")]
    poses = {}
    for _, t, raw in run.bag["/uav1/camera/pose"]:
        msg = decode(raw, t)
        p, q = msg.pose.position, msg.pose.orientation
        poses[tum_stamp(stamp_of(msg))] = [p.x, p.y, p.z, q.x, q.y, q.z, q.w]
    for row in rows:
        assert len(row) == 8
        values = np.array([float(v) for v in row[1:]])
        np.testing.assert_allclose(values, poses[row[0]], atol=2e-9)
        assert np.linalg.norm(values[3:]) == pytest.approx(1.0, abs=1e-8)


def test_trajectory_is_base_link_at_the_odometry_rate(run: Run) -> None:
    rows = tum_rows(run.path / "gt" / "uav1" / "trajectory.txt")
    odom = {}
    for _, t, raw in run.bag["/uav1/odom"]:
        msg = decode(raw, t)
        p, q = msg.pose.pose.position, msg.pose.pose.orientation
        odom[tum_stamp(stamp_of(msg))] = [p.x, p.y, p.z, q.x, q.y, q.z, q.w]
    expected = [tum_stamp(stamp_ns_of(k, PHYSICS_HZ)) for k in range(START_STEP, N_STEPS, 4)]
    assert [r[0] for r in rows] == expected
    for row in rows:
        np.testing.assert_allclose([float(v) for v in row[1:]], odom[row[0]], atol=2e-9)


def test_images_equal_the_bag_and_depth_is_metres_times_5000(run: Run) -> None:
    cam = run.path / CAM
    rgb, depth, inst = (bag_images(run, s) for s in ("rgb", "depth", "instance"))
    for t, _ in tum_rows(cam / "rgb.txt"):
        png = cv2.imread(str(cam / "rgb" / f"{t}.png"), cv2.IMREAD_UNCHANGED)
        np.testing.assert_array_equal(cv2.cvtColor(png, cv2.COLOR_BGR2RGB), rgb[t])
    for row in tum_rows(cam / "depth.txt"):
        t = row[0]
        png = cv2.imread(str(cam / row[1]), cv2.IMREAD_UNCHANGED)
        assert png.dtype == np.uint16
        assert png.shape == (120, 160)
        metres = png.astype(np.float64) / DEPTH_SCALE
        truth = depth[t].astype(np.float64)
        valid = (truth > 0) & (truth <= 65535 / DEPTH_SCALE)
        assert valid.mean() > 0.9  # inside a room nearly every pixel has a return
        assert np.all(np.abs(metres[valid] - truth[valid]) <= 0.5 / DEPTH_SCALE + 1e-6)
        assert np.all(png[~valid] == 0)
    for row in tum_rows(cam / "instance.txt"):
        png = cv2.imread(str(cam / row[1]), cv2.IMREAD_UNCHANGED)
        assert png.dtype == np.uint16
        np.testing.assert_array_equal(png, inst[row[0]])


def test_camera_info_and_instances_files(run: Run) -> None:
    cam_cfg = run.scenario.robots[0].cameras[0]
    info = yaml.safe_load((run.path / CAM / "camera_info.yaml").read_text())
    assert (info["image_width"], info["image_height"]) == (160, 120)
    assert (info["camera_matrix"]["rows"], info["camera_matrix"]["cols"]) == (3, 3)
    np.testing.assert_allclose(
        np.array(info["camera_matrix"]["data"]).reshape(3, 3), intrinsics(cam_cfg)
    )
    assert info["distortion_model"] == "plumb_bob"
    assert info["depth_scale"] == DEPTH_SCALE
    instances = yaml.safe_load((run.path / "gt" / "instances.yaml").read_text())
    assert instances == {
        i: {"name": v.name, "class": v.label} for i, v in run.scene.instances.items()
    }
    classes = [v["class"] for v in instances.values()]
    assert classes.count("person") == 3
    assert sum(c.startswith("flying_") for c in classes) == 2
    assert classes.count("robot_uav") == 1
    # Every id seen in any mask is listed.
    for png in (run.path / CAM / "instance").glob("*.png"):
        ids = set(np.unique(cv2.imread(str(png), cv2.IMREAD_UNCHANGED)).tolist())
        assert ids - {0} <= set(instances)


def test_2d_boxes_are_tight_around_their_instance(run: Run) -> None:
    cam = run.path / CAM
    actor_ids = {p.instance_id for p in run.scene.group(People).specs} | {
        o.instance_id for o in run.scene.group(FlyingObjects).specs
    }
    furniture_ids = {b.instance_id for b in static_boxes(run.scene.world)}
    assert furniture_ids, "the procedural rooms have furniture"
    # Furniture, chairs, doors, windows...: objects, never the room's structure.
    assert not {run.scene.instances[i].label for i in furniture_ids} & STRUCTURE_LABELS
    boxed_ids = actor_ids | furniture_ids
    frames = [json.loads(line) for line in (cam / "boxes2d.jsonl").read_text().splitlines()]
    assert [f"{f['t']:.6f}" for f in frames] == [r[0] for r in tum_rows(cam / "rgb.txt")]
    n_actor_boxes = 0
    for frame in frames:
        mask = cv2.imread(str(cam / "instance" / f"{frame['t']:.6f}.png"), cv2.IMREAD_UNCHANGED)
        visible = set(np.unique(mask).tolist()) & boxed_ids
        assert {b["id"] for b in frame["boxes"]} == visible
        for box in frame["boxes"]:
            n_actor_boxes += box["id"] in actor_ids
            x0, y0, x1, y1 = box["x_min"], box["y_min"], box["x_max"], box["y_max"]
            assert 0 <= x0 <= x1 < 160
            assert 0 <= y0 <= y1 < 120
            ys, xs = np.nonzero(mask == box["id"])
            # All of the instance's pixels are inside, and each edge touches one of them.
            assert (xs.min(), ys.min(), xs.max(), ys.max()) == (x0, y0, x1, y1)
    # This seed keeps actors in view: 45 boxes of the 5 actors in 16 frames.
    assert n_actor_boxes >= 2 * len(frames)


def test_3d_boxes_project_around_the_2d_boxes(run: Run) -> None:
    cam = run.path / CAM
    frames2d = [json.loads(line) for line in (cam / "boxes2d.jsonl").read_text().splitlines()]
    frames3d = [json.loads(line) for line in (cam / "boxes3d.jsonl").read_text().splitlines()]
    k = intrinsics(run.scenario.robots[0].cameras[0])
    poses = {r[0]: [float(v) for v in r[1:]] for r in tum_rows(cam / "groundtruth.txt")}
    for f2, f3 in zip(frames2d, frames3d, strict=True):
        assert f2["t"] == f3["t"]
        assert [b["id"] for b in f2["boxes"]] == [b["id"] for b in f3["boxes"]]
        pose = poses[f"{f2['t']:.6f}"]
        position = np.array(pose[:3])
        r_wo = quat_to_matrix(np.array([pose[6], *pose[3:6]]))
        for b2, b3 in zip(f2["boxes"], f3["boxes"], strict=True):
            t_wb = np.array(b3["transform_world_box"])
            np.testing.assert_allclose(t_wb[:3, 3], b3["center"], atol=1e-6)
            np.testing.assert_allclose(t_wb[:3, :3] @ t_wb[:3, :3].T, np.eye(3), atol=1e-6)
            assert all(s > 0 for s in b3["size"])
            box = Box3D(b3["id"], np.array(b3["center"]), np.array(b3["size"]), t_wb[:3, :3])
            loose = loose_box_2d(box, k, position, r_wo, 160, 120)
            assert loose is not None
            assert list(loose) == b2["loose"]
            # The projected 3D box contains the visible pixels (within a pixel of rounding).
            assert loose[0] <= b2["x_min"] + 1
            assert loose[1] <= b2["y_min"] + 1
            assert loose[2] >= b2["x_max"] - 1
            assert loose[3] >= b2["y_max"] - 1


def test_3d_boxes_contain_every_part_of_each_person(run: Run) -> None:
    scene = run.scene
    for step in (0, 60, 144):
        positions, _ = scene.actor_body_poses(step)
        boxes = {b.instance_id: b for b in actor_boxes(scene, step, positions)}
        joint_pos, joint_rot = scene.group(People).skeleton_poses(step)
        start = 0
        for i, person in enumerate(scene.group(People).specs):
            box = boxes[person.instance_id]
            n = len(person.body_names())
            local = (positions[start : start + n] - box.center_xyz) @ box.rotation_world_box
            start += n
            assert np.all(np.abs(local) <= box.size_xyz / 2 + 1e-9)
            # The drawn skin, not only the joints, fits in the box.
            assert person.body is not None
            assert person.clothing is not None
            mesh = body_mesh(person.body, person.clothing)
            skin = skin_vertices(mesh, rest_positions(person.body), joint_pos[i], joint_rot[i])
            local_skin = (skin - box.center_xyz) @ box.rotation_world_box
            assert np.all(np.abs(local_skin) <= box.size_xyz / 2 + 1e-9)
            bottom = min(0.0, float(skin[:, 2].min()))  # on the ground, or the lowest sole
            assert box.center_xyz[2] - box.size_xyz[2] / 2 == pytest.approx(bottom, abs=1e-9)
            assert box.size_xyz[2] >= person.height_m - 1e-9


# -- experiment record -----------------------------------------------------------------------------
def test_record_holds_every_step(run: Run) -> None:
    record = load_record(run.path / "record.npz")
    assert record.scenario == run.scenario
    assert record.status == "complete"
    assert record.start_step == START_STEP
    assert record.n_steps == N_STEPS
    np.testing.assert_array_equal(
        record.stamps_ns, [stamp_ns_of(k, PHYSICS_HZ) for k in range(N_STEPS)]
    )
    q = record.joint_positions["uav1"]
    assert q.shape == (N_STEPS, 6)
    assert record.joint_names["uav1"] == ("x", "y", "z", "yaw", "pitch", "roll")
    by_stamp = {int(s): k for k, s in enumerate(record.stamps_ns)}
    for stamp, t, raw in run.bag["/uav1/joint_states"]:
        msg = decode(raw, t)
        np.testing.assert_array_equal(np.asarray(msg.position), q[by_stamp[stamp]])
        np.testing.assert_array_equal(
            np.asarray(msg.velocity), record.joint_velocities["uav1"][by_stamp[stamp]]
        )
    with np.load(run.path / "record.npz") as data:
        for i, person in enumerate(run.scene.group(People).specs):
            np.testing.assert_array_equal(
                data[f"person/{person.name}/position_xy"],
                run.scene.group(People).timelines[i].position_xy[:N_STEPS],
            )
        for j, obj in enumerate(run.scene.group(FlyingObjects).specs):
            np.testing.assert_array_equal(
                data[f"object/{obj.name}/position_xyz"],
                run.scene.group(FlyingObjects).timelines[j].position_xyz[:N_STEPS],
            )
    # The robot moved along its path (the record is not all zeros or constant).
    assert np.ptp(q[:, 0]) + np.ptp(q[:, 1]) + np.ptp(q[:, 3]) > 0.01
