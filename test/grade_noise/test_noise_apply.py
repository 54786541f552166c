"""`grade noise apply` on real small bags (MCAP, built here) and TUM RGB-D folders."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest
import yaml
from rosbags.rosbag2 import Reader, StoragePlugin, Writer

from grade_common import ros_distro
from grade_common.output_guard import OUTPUT_MARKER
from grade_noise.cli import main as noise_main
from grade_noise.errors import NoiseInputError, NoiseOutputExistsError

TS = ros_distro.typestore()
T = TS.types
IMU, IMG, ODOM = "sensor_msgs/msg/Imu", "sensor_msgs/msg/Image", "nav_msgs/msg/Odometry"
W, H = 64, 48


def _header(stamp_ns: int, frame: str) -> Any:
    return T["std_msgs/msg/Header"](
        stamp=T["builtin_interfaces/msg/Time"](sec=stamp_ns // 10**9, nanosec=stamp_ns % 10**9),
        frame_id=frame,
    )


def _vec(x: float, y: float, z: float) -> Any:
    return T["geometry_msgs/msg/Vector3"](x=x, y=y, z=z)


def _imu(stamp_ns: int, wz: float = 0.5) -> Any:
    return T[IMU](
        header=_header(stamp_ns, "robot/imu_link"),
        orientation=T["geometry_msgs/msg/Quaternion"](x=0.0, y=0.0, z=0.0, w=1.0),
        orientation_covariance=np.zeros(9),
        angular_velocity=_vec(0.0, 0.0, wz),
        angular_velocity_covariance=np.zeros(9),
        linear_acceleration=_vec(0.0, 0.0, 9.81),
        linear_acceleration_covariance=np.zeros(9),
    )


def _image(stamp_ns: int, encoding: str) -> Any:
    yy, xx = np.mgrid[0:H, 0:W]
    if encoding in ("rgb8", "bgr8", "mono8"):
        arr = np.stack([xx * 4, yy * 5, (xx + yy) * 2], axis=2).astype(np.uint8)
        if encoding == "mono8":
            arr = arr[:, :, 0].copy()
    elif encoding == "32FC1":
        arr = (1.0 + 0.01 * xx).astype(np.float32)
    else:
        arr = (1000 + 10 * xx).astype(np.uint16)
    data = np.frombuffer(arr.tobytes(), np.uint8)
    return T[IMG](
        header=_header(stamp_ns, "robot/camera_optical_frame"),
        height=H,
        width=W,
        encoding=encoding,
        is_bigendian=0,
        step=arr.nbytes // H,
        data=data,
    )


def _odom(stamp_ns: int) -> Any:
    pose = T["geometry_msgs/msg/Pose"](
        position=T["geometry_msgs/msg/Point"](x=stamp_ns * 1e-9, y=0.0, z=0.0),
        orientation=T["geometry_msgs/msg/Quaternion"](x=0.0, y=0.0, z=0.0, w=1.0),
    )
    return T[ODOM](
        header=_header(stamp_ns, "robot/odom"),
        child_frame_id="robot/base_link",
        pose=T["geometry_msgs/msg/PoseWithCovariance"](pose=pose, covariance=np.zeros(36)),
        twist=T["geometry_msgs/msg/TwistWithCovariance"](
            twist=T["geometry_msgs/msg/Twist"](
                linear=_vec(1.0, 0.0, 0.0), angular=_vec(0.0, 0.0, 0.0)
            ),
            covariance=np.zeros(36),
        ),
    )


def make_bag(path: Path, rgb_encoding: str = "rgb8", imu_nan: bool = False) -> None:
    """1 s: IMU 240 Hz, RGB + depth (32FC1 and 16UC1) 30 Hz, odometry 60 Hz, one /other topic."""
    msgs: list[tuple[int, str, str, Any]] = []
    for k in range(240):
        s = k * 10**9 // 240
        msgs.append((s, "/robot/imu", IMU, _imu(s, float("nan") if imu_nan and k == 50 else 0.5)))
    for k in range(30):
        s = k * 10**9 // 30 + 1000
        msgs.append((s, "/robot/camera/rgb/image_raw", IMG, _image(s, rgb_encoding)))
        msgs.append((s, "/robot/camera/depth/image_raw", IMG, _image(s, "32FC1")))
        msgs.append((s, "/robot/camera/depth16", IMG, _image(s, "16UC1")))
    for k in range(60):
        s = k * 10**9 // 60 + 500
        msgs.append((s, "/robot/odom", ODOM, _odom(s)))
        msgs.append((s, "/other", "std_msgs/msg/String", T["std_msgs/msg/String"](data=f"{k}")))
    msgs.sort(key=lambda m: (m[0], m[1]))
    with Writer(path, version=9, storage_plugin=StoragePlugin.MCAP) as writer:
        conns: dict[str, Any] = {}
        for stamp, topic, msgtype, msg in msgs:
            if topic not in conns:
                conns[topic] = writer.add_connection(topic, msgtype, typestore=TS)
            writer.write(conns[topic], stamp, TS.serialize_cdr(msg, msgtype))


PARAMS = {
    "seed": 5,
    "input_topics": [
        "/robot/imu",
        "/robot/camera/rgb/image_raw",
        "/robot/camera/depth/image_raw",
        "/robot/camera/depth16",
        "/robot/odom",
    ],
    "output_topics": [
        "/robot/noisy/imu",
        "/robot/camera/rgb/noisy",
        "/robot/camera/depth/noisy",
        "/robot/camera/depth16_noisy",
        "/robot/noisy/odom",
    ],
    "models": ["imu", "rgb", "depth", "depth", "odometry"],
    "presets": ["drone", "online_jpeg", "stereo_3_5m", "stereo_5m", "wheel"],
    "motion_topic": "/robot/imu",
}


def write_params(path: Path, **change: Any) -> Path:
    path.write_text(yaml.safe_dump({"noise_node": {"ros__parameters": {**PARAMS, **change}}}))
    return path


def _tree_digest(path: Path) -> str:
    """Digest of every file's name and bytes, with the folder's own name (which rosbag2 uses for
    the storage file) replaced, so two outputs written under different names compare."""
    h = hashlib.sha256()
    for f in sorted(p for p in path.rglob("*") if p.is_file()):
        h.update(str(f.relative_to(path)).replace(path.name, "NAME").encode())
        h.update(f.read_bytes().replace(path.name.encode(), b"NAME"))
    return h.hexdigest()


def _read(path: Path) -> dict[str, list[tuple[int, Any]]]:
    out: dict[str, list[tuple[int, Any]]] = {}
    with Reader(path) as reader:
        for conn, stamp, raw in reader.messages():
            out.setdefault(conn.topic, []).append((stamp, TS.deserialize_cdr(raw, conn.msgtype)))
    return out


@pytest.mark.slow
def test_bag_noise_pairs_topics_is_reproducible_and_keeps_input(tmp_path: Path) -> None:
    bag = tmp_path / "bag"
    make_bag(bag)
    params = write_params(tmp_path / "noise.yaml")
    before = _tree_digest(bag)
    args = ["apply", str(bag), "--params", str(params), "--no-progress"]
    one, two = tmp_path / "noisy_one", tmp_path / "noisy_two"
    assert noise_main([*args[:2], str(one), *args[2:]]) == 0
    assert noise_main([*args[:2], str(two), *args[2:]]) == 0
    assert _tree_digest(bag) == before
    # same seed -> byte-identical bags, up to the bag's own name, which rosbag2 writes into
    # metadata.yaml, the storage file name and the MCAP metadata record
    assert _tree_digest(one) == _tree_digest(two)
    out = _read(one)
    src = _read(bag)
    for inp, noisy in zip(PARAMS["input_topics"], PARAMS["output_topics"], strict=True):
        assert [s for s, _ in out[noisy]] == [s for s, _ in src[inp]]
        assert [m.header.stamp for _, m in out[noisy]] == [m.header.stamp for _, m in src[inp]]
        assert [m.header.frame_id for _, m in out[noisy]] == [
            m.header.frame_id for _, m in src[inp]
        ]
        assert len(out[inp]) == len(src[inp])  # ground truth kept by default
    assert len(out["/other"]) == 60
    gyro = np.array([[m.angular_velocity.z for _, m in out["/robot/noisy/imu"]]])
    assert 0.3 < np.mean(gyro) < 0.7
    assert np.std(gyro) > 1e-3
    rgb_in = src["/robot/camera/rgb/image_raw"][3][1].data
    rgb_out = out["/robot/camera/rgb/noisy"][3][1].data
    assert rgb_in.shape == rgb_out.shape
    assert not np.array_equal(rgb_in, rgb_out)
    depth = out["/robot/camera/depth/noisy"][0][1]
    assert depth.encoding == "32FC1"
    d16 = out["/robot/camera/depth16_noisy"][0][1]
    assert d16.encoding == "16UC1"
    assert d16.step == 2 * W
    # a different seed gives different noise
    three = tmp_path / "noisy_three"
    assert noise_main([*args[:2], str(three), *args[2:], "--seed", "6"]) == 0
    assert _tree_digest(three) != _tree_digest(one)


@pytest.mark.slow
def test_bag_drop_ground_truth(tmp_path: Path) -> None:
    bag = tmp_path / "bag"
    make_bag(bag)
    params = write_params(
        tmp_path / "noise.yaml",
        input_topics=["/robot/imu"],
        output_topics=["/robot/noisy/imu"],
        models=["imu"],
        presets=["consumer"],
        motion_topic="",
    )
    assert (
        noise_main(
            [
                "apply",
                str(bag),
                str(tmp_path / "out"),
                "--params",
                str(params),
                "--drop-ground-truth",
                "--no-progress",
            ]
        )
        == 0
    )
    out = _read(tmp_path / "out")
    assert "/robot/imu" not in out
    assert len(out["/robot/noisy/imu"]) == 240
    assert len(out["/robot/camera/rgb/image_raw"]) == 30


@pytest.mark.parametrize(
    ("bag_kwargs", "change", "match"),
    [
        ({"rgb_encoding": "mono8"}, {}, "unsupported image encoding 'mono8'"),
        ({"imu_nan": True}, {}, "NaN"),
        (
            {},
            {
                "models": ["rgb", "rgb", "depth", "depth", "odometry"],
                "presets": ["photometric_only", "online", "stereo_3_5m", "stereo_5m", "wheel"],
            },
            "/robot/imu in .* has type sensor_msgs/msg/Imu; "
            "model 'rgb' needs sensor_msgs/msg/Image",
        ),
        (
            {},
            {
                "input_topics": [
                    "/robot/imu",
                    "/nope",
                    "/robot/camera/depth/image_raw",
                    "/robot/camera/depth16",
                    "/robot/odom",
                ]
            },
            "\\['/nope'\\] are not in",
        ),
    ],
)
def test_bag_bad_input_is_reported(
    tmp_path: Path, bag_kwargs: dict[str, Any], change: dict[str, Any], match: str
) -> None:
    bag = tmp_path / "bag"
    make_bag(bag, **bag_kwargs)
    params = write_params(tmp_path / "noise.yaml", **change)
    with pytest.raises(NoiseInputError, match=match):
        noise_main(
            ["apply", str(bag), str(tmp_path / "out"), "--params", str(params), "--no-progress"]
        )
    assert not (tmp_path / "out").exists()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".out")] == []


def test_refuses_existing_output_and_input(tmp_path: Path) -> None:
    bag = tmp_path / "bag"
    make_bag(bag)
    params = write_params(tmp_path / "noise.yaml")
    (tmp_path / "exists").mkdir()
    inside = r"is \(inside\) the input"
    for target, match in (
        (tmp_path / "exists", "exists already"),
        (bag, inside),
        (bag / "sub", inside),
    ):
        with pytest.raises(NoiseOutputExistsError, match=match):
            noise_main(["apply", str(bag), str(target), "--params", str(params), "--no-progress"])


def make_tum(folder: Path, frames: int = 6) -> None:
    """A TUM RGB-D camera folder as docs/conventions.md describes (rotating camera)."""
    (folder / "rgb").mkdir(parents=True)
    (folder / "depth").mkdir()
    yy, xx = np.mgrid[0:H, 0:W]
    rgb_lines, depth_lines, gt_lines = ["# timestamp filename"], ["# timestamp filename"], []
    for k in range(frames):
        t = f"{k / 30:.6f}"
        rgb = np.stack([(xx * 4 + k) % 256, yy * 5, (xx // 8 % 2) * 255], axis=2).astype(np.uint8)
        depth = (5000 * (1.0 + 0.02 * xx)).astype(np.uint16)
        depth[:4, :4] = 0
        cv2.imwrite(str(folder / "rgb" / f"{t}.png"), rgb)
        cv2.imwrite(str(folder / "depth" / f"{t}.png"), depth)
        rgb_lines.append(f"{t} rgb/{t}.png")
        depth_lines.append(f"{t} depth/{t}.png")
        half = 0.5 * 1.0 * k / 30  # yaw about the optical y axis at 1 rad/s
        gt_lines.append(f"{t} 0 0 0 0 {np.sin(half):.9f} 0 {np.cos(half):.9f}")
    (folder / "rgb.txt").write_text("\n".join(rgb_lines) + "\n")
    (folder / "depth.txt").write_text("\n".join(depth_lines) + "\n")
    (folder / "groundtruth.txt").write_text("\n".join(gt_lines) + "\n")
    f = float(0.5 * W / np.tan(np.radians(88.95) / 2))
    (folder / "camera_info.yaml").write_text(
        yaml.safe_dump(
            {
                "width": W,
                "height": H,
                "K": [f, 0, W / 2, 0, f, H / 2, 0, 0, 1],
                "distortion_model": "plumb_bob",
            }
        )
    )


def test_tum_folder_gets_a_noisy_sibling(tmp_path: Path) -> None:
    cam = tmp_path / "gt" / "robot" / "camera"
    make_tum(cam)
    before = _tree_digest(cam)
    assert noise_main(["apply", str(cam), "--seed", "3", "--no-progress"]) == 0
    noisy = cam.parent / "camera_noisy"
    assert _tree_digest(cam) == before
    names = sorted(str(p.relative_to(cam)) for p in cam.rglob("*"))
    written = sorted(str(p.relative_to(noisy)) for p in noisy.rglob("*"))
    assert written == sorted([*names, OUTPUT_MARKER])  # a grade output, marked as such
    assert (noisy / "groundtruth.txt").read_bytes() == (cam / "groundtruth.txt").read_bytes()
    for rel in ("rgb/0.100000.png", "depth/0.100000.png"):
        a = cv2.imread(str(cam / rel), cv2.IMREAD_UNCHANGED)
        b = cv2.imread(str(noisy / rel), cv2.IMREAD_UNCHANGED)
        assert a.dtype == b.dtype
        assert a.shape == b.shape
        assert not np.array_equal(a, b)
    depth = cv2.imread(str(noisy / "depth/0.100000.png"), cv2.IMREAD_UNCHANGED)
    assert np.all(depth[:3, :3] == 0)
    # same seed, other output: byte-identical; the existing sibling is refused
    assert (
        noise_main(["apply", str(cam), str(tmp_path / "again"), "--seed", "3", "--no-progress"])
        == 0
    )
    assert _tree_digest(tmp_path / "again") == _tree_digest(noisy)
    with pytest.raises(NoiseOutputExistsError, match="exists already"):
        noise_main(["apply", str(cam), "--seed", "3", "--no-progress"])


def test_not_a_bag_or_tum_folder(tmp_path: Path) -> None:
    with pytest.raises(NoiseInputError, match="neither a rosbag2 folder"):
        noise_main(["apply", str(tmp_path), str(tmp_path / "o")])


def test_bag_blur_driven_by_odometry(tmp_path: Path) -> None:
    bag = tmp_path / "bag"
    make_bag(bag)
    params = write_params(
        tmp_path / "noise.yaml",
        input_topics=["/robot/camera/rgb/image_raw"],
        output_topics=["/robot/camera/rgb/noisy"],
        models=["rgb"],
        presets=["blur_only"],
        motion_topic="/robot/odom",
        motion_type="odometry",
    )
    assert (
        noise_main(
            ["apply", str(bag), str(tmp_path / "out"), "--params", str(params), "--no-progress"]
        )
        == 0
    )
    out = _read(tmp_path / "out")
    src = _read(bag)
    # the odometry twist (1 m/s forward = along the optical z axis) blurs the frames
    changed = [
        not np.array_equal(a.data, b.data)
        for (_, a), (_, b) in zip(
            src["/robot/camera/rgb/image_raw"], out["/robot/camera/rgb/noisy"], strict=True
        )
    ]
    assert all(changed)
    # IMU as motion_type for an odometry topic is a clear error
    bad = write_params(
        tmp_path / "bad.yaml",
        input_topics=["/robot/camera/rgb/image_raw"],
        output_topics=["/robot/camera/rgb/noisy"],
        models=["rgb"],
        presets=["blur_only"],
        motion_topic="/robot/odom",
        motion_type="imu",
    )
    with pytest.raises(NoiseInputError, match="motion_type 'imu' needs sensor_msgs/msg/Imu"):
        noise_main(
            ["apply", str(bag), str(tmp_path / "out2"), "--params", str(bad), "--no-progress"]
        )
