"""sim_node publishes the lidar's PointCloud2 and the 2D laser's LaserScan live, in sim time."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from sim_node_support import DATA, spin_until

from grade_launch.substitution import find_package_prefix
from process_support import CollectedProcess

pytest.importorskip("embreex")


@pytest.mark.ros
@pytest.mark.slow
def test_lidar_topics_arrive_live(observer: Any, tmp_path: Path) -> None:
    from rclpy.qos import qos_profile_sensor_data
    from sensor_msgs.msg import LaserScan, PointCloud2

    received: dict[str, list[Any]] = defaultdict(list)
    for name, cls in (("/uav1/lidar/points", PointCloud2), ("/uav1/laser/scan", LaserScan)):
        observer.create_subscription(
            cls, name, lambda msg, n=name: received[n].append(msg), qos_profile_sensor_data
        )
    exe = find_package_prefix("grade") / "lib/grade/sim_node"
    params = [f"scenario:={DATA / 'lidar_small.yaml'}", "realtime:=true", "duration_s:=60.0"]
    proc = CollectedProcess(
        [str(exe), "--ros-args", *[a for p in params for a in ("-p", p)]], tmp_path
    )
    try:
        spin_until(
            observer,
            lambda: bool(received["/uav1/lidar/points"]) and bool(received["/uav1/laser/scan"]),
            180.0,
            proc,
        )
    finally:
        proc.interrupt()
    cloud = received["/uav1/lidar/points"][0]
    assert cloud.header.frame_id == "uav1/lidar_link"
    assert [f.name for f in cloud.fields][:6] == ["x", "y", "z", "intensity", "t", "ring"]
    assert cloud.width > 1000
    stamp_ns = cloud.header.stamp.sec * 10**9 + cloud.header.stamp.nanosec
    assert stamp_ns % (10**8) == 10**8 - 1799 * 10**8 // 1800  # first firing of a 10 Hz sweep
    scan = received["/uav1/laser/scan"][0]
    assert len(scan.ranges) == 1081
    assert np.isfinite(np.asarray(scan.ranges)).any()
