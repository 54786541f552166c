"""REP 105 with a SLAM stack: with publish_world_odom:=false the simulator leaves the fixed
frame -> odom link out, a separate static map -> odom publisher (standing in for slam_toolbox or
rtabmap) completes a single-parent tree, and ground truth stays on its own topics."""

from __future__ import annotations

import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
from sim_node_support import DATA, spin_until

from grade_launch.substitution import find_package_prefix
from process_support import CollectedProcess

STATIC_TF = Path(__file__).resolve().parent / "static_tf_publisher.py"


def sim_node(tmp_path: Path, *params: str) -> CollectedProcess:
    exe = find_package_prefix("grade") / "lib/grade/sim_node"
    args = [f"scenario:={DATA / 'indoor_small.yaml'}", *params]
    return CollectedProcess(
        [str(exe), "--ros-args", *[a for p in args for a in ("-p", p)]], tmp_path
    )


def tree_problems(edges: set[tuple[str, str]]) -> list[str]:
    """What keeps (parent, child) edges from being one TF tree: frames with several parents,
    more than one root, cycles."""
    parents: dict[str, set[str]] = defaultdict(set)
    for parent, child in edges:
        parents[child].add(parent)
    problems = [f"{c} has parents {sorted(p)}" for c, p in parents.items() if len(p) > 1]
    frames = {f for e in edges for f in e}
    roots = sorted(f for f in frames if f not in parents)
    if len(roots) != 1:
        problems.append(f"roots {roots}: expected exactly one")
    return problems


def test_tree_check_finds_a_second_parent() -> None:
    # The check can fail: world -> odom from the simulator plus map -> odom from SLAM.
    edges = {("world", "uav1/odom"), ("map", "uav1/odom"), ("uav1/odom", "uav1/base_link")}
    assert tree_problems(edges) == [
        "uav1/odom has parents ['map', 'world']",
        "roots ['map', 'world']: expected exactly one",
    ]
    assert tree_problems({("map", "uav1/odom"), ("uav1/odom", "uav1/base_link")}) == []


@pytest.mark.ros
@pytest.mark.slow
def test_static_map_to_odom_beside_the_simulator_gives_one_tree(
    observer: Any, tmp_path: Path
) -> None:
    from geometry_msgs.msg import PoseStamped
    from nav_msgs.msg import Odometry
    from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
    from tf2_msgs.msg import TFMessage

    edges: set[tuple[str, str]] = set()
    truth: dict[str, list[Any]] = defaultdict(list)

    def on_tf(msg: Any) -> None:
        edges.update((t.header.frame_id, t.child_frame_id) for t in msg.transforms)

    latched = QoSProfile(
        depth=10,
        reliability=ReliabilityPolicy.RELIABLE,
        durability=DurabilityPolicy.TRANSIENT_LOCAL,
    )
    observer.create_subscription(TFMessage, "/tf_static", on_tf, latched)
    observer.create_subscription(TFMessage, "/tf", on_tf, 100)
    for topic, cls in (("odom", Odometry), ("pose", PoseStamped)):
        observer.create_subscription(
            cls, f"/uav1/ground_truth/{topic}", lambda m, t=topic: truth[t].append(m), 100
        )
    slam = CollectedProcess([sys.executable, str(STATIC_TF), "map", "uav1/odom"], tmp_path)
    try:
        slam.wait_for("static transform published")
        proc = sim_node(
            tmp_path,
            "publish_world_odom:=false",
            # Paced to the wall clock: a run faster than real time can end before the observer
            # has matched the simulator's publishers on a loaded machine.
            "realtime:=true",
            "duration_s:=3.0",
            "start_delay_s:=2.0",
        )
        spin_until(
            observer,
            lambda: ("uav1/odom", "uav1/base_link") in edges and len(truth["pose"]) >= 5,
            90.0,
            proc,
        )
        assert proc.wait(timeout_s=90) == 0, proc.text
    finally:
        slam.interrupt()
    assert ("map", "uav1/odom") in edges
    assert not any(parent == "world" for parent, _ in edges), sorted(edges)
    assert tree_problems(edges) == [], sorted(edges)
    assert truth["odom"][0].header.frame_id == "world"
    assert truth["odom"][0].child_frame_id == "uav1/base_link"
    assert truth["pose"][0].header.frame_id == "world"


@pytest.mark.ros
@pytest.mark.parametrize("frame", ["world_frame:=map/1", "base_frame:=2base", "odom_frame:=o d"])
def test_frame_names_must_be_ros_names(tmp_path: Path, frame: str) -> None:
    proc = sim_node(tmp_path, frame)
    assert proc.wait(timeout_s=60) == 1, proc.text
    assert f"parameter '{frame.split(':=')[0]}'" in proc.text, proc.text
