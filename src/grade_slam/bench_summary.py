"""Median and range (min-max) of `grade bench slam` rows over repeated runs.

ORB-SLAM3 runs its local mapping and loop closing in threads of its own, so two runs on the same
frames give different trajectories; one run is one sample. `--repeats N` runs each input N times
and these tables say where the runs fall: per backend, world and seed (the run-to-run spread on
one input) and per backend and world (over seeds and repeats).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from grade_eval.report import Row

# the scores whose median and range are reported
SPREAD_SCORES = ("ate_rmse_m", "rpe_trans_rmse_m", "tracking_rate")


def spread(rows: Sequence[Row], by: Sequence[str]) -> list[Row]:
    """One row per distinct value of the `by` columns (in first-seen order): those values, the
    number of runs, and each score's median, min and max over the runs that have it (a NaN
    score, a run that could not be aligned, is left out and counted in `unscored`)."""
    groups: dict[tuple[str | float, ...], list[Row]] = {}
    for row in rows:
        groups.setdefault(tuple(row[key] for key in by), []).append(row)
    out: list[Row] = []
    for key, members in groups.items():
        summary: Row = dict(zip(by, key, strict=True))
        summary["runs"] = float(len(members))
        for score in SPREAD_SCORES:
            values = np.array([float(r[score]) for r in members if score in r])
            values = values[~np.isnan(values)]
            if score == SPREAD_SCORES[0]:
                summary["unscored"] = float(len(members) - len(values))
            summary[f"{score}_median"] = float(np.median(values)) if len(values) else math.nan
            summary[f"{score}_min"] = float(values.min()) if len(values) else math.nan
            summary[f"{score}_max"] = float(values.max()) if len(values) else math.nan
        out.append(summary)
    return out
