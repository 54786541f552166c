"""RunLayout tells cameras from lidars: both folders hold a groundtruth.txt."""

from __future__ import annotations

from pathlib import Path

from grade_common import kitti
from grade_common.rundir import RunLayout
from grade_common.tum import GROUNDTRUTH_TXT


def test_lidar_folders_are_not_listed_as_cameras(tmp_path: Path) -> None:
    layout = RunLayout(tmp_path)
    for name in ("camera", "wide", "lidar"):
        folder = layout.gt / "uav1" / name
        folder.mkdir(parents=True)
        (folder / GROUNDTRUTH_TXT).write_text("# poses\n")
    (layout.gt / "uav1" / "lidar" / kitti.POSES_TXT).write_text("")
    assert layout.cameras("uav1") == ["camera", "wide"]
    assert layout.lidars("uav1") == ["lidar"]
