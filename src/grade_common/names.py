"""Names that become ROS names, TF frame ids and path components: one rule for all of them.

A robot, camera, sensor or actor name ends up as a topic/namespace token (`/uav1/camera/rgb`), a
frame id (`uav1/camera_optical`) and a single folder name (`gt/uav1/camera/`). The intersection
of those rules is the ROS 2 name-token rule restricted to ASCII and not starting with '_': it can
never be `..`, hold a `/`, a space or a non-ASCII letter, so it is safe as all three.
"""

from __future__ import annotations

import re
from typing import Any

from grade_common.errors import ConfigError
from grade_common.schema import text

ROS_NAME_PATTERN = "[A-Za-z][A-Za-z0-9_]*"
ROS_NAME_RULE = "ASCII letters, digits and '_', starting with a letter"
_ROS_NAME_RE = re.compile(ROS_NAME_PATTERN)


def is_ros_name(value: object) -> bool:
    """True if `value` is a string that is a valid ROS name token and a single path component."""
    return isinstance(value, str) and _ROS_NAME_RE.fullmatch(value) is not None


def check_ros_name(value: object, where: str) -> str:
    """Returns `value` if it is a valid name (see module doc), else raises naming `where`.

    Raises:
        ConfigError: `<where>: <value> is not a valid ROS name; use <rule>`.
    """
    if not is_ros_name(value):
        raise ConfigError(f"{where}: {value!r} is not a valid ROS name; use {ROS_NAME_RULE}")
    assert isinstance(value, str)
    return value


def ros_name() -> dict[str, Any]:
    """Field metadata (grade_common.schema) for a string that must be a valid name."""
    return text(ROS_NAME_PATTERN)
