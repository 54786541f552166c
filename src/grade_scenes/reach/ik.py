"""Inverse kinematics for a top-down stand-off pose: damped least squares on MuJoCo Jacobians.

The target fixes the tool centre point's position and points its approach axis (the flange's z)
straight down; the rotation about that axis (the grasp's yaw) is left free, so 5 of 6 degrees
of freedom are constrained. Joint limits are enforced by clamping after every step. A solution
counts only if it is collision-free: no arm geometry touches the table or the pedestal, and no
two arm links touch that do not already touch in the home pose.
"""

from __future__ import annotations

import mujoco
import numpy as np

from grade_common.types import FloatArray
from grade_scenes.reach.robot import HOME_Q, ArmModel

DOWN = np.array([0.0, 0.0, -1.0])


def _set_q(arm: ArmModel, q: FloatArray) -> None:
    arm.data.qpos[arm.qpos_ids] = q
    mujoco.mj_kinematics(arm.model, arm.data)
    mujoco.mj_comPos(arm.model, arm.data)


def _contact_pairs(arm: ArmModel, q: FloatArray) -> set[tuple[int, int]]:
    arm.data.qpos[arm.qpos_ids] = q
    mujoco.mj_forward(arm.model, arm.data)
    pairs = set()
    for contact in arm.data.contact[: arm.data.ncon]:
        g1, g2 = int(contact.geom1), int(contact.geom2)
        pairs.add((min(g1, g2), max(g1, g2)))
    return pairs


def home_contacts(arm: ArmModel) -> frozenset[tuple[int, int]]:
    """Arm-arm contacts of the home pose: link hulls that overlap by construction."""
    return frozenset(p for p in _contact_pairs(arm, HOME_Q) if set(p) <= arm.robot_geoms)


def in_collision(arm: ArmModel, q: FloatArray, allowed: frozenset[tuple[int, int]]) -> bool:
    """Whether configuration q touches anything that is not the arm (table, pedestal, objects)
    or itself, beyond the `allowed` geom pairs (sorted ids; e.g. the home pose's self-contacts,
    or the fingers and the object they hold). The rest of the model stays as `arm.data` has it."""
    for g1, g2 in _contact_pairs(arm, q):
        robot1, robot2 = g1 in arm.robot_geoms, g2 in arm.robot_geoms
        if (robot1 or robot2) and (g1, g2) not in allowed:
            return True
    return False


def solve_top_down(
    arm: ArmModel,
    target_xyz: FloatArray,
    q_seed: FloatArray,
    iterations: int = 150,
    damping: float = 0.05,
    tolerance_m: float = 2e-3,
    tolerance_rad: float = 0.02,
    closing_xy: FloatArray | None = None,
    approach: FloatArray | None = None,
) -> FloatArray | None:
    """Joint angles that put the TCP at target_xyz pointing down (or along `approach`), or
    None if DLS does not converge.

    Args:
        closing_xy: if given, the tool's y axis (a parallel gripper's closing axis) must lie
            along this direction (2 components: horizontal; 3: any, perpendicular to the
            approach), either sign (the gripper is symmetric): all 6 degrees of freedom are
            then constrained. None leaves the rotation about the approach axis free.
        approach: the direction the tool's z axis must point (a 6-DOF grasp's approach);
            None is straight down.

    Collision is not checked here (see `in_collision`).
    """
    q = np.clip(np.asarray(q_seed, dtype=np.float64), arm.lower, arm.upper)
    closing = None
    if closing_xy is not None:
        c = np.asarray(closing_xy, dtype=np.float64)
        closing = np.array([c[0], c[1], c[2] if len(c) > 2 else 0.0])
        closing /= np.linalg.norm(closing)
    target_axis = DOWN if approach is None else np.asarray(approach) / np.linalg.norm(approach)
    jacp = np.zeros((3, arm.model.nv))
    jacr = np.zeros((3, arm.model.nv))
    best, since_best = np.inf, 0
    for _ in range(iterations):
        _set_q(arm, q)
        position = arm.data.site_xpos[arm.tcp_site]
        rotation = arm.data.site_xmat[arm.tcp_site].reshape(3, 3)
        axis = rotation[:, 2]
        error_pos = np.asarray(target_xyz) - position
        error_rot = np.cross(axis, target_axis)  # rotation vector taking the axis there
        if closing is not None:
            side = rotation[:, 1]
            closing = closing if float(side @ closing) >= 0 else -closing
            error_rot = error_rot + np.cross(side, closing)
        converged = np.linalg.norm(error_pos) < tolerance_m
        converged = converged and np.linalg.norm(error_rot) < tolerance_rad
        if converged and float(axis @ target_axis) > 0:
            return q
        # Stuck at a joint limit or out of reach: give up early, another seed may do better.
        size = float(np.linalg.norm(error_pos)) + 0.1 * float(np.linalg.norm(error_rot))
        if size < 0.99 * best:
            best, since_best = size, 0
        else:
            since_best += 1
            if since_best > 15:
                return None
        mujoco.mj_jacSite(arm.model, arm.data, jacp, jacr, arm.tcp_site)
        # The yaw about the approach axis is free: keep only rotation rows across it.
        u, v = rotation[:, 0], rotation[:, 1]
        if float(axis @ target_axis) < 0:  # opposite: cross() vanishes there, push it over
            error_rot = u * np.pi / 2
        if closing is None:
            rows = [u @ jacr[:, arm.dof_ids], v @ jacr[:, arm.dof_ids]]
            jac = np.vstack([jacp[:, arm.dof_ids], *rows])
            err = np.concatenate([error_pos, [u @ error_rot, v @ error_rot]])
        else:
            jac = np.vstack([jacp[:, arm.dof_ids], jacr[:, arm.dof_ids]])
            err = np.concatenate([error_pos, error_rot])
        step = jac.T @ np.linalg.solve(jac @ jac.T + damping**2 * np.eye(len(err)), err)
        q = np.clip(q + np.clip(step, -0.3, 0.3), arm.lower, arm.upper)
    return None
