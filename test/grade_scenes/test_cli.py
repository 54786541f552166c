"""`grade scenes generate` and `select` end to end on a small candidate set."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from grade_cli.main import main
from grade_scenes.reach.reachability import ReachabilityMap, save_reachability
from grade_scenes.scenefile import read_candidates


@pytest.mark.slow
def test_generate_then_select(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], panda_reach: ReachabilityMap
) -> None:
    save_reachability(panda_reach, tmp_path / "reach.npz")
    cand = tmp_path / "cand"
    args = ["scenes", "generate", "--out", str(cand), "--count", "12", "--seed", "3"]
    assert main([*args, "--reach", str(tmp_path / "reach.npz")]) == 0
    names, scenes = read_candidates(cand)
    assert len(names) == 16
    assert len(scenes) == 12
    settle = yaml.safe_load((cand / "settle.yaml").read_text())
    assert len(settle["max_displacement_m"]) == 12
    assert len(settle["max_tilt_deg"]) == 12
    rejected = yaml.safe_load((cand / "pose_check.yaml").read_text())["rejected"]
    assert [r.split(":")[0] for r in rejected] == ["bread pose 4", "lemon pose 1"]
    selected = tmp_path / "sel"
    select = ["scenes", "select", str(cand), "--out", str(selected), "--count", "4"]
    bounds = ["--min-per-object", "0", "--max-per-object", "2", "--no-references"]
    code = main([*select, *bounds])
    assert code == 0
    summary = yaml.safe_load((selected / "selection.yaml").read_text())
    assert len(summary["scenes"]) == 4
    assert all(0 <= c <= 2 for c in summary["object_counts"].values())
    assert summary["coverage_pairs"] >= summary["random_baseline"]["coverage_pairs"]
    assert summary["optimality_gap"] == 0.0
    assert summary["diversity_bits"] >= summary["random_baseline"]["diversity_bits"]
    assert sorted(p.name for p in (selected / "scenes").iterdir()) == sorted(
        f"{s}.yaml" for s in summary["scenes"]
    )
    assert (selected / "scenes.png").stat().st_size > 10000
    # A second run never overwrites.
    assert main([*args, "--reach", str(tmp_path / "reach.npz")]) == 1
    assert "exists" in capsys.readouterr().err
