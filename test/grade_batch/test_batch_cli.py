"""`grade batch` on the command line: errors name the key; a foreign folder is refused."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from grade_cli.main import main


def test_a_bad_sweep_is_reported(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sweep = tmp_path / "s.yaml"
    sweep.write_text(yaml.safe_dump({"name": "x", "groups": []}))
    assert main(["batch", str(sweep), "--out", str(tmp_path / "b")]) == 1
    assert "groups: at least one group is required" in capsys.readouterr().err


def test_a_foreign_folder_is_refused(
    tmp_path: Path, repo_root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sweep = tmp_path / "s.yaml"
    group = {"name": "g", "scenario": str(repo_root / "config/indoor_uav.yaml"), "seeds": [1]}
    sweep.write_text(yaml.safe_dump({"name": "x", "groups": [group]}))
    (tmp_path / "b").mkdir()
    (tmp_path / "b/notes.txt").write_text("mine")
    assert main(["batch", str(sweep), "--out", str(tmp_path / "b")]) == 1
    assert "is not a grade batch folder" in capsys.readouterr().err
    assert sorted(p.name for p in (tmp_path / "b").iterdir()) == ["notes.txt"]


def test_the_shipped_grade_preset_is_valid(repo_root: Path) -> None:
    from grade_batch.jobs import expand
    from grade_batch.spec import load_sweep

    spec = load_sweep(repo_root / "config/batch_grade_small.yaml")
    jobs = expand(spec)
    groups = [g.name for g in spec.sweep.groups]
    assert groups == ["indoor_static", "indoor_people", "indoor_people_flying", "outdoor"]
    assert len(jobs) == 8
    people = {j.group: dict(j.settings).get("people.count") for j in jobs}
    assert people["indoor_static"] == 0
    assert people["indoor_people"] == 8
