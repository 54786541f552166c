"""Which blocks of the table grid the arm reaches: collision-free IK to a stand-off pose above
each block, iterated as SceneReplica does.

Pass 1 visits every block from the home pose and from seeded random restarts; later passes
retry each unreachable block from its reachable neighbours' solutions (IK is local, so a nearby
solution is the best seed), until a pass adds no block.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from grade_common.atomic import StagedOutput
from grade_common.types import FloatArray
from grade_scenes.errors import ScenesError
from grade_scenes.reach.ik import home_contacts, in_collision, solve_top_down
from grade_scenes.reach.robot import HOME_Q, TCP_OFFSET_M, ArmModel, base_pose_world, build_arm
from grade_scenes.table import TableConfig


@dataclass(frozen=True)
class ReachabilityMap:
    """Reachable blocks of the grid and one joint solution for each."""

    table: TableConfig
    standoff_m: float  # TCP height above the table top
    reachable: np.ndarray  # (n, n) bool, [i, j] = row along x, column along y
    joints_rad: FloatArray  # (n, n, 7), NaN where unreachable
    passes: int
    base_pose_world: FloatArray  # (4, 4) the arm's base in the world frame
    tcp_offset_m: float  # tool centre point beyond the flange, along its z axis

    def is_reachable_xy(self, xy: FloatArray) -> bool:
        cell = self.table.cell_of(np.asarray(xy))
        return cell is not None and bool(self.reachable[cell])


def _try(
    arm: ArmModel,
    target: FloatArray,
    seeds: list[FloatArray],
    allowed: frozenset[tuple[int, int]],
) -> FloatArray | None:
    for seed in seeds:
        q = solve_top_down(arm, target, seed)
        if q is not None and not in_collision(arm, q, allowed):
            return q
    return None


def compute_reachability(
    table: TableConfig, rng: np.random.Generator, standoff_m: float = 0.15, restarts: int = 4
) -> ReachabilityMap:
    """Reachability of every block (see module doc); `rng` draws the random restarts."""
    arm = build_arm(table)
    allowed = home_contacts(arm)
    centers = table.cell_centers_xy()
    n = table.grid_cells
    joints = np.full((n, n, 7), np.nan)
    height = table.top_height_m + standoff_m
    for i in range(n):
        for j in range(n):
            target = np.array([*centers[i, j], height])
            randoms = [rng.uniform(arm.lower, arm.upper) for _ in range(restarts)]
            q = _try(arm, target, [HOME_Q, *randoms], allowed)
            if q is not None:
                joints[i, j] = q
    passes = 1
    while True:
        added = 0
        for i in range(n):
            for j in range(n):
                if not np.isnan(joints[i, j, 0]):
                    continue
                seeds = [
                    joints[a, b]
                    for a, b in ((i - 1, j), (i + 1, j), (i, j - 1), (i, j + 1))
                    if 0 <= a < n and 0 <= b < n and not np.isnan(joints[a, b, 0])
                ]
                target = np.array([*centers[i, j], height])
                q = _try(arm, target, seeds, allowed) if seeds else None
                if q is not None:
                    joints[i, j] = q
                    added += 1
        passes += 1
        if added == 0:
            break
    return ReachabilityMap(
        table,
        standoff_m,
        ~np.isnan(joints[..., 0]),
        joints,
        passes,
        base_pose_world(table),
        TCP_OFFSET_M,
    )


def save_reachability(reach: ReachabilityMap, path: str | Path) -> Path:
    """Write the map as an .npz (reachable, joints_rad, cell centres, table, stand-off, the
    arm's base pose in the world and its TCP offset: the joint solutions mean nothing without
    them)."""
    with StagedOutput(path) as tmp, open(tmp, "wb") as handle:
        np.savez(
            handle,
            reachable=reach.reachable,
            joints_rad=reach.joints_rad,
            cell_centers_xy=reach.table.cell_centers_xy(),
            cell_size_m=reach.table.cell_size_m,
            table_size_m=np.asarray(reach.table.size_m),
            table_top_height_m=reach.table.top_height_m,
            table_center_x_m=reach.table.center_x_m,
            standoff_m=reach.standoff_m,
            passes=reach.passes,
            base_pose_world=reach.base_pose_world,
            tcp_offset_m=reach.tcp_offset_m,
        )
    return Path(path)


def load_reachability(path: str | Path) -> ReachabilityMap:
    """Read a map written by `save_reachability`.

    Raises:
        ScenesError: the file is missing or not such a map.
    """
    try:
        with np.load(path) as data:
            table = TableConfig(
                size_m=(float(data["table_size_m"][0]), float(data["table_size_m"][1])),
                top_height_m=float(data["table_top_height_m"]),
                center_x_m=float(data["table_center_x_m"]),
                grid_cells=int(data["reachable"].shape[0]),
                cell_size_m=float(data["cell_size_m"]),
            )
            return ReachabilityMap(
                table,
                float(data["standoff_m"]),
                np.asarray(data["reachable"], dtype=bool),
                np.asarray(data["joints_rad"]),
                int(data["passes"]),
                np.asarray(data["base_pose_world"], dtype=np.float64),
                float(data["tcp_offset_m"]),
            )
    except (OSError, KeyError, ValueError) as err:
        raise ScenesError(
            f"{path}: not a reachability map ({err}); make one with `grade scenes reach`"
        ) from err
