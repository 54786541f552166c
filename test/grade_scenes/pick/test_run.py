"""`grade scenes run` end to end on a one-scene selection: a folder per scene, the tables,
a resumed run that simulates nothing again, and a refused run with other settings."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from grade_cli.main import main
from grade_eval.pick_place import load_attempts


@pytest.mark.slow
def test_run_writes_a_scene_folder_resumes_and_refuses_other_settings(
    box_scene: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    selection = tmp_path / "sel"
    (selection / "scenes").mkdir(parents=True)
    shutil.copytree(box_scene.parent.parent / "meshes", selection / "meshes")
    shutil.copy2(box_scene, selection / "scenes" / "scene_000.yaml")
    (selection / "selection.yaml").write_text(yaml.safe_dump({"scenes": ["scene_000"]}))
    out = tmp_path / "run"
    args = ["scenes", "run", str(selection), "--out", str(out), "--quiet"]
    assert main(args) == 0
    folder = out / "scene_000"
    for name in ("attempts.yaml", "ground_truth.yaml", "head_rgb.png", "head_depth_mm.png"):
        assert (folder / name).is_file(), name
    assert (folder / "sheet.png").stat().st_size > 10000
    assert (folder / "bag" / "metadata.yaml").is_file()
    (attempt,) = load_attempts(out / "results.yaml")
    assert attempt.scene == "scene_000"
    assert attempt.placed
    tables = (out / "results.md").read_text()
    assert "| box | 1 | 1 | 1 | 1 | 100.0 % |" in tables
    assert "| scene_000 | 1 | 1 | 1 | 100.0 % | 100.0 % |" in tables
    assert "grasp success (lifted and held) 1 (100.0 %)" in capsys.readouterr().out
    # Resumed: the finished scene is read back, not simulated again.
    stamp = (folder / "attempts.yaml").stat().st_mtime_ns
    assert main(args) == 0
    assert (folder / "attempts.yaml").stat().st_mtime_ns == stamp
    # Other settings into the same folder are refused, naming the way out.
    assert main([*args, "--seed", "1"]) == 1
    assert "resume with the same ones or choose another --out" in capsys.readouterr().err
