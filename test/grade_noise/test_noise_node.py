"""noise_node as a real process, fed and read by a second real rclpy process."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

CLIENT = r"""
import json, sys, time
import numpy as np
import rclpy
from rclpy.qos import qos_profile_sensor_data as QOS
from sensor_msgs.msg import Image, Imu
from std_msgs.msg import String

IMU_HZ, CAM_HZ, SECONDS = 200.0, 30.0, 2.0
rclpy.init()
node = rclpy.create_node("noise_test_client")
pub_imu = node.create_publisher(Imu, "/t/imu", QOS)
pub_rgb = node.create_publisher(Image, "/t/rgb", QOS)
pub_depth = node.create_publisher(Image, "/t/depth", QOS)
pub_bad = node.create_publisher(Image, "/t/rgb_bad", QOS)
pub_wrong_type = node.create_publisher(String, "/t/odom", QOS)  # configured as odometry
received = {"/t/noisy/imu": [], "/t/noisy/rgb": [], "/t/noisy/depth": []}
values = {"gyro_z": [], "frame": []}

def keep(topic):
    def cb(msg):
        received[topic].append([msg.header.stamp.sec, msg.header.stamp.nanosec,
                                msg.header.frame_id, time.monotonic()])
        if topic.endswith("imu"):
            values["gyro_z"].append(msg.angular_velocity.z)
        elif topic.endswith("rgb") and not values["frame"]:
            values["frame"] = list(bytes(msg.data)[:200])
    return cb

subs = [node.create_subscription(Imu if t.endswith("imu") else Image, t, keep(t), QOS)
        for t in received]
deadline = time.monotonic() + 30.0
while time.monotonic() < deadline:
    rclpy.spin_once(node, timeout_sec=0.05)
    if all(node.count_publishers(t) > 0 for t in received) and all(
            p.get_subscription_count() > 0 for p in (pub_imu, pub_rgb, pub_depth)):
        break
else:
    print("no discovery", file=sys.stderr); sys.exit(3)
time.sleep(0.5)

def stamp(msg, t_ns, frame):
    msg.header.stamp.sec, msg.header.stamp.nanosec = t_ns // 10**9, t_ns % 10**9
    msg.header.frame_id = frame

H, W = 48, 64
rgb = np.tile(np.arange(W, dtype=np.uint8)[None, :, None] * 4, (H, 1, 3))
depth = np.full((H, W), 1.5, np.float32)
sent = {"/t/imu": [], "/t/rgb": [], "/t/depth": []}
t0_wall = time.monotonic()
base_ns = 100 * 10**9
n_imu = n_cam = 0
while True:
    now = time.monotonic() - t0_wall
    if now >= SECONDS:
        break
    while n_imu / IMU_HZ <= now:
        m = Imu(); t_ns = base_ns + int(n_imu * 1e9 / IMU_HZ); stamp(m, t_ns, "robot/imu_link")
        m.angular_velocity.z = 0.4; m.linear_acceleration.z = 9.81
        pub_imu.publish(m); sent["/t/imu"].append(t_ns); n_imu += 1
    while n_cam / CAM_HZ <= now:
        t_ns = base_ns + int(n_cam * 1e9 / CAM_HZ) + 1000
        for pub, topic, enc, arr in ((pub_rgb, "/t/rgb", "rgb8", rgb),
                                     (pub_depth, "/t/depth", "32FC1", depth),
                                     (pub_bad, None, "mono8", rgb[:, :, 0].copy())):
            m = Image(); stamp(m, t_ns, "robot/camera_optical_frame")
            m.height, m.width, m.encoding = H, W, enc
            m.step = arr.nbytes // H; m.data = arr.tobytes()
            pub.publish(m)
            if topic: sent[topic].append(t_ns)
        n_cam += 1
    rclpy.spin_once(node, timeout_sec=0.001)
end = time.monotonic() + 1.5
while time.monotonic() < end:
    rclpy.spin_once(node, timeout_sec=0.02)
json.dump({"sent": sent, "received": received, "values": values,
           "rgb_in": list(rgb.tobytes()[:200])}, open(sys.argv[1], "w"))
