"""The one name rule for robots, cameras, sensors, actors and frames."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from grade_common.errors import ConfigError
from grade_common.names import check_ros_name, is_ros_name, ros_name
from grade_common.schema import from_mapping


@pytest.mark.parametrize("name", ["uav1", "camera", "a", "Front_Left_2"])
def test_valid_names_pass(name: str) -> None:
    assert is_ros_name(name)
    assert check_ros_name(name, "robots[0].name") == name


@pytest.mark.parametrize(
    "name",
    ["", "..", "../x", "/abs", "a b", "1cam", "_x", "cam/rgb", "caméra", "a-b", None, 3],
)
def test_names_that_are_not_safe_as_topic_frame_and_folder_are_refused(name: object) -> None:
    assert not is_ros_name(name)
    with pytest.raises(ConfigError, match=r"robots\[0\]\.cameras\[1\]\.name: .* not a valid ROS"):
        check_ros_name(name, "robots[0].cameras[1].name")


def test_schema_metadata_names_the_key_path() -> None:
    @dataclass(frozen=True)
    class Sensor:
        name: str = field(default="lidar", metadata=ros_name())

    assert from_mapping(Sensor, {"name": "lidar_top"}).name == "lidar_top"
    with pytest.raises(ConfigError, match=r"sensor\.name: '\.\./x' is not allowed"):
        from_mapping(Sensor, {"name": "../x"}, "sensor")
