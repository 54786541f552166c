"""ORCA half-planes and the velocity choice: agents meeting head-on pass without touching."""

from __future__ import annotations

import numpy as np

from grade_people.orca import HalfPlanes, choose_velocities, orca_half_planes


def _pair_planes(pos: np.ndarray, vel: np.ndarray, radius: float, tau: float) -> HalfPlanes:
    rel = pos[::-1] - pos
    point, direction = orca_half_planes(
        rel, vel - vel[::-1], vel, np.full(2, 2 * radius), np.full(2, 0.5), tau, 0.1
    )
    return HalfPlanes(point[:, None], direction[:, None], np.ones((2, 1), dtype=bool))


def test_head_on_agents_pass_without_touching() -> None:
    radius, dt = 0.4, 0.1
    pos = np.array([[-4.0, 0.0], [4.0, 0.01]])
    vel = np.zeros((2, 2))
    goals = np.array([[4.0, 0.0], [-4.0, 0.0]])
    closest = np.inf
    for _ in range(150):
        pref = goals - pos
        pref = pref / np.maximum(np.linalg.norm(pref, axis=1, keepdims=True), 1.0) * 1.2
        vel = choose_velocities(_pair_planes(pos, vel, radius, 2.0), pref, np.full(2, 1.2))
        pos = pos + vel * dt
        closest = min(closest, float(np.linalg.norm(pos[0] - pos[1])))
    assert closest >= 2 * radius - 1e-6
    # Both got past each other (they did not just stop).
    assert pos[0, 0] > 3.0
    assert pos[1, 0] < -3.0


def test_single_active_constraint_gives_the_projection() -> None:
    # One half-plane x <= 0.5 (direction +y, point (0.5, 0)): the optimum for a preferred
    # (1, 0.3) is its projection (0.5, 0.3).
    planes = HalfPlanes(
        np.array([[[0.5, 0.0]]]), np.array([[[0.0, 1.0]]]), np.ones((1, 1), dtype=bool)
    )
    got = choose_velocities(planes, np.array([[1.0, 0.3]]), np.array([2.0]))
    np.testing.assert_allclose(got, [[0.5, 0.3]], atol=1e-12)


def test_infeasible_constraints_choose_the_least_violation_and_respect_speed() -> None:
    # x <= -1 and x >= 1 cannot both hold: the best compromise is x = 0.
    planes = HalfPlanes(
        np.array([[[-1.0, 0.0], [1.0, 0.0]]]),
        np.array([[[0.0, 1.0], [0.0, -1.0]]]),
        np.ones((1, 2), dtype=bool),
    )
    got = choose_velocities(planes, np.array([[3.0, 0.0]]), np.array([1.5]))
    assert abs(got[0, 0]) < 1e-9
    assert np.linalg.norm(got[0]) <= 1.5 + 1e-12
