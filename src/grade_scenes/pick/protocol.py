"""SceneReplica's pick-and-place protocol for one scene, in MuJoCo physics, without ROS.

For each object, nearest to the robot first (SceneReplica's near-to-far ordering): perceive
(ground-truth poses from the physics state, with optional seeded noise), plan a grasp
(`grasp`), solve IK for the pre-grasp (`pregrasp_m` above) and grasp poses
(`reach.ik.solve_top_down` with the closing axis fixed), plan a collision-checked joint path to
the pre-grasp and a straight descent (`motion`), then execute it in physics (`execute`): open,
descend, close, lift, hold `hold_s`, move over the bin, open. The object then leaves the scene
(it is parked off the table, so the bin never overflows) and the arm returns home.

Per object: grasped (both fingers touch it after closing), lifted (it is still raised
`min_lift_m` and between the fingers after the hold: SceneReplica's grasp success), placed (it
rests inside the bin), the simulated time of the attempt, and the cause of a failure: no grasp
found, IK failure, collision (no free path, or the arm touched the table or another object while
moving), missed (closed without lifting it), slip (lifted, then lost).
"""

from __future__ import annotations

import enum
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import mujoco
import numpy as np
import trimesh
from scipy.spatial.transform import Rotation

from grade_common.schema import Checked, Wording, bounds
from grade_common.types import FloatArray
from grade_scenes.errors import ObjectSetError, ScenesError
from grade_scenes.pick.execute import Executor
from grade_scenes.pick.grasp import (
    Grasp,
    GraspConfig,
    collision_free,
    gripper_shapes,
    obstacle_manager,
    sample_grasps,
)
from grade_scenes.pick.motion import Carried, cartesian_line, first_collision, plan_joint_path
from grade_scenes.pick.record import BagRecorder
from grade_scenes.pick.world import BinSpec, PickWorld, build_pick_world
from grade_scenes.reach.ik import home_contacts, solve_top_down
from grade_scenes.reach.robot import HOME_Q, ArmModel


class Perception(enum.Enum):
    GROUND_TRUTH = "ground_truth"  # poses from the physics state (+ pose noise)


class Failure(enum.Enum):
    NONE = "none"
    NO_GRASP = "no_grasp"  # no antipodal top-down grasp fits and is collision-free
    IK_FAILURE = "ik_failure"  # no ranked grasp has IK solutions for pre-grasp and grasp
    COLLISION = "collision"  # no collision-free path, or an unplanned contact while moving
    MISSED = "missed"  # the gripper closed but the object did not come up
    SLIP = "slip"  # lifted, then lost during the hold or the transfer
    NOT_IN_BIN = "not_in_bin"  # released, but it did not come to rest in the bin


@dataclass(frozen=True)
class PickConfig(Checked):
    WORDING = Wording(error=ObjectSetError, root="pick")

    seed: int = field(default=0, metadata=bounds(0, 2**32 - 1))
    timestep_s: float = field(default=0.002, metadata=bounds(1e-4, 0.01))
    perception: Perception = Perception.GROUND_TRUTH
    pose_noise_m: float = field(default=0.0, metadata=bounds(0.0, 0.05))
    pose_noise_deg: float = field(default=0.0, metadata=bounds(0.0, 30.0))
    pregrasp_m: float = field(default=0.12, metadata=bounds(0.02, 0.5))
    lift_m: float = field(default=0.15, metadata=bounds(0.02, 0.5))
    min_lift_m: float = field(default=0.08, metadata=bounds(0.01, 0.5))
    hold_s: float = field(default=2.0, metadata=bounds(0.0, 30.0))
    max_speed_rad_s: float = field(default=1.0, metadata=bounds(0.05, 3.0))
    drop_height_m: float = field(default=0.3, metadata=bounds(0.05, 1.0))  # TCP above bin floor
    ik_restarts: int = field(default=4, metadata=bounds(0, 100))  # random IK seeds per grasp


@dataclass(frozen=True)
class ObjectOutcome:
    name: str
    grasped: bool
    lifted: bool
    placed: bool
    failure: Failure
    sim_time_s: float
    wall_time_s: float
    grasp_width_m: float | None = None


@dataclass(frozen=True)
class SceneOutcome:
    scene: str
    objects: tuple[ObjectOutcome, ...]
    frames: tuple[tuple[str, np.ndarray], ...] = ()  # (label, RGB) snapshots if requested


