"""TUM trajectory files: one pose per line, "t tx ty tz qx qy qz qw", '#' comments."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from grade_eval.core.trajectory import PoseTrajectory
from grade_eval.errors import FormatError, OutputExistsError, TrajectoryError


def read_tum(path: str | Path, name: str | None = None) -> PoseTrajectory:
    """Read a TUM file (spaces or commas between the 8 numbers).

    Raises:
        FormatError: unreadable file, a malformed line (file and line number in the message),
            or non-increasing stamps.
    """
    file = Path(path)
    try:
        text = file.read_text()
    except OSError as err:
        raise FormatError(f"{file}: cannot read trajectory: {err}") from err
    rows: list[list[float]] = []
    line_numbers: list[int] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        fields = line.replace(",", " ").split()
        if len(fields) != 8:
            raise FormatError(f"{file}:{number}: expected 8 numbers 't tx ty tz qx qy qz qw', "
                              f"got {len(fields)} fields: {line[:80]!r}")
        try:
            values = [float(f) for f in fields]
        except ValueError as err:
            raise FormatError(f"{file}:{number}: not a number in {line[:80]!r}") from err
        if not all(np.isfinite(values)):
            raise FormatError(f"{file}:{number}: non-finite value in {line[:80]!r}")
        rows.append(values)
        line_numbers.append(number)
    if not rows:
        raise FormatError(f"{file}: no poses (only comments or blank lines)")
    data = np.asarray(rows, dtype=np.float64).reshape(-1, 8)
    steps = np.diff(data[:, 0])
    if (steps <= 0).any():
        k = int(np.argmax(steps <= 0)) + 1
        raise FormatError(f"{file}:{line_numbers[k]}: stamp {data[k, 0]:.9f} is not after the "
                          f"previous stamp {data[k - 1, 0]:.9f} (line {line_numbers[k - 1]}); "
                          "stamps must be strictly increasing")
    try:
        return PoseTrajectory(data[:, 0], data[:, 1:4], data[:, [7, 4, 5, 6]],
                              name or file.stem)
    except TrajectoryError as err:
        raise FormatError(f"{file}: {err}") from err


def format_tum(trajectory: PoseTrajectory) -> str:
    """TUM text of a trajectory (stamps with nine decimals)."""
    q = trajectory.orientations_quat_wxyz
    data = np.column_stack([trajectory.stamps_s, trajectory.positions_xyz, q[:, 1:], q[:, :1]])
    lines = ["# timestamp tx ty tz qx qy qz qw"]
    lines += [" ".join(f"{v:.9f}" for v in row) for row in data]
    return "\n".join(lines) + "\n"


def write_text_atomic(path: str | Path, text: str) -> Path:
    """Write text under a temporary name and rename it into place; refuse an existing path."""
    target = Path(path)
    if target.exists():
        raise OutputExistsError(f"{target}: exists already; choose a new output path")
    tmp = target.with_name(f".{target.name}.tmp{os.getpid()}")
    tmp.write_text(text)
    os.replace(tmp, target)
    return target


def write_tum(path: str | Path, trajectory: PoseTrajectory) -> Path:
    """Write a TUM file atomically; an existing file is never overwritten."""
    return write_text_atomic(path, format_tum(trajectory))
