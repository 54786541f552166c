"""SceneReplica's pick-and-place protocol for one scene, in MuJoCo physics, without ROS.

Before each attempt the arm (at home, out of the head camera's view) looks (`perception`: the
pipeline's estimates of the objects still on the table); the ordering picks the target:
near-to-far (the nearest perceived object to the robot's base that was not tried yet) or
fixed (the scene file's `pick_order`, drawn once per scene when it was generated). Then: plan
6-DOF grasps on the estimate (`grasp`), solve IK for the pre-grasp (`pregrasp_m` back along
the approach) and grasp poses (`reach.ik.solve_top_down` with approach and closing axes fixed),
plan a collision-checked joint path to the pre-grasp (straight, one-via detours, then OMPL's
RRT-Connect) and a straight approach (`motion`), then execute it in physics (`execute`): open,
approach, close, lift, hold `hold_s`, move over the bin, open. The object then leaves the scene
(it is parked off the table, so the bin never overflows) and the arm returns home.

Planning sees the estimates, not the physics: the grasp check collides the gripper with the
estimated hulls, and the planning copy of the world puts each object at its estimated pose
(model-based; objects not found are left out). The model-free pipeline has no object poses
for that copy: its joint paths are checked against the table, pedestal, bin and the arm
itself, and its objects' estimated hulls only at the grasp pose.

Per object: grasped (both fingers touch it after closing), lifted (it is still raised
`min_lift_m` and between the fingers after the hold: SceneReplica's grasp success), placed (it
rests inside the bin), the simulated time of the attempt, the pose estimate's ADD and ADD-S
(model-based) and the cause of a failure: not found, no grasp found, IK failure, no path, then
in execution collision (an unplanned contact while moving), missed (closed without lifting
it), slip (lifted, then lost), not in the bin.
"""

from __future__ import annotations

import enum
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

import mujoco
import numpy as np
import trimesh

from grade_common.schema import Checked, Wording, bounds
from grade_common.types import FloatArray
from grade_eval.core.object_pose import add_m, adds_m
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
from grade_scenes.pick.perception import (
    Look,
    Perceiver,
    PerceptionConfig,
    Pipeline,
    make_perceiver,
)
from grade_scenes.pick.record import BagRecorder
from grade_scenes.pick.world import BinSpec, PickWorld, build_pick_world
from grade_scenes.reach.ik import home_contacts, solve_top_down
from grade_scenes.reach.robot import HOME_Q, ArmModel

E = TypeVar("E", bound=enum.Enum)


class Ordering(enum.Enum):
    NEAR_TO_FAR = "near_to_far"  # nearest perceived object first
    FIXED = "fixed"  # the scene file's pick_order


def choice(kind: type[E], value: str, what: str) -> E:
    """The member of enum `kind` named `value`.

    Raises:
        ScenesError: no such member; the message names the value and the allowed ones.
    """
    try:
        return kind(value)
    except ValueError:
        allowed = ", ".join(str(m.value) for m in kind)
        raise ScenesError(f"{what} {value!r} does not exist; allowed: {allowed}") from None


class Failure(enum.Enum):
    NONE = "none"
    NOT_FOUND = "not_found"  # the perception found no segment for it
    NO_GRASP = "no_grasp"  # no antipodal grasp fits and is collision-free
    IK_FAILURE = "ik_failure"  # no ranked grasp has IK solutions for pre-grasp and grasp
    NO_PATH = "no_path"  # IK solutions, but no collision-free path (to the grasp or the bin)
    COLLISION = "collision"  # an unplanned contact while moving
    MISSED = "missed"  # the gripper closed but the object did not come up
    SLIP = "slip"  # lifted, then lost during the hold or the transfer
    NOT_IN_BIN = "not_in_bin"  # released, but it did not come to rest in the bin


