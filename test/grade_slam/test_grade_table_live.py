"""`grade bench slam --grade-table OUT --live-check` without running it live: the scenario a live
run flies, and how it is set beside the table's offline runs."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
import yaml

from grade_common.share import shipped_file
from grade_eval.report import Row
from grade_slam.errors import SlamError
from grade_slam.grade_sequences import PRESET_FILE, GradePreset, load_preset, sequence_scenario
from grade_slam.grade_table_live import comparison_row, live_scenario, offline_runs


def _preset_and_base() -> tuple[GradePreset, dict[str, Any]]:
    preset = load_preset(shipped_file(PRESET_FILE), {"duration_s": 2.0})
    return preset, yaml.safe_load(Path(preset.scenario).read_text())


def test_a_live_camera_run_flies_the_tables_sequence_without_its_lidar_and_bag() -> None:
    preset, base = _preset_and_base()
    table = sequence_scenario(preset, base, "rooms", "people_L", 1)
    live = live_scenario(preset, base, "rooms", "people_L", 1, "orb_slam3_rgbd")
    assert live["robots"][0]["lidars"] == []
    assert live["record"]["bag"] is False
    # everything a camera frame depends on is the table's
    for key in ("seed", "duration_s", "people", "flying_objects", "environment"):
        assert live[key] == table[key]
    assert live["robots"][0]["cameras"] == table["robots"][0]["cameras"]
    assert live["robots"][0]["motion"] == table["robots"][0]["motion"]
    lidar = live_scenario(preset, base, "rooms", "people_L", 1, "kiss_icp")
    assert lidar["robots"][0]["lidars"] == table["robots"][0]["lidars"]


def _result(folder: Path, name: str, ate: float, rate: float) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.json").write_text(json.dumps({"ate_rmse_m": ate, "tracking_rate": rate}))


def test_the_live_run_is_set_beside_the_offline_median_and_range(tmp_path: Path) -> None:
    results = tmp_path / "results"
    _result(results, "rooms_static_s1__orb_slam3_rgbd__r0", 0.03, 1.0)
    _result(results, "rooms_static_s1__orb_slam3_rgbd__r1", math.nan, 0.0)  # never tracked
    _result(results, "rooms_static_s1__orb_slam3_rgbd__r2", 0.05, 0.9)
    _result(results, "rooms_static_s1__orb_slam3_rgbd_masked__r0", 9.0, 1.0)  # another backend
    offline = offline_runs(tmp_path, "rooms_static_s1", "orb_slam3_rgbd")
    assert len(offline) == 3
    live: Row = {"ate_rmse_m": 0.04, "tracking_rate": 0.95, "frames_received": 91.0}
    row = comparison_row("static", live | {"frames_published": 91.0}, offline)
    assert row["offline_ate_rmse_m_median"] == pytest.approx(0.04)
    assert (row["offline_ate_rmse_m_min"], row["offline_ate_rmse_m_max"]) == (0.03, 0.05)
    assert row["offline_runs"] == 3.0
    assert row["offline_tracking_rate_min"] == 0.0
    assert row["live_frames"] == "91/91"


def test_a_check_without_the_tables_runs_says_to_run_the_table(tmp_path: Path) -> None:
    with pytest.raises(SlamError, match=r"no offline run of orb_slam3_rgbd on rooms_static_s1"):
        offline_runs(tmp_path, "rooms_static_s1", "orb_slam3_rgbd")


def test_live_check_backends_are_checked_against_the_live_ones_and_the_table() -> None:
    from grade_slam.grade_table_live import check_live_backends, uses_orb_slam3

    check_live_backends(("orb_slam3_rgbd", "kiss_icp"), ("orb_slam3_rgbd", "kiss_icp"))
    with pytest.raises(SlamError, match=r"--live-check \['orb_slam3_rgbd_learned'\] unknown"):
        check_live_backends(("orb_slam3_rgbd_learned",), ("orb_slam3_rgbd_learned",))
    with pytest.raises(SlamError, match=r"not among the table's --backends \['kiss_icp'\]"):
        check_live_backends(("orb_slam3_rgbd",), ("kiss_icp",))
    assert uses_orb_slam3(("kiss_icp", "orb_slam3_rgbd_masked"))
    assert not uses_orb_slam3(("kiss_icp", "genz_icp"))
