"""TUM trajectory files as PoseTrajectory objects (the format itself: grade_common.tum)."""

from __future__ import annotations

from pathlib import Path

from grade_common import atomic, tum
from grade_eval.core.trajectory import PoseTrajectory
from grade_eval.errors import FormatError, OutputExistsError, TrajectoryError


def read_tum(path: str | Path, name: str | None = None) -> PoseTrajectory:
    """Read a TUM file (spaces or commas between the 8 numbers).

    Raises:
        FormatError: unreadable file, a malformed line (file and line number in the message),
            or non-increasing stamps.
    """
    file = Path(path)
    table = tum.read_poses(file, error=FormatError)
    try:
        return PoseTrajectory(
            table.stamps_s, table.positions_xyz, table.quats_wxyz, name or file.stem
        )
    except TrajectoryError as err:
        raise FormatError(f"{file}: {err}") from err


def format_tum(trajectory: PoseTrajectory) -> str:
    """TUM text of a trajectory (stamps with nine decimals)."""
    lines = [tum.POSE_COLUMNS + "\n"]
    lines += [
        tum.pose_line(f"{t:.9f}", p, q)
        for t, p, q in zip(
            trajectory.stamps_s,
            trajectory.positions_xyz,
            trajectory.orientations_quat_wxyz,
            strict=True,
        )
    ]
    return "".join(lines)


def write_text_atomic(path: str | Path, text: str) -> Path:
    """Write text under a temporary name and rename it into place; refuse an existing path."""
    return atomic.write_bytes(path, text.encode(), exists_error=OutputExistsError)


def write_tum(path: str | Path, trajectory: PoseTrajectory) -> Path:
    """Write a TUM file atomically; an existing file is never overwritten."""
    return write_text_atomic(path, format_tum(trajectory))
