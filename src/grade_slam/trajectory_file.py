"""Writing an estimated trajectory as a TUM pose file (through grade_common's formats)."""

from __future__ import annotations

from pathlib import Path

from grade_common.atomic import StagedOutput
from grade_common.rotations import matrix_to_quat
from grade_common.tum import pose_header, tum_pose_line
from grade_slam.errors import SlamOutputExistsError
from grade_slam.interfaces import Trajectory


def tum_text(trajectory: Trajectory, what: str) -> str:
    """The whole file: header naming what the poses are (and the trajectory's note), one line
    per pose."""
    lines = [pose_header(f"{what}; {trajectory.note}" if trajectory.note else what)]
    lines.extend(pose_lines(trajectory))
    return "".join(lines)


def pose_lines(trajectory: Trajectory) -> list[str]:
    """One TUM line per pose."""
    return [
        tum_pose_line(stamp_ns, pose[:3, 3], matrix_to_quat(pose[:3, :3]))
        for stamp_ns, pose in zip(trajectory.stamps_ns, trajectory.poses, strict=True)
    ]


def online_path(trajectory_output: str | Path) -> Path:
    """The file beside a node's trajectory output that gets the poses as they are given:
    `EST.txt` -> `EST.online.txt`."""
    path = Path(trajectory_output)
    return path.with_name(f"{path.stem}.online{path.suffix or '.txt'}")


def write_trajectory(path: str | Path, trajectory: Trajectory, what: str) -> Path:
    """Write a new TUM file (staged, moved into place when complete).

    Raises:
        SlamOutputExistsError: the file exists already.
    """
    with StagedOutput(path, exists_error=SlamOutputExistsError) as staged:
        staged.write_text(tum_text(trajectory, what))
    return Path(path)