def _perceive(world: PickWorld, k: int, config: PickConfig, rng: np.random.Generator) -> FloatArray:
    pose = world.object_pose(k)
    if config.pose_noise_m > 0 or config.pose_noise_deg > 0:
        pose[:3, 3] += rng.normal(scale=config.pose_noise_m, size=3) * [1, 1, 0]
        turn = Rotation.from_rotvec(np.radians(config.pose_noise_deg) * rng.normal(size=3))
        pose[:3, :3] = turn.as_matrix() @ pose[:3, :3]
    return pose


def _sync(world: PickWorld, arm: ArmModel) -> None:
    arm.data.qpos[:] = world.data.qpos
    mujoco.mj_forward(arm.model, arm.data)


def _held_pairs(world: PickWorld, k: int) -> frozenset[tuple[int, int]]:
    g = world.object_geoms[k]
    return frozenset((min(g, r), max(g, r)) for r in world.robot_geoms)


@dataclass
class _Plan:
    grasp: Grasp
    to_pregrasp: FloatArray
    descent: FloatArray


def _plan(
    world: PickWorld,
    arm: ArmModel,
    k: int,
    poses: list[FloatArray],
    hulls: list[trimesh.Trimesh],
    present: list[bool],
    config: PickConfig,
    grasp_config: GraspConfig,
    rng: np.random.Generator,
    self_contacts: frozenset[tuple[int, int]],
    shapes: list[tuple[trimesh.Trimesh, FloatArray]],
) -> _Plan | Failure:
    candidates = sample_grasps(hulls[k], poses[k], world.table.top_height_m, grasp_config, rng)
    obstacles = obstacle_manager(world, hulls, poses, present)
    grasps = collision_free(candidates, shapes, obstacles, grasp_config.keep)
    if not grasps:
        return Failure.NO_GRASP
    _sync(world, arm)
    q_now = world.data.qpos[world.arm_qpos].copy()
    touching = self_contacts | _held_pairs(world, k)  # the open fingers may graze the target
    any_ik = False
    for grasp in grasps:
        tcp = grasp.transform_world_tcp[:3, 3]
        above = tcp + np.array([0.0, 0.0, config.pregrasp_m])
        q_pre = None
        # Near the edge of the reach the ready pose is a poor seed: seeded random restarts too.
        restarts = [rng.uniform(arm.lower, arm.upper) for _ in range(config.ik_restarts)]
        for seed in (q_now, HOME_Q, *restarts):
            q_pre = solve_top_down(arm, above, seed, closing_xy=grasp.closing_xy)
            if q_pre is not None:
                break
        if q_pre is None:
            continue
        descent = cartesian_line(arm, q_pre, tcp, grasp.closing_xy)
        if descent is None:
            continue
        any_ik = True
        if first_collision(arm, descent, touching) is not None:
            continue
        via = solve_top_down(
            arm, above + np.array([0.0, 0.0, 0.2]), q_pre, closing_xy=grasp.closing_xy
        )
        vias = [v for v in (HOME_Q, via) if v is not None]
        to_pre = plan_joint_path(arm, q_now, q_pre, self_contacts, vias)
        if to_pre is None:
            continue
        return _Plan(grasp, to_pre, descent)
    return Failure.COLLISION if any_ik else Failure.IK_FAILURE


def _in_bin(world: PickWorld, k: int) -> bool:
    p = world.data.xpos[world.object_bodies[k]]
    b = world.bin
    inside = np.all(np.abs(p[:2] - np.asarray(b.center_xy)) <= b.inner_half_m)
    return bool(inside and b.floor_z_m <= p[2] <= b.floor_z_m + b.wall_height_m + 0.1)


def _park(world: PickWorld, k: int) -> None:
    """Take object k out of the scene: under the floor, weightless and without contacts (the
    model's arrays are this world's own)."""
    adr = world.object_qpos[k]
    world.data.qpos[adr : adr + 7] = [0.0, 0.5 * k, -5.0, 1.0, 0.0, 0.0, 0.0]
    body = world.object_bodies[k]
    dof = int(world.model.body_dofadr[body])
    world.data.qvel[dof : dof + 6] = 0.0
    world.model.body_gravcomp[body] = 1.0
    geom = world.object_geoms[k]
    world.model.geom_contype[geom] = 0
    world.model.geom_conaffinity[geom] = 0
    mujoco.mj_forward(world.model, world.data)


def _drop_configuration(world: PickWorld, arm: ArmModel, height_m: float) -> FloatArray:
    """The arm with its TCP `height_m` over the bin's centre, pointing down.

    Raises:
        ScenesError: the bin is out of the arm's reach at that height.
    """
    b = world.bin
    target = np.array([*b.center_xy, b.floor_z_m + height_m])
    q = solve_top_down(arm, target, HOME_Q)
    if q is None:
        raise ScenesError(
            f"the bin at {b.center_xy}, {height_m:.2f} m over its floor, is out of the arm's reach"
        )
    return q


