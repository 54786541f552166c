"""Fuzz: trajectories and maps with mutated bytes, huge or non-finite values are evaluated or
refused with a GradeError, in bounded time (an overflowing value once made the alignment spin
in LAPACK for minutes), and nothing is written."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from conftest import make_trajectory
from fuzzkit import accepted_or_refused, mutated
from grade_eval.cli import main as eval_main
from grade_eval.core.pointmap import PointMap
from grade_eval.errors import AlignmentError
from grade_eval.io.pointcloud import read_map, write_pcd, write_ply
from grade_eval.io.tum import format_tum


@pytest.fixture(scope="module")
def tum_text() -> bytes:
    return format_tum(make_trajectory(num_poses=12)).encode()


@pytest.fixture(scope="module")
def map_files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    folder = tmp_path_factory.mktemp("maps")
    points = PointMap(np.random.default_rng(0).normal(size=(20, 3)), None, "m")
    return {
        ".ply": write_ply(folder / "m.ply", points).read_bytes(),
        ".pcd": write_pcd(folder / "m.pcd", points).read_bytes(),
    }


@given(data=st.data())
def test_eval_traj_with_a_mutated_estimate_runs_or_is_refused(
    tmp_path_factory: pytest.TempPathFactory, tum_text: bytes, data: st.DataObject
) -> None:
    root = tmp_path_factory.mktemp("traj")
    (root / "gt.txt").write_bytes(tum_text)
    (root / "est.txt").write_bytes(data.draw(mutated(tum_text)))
    argv = ["traj", "--ref", str(root / "gt.txt"), "--est", str(root / "est.txt")]
    argv += ["--align", data.draw(st.sampled_from(["se3", "sim3", "origin", "none"]))]
    accepted_or_refused(lambda: eval_main(argv), root, "")


@given(data=st.data(), suffix=st.sampled_from([".ply", ".pcd"]))
def test_a_mutated_map_is_read_or_refused(
    tmp_path_factory: pytest.TempPathFactory,
    map_files: dict[str, bytes],
    data: st.DataObject,
    suffix: str,
) -> None:
    root = tmp_path_factory.mktemp("map")
    file = root / f"fuzz{suffix}"
    file.write_bytes(data.draw(mutated(map_files[suffix])))
    accepted_or_refused(lambda: read_map(file), root, str(file))


@pytest.mark.parametrize("content", [b"\x93NUMPY garbage", b"", b"\x00" * 64])
def test_a_broken_npy_map_is_refused(tmp_path: Path, content: bytes) -> None:
    file = tmp_path / "m.npy"
    file.write_bytes(content)
    accepted_or_refused(lambda: read_map(file), tmp_path, str(file))


def test_an_overflowing_trajectory_is_refused_quickly() -> None:
    # In a child process with a timeout: before the fix this never returned.
    code = (
        "import numpy as np\n"
        "from grade_eval.core.align import umeyama\n"
        "x = np.random.default_rng(0).normal(size=(50, 3)); x[0, 0] = 1e200; y = x.copy()\n"
        "try:\n    umeyama(x, y, with_scale=True)\n"
        "except Exception as err:\n    print(type(err).__name__, err)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert out.stdout.startswith(f"{AlignmentError.__name__} positions too large to align")
