"""Plots (matplotlib Agg): trajectory top view, error over time with lost track, map error."""

from __future__ import annotations

from pathlib import Path

import matplotlib
import numpy as np

matplotlib.use("Agg")
import matplotlib.pyplot as plt

from grade_common.atomic import StagedOutput
from grade_eval.core.ame import AmeResult
from grade_eval.core.evaluate import TrajectoryEval
from grade_eval.core.pointmap import PointMap
from grade_eval.errors import OutputExistsError


def _save(fig: object, path: Path) -> Path:
    with StagedOutput(path, exists_error=OutputExistsError) as tmp:
        fig.savefig(tmp, format=path.suffix.lstrip(".") or "png", dpi=120)  # type: ignore[attr-defined]
    plt.close(fig)  # type: ignore[arg-type]
    return path


def plot_trajectory_top(
    result: TrajectoryEval, path: str | Path, title: str = "trajectory"
) -> Path:
    """x-y view of the reference and the aligned estimate."""
    fig, ax = plt.subplots(figsize=(6, 6))
    ref = result.reference.positions_xyz
    est = result.estimate_aligned.positions_xyz
    ax.plot(ref[:, 0], ref[:, 1], "k--", lw=1, label="ground truth")
    ax.plot(est[:, 0], est[:, 1], "b-", lw=1, label="estimate (aligned)")
    ax.set_xlabel("x [m]")
    ax.set_ylabel("y [m]")
    ax.set_aspect("equal", adjustable="datalim")
    ax.set_title(f"{title}: ATE {result.ate.stats.rmse:.3f} m")
    ax.legend()
    return _save(fig, Path(path))


def plot_error_over_time(result: TrajectoryEval, path: str | Path, title: str = "error") -> Path:
    """ATE per pose over time; lost-track intervals shaded red."""
    fig, ax = plt.subplots(figsize=(8, 3.5))
    stamps, errors = result.ate.stamps_s, result.ate.errors
    # Break the line where poses are missing, so a lost interval is not drawn as tracked.
    breaks = np.flatnonzero(np.diff(stamps) > result.tracking_gap_s) + 1
    ax.plot(
        np.insert(stamps, breaks, np.nan),
        np.insert(errors, breaks, np.nan),
        "b.-",
        ms=2,
        lw=0.8,
        label="ATE [m]",
    )
    for k, (t0, t1) in enumerate(result.tracking.lost_intervals_s):
        ax.axvspan(t0, t1, color="red", alpha=0.25, label="lost track" if k == 0 else None)
    ax.set_xlabel("time [s]")
    ax.set_ylabel("error [m]")
    ax.set_title(
        f"{title}: missing {result.tracking.missing_time_s:.2f} s, "
        f"tracking rate {100 * result.tracking.tracking_rate:.1f} %"
    )
    ax.legend(loc="upper left")
    return _save(fig, Path(path))


def plot_map_error(
    estimate: PointMap, result: AmeResult, path: str | Path, title: str = "map error"
) -> Path:
    """Top view of the estimated points coloured by their error; unmatched in grey."""
    fig, ax = plt.subplots(figsize=(7, 6))
    pts = estimate.points_xyz
    un = ~result.matched_mask
    if un.any():
        ax.scatter(pts[un, 0], pts[un, 1], s=1, c="0.7", label=f"unmatched ({un.sum()})")
    sc = ax.scatter(
        pts[result.matched_mask, 0],
        pts[result.matched_mask, 1],
        s=1,
        c=result.distances_m,
        cmap="inferno",
    )
    fig.colorbar(sc, ax=ax, label="error [m]")
    ax.set_aspect("equal", adjustable="datalim")
    ax.set_xlabel("x [m]")
    ax.set_ylabel("y [m]")
    ax.set_title(f"{title} ({result.association.value}): RMSE {result.stats.rmse:.3f} m")
    if un.any():
        ax.legend(loc="upper right")
    return _save(fig, Path(path))
