"""Motion planning in joint space: straight lines between configurations, checked for collision
at a fine step, with a detour through a raised configuration when the straight line is blocked,
then OMPL's RRT-Connect (the sampling planner MoveIt uses by default, through OMPL's official
Python bindings, seeded) when no detour is free; and Cartesian straight lines (approach, lift)
solved as a chain of seeded IK problems.

Every configuration of a returned path has been checked with `reach.ik.in_collision` on the
planning copy of the world (the arm against the table, the pedestal, the bin, the objects and
itself), so executing it cannot pass through the table.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, replace

import mujoco
import numpy as np

from grade_common.types import FloatArray
from grade_scenes.pick.world import PickWorld
from grade_scenes.reach.ik import in_collision, solve_top_down
from grade_scenes.reach.robot import ArmModel

MAX_STEP_RAD = 0.02  # largest joint change between two checked configurations
RRT_TIME_S = 5.0  # RRT-Connect's budget per query (it stops at its first solution)


@dataclass(frozen=True)
class Carried:
    """An object held by the gripper: it moves with the TCP and is checked like the arm."""

    qpos_adr: int  # its free joint's qpos address
    geom: int
    transform_tcp_object: FloatArray  # (4, 4), fixed while held

    @staticmethod
    def grasped(arm: ArmModel, world: PickWorld, k: int) -> Carried:
        """Object k as it sits in the gripper now (arm.data synced with the physics state)."""
        tcp = np.eye(4)
        tcp[:3, :3] = arm.data.site_xmat[arm.tcp_site].reshape(3, 3)
        tcp[:3, 3] = arm.data.site_xpos[arm.tcp_site]
        return Carried(
            world.object_qpos[k], world.object_geoms[k], np.linalg.inv(tcp) @ world.object_pose(k)
        )

    def place(self, arm: ArmModel, q: FloatArray) -> None:
        """Put the object where the TCP holds it at configuration q (planning data only)."""
        arm.data.qpos[arm.qpos_ids] = q
        mujoco.mj_kinematics(arm.model, arm.data)
        tcp = np.eye(4)
        tcp[:3, :3] = arm.data.site_xmat[arm.tcp_site].reshape(3, 3)
        tcp[:3, 3] = arm.data.site_xpos[arm.tcp_site]
        pose = tcp @ self.transform_tcp_object
        quat = np.zeros(4)
        mujoco.mju_mat2Quat(quat, pose[:3, :3].ravel())
        arm.data.qpos[self.qpos_adr : self.qpos_adr + 3] = pose[:3, 3]
        arm.data.qpos[self.qpos_adr + 3 : self.qpos_adr + 7] = quat


def interpolate(
    q_from: FloatArray, q_to: FloatArray, max_step_rad: float = MAX_STEP_RAD
) -> FloatArray:
    """(n, 7) configurations on the straight joint-space line, both ends included."""
    steps = max(1, int(np.ceil(float(np.max(np.abs(q_to - q_from))) / max_step_rad)))
    s = np.linspace(0.0, 1.0, steps + 1)[:, None]
    out: FloatArray = q_from + s * (q_to - q_from)
    return out


def first_collision(
    arm: ArmModel,
    path: FloatArray,
    allowed: frozenset[tuple[int, int]],
    carried: Carried | None = None,
) -> int | None:
    """Index of the first configuration of `path` in collision, or None if all are free.

    With `carried`, the held object moves with the TCP and counts as part of the arm.
    """
    checked = arm if carried is None else replace(arm, robot_geoms=arm.robot_geoms | {carried.geom})
    for k, q in enumerate(path):
        if carried is not None:
            carried.place(arm, q)
        if in_collision(checked, q, allowed):
            return k
    return None


def plan_joint_path(
    arm: ArmModel,
    q_from: FloatArray,
    q_to: FloatArray,
    allowed: frozenset[tuple[int, int]],
    vias: list[FloatArray],
    carried: Carried | None = None,
    rng: np.random.Generator | None = None,
) -> FloatArray | None:
    """A collision-free path q_from -> q_to: the straight line, else through each via in turn,
    else (with `rng`, which seeds it) RRT-Connect.

    Returns None when no path was found.
    """
    direct = interpolate(q_from, q_to)
    if first_collision(arm, direct, allowed, carried) is None:
        return direct
    for via in vias:
        path = np.vstack([interpolate(q_from, via), interpolate(via, q_to)[1:]])
        if first_collision(arm, path, allowed, carried) is None:
            return path
    if rng is None:
        return None
    return rrt_connect(arm, q_from, q_to, allowed, carried, int(rng.integers(2**31)))


def rrt_connect(
    arm: ArmModel,
    q_from: FloatArray,
    q_to: FloatArray,
    allowed: frozenset[tuple[int, int]],
    carried: Carried | None,
    seed: int,
) -> FloatArray | None:
    """OMPL RRT-Connect in the arm's joint box, shortcut-simplified, densified to
    MAX_STEP_RAD and checked again configuration by configuration; None if it finds nothing
    (or either end is in collision)."""
    from ompl import base as ob
    from ompl import geometric as og
    from ompl import util as ou

    ou.setLogLevel(ou.LogLevel.LOG_NONE)
    # Reseeding after the first sampler exists is what makes each query repeatable (OMPL
    # warns that it is late; the draws that follow are still fixed by the seed).
    ou.RNG.setSeed(seed)
    checked = arm if carried is None else replace(arm, robot_geoms=arm.robot_geoms | {carried.geom})
    dims = len(q_from)
    space = ob.RealVectorStateSpace(dims)
    box = ob.RealVectorBounds(dims)
    for k in range(dims):
        box.setLow(k, float(arm.lower[k]))
        box.setHigh(k, float(arm.upper[k]))
    space.setBounds(box)
    setup = og.SimpleSetup(space)

    def free(state: object) -> bool:
        q = np.array([state[k] for k in range(dims)])  # type: ignore[index]
        if carried is not None:
            carried.place(arm, q)
        return not in_collision(checked, q, allowed)

    setup.setStateValidityChecker(free)
    info = setup.getSpaceInformation()
    info.setStateValidityCheckingResolution(MAX_STEP_RAD / space.getMaximumExtent())
    start, goal = space.allocState(), space.allocState()
    for k in range(dims):
        start[k], goal[k] = float(q_from[k]), float(q_to[k])
    setup.setStartAndGoalStates(start, goal)
    setup.setPlanner(og.RRTConnect(info))
    if not setup.solve(RRT_TIME_S) or not setup.haveExactSolutionPath():
        return None
    setup.simplifySolution()
    states = setup.getSolutionPath()
    waypoints = [
        np.array([states.getState(i)[k] for k in range(dims)])
        for i in range(states.getStateCount())
    ]
    path = np.vstack(
        [interpolate(a, b)[:-1] for a, b in itertools.pairwise(waypoints)] + [waypoints[-1][None]]
    )
    return path if first_collision(arm, path, allowed, carried) is None else None


def cartesian_line(
    arm: ArmModel,
    q_start: FloatArray,
    end_xyz: FloatArray,
    closing: FloatArray,
    step_m: float = 0.01,
    approach: FloatArray | None = None,
) -> FloatArray | None:
    """Configurations moving the TCP in a straight line from where q_start puts it to end_xyz,
    its approach axis along `approach` (default straight down) and its closing axis along
    `closing`; None where IK fails on the way (no collision check).
    """
    arm.data.qpos[arm.qpos_ids] = q_start
    mujoco.mj_kinematics(arm.model, arm.data)
    start = arm.data.site_xpos[arm.tcp_site].copy()
    steps = max(1, int(np.ceil(float(np.linalg.norm(end_xyz - start)) / step_m)))
    path = [np.asarray(q_start, dtype=np.float64)]
    for s in np.linspace(0.0, 1.0, steps + 1)[1:]:
        q = solve_top_down(
            arm, start + s * (end_xyz - start), path[-1], closing_xy=closing, approach=approach
        )
        if q is None or float(np.max(np.abs(q - path[-1]))) > 0.3:
            return None
        path.append(q)
    return np.vstack(
        [interpolate(a, b)[:-1] for a, b in itertools.pairwise(path)] + [path[-1][None]]
    )
