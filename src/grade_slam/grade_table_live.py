"""`grade bench slam --grade-table OUT --live-check`: one sequence per kind tracked live, beside
the table's offline runs of the same sequence.

The table tracks recorded frames offline; this check runs the same sequences (the first world
and seed of the preset) with the backend's slam_node live on sim_node's topics in lockstep
(`grade_slam.bench_live.run_live`), so that a user can see that live and offline tracking agree
within the offline runs' spread. The live scenario is the table's, without its bag (offline
only the inertial backend reads it) and, for camera backends, without the VLP-16 (no camera
frame depends on it).

    OUT/live/<sequence>__<backend>.json (+ .log)   one live run's scores (stored whole: a
                                                   killed check resumes) and slam_node's log
    OUT/live_check.md                              live against offline, per kind
"""

from __future__ import annotations

import argparse
import math
import shutil
import statistics
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from grade_common.atomic import write_bytes
from grade_eval.report import Row
from grade_slam.bench_live import LIDAR_BACKENDS, LIVE_BACKENDS, run_live
from grade_slam.errors import SlamError
from grade_slam.grade_sequences import GradePreset, sequence_name, sequence_scenario
from grade_slam.grade_table_files import (
    LIVE_CHECK_MD,
    LIVE_DIR,
    RESULTS_DIR,
    read_json,
    result_pattern,
    write_json,
)
from grade_slam.grade_table_report import markdown_table


def offline_runs(out: Path, sequence: str, backend: str) -> list[dict[str, Any]]:
    """The table's stored offline runs of `backend` on `sequence`, every repeat.

    Raises:
        SlamError: the table holds none (run the table first).
    """
    paths = sorted((out / RESULTS_DIR).glob(f"{result_pattern(sequence, backend)}.json"))
    if not paths:
        raise SlamError(
            f"{out / RESULTS_DIR}: no offline run of {backend} on {sequence}; --live-check "
            "compares with the table's runs: run the table (with that backend) first"
        )
    return [read_json(p) for p in paths]


def comparison_row(kind: str, live: Row, offline: list[dict[str, Any]]) -> Row:
    """One kind's line of the check: the live run beside the offline runs' median and range."""
    ate = [float(r["ate_rmse_m"]) for r in offline if not math.isnan(r["ate_rmse_m"])]
    return {
        "kind": kind,
        "live_ate_rmse_m": float(live["ate_rmse_m"]),
        "offline_ate_rmse_m_median": statistics.median(ate) if ate else math.nan,
        "offline_ate_rmse_m_min": min(ate, default=math.nan),
        "offline_ate_rmse_m_max": max(ate, default=math.nan),
        "offline_runs": float(len(offline)),
        "live_tracking_rate": float(live["tracking_rate"]),
        "offline_tracking_rate_min": min(float(r["tracking_rate"]) for r in offline),
        "live_frames": f"{int(live['frames_received'])}/{int(live['frames_published'])}",
    }


def check_live_backends(backends: tuple[str, ...], table: tuple[str, ...] | None = None) -> None:
    """Refuse a --live-check backend that cannot run live, or (given the table's backends)
    that the table does not track offline, so has nothing to compare with.

    Raises:
        SlamError: naming the backends and what is allowed.
    """
    unknown = sorted(set(backends) - set(LIVE_BACKENDS))
    if unknown:
        raise SlamError(f"--live-check {unknown} unknown; allowed {list(LIVE_BACKENDS)}")
    missing = sorted(set(backends) - set(table)) if table is not None else []
    if missing:
        raise SlamError(
            f"--live-check {missing}: not among the table's --backends {list(table or ())}, so "
            "there are no offline runs to compare with; add them to --backends"
        )


def uses_orb_slam3(backends: tuple[str, ...]) -> bool:
    """Whether any of these live backends runs ORB-SLAM3 (and needs its vocabulary)."""
    return any(LIVE_BACKENDS[b]["backend"].startswith("orb_slam3") for b in backends)


def live_scenario(
    preset: GradePreset, base: dict[str, Any], world: str, kind: str, seed: int, backend: str
) -> dict[str, Any]:
    """The table's scenario of the sequence, as the live run flies it."""
    data = sequence_scenario(preset, base, world, kind, seed)
    data["record"] = {**data["record"], "bag": False}
    if backend not in LIDAR_BACKENDS:
        data["robots"][0]["lidars"] = []
    return data


def live_check(
    preset: GradePreset,
    out: Path,
    backends: tuple[str, ...],
    args: argparse.Namespace,
    log: Callable[[str], object] = print,
) -> list[Row]:
    """Every kind of the preset on its first world and seed, each of `backends` live (args:
    pacing, timeout_s, vocabulary), against the table's offline runs; writes
    OUT/live_check.md and returns its rows."""
    check_live_backends(backends)
    base = yaml.safe_load(Path(preset.scenario).read_text())
    world, seed = preset.worlds[0].name, preset.seeds[0]
    rows: list[Row] = []
    for backend in backends:
        for kind in preset.kinds:
            name = sequence_name(world, kind, seed)
            offline = offline_runs(out, name, backend)
            path = out / LIVE_DIR / f"{name}__{backend}.json"
            if path.is_file():
                live: Row = read_json(path)
            else:
                data = live_scenario(preset, base, world, kind, seed, backend)
                with tempfile.TemporaryDirectory(prefix="grade_live_check_") as tmp:
                    live = run_live(data, name, backend, args, Path(tmp))
                    # the slam_node log: why a live run lost track, once the run is gone
                    path.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copyfile(Path(tmp) / f"{name}_slam.log", path.with_suffix(".log"))
                write_json(path, live)
            row = {"backend": backend, **comparison_row(kind, live, offline)}
            log(
                f"{name} {backend}: live ATE {float(row['live_ate_rmse_m']):.3f} m, offline "
                f"{float(row['offline_ate_rmse_m_median']):.3f} m "
                f"[{float(row['offline_ate_rmse_m_min']):.3f}, "
                f"{float(row['offline_ate_rmse_m_max']):.3f}]"
            )
            rows.append(row)
    text = (
        f"# Live against offline ({world}, seed {seed}, {preset.duration_s:g} s, lockstep)\n\n"
        + markdown_table(rows)
    )
    report = out / LIVE_CHECK_MD
    write_bytes(report, text.encode(), overwrite=report.exists())
    return rows
