"""Every shipped launch file passes the frontend check that both `ros2 launch` and `grade launch`
accept (runs over whatever launch/*.launch.yaml exist)."""

from __future__ import annotations

from pathlib import Path

import pytest

from grade_launch.validate import check_launch_file

LAUNCH_DIR = Path(__file__).resolve().parents[2] / "launch"
SHIPPED = sorted(LAUNCH_DIR.glob("*.launch.yaml"))


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.name)
def test_shipped_launch_file_passes_the_frontend_check(path: Path) -> None:
    result = check_launch_file(path)
    assert result.nodes + result.includes > 0, f"{path} starts nothing"
