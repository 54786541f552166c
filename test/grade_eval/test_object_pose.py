"""ADD, ADD-S and the pick-and-place table against hand-computed values."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from grade_eval.core.object_pose import accuracy_auc, add_m, adds_m
from grade_eval.errors import EvalConfigError
from grade_eval.pick_place import Attempt, load_attempts, results_table

# Four model points: the corners of a 0.2 m square around the origin in the xy plane.
SQUARE = np.array([[0.1, 0.1, 0.0], [-0.1, 0.1, 0.0], [-0.1, -0.1, 0.0], [0.1, -0.1, 0.0]])


def _pose(yaw: float, t: tuple[float, float, float]) -> np.ndarray:
    pose = np.eye(4)
    pose[:2, :2] = [[math.cos(yaw), -math.sin(yaw)], [math.sin(yaw), math.cos(yaw)]]
    pose[:3, 3] = t
    return pose


def test_add_of_a_translation_is_its_length() -> None:
    assert add_m(SQUARE, np.eye(4), _pose(0.0, (0.03, 0.04, 0.0))) == pytest.approx(0.05)


def test_add_and_adds_of_a_quarter_turn() -> None:
    # Each corner moves to the next one: distance = side 0.2 m, so ADD = 0.2 m; the turned square
    # covers the same corners, so ADD-S = 0.
    turned = _pose(math.pi / 2, (0.0, 0.0, 0.0))
    assert add_m(SQUARE, np.eye(4), turned) == pytest.approx(0.2)
    assert adds_m(SQUARE, np.eye(4), turned) == pytest.approx(0.0, abs=1e-12)


def test_adds_with_a_shift() -> None:
    # Shift by 0.05 m along x: the nearest estimated corner of each true corner is its own image.
    shifted = _pose(0.0, (0.05, 0.0, 0.0))
    assert adds_m(SQUARE, np.eye(4), shifted) == pytest.approx(0.05)
    # Shift by 0.15 m: the right corners' nearest are the shifted left corners (0.05 m away),
    # the left corners' nearest are the shifted left corners too (0.15 m): mean 0.1 m.
    assert adds_m(SQUARE, np.eye(4), _pose(0.0, (0.15, 0.0, 0.0))) == pytest.approx(0.1)


def test_auc_of_known_errors() -> None:
    # Errors 0 and 0.05 m over thresholds 0..0.1: accuracy 0.5 up to 0.05, then 1 -> AUC 0.75.
    assert accuracy_auc(np.array([0.0, 0.05]), steps=100000) == pytest.approx(0.75, abs=1e-4)


def test_bad_inputs_are_named() -> None:
    with pytest.raises(EvalConfigError, match=r"model points.*\(n, 3\)"):
        add_m(np.zeros((3, 2)), np.eye(4), np.eye(4))
    with pytest.raises(EvalConfigError, match="4x4"):
        adds_m(SQUARE, np.eye(3), np.eye(4))


def test_pick_place_table(tmp_path: Path) -> None:
    (tmp_path / "r.yaml").write_text(
        "- {scene: scene_010, object: can, grasped: true, lifted: true, placed: true}\n"
        "- {scene: scene_012, object: can, grasped: true, lifted: false}\n"
        "- {scene: scene_012, object: lemon}\n"
    )
    table = results_table(load_attempts(tmp_path / "r.yaml"))
    assert "| can | 2 | 2 | 1 | 1 | 50.0 % |" in table
    assert "| lemon | 1 | 0 | 0 | 0 | 0.0 % |" in table
    assert "| **total** | 3 | 2 | 1 | 1 | 33.3 % |" in table


def test_placed_without_lift_is_refused(tmp_path: Path) -> None:
    (tmp_path / "r.yaml").write_text("- {scene: s1, object: can, grasped: true, placed: true}\n")
    with pytest.raises(EvalConfigError, match="placed needs lifted"):
        load_attempts(tmp_path / "r.yaml")
    assert Attempt(scene="s", object="o").grasped is False
