"""The report of `grade bench slam --grade-table OUT` (grade_table): the tables of summary.md
and the plots, built from the rows of table.csv and what OUT stores of each sequence."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np

from grade_common.atomic import StagedOutput
from grade_common.types import FloatArray
from grade_eval.report import Row
from grade_slam.errors import SlamError
from grade_slam.grade_table_files import RECORDS_DIR, RESULTS_DIR, read_json, result_stem


def summary_rows(rows: list[Row]) -> list[Row]:
    """Backend x kind over worlds, seeds and repeats: median ATE and its range, median RPE,
    the lowest tracking rate, the longest missing time, the mean dynamic-pixel share."""
    groups: dict[tuple[str, str], list[Row]] = {}
    for row in rows:
        groups.setdefault((str(row["backend"]), str(row["kind"])), []).append(row)
    out: list[Row] = []
    for (backend, kind), members in groups.items():

        def values(key: str, members: list[Row] = members) -> FloatArray:
            array = np.array([float(r[key]) for r in members], dtype=np.float64)
            kept: FloatArray = array[~np.isnan(array)]
            return kept

        ate, rpe = values("ate_rmse_m"), values("rpe_trans_rmse_m")
        out.append(
            {
                "backend": backend,
                "kind": kind,
                "runs": float(len(members)),
                "dynamic_share": float(np.mean(values("dynamic_share"))),
                "ate_rmse_m_median": float(np.median(ate)) if len(ate) else math.nan,
                "ate_rmse_m_min": float(ate.min()) if len(ate) else math.nan,
                "ate_rmse_m_max": float(ate.max()) if len(ate) else math.nan,
                "rpe_trans_rmse_m_median": float(np.median(rpe)) if len(rpe) else math.nan,
                "tracking_rate_min": float(values("tracking_rate").min()),
                "missing_time_s_max": float(np.max(values("missing_time_s"), initial=0.0)),
            }
        )
    return out


def markdown_table(rows: list[Row]) -> str:
    """Rows as a Markdown table (numbers to 3 decimals)."""
    if not rows:
        return ""
    columns = list(rows[0])

    def cell(value: Any) -> str:
        return f"{value:.3f}" if isinstance(value, float) else str(value)

    lines = ["| " + " | ".join(columns) + " |", "|" + " --- |" * len(columns)]
    lines += ["| " + " | ".join(cell(r.get(c, "")) for c in columns) + " |" for r in rows]
    return "\n".join(lines) + "\n"


def segmenter_rows(out: Path, names: list[str]) -> list[Row]:
    """Per sequence: frames, dynamic and person share, the segmenter's IoU and missed share."""
    rows: list[Row] = []
    for name in names:
        record = read_json(out / RECORDS_DIR / f"{name}.json")
        rows.append(
            {
                "sequence": name,
                "frames": float(record["frames"]),
                "dynamic_share": record["dynamic_share"],
                "person_share": record["person_share"],
                "segmenter": str(record["segmenter"]),
                "segmenter_iou": record["segmenter_iou"],
                "segmenter_missed": record["segmenter_missed"],
            }
        )
    return rows


