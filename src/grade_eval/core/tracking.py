"""GRADE's tracking quality: missing time and tracking rate, reported beside every ATE."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np
from numpy.typing import NDArray

from grade_common.schema import Checked, Wording, bounds
from grade_eval.errors import EVAL_WORDING, TrajectoryError

GAP_THRESHOLD_S = 1.0 / 30.0 + 1e-5


@dataclass(frozen=True)
class TrackingConfig(Checked):
    """Window and gap threshold of GRADE's definition.

    window_start_min_s: the window starts at max(this, first ground-truth stamp) (GRADE: 0).
    window_end_max_s: it ends at min(this, last ground-truth stamp) (GRADE: 60 s); None = no cap.
    gap_threshold_s: gaps longer than this count as lost (GRADE: 1/30 s + 1e-5).
    """

    WORDING: ClassVar[Wording] = EVAL_WORDING

    window_start_min_s: float | None = field(default=0.0, metadata=bounds(allow_inf=True))
    window_end_max_s: float | None = field(default=60.0, metadata=bounds(allow_inf=True))
    gap_threshold_s: float = field(
        default=GAP_THRESHOLD_S, metadata=bounds(0.0, exclusive_min=True)
    )


@dataclass(frozen=True)
class TrackingResult:
    """Missing time (s), tracking rate in [0, 1], window (s) and the lost intervals (K, 2)."""

    missing_time_s: float
    tracking_rate: float
    window_start_s: float
    window_end_s: float
    lost_intervals_s: NDArray[np.float64]


def tracking_quality(
    gt_stamps_s: NDArray[np.float64],
    est_stamps_s: NDArray[np.float64],
    config: TrackingConfig | None = None,
) -> TrackingResult:
    """Missing time and tracking rate exactly as GRADE defines them.

    Window [max(start_min, first gt), min(end_max, last gt)]; every gap between consecutive
    estimate stamps inside the window, including window start -> first estimate and last
    estimate -> window end, longer than the threshold adds the whole gap.

    Raises:
        TrajectoryError: empty ground truth or an empty window.
    """
    cfg = config or TrackingConfig()
    gt = np.asarray(gt_stamps_s, dtype=np.float64)
    est = np.sort(np.asarray(est_stamps_s, dtype=np.float64))
    if gt.size == 0:
        raise TrajectoryError("ground truth has no stamps: cannot define the tracking window")
    start = (
        float(gt.min())
        if cfg.window_start_min_s is None
        else max(cfg.window_start_min_s, float(gt.min()))
    )
    end = (
        float(gt.max())
        if cfg.window_end_max_s is None
        else min(cfg.window_end_max_s, float(gt.max()))
    )
    if not end > start:
        raise TrajectoryError(
            f"empty tracking window [{start:.6f}, {end:.6f}] s (ground truth "
            f"[{gt.min():.6f}, {gt.max():.6f}] s, caps {cfg.window_start_min_s}, "
            f"{cfg.window_end_max_s}); check the time base or set the window caps"
        )
    inside = est[(est >= start) & (est <= end)]
    points = np.concatenate([[start], inside, [end]])
    gaps = np.diff(points)
    lost = gaps > cfg.gap_threshold_s
    missing = float(gaps[lost].sum())
    duration = end - start
    intervals = np.stack([points[:-1][lost], points[1:][lost]], axis=1)
    return TrackingResult(missing, (duration - missing) / duration, start, end, intervals)
