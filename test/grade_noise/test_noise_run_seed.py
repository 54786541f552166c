"""A replay's new noise seed (run.yaml `noise_seed`) is what `grade noise apply` uses by default."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from grade_noise.cli import run_noise_seed
from grade_noise.errors import NoiseConfigError


def _run(tmp_path: Path, run_yaml: dict[str, object]) -> Path:
    run = tmp_path / "replay"
    (run / "bag").mkdir(parents=True)
    (run / "gt" / "uav1" / "camera").mkdir(parents=True)
    (run / "run.yaml").write_text(yaml.safe_dump(run_yaml))
    return run


def test_seed_found_from_bag_and_camera_folders(tmp_path: Path) -> None:
    run = _run(tmp_path, {"status": "complete", "noise_seed": 7})
    assert run_noise_seed(run / "bag") == (7, run / "run.yaml")
    assert run_noise_seed(run / "gt" / "uav1" / "camera") == (7, run / "run.yaml")


def test_no_seed_outside_replays(tmp_path: Path) -> None:
    run = _run(tmp_path, {"status": "complete"})
    assert run_noise_seed(run / "bag") is None
    assert run_noise_seed(tmp_path / "elsewhere") is None


def test_bad_seed_is_an_error_naming_the_file(tmp_path: Path) -> None:
    run = _run(tmp_path, {"noise_seed": "seven"})
    with pytest.raises(NoiseConfigError, match=r"run\.yaml: noise_seed 'seven'"):
        run_noise_seed(run / "bag")
