"""Coverage of a world's free floor by an explorer's seen map, over time."""

from __future__ import annotations

import io

import numpy as np
import pytest

from grade_control.coverage import SeenMap, coverage_over_time, load_seen_map, save_seen_map
from grade_control.errors import ControlError


def _seen() -> SeenMap:
    # a 4 x 4 m map at 1 m cells from (0, 0); row = y, column = x
    first = np.full((4, 4), np.inf)
    first[0, 0] = 1.0  # x in [0, 1), y in [0, 1)
    first[0, 1] = 2.0  # x in [1, 2)
    first[1, 1] = 2.0
    first[3, 3] = 5.0
    return SeenMap((0.0, 0.0), 1.0, first)


def test_coverage_counts_free_cells_by_the_stamp_they_were_first_seen() -> None:
    free = np.array([[0.5, 0.5], [1.5, 0.5], [1.5, 1.5], [3.5, 3.5], [2.5, 2.5]])
    times = np.array([0.0, 1.0, 1.5, 2.0, 10.0])
    got = coverage_over_time(_seen(), free, times)
    assert got == pytest.approx([0.0, 0.2, 0.2, 0.6, 0.8])


def test_cells_outside_the_explorer_map_are_never_seen() -> None:
    free = np.array([[0.5, 0.5], [-0.5, 0.5], [0.5, 9.0]])
    assert coverage_over_time(_seen(), free, np.array([100.0])) == pytest.approx([1 / 3])


def test_finer_free_floor_than_the_map_is_looked_up_per_centre() -> None:
    xs, ys = np.meshgrid(np.arange(0.05, 2.0, 0.1), np.arange(0.05, 1.0, 0.1))
    free = np.stack([xs.ravel(), ys.ravel()], axis=1)  # 2 x 1 m: cells (0,0) and (0,1)
    assert coverage_over_time(_seen(), free, np.array([1.0, 2.0])) == pytest.approx([0.5, 1.0])


def test_no_free_floor_is_an_error() -> None:
    with pytest.raises(ControlError, match="at least one free-floor cell"):
        coverage_over_time(_seen(), np.zeros((0, 2)), np.array([1.0]))


def test_seen_map_file_round_trips() -> None:
    buffer = io.BytesIO()
    track = np.array([[0.0, 1.0, 2.0], [0.5, 1.5, 2.0]])
    save_seen_map(buffer, _seen(), track)
    buffer.seek(0)
    seen, got_track = load_seen_map(buffer)
    assert seen.origin_xy_m == (0.0, 0.0)
    assert seen.resolution_m == 1.0
    assert np.array_equal(seen.first_seen_s, _seen().first_seen_s)
    assert np.array_equal(got_track, track)


def test_a_file_that_is_not_a_seen_map_is_refused() -> None:
    buffer = io.BytesIO()
    np.savez(buffer, something=np.zeros(3))
    buffer.seek(0)
    with pytest.raises(ControlError, match="not an explorer map file"):
        load_seen_map(buffer)
