"""KISS-ICP (third party) on our simulated scans, scored with `grade eval traj`."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from grade_cli.main import main as grade
from grade_eval.io.tum import read_tum
from grade_eval.kiss_icp import kiss_icp_trajectory
from grade_sim.config.scenario import scenario_from_mapping
from grade_sim.sim.run import run_scenario

pytest.importorskip("kiss_icp")
pytest.importorskip("embreex")


@pytest.mark.slow
def test_kiss_icp_tracks_the_simulated_lidar(tmp_path: Path) -> None:
    scenario = scenario_from_mapping(
        {
            "seed": 3,
            "duration_s": 2.0,
            "bootstrap_s": 0.1,
            "environment": {"procedural": {"rooms_x": 2, "rooms_y": 1}},
            "people": {"count": 2},
            "flying_objects": {"count": 0},
            "robots": [
                {
                    "name": "uav1",
                    "cameras": [],
                    "motion": {"mode": "teleport", "speed_mps": 1.0},
                    "lidars": [{"name": "lidar", "preset": "vlp16", "actor_slices": 36}],
                }
            ],
            "record": {"bag": False, "experiment_record": False},
        }
    )
    run = run_scenario(scenario, tmp_path / "run").path
    folder = run / "gt" / "uav1" / "lidar"
    est = kiss_icp_trajectory(folder, max_range_m=20.0)  # indoors: 0.2 m voxels
    gt = read_tum(folder / "groundtruth.txt")
    assert len(est.stamps_s) == len(gt.stamps_s) >= 20
    travelled = np.linalg.norm(np.diff(gt.positions_xyz, axis=0), axis=1).sum()
    assert travelled > 1.0
    drift = np.linalg.norm(est.positions_xyz - gt.positions_xyz, axis=1)
    assert drift.max() < 0.1 * travelled, drift
    out = tmp_path / "kiss.txt"
    assert grade(["eval", "kiss-icp", str(folder), "--out", str(out), "--max-range-m", "20"]) == 0
    code = grade(
        ["eval", "traj", "--ref", str(folder / "groundtruth.txt"), "--est", str(out),
         "--align", "origin", "--out", str(tmp_path / "row.json")]
    )  # fmt: skip
    assert code == 0
    row = json.loads((tmp_path / "row.json").read_text())
    row = row[0] if isinstance(row, list) else row
    ate = next(v for k, v in row.items() if "ate" in k.lower() and "rmse" in k.lower())
    assert 0.0 < float(ate) < 0.1 * travelled