@dataclass
class _SceneState:
    """What the attempts of one scene share."""

    world: PickWorld
    executor: Executor
    arm: ArmModel  # the planning copy
    hulls: list[trimesh.Trimesh]
    present: list[bool]  # still in the scene
    config: PickConfig
    grasp_config: GraspConfig
    rng: np.random.Generator
    self_contacts: frozenset[tuple[int, int]]  # the arm's own contacts in the home pose
    shapes: list[tuple[trimesh.Trimesh, FloatArray]]  # the open gripper, TCP frame
    snapshot: Callable[[PickWorld, str], None] | None


def _attempt(state: _SceneState, k: int) -> ObjectOutcome:
    """One attempt at object k (module doc); the object leaves the scene afterwards if it is
    no longer on the table."""
    world, executor, arm = state.world, state.executor, state.arm
    present, hulls, config, rng = state.present, state.hulls, state.config, state.rng
    self_contacts = state.self_contacts
    t_sim, t_wall = executor.time_s, time.perf_counter()
    name = world.object_names[k]
    poses = [_perceive(world, j, config, rng) for j in range(len(present))]
    plan = _plan(
        world,
        arm,
        k,
        poses,
        hulls,
        present,
        config,
        state.grasp_config,
        rng,
        self_contacts,
        state.shapes,
    )

    def outcome(grasped: bool, lifted: bool, placed: bool, failure: Failure) -> ObjectOutcome:
        return ObjectOutcome(
            name,
            grasped,
            lifted,
            placed,
            failure,
            executor.time_s - t_sim,
            time.perf_counter() - t_wall,
            None if isinstance(plan, Failure) else plan.grasp.width_m,
        )

    if isinstance(plan, Failure):
        return outcome(False, False, False, plan)
    z0 = float(world.data.xpos[world.object_bodies[k], 2])
    executor.unplanned_contacts = 0
    executor.held_object = None

    def shot(what: str) -> None:
        if state.snapshot is not None:
            state.snapshot(world, f"{name}: {what}")

    executor.set_gripper(True, 0.2)
    executor.follow(plan.to_pregrasp)
    shot("pre-grasp")
    executor.held_object = k  # the fingers come close to the target from here on
    executor.follow(plan.descent)
    collided = executor.unplanned_contacts > 0
    executor.set_gripper(False, 0.8)
    shot("closed")
    grasped = executor.pads_touch(world.object_geoms[k])
    lift = plan.descent[::-1]
    _sync(world, arm)
    up = cartesian_line(
        arm,
        lift[0],
        plan.grasp.transform_world_tcp[:3, 3] + [0, 0, config.lift_m],
        plan.grasp.closing_xy,
    )
    executor.follow(up if up is not None else lift)
    executor.wait(config.hold_s)
    shot(f"held {config.hold_s:g} s")
    z = float(world.data.xpos[world.object_bodies[k], 2])
    tcp = world.data.site_xpos[world.tcp_site]
    near = float(np.linalg.norm(world.data.xpos[world.object_bodies[k]] - tcp)) < 0.12
    lifted = grasped and z - z0 >= config.min_lift_m and near
    if not lifted:
        failure = (
            Failure.COLLISION if collided else (Failure.SLIP if z - z0 > 0.02 else Failure.MISSED)
        )
        executor.set_gripper(True, 0.4)
        _return_home(world, executor, arm, self_contacts)
        _clear_if_off_table(world, k, present)
        return outcome(grasped, False, False, failure)
    _sync(world, arm)
    carry = Carried.grasped(arm, world, k)
    holding = self_contacts | _held_pairs(world, k)
    q_lift = world.data.qpos[world.arm_qpos].copy()
    # Over the bin, the held object's lowest point must clear the walls.
    hull_world = hulls[k].copy().apply_transform(world.object_pose(k))
    below_m = float(world.data.site_xpos[world.tcp_site, 2] - hull_world.bounds[0, 2])
    b = world.bin
    drop_m = max(config.drop_height_m, b.wall_height_m + below_m + 0.03)
    q_drop = _drop_configuration(world, arm, drop_m)
    raised = solve_top_down(arm, world.data.site_xpos[world.tcp_site] + [0.0, 0.0, 0.2], q_lift)
    vias = [v for v in (raised, HOME_Q) if v is not None]
    path = plan_joint_path(arm, q_lift, q_drop, holding, vias, carry)
    if path is None:
        executor.set_gripper(True, 0.6)
        _return_home(world, executor, arm, self_contacts)
        _clear_if_off_table(world, k, present)
        return outcome(True, True, False, Failure.COLLISION)
    executor.follow(path)
    shot("over the bin")
    still = (
        float(
            np.linalg.norm(
                world.data.xpos[world.object_bodies[k]] - world.data.site_xpos[world.tcp_site]
            )
        )
        < 0.12
    )
    executor.set_gripper(True, 1.0)
    executor.held_object = None
    executor.wait(1.0)
    placed = still and _in_bin(world, k)
    failure = Failure.NONE if placed else (Failure.SLIP if not still else Failure.NOT_IN_BIN)
    _park(world, k)
    present[k] = False
    _return_home(world, executor, arm, self_contacts)
    return outcome(True, True, placed, failure)


