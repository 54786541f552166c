"""TUM reading/writing: roundtrip, malformed lines with file and line, no overwrite."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from grade_eval.core.trajectory import PoseTrajectory
from grade_eval.errors import FormatError, OutputExistsError
from grade_eval.io.tum import read_tum, write_tum


def test_roundtrip(tmp_path: Path, gt_traj: PoseTrajectory) -> None:
    path = write_tum(tmp_path / "t.txt", gt_traj)
    back = read_tum(path)
    np.testing.assert_allclose(back.stamps_s, gt_traj.stamps_s, atol=1e-9)
    np.testing.assert_allclose(back.positions_xyz, gt_traj.positions_xyz, atol=1e-9)
    np.testing.assert_allclose(
        back.orientations_quat_wxyz, gt_traj.orientations_quat_wxyz, atol=1e-8
    )


def test_tum_order_is_xyzw(tmp_path: Path) -> None:
    path = tmp_path / "t.txt"
    path.write_text("# c\n1.0 1 2 3 0 0 0.7071067811865476 0.7071067811865476\n")
    traj = read_tum(path)
    np.testing.assert_allclose(traj.orientations_quat_wxyz[0], [0.70710678, 0, 0, 0.70710678])
    np.testing.assert_allclose(traj.positions_xyz[0], [1, 2, 3])


def test_refuses_overwrite(tmp_path: Path, gt_traj: PoseTrajectory) -> None:
    write_tum(tmp_path / "t.txt", gt_traj)
    with pytest.raises(OutputExistsError, match="exists already"):
        write_tum(tmp_path / "t.txt", gt_traj)


@pytest.mark.parametrize(
    ("body", "match"),
    [
        ("0 0 0 0 0 0 0 1\n1 0 0 0 0 0 1\n", r"t\.txt:2: expected 8 numbers.*got 7 fields"),
        ("# header\n\n0 0 0 0 0 0 0 1\n1 0 0 x 0 0 0 1\n", r"t\.txt:4: not a number"),
        ("0 0 0 0 0 0 0 1\n1 0 nan 0 0 0 0 1\n", r"t\.txt:2: non-finite value"),
        (
            "0 0 0 0 0 0 0 1\n2 0 0 0 0 0 0 1\n1 0 0 0 0 0 0 1\n",
            r"t\.txt:3: stamp 1\.0+ is not after the previous stamp 2\.0+ \(line 2\)",
        ),
        ("0 0 0 0 0 0 0 3\n", r"t\.txt: .*quaternion at pose 0 has norm 3"),
    ],
)
def test_malformed_files_name_file_and_line(tmp_path: Path, body: str, match: str) -> None:
    path = tmp_path / "t.txt"
    path.write_text(body)
    with pytest.raises(FormatError, match=match):
        read_tum(path)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(FormatError, match=r"nope\.txt: cannot read trajectory"):
        read_tum(tmp_path / "nope.txt")


def test_empty_file_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "e.txt"
    path.write_text("# only a header\n\n")
    with pytest.raises(FormatError, match=r"e\.txt: no poses"):
        read_tum(path)
