"""The ROS 2 distro grade runs on (Jazzy, the LTS, or Kilted) and everything that differs
between them, in one place: the name bags record, the rosbags typestore whose definitions and
RIHS01 type hashes grade writes, and the rclpy/RMW of run.yaml's `ros` key. Nodes and tools ask
this module; none of them checks a version itself.

The distro is found without importing rclpy (core modules use it): a sourced system ROS 2 names
itself in ROS_DISTRO; PyPI's wheels do not, so the installed `ros-rclpy` wheel's major version
says which distro's wheels they are; an environment without ROS 2 uses GRADE_ROS_DISTRO (what
scripts/env.sh exports), else Jazzy.

What differs, as far as grade uses it: Jazzy's rclpy 7 and Fast DDS 2.14 against Kilted's rclpy 9
and Fast DDS 3 (whose XML profile variables differ: `fastdds_profile_env`). The message definitions
grade publishes and records, and so their type hashes, are the same in both (rosbags' ROS2_JAZZY
and ROS2_KILTED stores differ only by nav_msgs/msg/Goals, which grade does not use), so bags
recorded under one read under the other.
"""

from __future__ import annotations

import enum
import os
import re
from collections.abc import Mapping
from importlib import metadata
from pathlib import Path
from typing import Any

from grade_common.errors import GradeError

# Set by a sourced system ROS 2 (its setup.bash); the wheels leave it unset.
SYSTEM_DISTRO_ENV = "ROS_DISTRO"
# grade's own switch (make setup|demo|test GRADE_ROS_DISTRO=...; scripts/ros_distro.sh).
GRADE_DISTRO_ENV = "GRADE_ROS_DISTRO"
RMW_ENV = "RMW_IMPLEMENTATION"
# Both distros' default RMW, used when RMW_IMPLEMENTATION is unset.
DEFAULT_RMW = "rmw_fastrtps_cpp"
RCLPY_WHEEL = "ros-rclpy"


class RosDistro(enum.StrEnum):
    """The ROS 2 distros grade supports (both have cp311 wheels on PyPI)."""

    JAZZY = "jazzy"
    KILTED = "kilted"


DEFAULT_DISTRO = RosDistro.JAZZY
# rclpy's major version in each distro (the wheels carry no distro name of their own).
_RCLPY_MAJOR = {7: RosDistro.JAZZY, 9: RosDistro.KILTED}
# The variable each distro's Fast DDS reads grade's XML profile from: Fast DDS 2.14 (Jazzy) reads
# only FASTRTPS_DEFAULT_PROFILES_FILE; Fast DDS 3 (Kilted) reads FASTDDS_DEFAULT_PROFILES_FILE and
# logs a deprecation warning in every process when the older name is set.
_FASTDDS_PROFILE_ENV = {
    RosDistro.JAZZY: "FASTRTPS_DEFAULT_PROFILES_FILE",
    RosDistro.KILTED: "FASTDDS_DEFAULT_PROFILES_FILE",
}
# rosbags' typestore of each distro (rosbags.typesys.Stores member names).
_TYPESTORE = {RosDistro.JAZZY: "ROS2_JAZZY", RosDistro.KILTED: "ROS2_KILTED"}


class UnsupportedDistroError(GradeError):
    """The ROS 2 distro in use (or asked for) is not one grade supports."""


def parse_distro(name: str, origin: str) -> RosDistro:
    """`name` as a RosDistro.

    Raises:
        UnsupportedDistroError: not a supported distro (the message names `origin`, e.g. the
            variable it came from, and the allowed names).
    """
    try:
        return RosDistro(name.strip().lower())
    except ValueError as err:
        allowed = ", ".join(d.value for d in RosDistro)
        raise UnsupportedDistroError(
            f"{origin}={name!r} is not a ROS 2 distro grade supports; use one of: {allowed}"
        ) from err


def rclpy_version(environ: Mapping[str, str] | None = None) -> str | None:
    """rclpy's version, read without importing it: the PyPI wheel's, else the <version> of
    share/rclpy/package.xml on AMENT_PREFIX_PATH (a system ROS 2); None if there is no rclpy."""
    try:
        return metadata.version(RCLPY_WHEEL)
    except metadata.PackageNotFoundError:
        pass
    env = os.environ if environ is None else environ
    for prefix in env.get("AMENT_PREFIX_PATH", "").split(os.pathsep):
        package_xml = Path(prefix) / "share" / "rclpy" / "package.xml"
        if prefix and package_xml.is_file():
            found = re.search(r"<version>([^<]+)</version>", package_xml.read_text())
            if found:
                return found.group(1).strip()
    return None


def current_distro(environ: Mapping[str, str] | None = None) -> RosDistro:
    """The distro of this environment (see the module docstring for the order of the sources).

    Raises:
        UnsupportedDistroError: a sourced ROS 2 or installed rclpy of another distro, or a bad
            GRADE_ROS_DISTRO.
    """
    env = os.environ if environ is None else environ
    system = env.get(SYSTEM_DISTRO_ENV, "")
    if system:
        return parse_distro(system, SYSTEM_DISTRO_ENV)
    try:
        wheel = metadata.version(RCLPY_WHEEL)
    except metadata.PackageNotFoundError:
        wheel = ""
    if wheel:
        major = int(wheel.split(".")[0])
        if major not in _RCLPY_MAJOR:
            known = ", ".join(f"{m}.x: {d.value}" for m, d in _RCLPY_MAJOR.items())
            raise UnsupportedDistroError(
                f"the installed {RCLPY_WHEEL} {wheel} belongs to no ROS 2 distro grade supports "
                f"({known}); run `make setup GRADE_ROS_DISTRO=jazzy`"
            )
        return _RCLPY_MAJOR[major]
    chosen = env.get(GRADE_DISTRO_ENV, "")
    return parse_distro(chosen, GRADE_DISTRO_ENV) if chosen else DEFAULT_DISTRO


def fastdds_profile_env(environ: Mapping[str, str] | None = None) -> str:
    """The environment variable this distro's Fast DDS reads its XML profile from."""
    return _FASTDDS_PROFILE_ENV[current_distro(environ)]


def rmw_implementation(environ: Mapping[str, str] | None = None) -> str:
    """The RMW ROS 2 processes started from this environment load."""
    env = os.environ if environ is None else environ
    return env.get(RMW_ENV) or DEFAULT_RMW


def ros_environment(environ: Mapping[str, str] | None = None) -> dict[str, Any]:
    """run.yaml's `ros` key: the distro, the rclpy version (None without rclpy) and the RMW."""
    return {
        "distro": current_distro(environ).value,
        "rclpy": rclpy_version(environ),
        "rmw": rmw_implementation(environ),
    }


def typestore(distro: RosDistro | None = None) -> Any:
    """A new rosbags typestore of `distro` (default: this environment's): the message
    definitions and RIHS01 hashes grade serialises, records and reads bags without definitions
    with. New on each call, as rosbags' get_typestore is: callers register their own types."""
    from rosbags.typesys import Stores, get_typestore

    return get_typestore(Stores[_TYPESTORE[distro or current_distro()]])


def type_hash(msgtype: str, distro: RosDistro | None = None) -> str:
    """RIHS01 hash of `msgtype` in `distro` ('' if the typestore does not know it), for
    channels written without one (bags recorded before grade put the hash on each channel)."""
    store = typestore(distro)
    return str(store.hash_rihs01(msgtype)) if msgtype in store.fielddefs else ""
