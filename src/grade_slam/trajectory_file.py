"""Writing an estimated trajectory as a TUM pose file (through grade_common's formats)."""

from __future__ import annotations

from pathlib import Path

from grade_common.atomic import StagedOutput
from grade_common.rotations import matrix_to_quat
from grade_common.tum import pose_header, tum_pose_line
from grade_slam.errors import SlamOutputExistsError
from grade_slam.interfaces import Trajectory


def tum_text(trajectory: Trajectory, what: str) -> str:
    """The whole file: header naming what the poses are, one line per pose."""
    lines = [pose_header(what)]
    for stamp_ns, pose in zip(trajectory.stamps_ns, trajectory.poses, strict=True):
        lines.append(tum_pose_line(stamp_ns, pose[:3, 3], matrix_to_quat(pose[:3, :3])))
    return "".join(lines)


def write_trajectory(path: str | Path, trajectory: Trajectory, what: str) -> Path:
    """Write a new TUM file (staged, moved into place when complete).

    Raises:
        SlamOutputExistsError: the file exists already.
    """
    with StagedOutput(path, exists_error=SlamOutputExistsError) as staged:
        staged.write_text(tum_text(trajectory, what))
    return Path(path)
