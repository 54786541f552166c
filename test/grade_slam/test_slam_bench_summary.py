"""`grade bench slam --repeats`: the median and the range over repeated runs of each input."""

from __future__ import annotations

import math

import pytest

from grade_eval.report import Row
from grade_slam.bench import build_parser, main
from grade_slam.bench_summary import spread


def _row(backend: str, seed: int, ate: float, rate: float = 1.0) -> Row:
    return {
        "backend": backend,
        "world": "static",
        "seed": float(seed),
        "ate_rmse_m": ate,
        "rpe_trans_rmse_m": ate / 10,
        "tracking_rate": rate,
    }


def test_spread_gives_runs_median_and_range_per_group_in_first_seen_order() -> None:
    rows = [
        _row("orb", 42, 0.04),
        _row("orb", 42, 0.02),
        _row("orb", 42, 0.03),
        _row("orb", 43, 0.10, rate=0.5),
        _row("open3d", 42, 0.07),
    ]
    per_seed = spread(rows, ("backend", "world", "seed"))
    assert [(r["backend"], r["seed"]) for r in per_seed] == [
        ("orb", 42.0),
        ("orb", 43.0),
        ("open3d", 42.0),
    ]
    first = per_seed[0]
    assert first["runs"] == 3.0
    assert first["ate_rmse_m_median"] == pytest.approx(0.03)
    assert (first["ate_rmse_m_min"], first["ate_rmse_m_max"]) == (0.02, 0.04)
    assert first["rpe_trans_rmse_m_median"] == pytest.approx(0.003)
    per_backend = spread(rows, ("backend", "world"))
    orb = per_backend[0]
    assert orb["runs"] == 4.0
    assert orb["ate_rmse_m_median"] == pytest.approx(0.035)
    assert (orb["ate_rmse_m_min"], orb["ate_rmse_m_max"]) == (0.02, 0.10)
    assert (orb["tracking_rate_min"], orb["tracking_rate_max"]) == (0.5, 1.0)


def test_spread_leaves_unscored_runs_out_and_counts_them() -> None:
    rows = [_row("orb", 42, math.nan), _row("orb", 42, 0.05)]
    (summary,) = spread(rows, ("backend",))
    assert summary["runs"] == 2.0
    assert summary["unscored"] == 1.0
    assert summary["ate_rmse_m_median"] == 0.05
    (none,) = spread([_row("orb", 42, math.nan)], ("backend",))
    assert math.isnan(float(none["ate_rmse_m_median"]))


def test_repeats_option_and_its_bad_values() -> None:
    args, _ = build_parser().parse_known_args(["--repeats", "3", "--backends", "orb_slam3_rgbd"])
    assert args.repeats == 3
    assert args.backends == ["orb_slam3_rgbd"]
    assert main(["--repeats", "0"]) == 2
    assert main(["--backends", "kiss_icp"]) == 2  # LiDAR backends run only --live
