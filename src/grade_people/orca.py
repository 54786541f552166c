"""Optimal reciprocal collision avoidance (ORCA, van den Berg et al. 2011), vectorised in numpy.

Each agent gets one half-plane of allowed velocities per neighbour (RVO2's construction, the
same cases: cut-off circle, legs of the velocity obstacle, and already-overlapping pairs). A
neighbour's `responsibility` is the share of the avoidance this agent takes: 0.5 for another
person (who runs ORCA too), 1 for a static obstacle or a robot (which does not yield).

Instead of RVO2's incremental linear program, the new velocity is chosen among candidates: the
preferred velocity, its projection onto every half-plane boundary, the pairwise intersections of
the boundaries, a polar grid up to the maximum speed and standing still. The feasible candidate
nearest the preferred velocity wins; when none is feasible, the one violating its worst
constraint least (RVO2's fallback). This is the exact LP optimum whenever at most two
constraints are active, and it vectorises over all agents at once.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from grade_common.types import FloatArray

_POLAR_DIRECTIONS = 32
_POLAR_SPEEDS = (0.25, 0.5, 0.75, 1.0)
_FEASIBLE_TOL = 1e-9


@dataclass(frozen=True)
class HalfPlanes:
    """Allowed velocities of N agents: det(direction, point - v) <= 0 where `active`."""

    point: FloatArray  # (N, L, 2)
    direction: FloatArray  # (N, L, 2) unit vectors
    active: NDArray[np.bool_]  # (N, L)


def orca_half_planes(
    rel_position: FloatArray,
    rel_velocity: FloatArray,
    own_velocity: FloatArray,
    combined_radius_m: FloatArray,
    responsibility: FloatArray,
    time_horizon_s: float | FloatArray,
    dt_s: float,
) -> tuple[FloatArray, FloatArray]:
    """ORCA half-planes of agent/neighbour pairs (all arrays share a leading shape S).

    Args:
        rel_position: neighbour position minus agent position, (S, 2).
        rel_velocity: agent velocity minus neighbour velocity, (S, 2).
        own_velocity: the agent's current velocity, (S, 2).
        combined_radius_m: sum of both radii, (S,).
        responsibility: share of the velocity change the agent takes, (S,).
        time_horizon_s: scalar or (S,): pairs further than this many seconds apart are ignored.
        dt_s: the agent's update period (used when the two already overlap).

    Returns:
        (point, direction), each (S, 2).
    """
    p = rel_position
    v = rel_velocity
    r = combined_radius_m
    inv_tau = 1.0 / np.asarray(time_horizon_s, dtype=np.float64)
    dist_sq = np.einsum("...i,...i->...", p, p)
    r_sq = r * r
    overlapping = dist_sq <= r_sq
    # Separated pairs: velocity obstacle truncated at the time horizon.
    w = v - inv_tau[..., None] * p if np.ndim(inv_tau) else v - inv_tau * p
    w_len_sq = np.einsum("...i,...i->...", w, w)
    dot1 = np.einsum("...i,...i->...", w, p)
    on_circle = (dot1 < 0.0) & (dot1 * dot1 > r_sq * w_len_sq)
    w_len = np.sqrt(np.maximum(w_len_sq, 1e-300))
    unit_w = w / w_len[..., None]
    circle_dir = np.stack([unit_w[..., 1], -unit_w[..., 0]], axis=-1)
    circle_u = ((r * inv_tau - w_len)[..., None]) * unit_w
    leg = np.sqrt(np.maximum(dist_sq - r_sq, 0.0))
    safe_dist_sq = np.maximum(dist_sq, 1e-300)[..., None]
    left = (p[..., 0] * w[..., 1] - p[..., 1] * w[..., 0]) > 0.0
    left_dir = (
        np.stack([p[..., 0] * leg - p[..., 1] * r, p[..., 0] * r + p[..., 1] * leg], axis=-1)
        / safe_dist_sq
    )
    right_dir = (
        -np.stack([p[..., 0] * leg + p[..., 1] * r, -p[..., 0] * r + p[..., 1] * leg], axis=-1)
        / safe_dist_sq
    )
    leg_dir = np.where(left[..., None], left_dir, right_dir)
    leg_u = np.einsum("...i,...i->...", v, leg_dir)[..., None] * leg_dir - v
    sep_dir = np.where(on_circle[..., None], circle_dir, leg_dir)
    sep_u = np.where(on_circle[..., None], circle_u, leg_u)
    # Overlapping pairs: get apart within one update period.
    w_c = v - p / dt_s
    w_c_len = np.sqrt(np.maximum(np.einsum("...i,...i->...", w_c, w_c), 1e-300))
    unit_c = w_c / w_c_len[..., None]
    col_dir = np.stack([unit_c[..., 1], -unit_c[..., 0]], axis=-1)
    col_u = ((r / dt_s - w_c_len)[..., None]) * unit_c
    direction = np.where(overlapping[..., None], col_dir, sep_dir)
    u = np.where(overlapping[..., None], col_u, sep_u)
    point = own_velocity + responsibility[..., None] * u
    return point, direction


def _violation(planes: HalfPlanes, candidates: FloatArray) -> FloatArray:
    """Worst constraint violation of each candidate: (N, C); <= 0 means feasible."""
    d = planes.direction
    p = planes.point
    # det(d, p - c) = det(d, p) - det(d, c), the second term one batched matrix product.
    offset = d[..., 0] * p[..., 1] - d[..., 1] * p[..., 0]  # (N, L)
    normal = np.stack([-d[..., 1], d[..., 0]], axis=1)  # (N, 2, L): c @ normal = det(d, c)
    det = offset[:, None, :] - np.matmul(candidates, normal)
    det = np.where(planes.active[:, None, :], det, -np.inf)
    worst: FloatArray = det.max(axis=2, initial=-np.inf)
    return worst


def _intersections(planes: HalfPlanes) -> FloatArray:
    """Pairwise intersection points of the boundary lines, (N, L*L, 2) (parallel lines: NaN)."""
    p1 = planes.point[:, :, None, :]
    d1 = planes.direction[:, :, None, :]
    p2 = planes.point[:, None, :, :]
    d2 = planes.direction[:, None, :, :]
    denom = d1[..., 0] * d2[..., 1] - d1[..., 1] * d2[..., 0]
    diff = p2 - p1
    t = (diff[..., 0] * d2[..., 1] - diff[..., 1] * d2[..., 0]) / np.where(
        np.abs(denom) > 1e-12, denom, np.nan
    )
    pts = p1 + t[..., None] * d1
    both = planes.active[:, :, None] & planes.active[:, None, :]
    pts = np.where(both[..., None], pts, np.nan)
    n, n_lines = planes.active.shape
    out: FloatArray = pts.reshape(n, n_lines * n_lines, 2)
    return out


def choose_velocities(
    planes: HalfPlanes, preferred: FloatArray, max_speed: FloatArray
) -> FloatArray:
    """The allowed velocity nearest the preferred one for each agent (see the module doc).

    Args:
        planes: the agents' half-planes (N agents, L constraints each).
        preferred: (N, 2) preferred velocities.
        max_speed: (N,) speed limits.

    Returns:
        (N, 2) new velocities, never faster than max_speed.
    """
    n = len(preferred)
    if n == 0:
        return np.zeros((0, 2))
    d = planes.direction
    # Projection of the preferred velocity onto each boundary line.
    t = np.einsum("nli,nli->nl", preferred[:, None, :] - planes.point, d)
    projections = planes.point + t[..., None] * d
    angles = np.linspace(0.0, 2 * np.pi, _POLAR_DIRECTIONS, endpoint=False)
    unit = np.stack([np.cos(angles), np.sin(angles)], axis=1)
    polar = (np.asarray(_POLAR_SPEEDS)[:, None, None] * unit[None]).reshape(-1, 2)
    candidates = np.concatenate(
        [
            preferred[:, None, :],
            projections,
            _intersections(planes),
            polar[None, :, :] * max_speed[:, None, None],
            np.zeros((n, 1, 2)),
        ],
        axis=1,
    )
    # Clip to the speed limit; unusable (NaN) candidates become standing still.
    candidates = np.nan_to_num(candidates, nan=0.0, posinf=0.0, neginf=0.0)
    speed = np.linalg.norm(candidates, axis=2)
    scale = np.minimum(1.0, max_speed[:, None] / np.maximum(speed, 1e-12))
    candidates = candidates * scale[..., None]
    worst = _violation(planes, candidates)
    feasible = worst <= _FEASIBLE_TOL
    cost = np.einsum(
        "nci,nci->nc", candidates - preferred[:, None], candidates - preferred[:, None]
    )
    # Feasible candidates are ranked by distance to the preferred velocity; when an agent has
    # none, by how much they violate their worst constraint.
    any_feasible: NDArray[np.bool_] = np.asarray(feasible.any(axis=1))
    rank = np.where(
        any_feasible[:, None],
        np.where(feasible, cost, np.inf),
        worst,
    )
    best = np.argmin(rank, axis=1)
    chosen: FloatArray = candidates[np.arange(n), best]
    return chosen
