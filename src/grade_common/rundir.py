"""The run directory as code: the names every tool writes and reads (docs/conventions.md).

RUN/run.yaml        scenario snapshot, backend, status, the ROS 2
                    distro/rclpy/RMW (`ros`), a replay's `noise_seed`
RUN/summary.json    topic counts and rates, timings
RUN/bag/            rosbag2 (MCAP)
RUN/record.npz      experiment record
RUN/placement.yaml  what the FCL placement check of the people did and
                    whom it rejected
RUN/gt/             instances.yaml, classes.yaml (semantic classes),
                    <robot>/trajectory.txt, <robot>/<camera>/ (TUM RGB-D)
"""

from __future__ import annotations

import enum
from pathlib import Path
from typing import Any

import yaml

from grade_common import kitti
from grade_common.errors import FormatError, GradeError
from grade_common.ros_distro import ros_environment
from grade_common.tum import GROUNDTRUTH_TXT, TRAJECTORY_TXT

RUN_YAML = "run.yaml"
SUMMARY_JSON = "summary.json"
BAG_DIR = "bag"
RECORD_NPZ = "record.npz"
GT_DIR = "gt"
INSTANCES_YAML = "instances.yaml"
CLASSES_YAML = "classes.yaml"  # semantic class id -> name, colour (docs/ground_truth.md)
PLACEMENT_YAML = "placement.yaml"


# Top-level keys of run.yaml
STATUS_KEY = "status"
SCENARIO_KEY = "scenario"
NOISE_SEED_KEY = "noise_seed"  # a replay's new noise seed (grade noise apply picks it up)
REPLAY_KEY = "replay"  # what a replay changed
SIMULATOR_KEY = "simulator"  # how it ran: the step-loop pipeline and the GL renderer
ROS_KEY = "ros"  # the ROS 2 distro, rclpy version and RMW it ran with (grade_common.ros_distro)


class RunStatus(enum.StrEnum):
    """`status` in run.yaml."""

    RUNNING = "running"
    COMPLETE = "complete"
    INTERRUPTED = "interrupted"
    FAILED = "failed"  # stopped by an error (unstable physics); the message is under `error`


class RunLayout:
    """Paths inside one run directory."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)
        self.run_yaml = self.root / RUN_YAML
        self.summary_json = self.root / SUMMARY_JSON
        self.bag = self.root / BAG_DIR
        self.record = self.root / RECORD_NPZ
        self.gt = self.root / GT_DIR
        self.instances = self.gt / INSTANCES_YAML
        self.classes = self.gt / CLASSES_YAML
        self.placement = self.root / PLACEMENT_YAML

    def robot_dir(self, robot: str) -> Path:
        return self.gt / robot

    def trajectory(self, robot: str) -> Path:
        """gt/<robot>/trajectory.txt: base_link in world."""
        return self.gt / robot / TRAJECTORY_TXT

    def camera_dir(self, robot: str, camera: str) -> Path:
        """gt/<robot>/<camera>/: a TUM RGB-D camera folder."""
        return self.gt / robot / camera

    def robots(self) -> list[str]:
        """Robots with a trajectory.txt, sorted."""
        return sorted(p.parent.name for p in self.gt.glob(f"*/{TRAJECTORY_TXT}"))

    def cameras(self, robot: str) -> list[str]:
        """Cameras of a robot with a groundtruth.txt, sorted (lidar folders, which have one
        too, are not cameras)."""
        return sorted(
            p.parent.name
            for p in self.robot_dir(robot).glob(f"*/{GROUNDTRUTH_TXT}")
            if not (p.parent / kitti.POSES_TXT).is_file()
        )

    def lidars(self, robot: str) -> list[str]:
        """Lidars of a robot (folders in the grade_common.kitti layout), sorted."""
        return sorted(p.parent.name for p in self.robot_dir(robot).glob(f"*/{kitti.POSES_TXT}"))


def run_root_of(path: str | Path) -> Path | None:
    """The run directory that `path` is, or sits in as RUN/bag or RUN/gt/<robot>/<camera>
    (the places tools take as input), or None. Decided by the layout, not by searching."""
    p = Path(path).resolve()
    candidates = [p]
    if p.name == BAG_DIR:
        candidates.append(p.parent)
    if len(p.parents) >= 3 and p.parents[1].name == GT_DIR:
        candidates.append(p.parents[2])
    for root in candidates:
        if (root / RUN_YAML).is_file():
            return root
    return None


def read_run_yaml(path: str | Path, *, error: type[GradeError] = FormatError) -> dict[str, Any]:
    """The mapping in a run.yaml file.

    Raises:
        error: unreadable, not valid YAML, or not a mapping (the message names the file).
    """
    file = Path(path)
    try:
        data = yaml.safe_load(file.read_text())
    except OSError as err:
        raise error(f"{str(file)!r} is unreadable: {err}") from err
    except (yaml.YAMLError, UnicodeDecodeError) as err:
        raise error(f"{str(file)!r} is not valid YAML: {err}") from err
    if not isinstance(data, dict):
        raise error(f"{str(file)!r} is not a grade run.yaml (expected a mapping)")
    return data


def write_run_yaml(
    root: Path, status: RunStatus, scenario: dict[str, Any], extra: dict[str, Any]
) -> None:
    """Write run.yaml: status, the scenario snapshot, the extra top-level keys, then the ROS 2
    environment that wrote it (`ros`: distro, rclpy, rmw)."""
    (root / RUN_YAML).write_text(
        yaml.safe_dump(
            {
                STATUS_KEY: status.value,
                SCENARIO_KEY: scenario,
                **extra,
                ROS_KEY: ros_environment(),
            },
            sort_keys=False,
        )
    )


def read_instance_classes(
    path: str | Path, *, error: type[GradeError] = FormatError
) -> dict[int, str]:
    """instance id -> class of a gt/instances.yaml.

    Raises:
        error: the file is missing or malformed (the message names it).
    """
    try:
        data = yaml.safe_load(Path(path).read_text())
        return {int(k): str(v["class"]) for k, v in data.items()}
    except (OSError, yaml.YAMLError, AttributeError, KeyError, TypeError, ValueError) as err:
        raise error(f"{path}: cannot read the instance classes: {err!r}") from err
