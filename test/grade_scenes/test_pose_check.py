"""The physics check of stable poses: drift and tilt after settling, a rolling pose rejected."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from grade_scenes.catalog import build_catalog
from grade_scenes.objects import ObjectSetConfig, ObjectSpec, Shape, default_object_set
from grade_scenes.pose_check import check_poses, describe_failures, settled_catalog
from grade_scenes.settle import DRIFT_TOLERANCE_M, TILT_TOLERANCE_DEG, tilt_deg
from grade_scenes.table import TableConfig


def _rot(axis: str, deg: float) -> np.ndarray:
    return Rotation.from_euler(axis, deg, degrees=True).as_matrix()


def test_tilt_ignores_yaw_and_measures_a_roll() -> None:
    start = _rot("x", 30.0)
    assert tilt_deg(start, _rot("z", 70.0) @ start) == pytest.approx(0.0, abs=1e-5)
    assert tilt_deg(start, _rot("y", 3.0) @ start) == pytest.approx(3.0, abs=1e-6)


def test_the_lemons_marginal_pose_is_rejected_and_a_box_keeps_all_its_poses() -> None:
    # The shipped lemon's second quasi-static pose rolls ~10 deg while moving its centre by
    # under 5 mm: drift alone accepts it, the tilt bound rejects it.
    objects = default_object_set().objects
    lemon = next(o for o in objects if o.name == "lemon")
    box = ObjectSpec(name="block", shape=Shape.BOX, size_m=(0.05, 0.07, 0.1))
    catalog = build_catalog(ObjectSetConfig(objects=(lemon, box)))
    assert len(catalog[0].poses) == 2
    assert len(catalog[1].poses) == 3
    checks = check_poses(catalog, TableConfig())
    by_key = {(c.object_name, c.pose_index): c.result for c in checks}
    rolling = by_key[("lemon", 1)]
    assert rolling.max_displacement_m < DRIFT_TOLERANCE_M  # the old filter passed it
    assert rolling.max_tilt_deg > TILT_TOLERANCE_DEG
    assert not rolling.stays
    assert by_key[("lemon", 0)].stays
    assert all(by_key[("block", k)].stays for k in range(3))
    kept = settled_catalog(catalog, checks)
    assert kept[0].poses == catalog[0].poses[:1]
    assert kept[1].poses == catalog[1].poses
    assert describe_failures(checks) == [
        f"lemon pose 1: drift {1000 * rolling.max_displacement_m:.2f} mm, "
        f"tilt {rolling.max_tilt_deg:.2f} deg"
    ]


def test_the_toppling_bread_pose_is_rejected() -> None:
    bread = next(o for o in default_object_set().objects if o.name == "bread")
    catalog = build_catalog(ObjectSetConfig(objects=(bread,)))
    checks = check_poses(catalog, TableConfig())
    failed = [c for c in checks if not c.result.stays]
    assert len(failed) == 1
    assert failed[0].result.max_tilt_deg > 20.0