def plot_ate_vs_dynamic(rows: list[Row], path: Path) -> Path:
    """ATE RMSE of every run against its sequence's dynamic-pixel share, one colour per backend."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8.0, 4.5))
    backends = list(dict.fromkeys(str(r["backend"]) for r in rows))
    for i, backend in enumerate(backends):
        mine = [r for r in rows if r["backend"] == backend]
        x = [100 * float(r["dynamic_share"]) for r in mine]
        y = [float(r["ate_rmse_m"]) for r in mine]
        ax.plot(x, y, "o", color=f"C{i % 10}", ms=5, alpha=0.8, label=backend)
    ax.set_xlabel("dynamic pixels (people + flying objects), mean share of the frame [%]")
    ax.set_ylabel("ATE RMSE [m]")
    ax.set_yscale("log")
    ax.set_title("ATE against the sequence's dynamic-pixel share (one dot per run)")
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    fig.tight_layout()
    return _save(fig, path)


def plot_trajectories(out: Path, name: str, backends: tuple[str, ...], path: Path) -> Path:
    """Top view of a sequence: the camera's ground truth and each camera backend's first run,
    aligned (LiDAR backends are drawn against the camera's path: the sensors are 0.2 m apart)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    record = read_json(out / RECORDS_DIR / f"{name}.json")
    fig, ax = plt.subplots(figsize=(6.5, 6.0))
    ref = np.array(record["reference_xy"])
    ax.plot(ref[:, 0], ref[:, 1], "k--", lw=1.5, label="ground truth")
    for i, backend in enumerate(backends):
        result_path = out / RESULTS_DIR / f"{result_stem(name, backend, 0)}.json"
        if not result_path.is_file():
            continue
        result = read_json(result_path)
        xy = np.array(result["estimate_xy"])
        if len(xy):
            label = f"{backend} ({result['ate_rmse_m']:.3f} m)"
            ax.plot(xy[:, 0], xy[:, 1], "-", color=f"C{i % 10}", lw=1, label=label)
    ax.set_aspect("equal", adjustable="datalim")
    ax.set_xlabel("x [m]")
    ax.set_ylabel("y [m]")
    ax.set_title(f"{name}: {100 * record['dynamic_share']:.1f} % dynamic pixels")
    ax.legend(fontsize=7)
    fig.tight_layout()
    return _save(fig, path)


def _save(fig: Any, path: Path) -> Path:
    import matplotlib.pyplot as plt

    path.parent.mkdir(parents=True, exist_ok=True)
    with StagedOutput(path, overwrite=True, exists_error=SlamError, announce=False) as tmp:
        fig.savefig(tmp, format="png", dpi=110)
    plt.close(fig)
    return path


def _cell(ates: list[float], rates: list[float]) -> str:
    """A pivot cell: the median ATE over seeds and runs, its range, the lowest tracking rate
    where a run lost frames, the runs that never tracked."""
    kept = [a for a in ates if not math.isnan(a)]
    if not kept:
        return f"no estimate ({len(ates)} runs)"
    text = f"{np.median(kept):.3f}"
    if len(kept) > 1:
        text += f" [{min(kept):.3f}, {max(kept):.3f}]"
    if min(rates) < 1.0:
        text += f" (tr {min(rates):.2f})"
    if len(kept) < len(ates):
        text += f", {len(ates) - len(kept)} untracked"
    return text


def world_rows(rows: list[Row], world: str) -> list[Row]:
    """One world as GRADE's table: a row per backend, a column per kind, ATE RMSE in metres as
    the median over seeds and runs [min, max], `(tr x)` the lowest tracking rate where a run
    lost frames; first the mean dynamic-pixel share and the segmenter's mean IoU and missed
    share of each kind."""
    mine = [r for r in rows if r["world"] == world]
    kinds = list(dict.fromkeys(str(r["kind"]) for r in mine))
    backends = list(dict.fromkeys(str(r["backend"]) for r in mine))

    def of_kind(kind: str, backend: str | None = None) -> list[Row]:
        return [
            r for r in mine if r["kind"] == kind and (backend is None or r["backend"] == backend)
        ]

    def mean(kind: str, key: str) -> float:
        # one value per sequence (every backend row of a sequence repeats it)
        per_sequence = {str(r["sequence"]): float(r[key]) for r in of_kind(kind)}
        values = [v for v in per_sequence.values() if not math.isnan(v)]
        return float(np.mean(values)) if values else math.nan

    dynamic: Row = {"backend": "dynamic pixels"}
    segmenter: Row = {"backend": "segmenter IoU / missed"}
    for kind in kinds:
        share = mean(kind, "dynamic_share")
        dynamic[kind] = f"{100 * share:.1f} %"
        iou = mean(kind, "segmenter_iou")
        missed = mean(kind, "segmenter_missed")
        # without people an IoU says nothing (0 with a stray false positive, else undefined)
        no_score = math.isnan(iou) or share == 0.0
        segmenter[kind] = "-" if no_score else f"{iou:.2f} / {missed:.2f}"
    out = [dynamic, segmenter]
    for backend in backends:
        row: Row = {"backend": backend}
        for kind in kinds:
            members = of_kind(kind, backend)
            row[kind] = _cell(
                [float(r["ate_rmse_m"]) for r in members],
                [float(r["tracking_rate"]) for r in members],
            )
        out.append(row)
    return out
