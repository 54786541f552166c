"""Shipped files are found from the share folder or the source tree."""

from __future__ import annotations

from pathlib import Path

from grade_common.share import shipped_file


def test_shipped_config_is_found(repo_root: Path) -> None:
    path = shipped_file("config/indoor_uav.yaml")
    assert path.is_file()
    assert path.read_bytes() == (repo_root / "config/indoor_uav.yaml").read_bytes()
