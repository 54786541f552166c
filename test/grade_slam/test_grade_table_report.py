"""The report of `grade bench slam --grade-table`: one world as GRADE's table."""

from __future__ import annotations

import math

from grade_eval.report import Row
from grade_slam.grade_table_report import world_rows


def _row(world: str, kind: str, seed: int, backend: str, ate: float, rate: float = 1.0) -> Row:
    people = kind != "static"
    return {
        "sequence": f"{world}_{kind}_s{seed}",
        "world": world,
        "kind": kind,
        "backend": backend,
        "dynamic_share": 0.1 * seed if people else 0.0,
        "segmenter_iou": 0.6 if people else 0.0,  # 0: a stray false positive
        "segmenter_missed": 0.3 if people else math.nan,
        "ate_rmse_m": ate,
        "tracking_rate": rate,
    }


def test_a_world_is_a_backend_by_kind_table_of_median_ate_and_range() -> None:
    rows = [
        _row("rooms", "static", 1, "plain", 0.02),
        _row("rooms", "static", 2, "plain", 0.04),
        _row("rooms", "static", 3, "plain", 0.03),
        _row("rooms", "people", 1, "plain", 1.5, rate=0.98),
        _row("rooms", "people", 2, "plain", math.nan, rate=0.0),  # never tracked
        _row("rooms", "people", 3, "plain", 0.5),
        _row("hall", "people", 1, "plain", 9.0),  # another world: not in this table
    ]
    dynamic, segmenter, plain = world_rows(rows, "rooms")
    # one share per sequence, averaged over the kind's seeds
    assert dynamic == {"backend": "dynamic pixels", "static": "0.0 %", "people": "20.0 %"}
    assert segmenter["static"] == "-"
    assert segmenter["people"] == "0.60 / 0.30"
    assert plain["static"] == "0.030 [0.020, 0.040]"
    assert plain["people"] == "1.000 [0.500, 1.500] (tr 0.00), 1 untracked"