node.destroy_node(); rclpy.shutdown()
"""


@pytest.mark.ros
@pytest.mark.slow
def test_node_republishes_noisy_topics_at_input_rate(tmp_path: Path) -> None:
    params = tmp_path / "noise.yaml"
    params.write_text(
        yaml.safe_dump(
            {
                "noise_node": {
                    "ros__parameters": {
                        "seed": 3,
                        "input_topics": ["/t/imu", "/t/rgb", "/t/depth", "/t/rgb_bad", "/t/odom"],
                        "output_topics": [
                            "/t/noisy/imu",
                            "/t/noisy/rgb",
                            "/t/noisy/depth",
                            "/t/noisy/rgb_bad",
                            "/t/noisy/odom",
                        ],
                        "models": ["imu", "rgb", "depth", "rgb", "odometry"],
                        "presets": ["consumer", "online", "stereo_3_5m", "online", "wheel"],
                        "motion_topic": "/t/imu",
                        "imu_rate_hz": 200.0,
                    }
                }
            }
        )
    )
    client = tmp_path / "client.py"
    client.write_text(CLIENT)
    result = tmp_path / "result.json"
    node_log = tmp_path / "node.log"
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    with node_log.open("w") as log:
        node = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "grade_noise.node.noise_node",
                "--ros-args",
                "--params-file",
                str(params),
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
            env=env,
        )
        try:
            run = subprocess.run(
                [sys.executable, str(client), str(result)],
                env=env,
                capture_output=True,
                text=True,
                timeout=90,
            )
        finally:
            node.send_signal(signal.SIGINT)
            try:
                code = node.wait(timeout=10)
            except subprocess.TimeoutExpired:
                node.kill()
                code = node.wait()
    log_text = node_log.read_text()
    assert run.returncode == 0, run.stderr + log_text
    assert code == 0, log_text
    data = json.loads(result.read_text())
    for inp, out in (
        ("/t/imu", "/t/noisy/imu"),
        ("/t/rgb", "/t/noisy/rgb"),
        ("/t/depth", "/t/noisy/depth"),
    ):
        sent = data["sent"][inp]
        got = [s * 10**9 + ns for s, ns, _, _ in data["received"][out]]
        assert set(got) <= set(sent), out  # every output carries an input stamp
        assert len(got) >= 0.9 * len(sent), (out, len(got), len(sent))
        # same rate: the received stamps span the sent ones with the same spacing
        span = (max(got) - min(got)) / (len(got) - 1)
        assert span == pytest.approx((max(sent) - min(sent)) / (len(sent) - 1), rel=0.1)
        arrivals = [w for *_, w in data["received"][out]]
        wall_rate = (len(arrivals) - 1) / (max(arrivals) - min(arrivals))
        assert wall_rate == pytest.approx(
            1e9 / ((max(sent) - min(sent)) / (len(sent) - 1)), rel=0.25
        ), out
        frames = {f for _, _, f, _ in data["received"][out]}
        assert frames == {"robot/imu_link" if "imu" in out else "robot/camera_optical_frame"}
    gyro = data["values"]["gyro_z"]
    assert all(g != 0.4 for g in gyro)
    assert abs(sum(gyro) / len(gyro) - 0.4) < 0.1
    assert data["values"]["frame"] != data["rgb_in"]
    assert "unsupported image encoding 'mono8'" in log_text
    assert (
        "/t/odom has type(s) ['std_msgs/msg/String']; this node expects nav_msgs/msg/Odometry"
        in log_text
    )


@pytest.mark.ros
@pytest.mark.parametrize(
    ("params", "match"),
    [
        ({"seed": 1}, "'input_topics' is empty"),
        (
            {
                "seed": 1,
                "input_topics": ["/a"],
                "output_topics": ["/b"],
                "models": ["rgb"],
                "presets": ["online"],
            },
            "'motion_topic' is empty",
        ),
    ],
)
def test_node_refuses_bad_parameters(tmp_path: Path, params: dict[str, object], match: str) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump({"noise_node": {"ros__parameters": params}}))
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "grade_noise.node.noise_node",
            "--ros-args",
            "--params-file",
            str(path),
        ],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert run.returncode == 1
    assert re.search(match, run.stderr), run.stderr
