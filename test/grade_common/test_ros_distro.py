"""grade_common.ros_distro: which distro this environment is, and that bags and type hashes
agree between Jazzy and Kilted (so a bag recorded under one reads under the other)."""

from __future__ import annotations

from importlib import metadata
from pathlib import Path

import numpy as np
import pytest
import yaml

from grade_common import ros_distro
from grade_common.ros_distro import RosDistro, UnsupportedDistroError
from grade_common.rundir import ROS_KEY, RunStatus, read_run_yaml, write_run_yaml
from grade_replay.bag.io import open_bag, open_writer

pytestmark = pytest.mark.distro


def _wheel_distro() -> RosDistro | None:
    try:
        major = int(metadata.version("ros-rclpy").split(".")[0])
    except metadata.PackageNotFoundError:
        return None
    return {7: RosDistro.JAZZY, 9: RosDistro.KILTED}[major]


def test_a_sourced_system_ros_names_the_distro() -> None:
    assert ros_distro.current_distro({"ROS_DISTRO": "kilted"}) is RosDistro.KILTED
    assert ros_distro.current_distro({"ROS_DISTRO": "jazzy"}) is RosDistro.JAZZY


def test_without_a_system_ros_the_installed_wheels_decide() -> None:
    wheel = _wheel_distro()
    if wheel is None:
        pytest.skip("no ros-rclpy wheel in this environment (a system ROS 2)")
    # GRADE_ROS_DISTRO cannot contradict the wheels that are installed.
    other = next(d for d in RosDistro if d is not wheel)
    assert ros_distro.current_distro({"GRADE_ROS_DISTRO": other.value}) is wheel
    assert ros_distro.ros_environment({})["rclpy"] == metadata.version("ros-rclpy")


@pytest.mark.parametrize(("var", "value"), [("ROS_DISTRO", "humble"), ("ROS_DISTRO", "Rolling ")])
def test_an_unsupported_distro_is_named_with_the_allowed_ones(var: str, value: str) -> None:
    with pytest.raises(UnsupportedDistroError, match=rf"{var}='{value}'.*jazzy, kilted"):
        ros_distro.current_distro({var: value})


def test_the_rmw_defaults_to_fast_dds() -> None:
    assert ros_distro.rmw_implementation({}) == "rmw_fastrtps_cpp"
    assert ros_distro.rmw_implementation({"RMW_IMPLEMENTATION": "x"}) == "x"


def test_run_yaml_records_the_ros_environment(tmp_path: Path) -> None:
    write_run_yaml(tmp_path, RunStatus.COMPLETE, {"seed": 1}, {})
    ros = read_run_yaml(tmp_path / "run.yaml")[ROS_KEY]
    assert ros == ros_distro.ros_environment()
    assert ros["distro"] in {d.value for d in RosDistro}
    assert ros["rmw"]


def test_the_types_grade_records_hash_the_same_in_both_distros() -> None:
    jazzy, kilted = (ros_distro.typestore(d) for d in (RosDistro.JAZZY, RosDistro.KILTED))
    shared = set(jazzy.fielddefs) & set(kilted.fielddefs)
    # Every definition both stores have (all of grade's message types among them) is the same.
    assert {"sensor_msgs/msg/Image", "tf2_msgs/msg/TFMessage", "nav_msgs/msg/Odometry"} <= shared
    differ = [t for t in sorted(shared) if jazzy.hash_rihs01(t) != kilted.hash_rihs01(t)]
    assert differ == []
    assert ros_distro.type_hash("sensor_msgs/msg/Image", RosDistro.JAZZY).startswith("RIHS01_")
    assert ros_distro.type_hash("no_such/msg/Type") == ""


@pytest.mark.parametrize(
    ("writer", "reader"), [(RosDistro.KILTED, RosDistro.JAZZY), (RosDistro.JAZZY, RosDistro.KILTED)]
)
def test_a_bag_written_under_one_distro_reads_under_the_other(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, writer: RosDistro, reader: RosDistro
) -> None:
    # What a recording under `writer` writes: its distro in the metadata, its typestore's bytes.
    monkeypatch.setenv("ROS_DISTRO", writer.value)
    store = ros_distro.typestore()
    pixels = np.arange(12, dtype=np.uint8)
    msg = store.types["sensor_msgs/msg/Image"](
        header=store.types["std_msgs/msg/Header"](
            stamp=store.types["builtin_interfaces/msg/Time"](sec=0, nanosec=5), frame_id="cam"
        ),
        height=2,
        width=2,
        encoding="rgb8",
        is_bigendian=0,
        step=6,
        data=pixels,
    )
    bag = tmp_path / "bag"
    out = open_writer(bag)
    conn = out.add_connection("/cam/rgb", "sensor_msgs/msg/Image", typestore=store)
    out.write(conn, 5, store.serialize_cdr(msg, "sensor_msgs/msg/Image"))
    out.close()
    assert (
        yaml.safe_load((bag / "metadata.yaml").read_text())["rosbag2_bagfile_information"][
            "ros_distro"
        ]
        == writer.value
    )
    monkeypatch.setenv("ROS_DISTRO", reader.value)
    with open_bag(bag) as source:
        [(read_conn, stamp_ns, raw)] = list(source.messages())
        decoded = source.deserialize(raw, read_conn.msgtype)
    assert (read_conn.topic, stamp_ns, decoded.encoding) == ("/cam/rgb", 5, "rgb8")
    assert bytes(decoded.data) == bytes(pixels)
