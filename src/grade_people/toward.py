"""Walks that meet a robot head-on or across its path (`people.toward_robots`).

TUM's and GRADE's walking sequences have people walking toward and across the camera. A crowd
whose goals are drawn uniformly in free space rarely does that, so a share of the walks of a
scripted crowd (grade_people.crowd) go to meet a robot on its planned path: to the point beside
the path where the walker, going straight at their speed, gets when the robot does (the robot's
planned position a few seconds after the walk starts, moved sideways by the two bodies' radii,
the clearance and a seeded gap, on the far side of the path from the walker), and on past the
robot, back along its path. A walker ahead of the robot walks toward its camera; one beside the
path crosses the view in front of it.

Core module (numpy only): the robots' plans come in as plain arrays on the physics step grid.
"""

from __future__ import annotations

import math

import numpy as np

from grade_common.occupancy import OccupancyGrid
from grade_common.types import FloatArray

# Meeting times searched after the walk starts, this far apart.
LEAD_S = (1.5, 12.0)
LEAD_STRIDE_S = 0.1
# Free floor kept between the walker's and the robot's bodies where they meet (the scenario's
# robot clearance comes on top).
SIDE_GAP_M = (0.5, 1.5)
# After the meeting point the walk goes on this far back along the robot's path.
PASS_M = 2.5
# Walks toward the meeting point within 75 degrees of the robot's own heading (the walker's
# back to its camera) are not drawn.
MAX_ALONG_COS = 0.25


def meet_robot(
    start_xy: FloatArray,
    speed_mps: float,
    step: int,
    dt_s: float,
    path_xy: FloatArray,
    yaw_rad: FloatArray,
    robot_radius_m: FloatArray,
    keep_clear_m: float,
    min_distance_m: float,
    grid: OccupancyGrid,
    rng: np.random.Generator,
) -> list[FloatArray] | None:
    """Where a walk that meets a robot beside its path goes: the meeting point, then (where the
    floor is free) a point PASS_M back along the robot's path.

    Args:
        start_xy: where the walk starts.
        speed_mps: the walker's speed.
        step: the physics step the walk starts at; dt_s: the physics step.
        path_xy: (n_steps, R, 2) the robots' planned positions at every physics step.
        yaw_rad: (n_steps, R) their planned headings (where a forward camera looks).
        robot_radius_m: (R,) the discs around their footprints.
        keep_clear_m: the walker's radius plus the clearance kept to robots.
        min_distance_m: shorter walks are not drawn.
        grid: the walker's planning grid; the points are on its free cells.
        rng: draws the robot order and the gap.

    Returns:
        One or two points, or None when no robot's path has a free meeting point the walker
        reaches in time.
    """
    n_steps, n_robots = yaw_rad.shape
    order = rng.permutation(n_robots)
    gap_m = float(rng.uniform(*SIDE_GAP_M))
    first = step + math.ceil(LEAD_S[0] / dt_s)
    last = min(n_steps - 1, step + math.floor(LEAD_S[1] / dt_s))
    if first > last:
        return None
    ks = np.arange(first, last + 1, max(1, round(LEAD_STRIDE_S / dt_s)))
    lead_s = (ks - step) * dt_s
    start = np.asarray(start_xy, dtype=np.float64)
    for r in order:
        centre = path_xy[ks, r]
        ahead = np.stack([np.cos(yaw_rad[ks, r]), np.sin(yaw_rad[ks, r])], axis=1)
        left = np.stack([-ahead[:, 1], ahead[:, 0]], axis=1)
        # The far side of the path first (the walk crosses the view), then the near side.
        start_side = np.where(np.einsum("ij,ij->i", start - centre, left) >= 0.0, 1.0, -1.0)
        offset = (float(robot_radius_m[r]) + keep_clear_m + gap_m) * left
        for side in (-start_side, start_side):
            meet = centre + side[:, None] * offset
            walk = meet - start
            dist = np.linalg.norm(walk, axis=1)
            ok = (
                (dist / speed_mps <= lead_s)
                & (dist >= min_distance_m)
                & (np.einsum("ij,ij->i", walk, ahead) <= MAX_ALONG_COS * dist)
            )
            for k in np.flatnonzero(ok):
                if not grid.is_free(meet[k]):
                    continue
                past = meet[k] - PASS_M * ahead[k]
                if grid.segment_is_free(meet[k], past):
                    return [meet[k], past]
                return [meet[k]]
    return None