@dataclass(frozen=True)
class PickConfig(Checked):
    WORDING = Wording(error=ObjectSetError, root="pick")

    seed: int = field(default=0, metadata=bounds(0, 2**32 - 1))
    timestep_s: float = field(default=0.002, metadata=bounds(1e-4, 0.01))
    pipeline: Pipeline = Pipeline.GROUND_TRUTH
    ordering: Ordering = Ordering.NEAR_TO_FAR
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
    grasp_tilt_deg: float | None = None  # of the approach from straight down
    add_m: float | None = None  # the pose estimate's, model-based only
    add_s_m: float | None = None
    diameter_m: float | None = None


@dataclass(frozen=True)
class SceneOutcome:
    scene: str
    objects: tuple[ObjectOutcome, ...]
    frames: tuple[tuple[str, np.ndarray], ...] = ()  # (label, RGB) snapshots if requested


def _sync(world: PickWorld, arm: ArmModel, look: Look | None = None) -> None:
    """The planning copy in the physics state; with a look, each object where the look puts it
    (not found: out of the way) instead of where it is."""
    arm.data.qpos[:] = world.data.qpos
    if look is not None:
        for k, adr in enumerate(world.object_qpos):
            estimate = look.estimates.get(k)
            if estimate is None or estimate.fit is None:
                arm.data.qpos[adr : adr + 7] = [0.0, 0.5 * k, -5.0, 1.0, 0.0, 0.0, 0.0]
                continue
            quat = np.zeros(4)
            mujoco.mju_mat2Quat(quat, estimate.transform_world_object[:3, :3].ravel())
            arm.data.qpos[adr : adr + 3] = estimate.transform_world_object[:3, 3]
            arm.data.qpos[adr + 3 : adr + 7] = quat
    mujoco.mj_forward(arm.model, arm.data)


def _held_pairs(world: PickWorld, k: int) -> frozenset[tuple[int, int]]:
    g = world.object_geoms[k]
    return frozenset((min(g, r), max(g, r)) for r in world.robot_geoms)


@dataclass
class _Plan:
    grasp: Grasp
    to_pregrasp: FloatArray
    descent: FloatArray


@dataclass
class _SceneState:
    """What the attempts of one scene share."""

    world: PickWorld
    executor: Executor
    arm: ArmModel  # the planning copy
    perceiver: Perceiver
    present: list[bool]  # still in the scene
    config: PickConfig
    grasp_config: GraspConfig
    rng: np.random.Generator
    self_contacts: frozenset[tuple[int, int]]  # the arm's own contacts in the home pose
    shapes: list[tuple[trimesh.Trimesh, FloatArray]]  # the open gripper, TCP frame
    snapshot: Callable[[PickWorld, str], None] | None
    model_points: list[FloatArray]  # per object, for ADD and ADD-S
    on_look: Callable[[PickWorld, Look, int], None] | None = None


def _plan(state: _SceneState, k: int, look: Look) -> _Plan | Failure:
    world, arm, config, rng = state.world, state.arm, state.config, state.rng
    estimate = look.estimates[k]
    base_xy = world.data.xpos[world.model.body("panda/base").id][:2]
    candidates = sample_grasps(
        estimate.hull,
        estimate.transform_world_object,
        world.table.top_height_m,
        state.grasp_config,
        rng,
        base_xy,
        estimate.surface_world,
    )
    obstacles = obstacle_manager(
        world, [(e.hull, e.transform_world_object) for e in look.estimates.values()]
    )
    grasps = collision_free(candidates, state.shapes, obstacles, state.grasp_config.keep)
    if not grasps:
        return Failure.NO_GRASP
    _sync(world, arm, look if config.pipeline is not Pipeline.GROUND_TRUTH else None)
    q_now = world.data.qpos[world.arm_qpos].copy()
    touching = state.self_contacts | _held_pairs(world, k)  # the open fingers may graze it
    any_ik = False
    for grasp in grasps:
        tcp = grasp.transform_world_tcp[:3, 3]
        above = tcp - config.pregrasp_m * grasp.approach
        q_pre = None
        # Near the edge of the reach the ready pose is a poor seed: seeded random restarts too.
        restarts = [rng.uniform(arm.lower, arm.upper) for _ in range(config.ik_restarts)]
        for seed in (q_now, HOME_Q, *restarts):
            q_pre = solve_top_down(
                arm, above, seed, closing_xy=grasp.closing, approach=grasp.approach
            )
            if q_pre is not None:
                break
        if q_pre is None:
            continue
        descent = cartesian_line(arm, q_pre, tcp, grasp.closing, approach=grasp.approach)
        if descent is None:
            continue
        any_ik = True
        if first_collision(arm, descent, touching) is not None:
            continue
        via = solve_top_down(
            arm,
            above + np.array([0.0, 0.0, 0.2]),
            q_pre,
            closing_xy=grasp.closing,
            approach=grasp.approach,
        )
        vias = [v for v in (HOME_Q, via) if v is not None]
        to_pre = plan_joint_path(arm, q_now, q_pre, state.self_contacts, vias, rng=rng)
        if to_pre is None:
            continue
        return _Plan(grasp, to_pre, descent)
    return Failure.NO_PATH if any_ik else Failure.IK_FAILURE


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