def _return_home(
    world: PickWorld, executor: Executor, arm: ArmModel, self_contacts: frozenset[tuple[int, int]]
) -> None:
    _sync(world, arm)
    q = world.data.qpos[world.arm_qpos].copy()
    up = solve_top_down(arm, world.data.site_xpos[world.tcp_site] + [0, 0, 0.15], q)
    path = plan_joint_path(arm, q, HOME_Q, self_contacts, [up] if up is not None else [])
    held, executor.held_object = executor.held_object, None
    executor.follow(path if path is not None else np.vstack([q, HOME_Q]), watch=False)
    executor.held_object = held


def _clear_if_off_table(world: PickWorld, k: int, present: list[bool]) -> None:
    p = world.data.xpos[world.object_bodies[k]]
    t = world.table
    on = abs(p[0] - t.center_x_m) <= t.size_m[0] / 2 and abs(p[1]) <= t.size_m[1] / 2
    if not (on and p[2] > t.top_height_m - 0.01):
        _park(world, k)
        present[k] = False


def pick_order(world: PickWorld, present: list[bool]) -> list[int]:
    """Objects still present, nearest to the robot's base first (ties by name)."""
    base = world.data.xpos[world.model.body("panda/base").id][:2]
    dist = [float(np.linalg.norm(world.data.xpos[b][:2] - base)) for b in world.object_bodies]
    return sorted(
        (k for k in range(len(present)) if present[k]),
        key=lambda k: (dist[k], world.object_names[k]),
    )


def run_scene(
    scene_file: str | Path,
    config: PickConfig,
    grasp_config: GraspConfig | None = None,
    settle_s: float = 1.0,
    snapshot: Callable[[PickWorld, str], None] | None = None,
    bag_dir: Path | None = None,
) -> SceneOutcome:
    """All objects of one scene, near to far (module doc). `snapshot(world, label)` is called
    once with label "start" (settled, arm at home) and at the key moments of each attempt
    ("OBJECT: pre-grasp", ...), when given. With `bag_dir` (a new path), the arm's joint
    states and commands are recorded there (`record`)."""
    grasp_config = grasp_config or GraspConfig()
    world = build_pick_world(scene_file, config.timestep_s, BinSpec())
    rng = np.random.default_rng(config.seed)
    d = world.data
    d.qpos[world.arm_qpos] = HOME_Q
    d.qpos[world.finger_qpos] = [0.04, -0.04]
    mujoco.mj_forward(world.model, d)
    executor = Executor(world, config.max_speed_rad_s)
    if bag_dir is not None:
        executor.recorder = BagRecorder(bag_dir)
        executor.record_state()  # t = 0: the samples then fall on the rate's grid
    try:
        return _run_objects(world, executor, config, grasp_config, settle_s, snapshot, rng)
    except BaseException:
        if executor.recorder is not None:
            executor.recorder.abort()
            executor.recorder = None
        raise
    finally:
        if executor.recorder is not None:
            executor.recorder.close()


def _run_objects(
    world: PickWorld,
    executor: Executor,
    config: PickConfig,
    grasp_config: GraspConfig,
    settle_s: float,
    snapshot: Callable[[PickWorld, str], None] | None,
    rng: np.random.Generator,
) -> SceneOutcome:
    executor.wait(settle_s)
    arm = world.planning_arm()
    _sync(world, arm)
    hulls = [world.object_hull(k) for k in range(len(world.object_names))]
    present = [True] * len(world.object_names)
    state = _SceneState(
        world,
        executor,
        arm,
        hulls,
        present,
        config,
        grasp_config,
        rng,
        home_contacts(arm),
        gripper_shapes(world),
        snapshot,
    )
    if snapshot is not None:
        snapshot(world, "start")
    outcomes = []
    tried: set[int] = set()
    while True:
        order = [k for k in pick_order(world, present) if k not in tried]
        if not order:
            break
        k = order[0]
        tried.add(k)
        outcomes.append(_attempt(state, k))
    return SceneOutcome(world.scene_name, tuple(outcomes))
