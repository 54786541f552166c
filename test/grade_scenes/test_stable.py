"""Stable poses against the analytic ones: a box and a cylinder dropped on a table."""

from __future__ import annotations

import math

import numpy as np
import pytest
import trimesh

from grade_scenes.stable import stable_poses


def _face_probability(w: float, h: float, d: float) -> float:
    """Solid angle of a w x h rectangle at distance d, centred, over 4 pi (quasi-static)."""
    omega = 4 * math.atan(w * h / (2 * d * math.sqrt(4 * d * d + w * w + h * h)))
    return omega / (4 * math.pi)


def _polygon_cap_probability(r: float, d: float, sections: int) -> float:
    """Solid angle of a regular polygon (circumradius r) at distance d over 4 pi, summed over
    its triangles with Van Oosterom and Strackee's formula."""
    total = 0.0
    for i in range(sections):
        a = np.array([0.0, 0.0, d])
        t0, t1 = 2 * math.pi * i / sections, 2 * math.pi * (i + 1) / sections
        b = np.array([r * math.cos(t0), r * math.sin(t0), d])
        c = np.array([r * math.cos(t1), r * math.sin(t1), d])
        la, lb, lc = (float(np.linalg.norm(v)) for v in (a, b, c))
        num = abs(float(a @ np.cross(b, c)))
        den = la * lb * lc + float(a @ b) * lc + float(a @ c) * lb + float(b @ c) * la
        total += 2 * math.atan2(num, den)
    return total / (4 * math.pi)


def test_box_rests_on_its_faces_with_solid_angle_probabilities() -> None:
    a, b, c = 0.06, 0.158, 0.21
    poses = stable_poses(trimesh.creation.box(extents=(a, b, c)), threshold=0.0)
    # Three pose pairs (opposite faces are the same shape up to yaw): one pose each.
    assert len(poses) == 3
    expected = {
        a / 2: 2 * _face_probability(b, c, a / 2),
        b / 2: 2 * _face_probability(a, c, b / 2),
        c / 2: 2 * _face_probability(a, b, c / 2),
    }
    for pose in poses:
        height = min(expected, key=lambda h: abs(h - pose.rest_height_m))
        assert pose.rest_height_m == pytest.approx(height, abs=1e-9)
        assert pose.probability == pytest.approx(expected[height], rel=1e-6)
        assert pose.merged == 2
    assert sum(p.probability for p in poses) == pytest.approx(1.0)
    # Flattest pose (on the largest face) first.
    assert poses[0].rest_height_m == pytest.approx(a / 2)


def test_cylinder_stands_or_lies_with_analytic_probabilities() -> None:
    r, length = 0.0335, 0.101
    poses = stable_poses(trimesh.creation.cylinder(radius=r, height=length, sections=64))
    d = length / 2
    cap = 2 * _polygon_cap_probability(r, d, 64)  # both caps
    disc = 2 * (2 * math.pi * (1 - d / math.hypot(d, r))) / (4 * math.pi)
    assert cap == pytest.approx(disc, rel=3e-3)  # the 64-gon is nearly the disc
    by_height = {round(p.rest_height_m, 3): p for p in poses}
    assert len(poses) == 2
    standing = by_height[round(d, 3)]
    lying = next(p for p in poses if p is not standing)
    assert standing.probability == pytest.approx(cap, rel=1e-6)
    # The 64-gon's side faces rest at the apothem r cos(pi/64); together they are one pose.
    assert lying.rest_height_m == pytest.approx(r * math.cos(math.pi / 64), abs=1e-9)
    assert lying.merged == 64
    assert lying.probability == pytest.approx(1 - cap, rel=1e-6)


def test_poses_touch_the_plane_and_keep_the_centre_above_the_origin() -> None:
    mesh = trimesh.creation.box(extents=(0.05, 0.075, 0.05))
    for pose in stable_poses(mesh, threshold=0.0):
        placed = mesh.copy().apply_transform(pose.transform_table_object)
        assert placed.bounds[0, 2] == pytest.approx(0.0, abs=1e-9)
        np.testing.assert_allclose(pose.transform_table_object[:2, 3], 0.0, atol=1e-12)


def test_threshold_drops_unlikely_poses() -> None:
    mesh = trimesh.creation.box(extents=(0.02, 0.2, 0.3))  # a thin plate seldom stands on an edge
    assert len(stable_poses(mesh, threshold=0.0)) == 3
    kept = stable_poses(mesh, threshold=0.1)
    assert len(kept) == 1
    assert kept[0].rest_height_m == pytest.approx(0.01)
