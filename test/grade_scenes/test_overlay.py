"""The overlay: exact blend offline, and the scene_overlay node as a real process over ROS 2."""

from __future__ import annotations

import array
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest

from grade_scenes.errors import ScenesError
from grade_scenes.overlay import blend, load_rgb

H, W = 24, 32


def _pair() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(5)
    live = rng.integers(0, 256, (H, W, 3), dtype=np.uint8)
    reference = rng.integers(0, 256, (H, W, 3), dtype=np.uint8)
    return live, reference


def _expected(live: np.ndarray, reference: np.ndarray) -> np.ndarray:
    # By hand, pixel by pixel: round(0.4 live + 0.6 reference).
    out = np.empty_like(live)
    for index in np.ndindex(live.shape):
        out[index] = int(np.rint(0.4 * int(live[index]) + 0.6 * int(reference[index])))
    return out


def test_blend_is_exact() -> None:
    live, reference = _pair()
    np.testing.assert_array_equal(blend(live, reference), _expected(live, reference))
    assert (
        blend(np.full((2, 2, 3), 100, np.uint8), np.full((2, 2, 3), 200, np.uint8))[0, 0, 0] == 160
    )


def test_reference_is_resized_and_channels_checked() -> None:
    live = np.zeros((H, W, 3), np.uint8)
    assert blend(live, np.full((2 * H, 2 * W, 3), 50, np.uint8)).shape == (H, W, 3)
    with pytest.raises(ScenesError, match="channels"):
        blend(live, np.zeros((H, W, 4), np.uint8))


def test_offline_cli_writes_the_blend(tmp_path: Path) -> None:
    from grade_scenes.cli import main

    live, reference = _pair()
    cv2.imwrite(str(tmp_path / "live.png"), cv2.cvtColor(live, cv2.COLOR_RGB2BGR))
    cv2.imwrite(str(tmp_path / "ref.png"), cv2.cvtColor(reference, cv2.COLOR_RGB2BGR))
    code = main(
        [
            "overlay",
            str(tmp_path / "live.png"),
            str(tmp_path / "ref.png"),
            "--out",
            str(tmp_path / "o.png"),
        ]
    )
    assert code == 0
    np.testing.assert_array_equal(load_rgb(tmp_path / "o.png"), _expected(live, reference))


@pytest.mark.slow
def test_node_publishes_the_exact_blend(tmp_path: Path, observer: Any) -> None:
    from rclpy.qos import qos_profile_sensor_data
    from sensor_msgs.msg import Image

    live, reference = _pair()
    cv2.imwrite(str(tmp_path / "ref.png"), cv2.cvtColor(reference, cv2.COLOR_RGB2BGR))
    node = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "grade_scenes.node.overlay_node",
            "--ros-args",
            "-p",
            f"reference_image:={tmp_path / 'ref.png'}",
            "-r",
            "image_raw:=/ov_test/live",
            "-r",
            "overlay/image_raw:=/ov_test/overlay",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    received: list[Any] = []
    try:
        pub = observer.create_publisher(Image, "/ov_test/live", qos_profile_sensor_data)
        observer.create_subscription(
            Image, "/ov_test/overlay", received.append, qos_profile_sensor_data
        )
        msg = Image()
        msg.header.frame_id = "camera_optical"
        msg.header.stamp.sec = 42
        msg.height, msg.width, msg.encoding, msg.step = H, W, "rgb8", 3 * W
        msg.data = array.array("B", live.tobytes())
        from rclpy.executors import SingleThreadedExecutor

        executor = SingleThreadedExecutor(context=observer.context)
        executor.add_node(observer)
        deadline = time.monotonic() + 60.0
        while not received and time.monotonic() < deadline and node.poll() is None:
            if pub.get_subscription_count() > 0:
                pub.publish(msg)
            executor.spin_once(timeout_sec=0.2)
        executor.remove_node(observer)
        assert received, "no overlay image within 60 s"
        out = received[0]
        assert out.encoding == "rgb8"
        assert out.header.frame_id == "camera_optical"
        assert out.header.stamp.sec == 42
        pixels = np.frombuffer(bytes(out.data), np.uint8).reshape(H, W, 3)
        np.testing.assert_array_equal(pixels, _expected(live, reference))
    finally:
        node.terminate()
        output, _ = node.communicate(timeout=20)
    assert node.returncode in (0, -15), output