def _attempt(state: _SceneState, k: int, look: Look) -> ObjectOutcome:
    """One attempt at object k (module doc); the object leaves the scene afterwards if it is
    no longer on the table."""
    world, executor, arm = state.world, state.executor, state.arm
    present, config = state.present, state.config
    self_contacts = state.self_contacts
    t_sim, t_wall = executor.time_s, time.perf_counter()
    name = world.object_names[k]
    estimate = look.estimates.get(k)
    scores: dict[str, float] = {}
    if estimate is not None and estimate.fit is not None:
        truth, points = world.object_pose(k), state.model_points[k]
        scores = {
            "add_m": add_m(points, truth, estimate.transform_world_object),
            "add_s_m": adds_m(points, truth, estimate.transform_world_object),
        }
    if config.pipeline is Pipeline.MODEL_BASED:
        hull = np.asarray(world.object_hull(k).vertices)
        scores["diameter_m"] = float(np.max(np.linalg.norm(hull[:, None] - hull[None], axis=2)))
    plan = _plan(state, k, look) if estimate is not None else Failure.NOT_FOUND

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
            None if isinstance(plan, Failure) else plan.grasp.tilt_deg,
            **{key: round(v, 6) for key, v in scores.items()},
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
        plan.grasp.closing,
        approach=plan.grasp.approach,
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
        _return_home(state)
        _clear_if_off_table(world, k, present)
        return outcome(grasped, False, False, failure)
    _sync(world, arm)
    carry = Carried.grasped(arm, world, k)
    holding = self_contacts | _held_pairs(world, k)
    q_lift = world.data.qpos[world.arm_qpos].copy()
    # Over the bin, the held object's lowest point must clear the walls.
    hull_world = world.object_hull(k).apply_transform(world.object_pose(k))
    below_m = float(world.data.site_xpos[world.tcp_site, 2] - hull_world.bounds[0, 2])
    b = world.bin
    drop_m = max(config.drop_height_m, b.wall_height_m + below_m + 0.03)
    q_drop = _drop_configuration(world, arm, drop_m)
    raised = solve_top_down(arm, world.data.site_xpos[world.tcp_site] + [0.0, 0.0, 0.2], q_lift)
    vias = [v for v in (raised, HOME_Q) if v is not None]
    path = plan_joint_path(arm, q_lift, q_drop, holding, vias, carry, rng=state.rng)
    if path is None:
        executor.set_gripper(True, 0.6)
        _return_home(state)
        _clear_if_off_table(world, k, present)
        return outcome(True, True, False, Failure.NO_PATH)
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
    _return_home(state)
    return outcome(True, True, placed, failure)


