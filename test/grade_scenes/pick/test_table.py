"""`grade scenes table` end to end on a one-scene selection: every pipeline x ordering into its
own run folder, the tables, a resumed table that simulates nothing again, and the same results
for the same seed."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from grade_cli.main import main


def _selection(scene: Path, folder: Path) -> Path:
    (folder / "scenes").mkdir(parents=True)
    shutil.copytree(scene.parent.parent / "meshes", folder / "meshes")
    shutil.copy2(scene, folder / "scenes" / "scene_000.yaml")
    (folder / "selection.yaml").write_text(yaml.safe_dump({"scenes": ["scene_000"]}))
    return folder


@pytest.mark.slow
def test_table_runs_every_combination_resumes_and_repeats(
    box_scene: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    selection = _selection(box_scene, tmp_path / "sel")
    out = tmp_path / "table"
    args = ["scenes", "table", str(selection), "--out", str(out), "--quiet"]
    # near-to-far runs in the other tests; both orderings here would double the time
    combos = ["--pipelines", "model_based,model_free", "--orderings", "fixed"]
    assert main([*args, *combos]) == 0
    names = ["model_based-fixed", "model_free-fixed"]
    tables = (out / "tables.md").read_text()
    for name in names:
        assert f"| {name} | 1 | 1 | 1 |" in tables  # the box is placed by every combination
        assert (out / name / "scene_000" / "attempts.yaml").is_file()
    assert "| box | 1 | 1 | 0 | 0 | 0 |" in tables  # category table: one success
    assert "mean ADD-S (mm)" in tables  # model-based estimates are scored
    assert tables == capsys.readouterr().out.split("-> ")[0].rstrip("\n") + "\n"
    # resumed: nothing simulated again
    done = out / names[0] / "scene_000" / "attempts.yaml"
    stamp = done.stat().st_mtime_ns
    assert main([*args, *combos]) == 0
    assert done.stat().st_mtime_ns == stamp
    # the same seed into another folder: the same attempts, ADD-S included
    again = tmp_path / "again"
    assert (
        main(
            [
                "scenes",
                "table",
                str(selection),
                "--out",
                str(again),
                "--quiet",
                "--pipelines",
                "model_based",
                "--orderings",
                "fixed",
            ]
        )
        == 0
    )
    first = (out / "model_based-fixed" / "results.yaml").read_bytes()
    assert (again / "model_based-fixed" / "results.yaml").read_bytes() == first
    assert b"add_s_m" in first


def test_table_refuses_an_unknown_ordering(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["scenes", "table", str(tmp_path), "--out", str(tmp_path / "t"), "--orderings", "random"]
    assert main(args) == 1
    assert "--orderings 'random' does not exist; allowed: near_to_far, fixed" in (
        capsys.readouterr().err
    )
