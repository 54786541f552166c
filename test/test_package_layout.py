"""The package builds with colcon into a standard ROS 2 install layout."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from process_support import colcon_build_grade


@pytest.mark.slow
def test_colcon_build_installs_standard_layout(repo_root: Path, tmp_path: Path) -> None:
    if shutil.which("colcon") is None:
        pytest.skip("colcon is not installed")
    install = tmp_path / "install"
    result = colcon_build_grade(repo_root, tmp_path, os.environ.copy())
    assert result.returncode == 0, result.stdout + result.stderr
    prefix = install / "grade"
    assert (prefix / "share/ament_index/resource_index/packages/grade").is_file()
    assert (prefix / "share/grade/package.xml").is_file()
    assert (prefix / "bin/grade").is_file()
    assert (prefix / "lib/grade/grade").is_file()
    site = next((prefix / "lib").glob("python3*/site-packages"))
    for package in (
        "grade_common",
        "grade_launch",
        "grade_people",
        "grade_sim",
        "grade_control",
        "grade_noise",
        "grade_replay",
        "grade_render",
        "grade_eval",
        "grade_scenes",
        "grade_batch",
        "grade_slam",
        "grade_cli",
    ):
        assert (site / package / "__init__.py").is_file(), package
        assert (site / package / "py.typed").is_file(), package
    shipped_launch = sorted(p.name for p in (repo_root / "launch").glob("*.launch.yaml"))
    installed_launch = sorted(p.name for p in (prefix / "share/grade/launch").glob("*.launch.yaml"))
    assert installed_launch == shipped_launch
    shipped_config = sorted(p.name for p in (repo_root / "config").glob("*.yaml"))
    assert sorted(p.name for p in (prefix / "share/grade/config").glob("*.yaml")) == shipped_config
