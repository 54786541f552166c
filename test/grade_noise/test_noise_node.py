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

# The client paces by lockstep, not by the wall clock: it publishes one camera frame's worth of
# input (the IMU samples up to the frame's stamp, then the frame), then waits until every noisy
# copy of those stamps is back before the next frame. No queue ever holds more than one frame's
# worth, so a busy machine only makes the test slower; a message the node drops or mis-stamps
# never comes back and shows in the counts. The waits are generous bounds on a condition.
CLIENT = r"""
import json, sys, time
import numpy as np
import rclpy
from rclpy.qos import QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import Image, Imu
from std_msgs.msg import String

IMU_HZ, CAM_HZ, N_FRAMES = 200.0, 30.0, 20
QOS = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE)
node_log = sys.argv[2]
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
                                msg.header.frame_id])
        if topic.endswith("imu"):
            values["gyro_z"].append(msg.angular_velocity.z)
        elif topic.endswith("rgb") and not values["frame"]:
            values["frame"] = list(bytes(msg.data)[:200])
    return cb

def spin_until(done, limit_s):
    deadline = time.monotonic() + limit_s
    while not done() and time.monotonic() < deadline:
        rclpy.spin_once(node, timeout_sec=0.02)
    return done()

subs = [node.create_subscription(Imu if t.endswith("imu") else Image, t, keep(t), QOS)
        for t in received]
# /t/imu has two readers in the node (its noise and the motion of the blur): wait for both.
if not spin_until(lambda: all(node.count_publishers(t) > 0 for t in received) and all(
        p.get_subscription_count() > 0 for p in (pub_rgb, pub_depth, pub_bad))
        and pub_imu.get_subscription_count() >= 2, 60.0):
    print("no discovery", file=sys.stderr); sys.exit(3)

def stamp(msg, t_ns, frame):
    msg.header.stamp.sec, msg.header.stamp.nanosec = t_ns // 10**9, t_ns % 10**9
    msg.header.frame_id = frame

def back(topic, t_ns):
    return any(s * 10**9 + ns == t_ns for s, ns, _ in received[topic])

H, W = 48, 64
rgb = np.tile(np.arange(W, dtype=np.uint8)[None, :, None] * 4, (H, 1, 3))
depth = np.full((H, W), 1.5, np.float32)
sent = {"/t/imu": [], "/t/rgb": [], "/t/depth": []}
base_ns = 100 * 10**9
n_imu = 0
def publish_images(t_ns, with_bad):
    for pub, topic, enc, arr in ((pub_rgb, "/t/rgb", "rgb8", rgb),
                                 (pub_depth, "/t/depth", "32FC1", depth),
                                 (pub_bad, None, "mono8", rgb[:, :, 0].copy())):
        if topic is None and not with_bad:
            continue
        m = Image(); stamp(m, t_ns, "robot/camera_optical_frame")
        m.height, m.width, m.encoding = H, W, enc
        m.step = arr.nbytes // H; m.data = arr.tobytes()
        pub.publish(m)
        if topic and t_ns >= base_ns: sent[topic].append(t_ns)

def publish_imu(t_ns):
    m = Imu(); stamp(m, t_ns, "robot/imu_link")
    m.angular_velocity.z = 0.4; m.linear_acceleration.z = 9.81
    pub_imu.publish(m)

# Warm-up, not counted (stamps before base_ns): a matched reader is not yet a matched writer,
# so repeat one IMU sample and one frame until a noisy copy of each has come back.
for i in range(150):
    t_ns = base_ns - 10**9 + i * 5_000_000
    publish_imu(t_ns)
    spin_until(lambda: back("/t/noisy/imu", t_ns), 0.2)
    publish_images(t_ns + 1000, False)
    if spin_until(lambda: all(back(t, t_ns + 1000) for t in ("/t/noisy/rgb", "/t/noisy/depth"))
                  and any(received["/t/noisy/imu"]), 0.5):
        break
else:
    print("no noisy message came back", file=sys.stderr); sys.exit(4)

for n_cam in range(N_FRAMES):
    cam_ns = base_ns + int(n_cam * 1e9 / CAM_HZ) + 1000
    imu_now = []
    while base_ns + int(n_imu * 1e9 / IMU_HZ) <= cam_ns:
        t_ns = base_ns + int(n_imu * 1e9 / IMU_HZ)
        publish_imu(t_ns); sent["/t/imu"].append(t_ns); imu_now.append(t_ns); n_imu += 1
    # The frame's blur uses the latest motion sample: let the IMU arrive first.
    spin_until(lambda: all(back("/t/noisy/imu", t) for t in imu_now), 30.0)
    publish_images(cam_ns, True)
    spin_until(lambda: back("/t/noisy/rgb", cam_ns) and back("/t/noisy/depth", cam_ns), 30.0)

def logged(*texts):
    with open(node_log) as f:
        log = f.read()
    return all(t in log for t in texts)

# The node checks topic types once a second: keep the wrong-type publisher until it has logged.
spin_until(lambda: logged("unsupported image encoding", "this node expects nav_msgs"), 30.0)
json.dump({"sent": sent, "received": received, "values": values,
           "rgb_in": list(rgb.tobytes()[:200])}, open(sys.argv[1], "w"))
node.destroy_node(); rclpy.shutdown()
"""


@pytest.mark.ros
@pytest.mark.slow
def test_node_republishes_each_input_once_with_its_stamp(tmp_path: Path) -> None:
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
                [sys.executable, str(client), str(result), str(node_log)],
                env=env,
                capture_output=True,
                text=True,
                timeout=300,
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
        assert len(sent) == (127 if inp == "/t/imu" else 20)  # 20 frames, 200 Hz IMU to 0.63 s
        got = sorted(s * 10**9 + ns for s, ns, _ in data["received"][out] if s >= 100)
        # one noisy message per input, carrying the input's stamp: none dropped, none doubled
        assert got == sent, (out, len(got), len(sent), sorted(set(sent) - set(got))[:5])
        frames = {f for _, _, f in data["received"][out]}
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
