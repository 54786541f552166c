"""GRADE missing time and tracking rate: injected gaps give the exact missing time."""

from __future__ import annotations

import numpy as np
import pytest

from grade_eval.core.tracking import GAP_THRESHOLD_S, TrackingConfig, tracking_quality
from grade_eval.errors import EvalConfigError, TrajectoryError

GT = np.arange(0, 60.0 + 1e-9, 1 / 60)  # 60 Hz ground truth over the 60 s experiment
EST = np.arange(0, 60.0 + 1e-9, 1 / 30)  # a method tracking every 30 Hz frame


def test_full_tracking_has_no_missing_time() -> None:
    result = tracking_quality(GT, EST)
    assert result.missing_time_s == 0.0
    assert result.tracking_rate == 1.0
    assert result.lost_intervals_s.shape == (0, 2)


def test_injected_gaps_give_exact_missing_time() -> None:
    lost = ((EST > 10.0) & (EST < 12.5)) | ((EST > 30.0) & (EST < 31.0))
    est = EST[~lost]
    result = tracking_quality(GT, est)
    # Each gap runs from the last kept frame before to the first kept frame after it.
    before1, after1 = est[est <= 10.0][-1], est[est >= 12.5][0]
    before2, after2 = est[est <= 30.0][-1], est[est >= 31.0][0]
    expected = (after1 - before1) + (after2 - before2)
    assert result.missing_time_s == pytest.approx(expected, abs=1e-12)
    assert result.tracking_rate == pytest.approx((60.0 - expected) / 60.0, abs=1e-12)
    np.testing.assert_allclose(result.lost_intervals_s, [[before1, after1], [before2, after2]])


def test_late_start_and_early_end_count_to_window_edges() -> None:
    est = EST[(EST >= 5.0) & (EST <= 50.0)]
    result = tracking_quality(GT, est)
    assert result.missing_time_s == pytest.approx(est[0] - 0.0 + 60.0 - est[-1], abs=1e-9)


def test_window_comes_from_ground_truth_and_caps() -> None:
    gt = np.arange(2.0, 70.0, 1 / 60)
    est = np.arange(2.0, 70.0, 1 / 30)
    result = tracking_quality(gt, est)
    assert result.window_start_s == 2.0
    assert result.window_end_s == 60.0
    assert result.missing_time_s == 0.0
    uncapped = tracking_quality(gt, est[est < 65.0], TrackingConfig(window_end_max_s=None))
    assert uncapped.window_end_s == gt[-1]
    assert uncapped.missing_time_s == pytest.approx(gt[-1] - est[est < 65.0][-1])


def test_gap_threshold_is_one_frame_at_30hz_plus_epsilon() -> None:
    # A gap just below the threshold is tracked, just above is lost, entirely.
    ok = tracking_quality(
        np.array([0.0, 1.0]),
        np.concatenate([[0.0, GAP_THRESHOLD_S - 1e-7], np.arange(0.05, 1.0001, 1 / 40)]),
    )
    assert ok.missing_time_s == 0.0
    gap = 1 / 30 + 2e-5
    lost = tracking_quality(
        np.array([0.0, 1.0]),
        np.concatenate([[0.0], gap + np.arange(0.0, 1.0 - gap + 1e-9, 1 / 40)]),
    )
    assert lost.missing_time_s == pytest.approx(gap)


def test_no_estimate_means_all_time_missing() -> None:
    result = tracking_quality(GT, np.array([]))
    assert result.missing_time_s == pytest.approx(60.0)
    assert result.tracking_rate == 0.0


@pytest.mark.parametrize(
    ("gt", "match"),
    [
        (np.array([]), "ground truth has no stamps"),
        (np.array([70.0, 80.0]), r"empty tracking window \[70\.000000, 60\.000000\]"),
    ],
)
def test_bad_windows_raise(gt: np.ndarray, match: str) -> None:
    with pytest.raises(TrajectoryError, match=match):
        tracking_quality(gt, EST)


def test_bad_threshold_raises() -> None:
    with pytest.raises(EvalConfigError, match=r"gap_threshold_s = 0"):
        TrackingConfig(gap_threshold_s=0)
