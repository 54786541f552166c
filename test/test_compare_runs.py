"""scripts/compare_runs.py, the behaviour check of refactors: identical runs pass, any change in a
bag payload, a gt/ file or a record array is reported."""

from __future__ import annotations

import shutil
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest
from rosbags.rosbag2 import Writer

from grade_common import ros_distro
from scripts_kit import load_script


@pytest.fixture(scope="module")
def compare() -> ModuleType:
    return load_script("compare_runs")


def _make_run(root: Path, texts: list[str]) -> Path:
    store = ros_distro.typestore()
    string = store.types["std_msgs/msg/String"]
    with Writer(root / "bag", version=9) as writer:
        conn = writer.add_connection("/chatter", "std_msgs/msg/String", typestore=store)
        for i, text in enumerate(texts):
            writer.write(conn, i * 1000, store.serialize_cdr(string(data=text), conn.msgtype))
    (root / "gt" / "r1").mkdir(parents=True)
    (root / "gt" / "r1" / "trajectory.txt").write_text("0.000000 0 0 0 0 0 0 1\n")
    np.savez(root / "record.npz", q=np.arange(6.0))
    return root


def test_identical_runs(compare: ModuleType, tmp_path: Path) -> None:
    a = _make_run(tmp_path / "a", ["x", "y"])
    b = _make_run(tmp_path / "b", ["x", "y"])
    assert compare.compare_runs(a, b) == []
    assert compare.main([str(a), str(b)]) == 0


def test_each_kind_of_difference_is_reported(compare: ModuleType, tmp_path: Path) -> None:
    a = _make_run(tmp_path / "a", ["x", "y"])
    b = _make_run(tmp_path / "b", ["x", "z"])
    (b / "gt" / "r1" / "trajectory.txt").write_text("0.000000 1 0 0 0 0 0 1\n")
    np.savez(b / "record.npz", q=np.arange(6.0) + 1e-12)
    diffs = compare.compare_runs(a, b)
    assert any("message 2 differs in payload" in d for d in diffs)
    assert "gt: r1/trajectory.txt differs" in diffs
    assert "record: array q differs" in diffs
    assert compare.main([str(a), str(b)]) == 1


def test_missing_messages_and_files(compare: ModuleType, tmp_path: Path) -> None:
    a = _make_run(tmp_path / "a", ["x", "y"])
    b = _make_run(tmp_path / "b", ["x"])
    shutil.copy(a / "gt" / "r1" / "trajectory.txt", a / "gt" / "r1" / "extra.txt")
    diffs = compare.compare_runs(a, b)
    assert any("only the first bag has message 2" in d for d in diffs)
    assert "gt: only in the first run: r1/extra.txt" in diffs


def test_not_a_run_directory(compare: ModuleType, tmp_path: Path) -> None:
    a = _make_run(tmp_path / "a", ["x"])
    assert compare.main([str(a), str(tmp_path / "nope")]) == 2


def test_pngs_compare_by_decoded_pixels(compare: ModuleType, tmp_path: Path) -> None:
    """Another encoder's bytes for the same pixels pass; one changed pixel is reported."""
    import cv2

    image = (np.arange(48 * 64, dtype=np.uint16) * 7).reshape(48, 64)
    a = _make_run(tmp_path / "a", ["x"])
    b = _make_run(tmp_path / "b", ["x"])
    assert cv2.imwrite(str(a / "gt" / "r1" / "d.png"), image, [cv2.IMWRITE_PNG_COMPRESSION, 1])
    assert cv2.imwrite(str(b / "gt" / "r1" / "d.png"), image, [cv2.IMWRITE_PNG_COMPRESSION, 9])
    assert (a / "gt" / "r1" / "d.png").read_bytes() != (b / "gt" / "r1" / "d.png").read_bytes()
    assert compare.compare_runs(a, b) == []
    image[3, 5] += 1
    assert cv2.imwrite(str(b / "gt" / "r1" / "d.png"), image)
    assert compare.compare_runs(a, b) == ["gt: r1/d.png differs"]