def _return_home(state: _SceneState) -> None:
    world, executor, arm = state.world, state.executor, state.arm
    _sync(world, arm)
    q = world.data.qpos[world.arm_qpos].copy()
    up = solve_top_down(arm, world.data.site_xpos[world.tcp_site] + [0, 0, 0.15], q)
    path = plan_joint_path(
        arm, q, HOME_Q, state.self_contacts, [up] if up is not None else [], rng=state.rng
    )
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


def next_target(
    world: PickWorld, look: Look, present: list[bool], tried: set[int], ordering: Ordering
) -> int | None:
    """The next object to attempt: near-to-far, the found untried object whose estimate lies
    nearest the robot's base (ties by name), else an untried one that was not found; fixed,
    the first untried present object of the scene file's pick_order. None when none is left.

    Raises:
        ScenesError: fixed ordering on a scene file without a pick_order.
    """
    left = [k for k in range(len(present)) if present[k] and k not in tried]
    if not left:
        return None
    if ordering is Ordering.FIXED:
        if not world.pick_order:
            raise ScenesError(
                f"{world.scene_file}: the fixed ordering needs the scene file's pick_order "
                "(written by `grade scenes generate`); use --ordering near_to_far"
            )
        return min(left, key=lambda k: world.pick_order.index(world.object_names[k]))
    base = world.data.xpos[world.model.body("panda/base").id][:2]
    found = [k for k in left if k in look.estimates]
    if not found:
        return min(left, key=lambda k: world.object_names[k])

    def distance(k: int) -> float:
        return float(np.linalg.norm(look.estimates[k].transform_world_object[:2, 3] - base))

    return min(found, key=lambda k: (distance(k), world.object_names[k]))


def run_scene(
    scene_file: str | Path,
    config: PickConfig,
    grasp_config: GraspConfig | None = None,
    settle_s: float = 1.0,
    snapshot: Callable[[PickWorld, str], None] | None = None,
    bag_dir: Path | None = None,
    on_look: Callable[[PickWorld, Look, int], None] | None = None,
) -> SceneOutcome:
    """All objects of one scene, near to far (module doc). `snapshot(world, label)` is called
    once with label "start" (settled, arm at home) and at the key moments of each attempt
    ("OBJECT: pre-grasp", ...), when given. With `bag_dir` (a new path), the arm's joint
    states and commands are recorded there (`record`). `on_look(world, look, target)` is
    called after each look that chose a target."""
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
        return _run_objects(world, executor, config, grasp_config, settle_s, snapshot, rng, on_look)
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
    on_look: Callable[[PickWorld, Look, int], None] | None,
) -> SceneOutcome:
    executor.wait(settle_s)
    arm = world.planning_arm()
    _sync(world, arm)
    meshes = [trimesh.load_mesh(m) for m in world.object_meshes]
    perception = PerceptionConfig(
        pose_noise_m=config.pose_noise_m, pose_noise_deg=config.pose_noise_deg
    )
    # the perception's own random stream: the planner's draws stay those of the seed
    perceiver = make_perceiver(
        config.pipeline, world, meshes, perception, np.random.default_rng(rng.integers(2**63))
    )
    points_rng = np.random.default_rng(rng.integers(2**63))
    model_points = [
        np.asarray(trimesh.sample.sample_surface(m, 1000, seed=points_rng)[0]) for m in meshes
    ]
    present = [True] * len(world.object_names)
    state = _SceneState(
        world,
        executor,
        arm,
        perceiver,
        present,
        config,
        grasp_config,
        rng,
        home_contacts(arm),
        gripper_shapes(world),
        snapshot,
        model_points,
        on_look,
    )
    if snapshot is not None:
        snapshot(world, "start")
    outcomes = []
    tried: set[int] = set()
    try:
        while True:
            look = perceiver.look(world, present)
            k = next_target(world, look, present, tried, config.ordering)
            if k is None:
                break
            if on_look is not None:
                on_look(world, look, k)
            tried.add(k)
            outcomes.append(_attempt(state, k, look))
    finally:
        perceiver.close()
    return SceneOutcome(world.scene_name, tuple(outcomes))
