"""SceneReplica's failure categories and tables from pick-and-place attempts."""

from __future__ import annotations

from pathlib import Path

import pytest

from grade_eval.pick_place import (
    Attempt,
    Category,
    add_s_table,
    category,
    category_table,
    dump_attempts,
    load_attempts,
)

PLACED = Attempt("s", "can", True, True, True, "none")


@pytest.mark.parametrize(
    ("attempt", "expected"),
    [
        (PLACED, Category.SUCCESS),
        # placed counts as a success even with a poor estimate
        (Attempt("s", "can", True, True, True, add_s_m=0.05, diameter_m=0.1), Category.SUCCESS),
        (Attempt("s", "can", failure="not_found"), Category.PERCEPTION),
        # a failed attempt on an estimate off by more than 10 % of the diameter
        (
            Attempt("s", "can", failure="no_grasp", add_s_m=0.011, diameter_m=0.1),
            Category.PERCEPTION,
        ),
        (
            Attempt("s", "can", True, failure="missed", add_s_m=0.02, diameter_m=0.1),
            Category.PERCEPTION,
        ),
        (Attempt("s", "can", failure="no_grasp", add_s_m=0.009, diameter_m=0.1), Category.PLANNING),
        (Attempt("s", "can", failure="ik_failure"), Category.PLANNING),
        (Attempt("s", "can", failure="no_path"), Category.PLANNING),
        (Attempt("s", "can", True, True, failure="no_path"), Category.PLANNING),
        (
            Attempt("s", "can", True, failure="missed", add_s_m=0.002, diameter_m=0.1),
            Category.EXECUTION,
        ),
        (Attempt("s", "can", True, True, failure="slip"), Category.EXECUTION),
        (Attempt("s", "can", True, True, failure="not_in_bin"), Category.EXECUTION),
        (Attempt("s", "can", failure="collision"), Category.EXECUTION),
    ],
)
def test_category(attempt: Attempt, expected: Category) -> None:
    assert category(attempt) is expected


def test_category_and_add_s_tables_count_per_object(tmp_path: Path) -> None:
    attempts = (
        PLACED,
        Attempt("t", "can", failure="not_found"),
        Attempt("s", "box", failure="no_grasp", add_m=0.004, add_s_m=0.002, diameter_m=0.1),
        Attempt("t", "box", True, failure="missed", add_m=0.03, add_s_m=0.02, diameter_m=0.1),
    )
    table = category_table(attempts)
    assert "| object | attempts | success | perception | planning | execution |" in table
    assert "| box | 2 | 0 | 1 | 1 | 0 |" in table
    assert "| can | 2 | 1 | 1 | 0 | 0 |" in table
    assert "| **total** | 4 | 1 | 2 | 1 | 0 |" in table
    scores = add_s_table(attempts)
    assert "| box | 2 | 17.0 | 11.0 | 1 |" in scores
    assert "can" not in scores  # no estimates for it
    # the estimate fields survive the YAML round trip and are left out where there are none
    file = tmp_path / "results.yaml"
    file.write_text(dump_attempts(attempts))
    assert load_attempts(file) == attempts
    assert "add_s_m" not in dump_attempts((PLACED,))
