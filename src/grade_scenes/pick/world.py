"""The pick-and-place world: a tabletop scene in the simulator's MuJoCo model, with the Panda.

The scene (table, floor, lights, loose objects with their hull contacts) is built by the
simulator's own public builder (`grade_sim.scene.build_scene` + `build_model`, as
`grade_scenes.settle` does); robosuite's Franka Panda MJCF with its parallel gripper
(`grippers/panda_gripper.xml`, mounted on the flange as robosuite mounts it) is then attached
to that MjSpec at the base pose the reachability map uses (`reach.robot.base_pose_world`, on
the same pedestal), with a drop-off bin beside it, a head RGB-D camera (the scene file's
reference camera, where SceneReplica's robot has its head camera) and a wrist camera.

The arm keeps robosuite's torque motors; `execute` closes a joint-position loop on them
(PD plus MuJoCo's bias forces). The fingers are robosuite's position servos (20 N each).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import mujoco
import numpy as np
import trimesh

from grade_common.types import FloatArray
from grade_scenes.assets import robosuite_assets
from grade_scenes.reach.robot import (
    ARM_JOINTS,
    TCP_OFFSET_M,
    ArmModel,
    add_pedestal,
    base_pose_world,
)
from grade_scenes.settle import tabletop_scenario
from grade_scenes.table import TableConfig
from grade_sim.config.tabletop import load_tabletop_scene
from grade_sim.engine.mujoco.builder import build_model
from grade_sim.scene import build_scene

PREFIX = "panda/"
GRIPPER_PREFIX = "gripper/"
FINGER_JOINTS = ("finger_joint1", "finger_joint2")
FINGER_OPEN_M = 0.04  # each finger's travel: 8 cm between the pads when open
PAD_BELOW_TCP_M = 0.01  # the finger pads' centre lies 1 cm short of the TCP, towards the flange
HEAD_CAMERA = "head_camera"
WRIST_CAMERA = "wrist_camera"
VIEW_CAMERA = "view_camera"  # an oblique view for contact sheets


@dataclass(frozen=True)
class BinSpec:
    """The drop-off bin beside the robot: a floor plate on a stand and four low walls."""

    center_xy: tuple[float, float] = (0.15, -0.5)
    floor_z_m: float = 0.6
    inner_half_m: float = 0.13
    wall_height_m: float = 0.1


@dataclass
class PickWorld:
    """The compiled model, the live physics state and the indices the protocol needs."""

    model: mujoco.MjModel
    data: mujoco.MjData
    table: TableConfig
    bin: BinSpec
    object_names: tuple[str, ...]
    object_bodies: tuple[int, ...]
    object_geoms: tuple[int, ...]  # one collision geom (the hull) per object
    object_qpos: tuple[int, ...]  # free joint qpos address per object
    arm_qpos: np.ndarray
    arm_dofs: np.ndarray
    arm_actuators: np.ndarray
    finger_qpos: np.ndarray
    finger_dofs: np.ndarray
    finger_actuators: np.ndarray
    pad_geoms: tuple[int, int]
    tcp_site: int
    robot_geoms: frozenset[int]
    table_geom: int
    scene_file: Path
    scene_name: str
    object_meshes: tuple[str, ...] = ()  # mesh files (centre-of-mass frame), the known models
    pick_order: tuple[str, ...] = ()  # the scene file's fixed ordering

    def planning_arm(self) -> ArmModel:
        """An ArmModel over this model with its own MjData (IK and collision checks never
        disturb the physics state); copy the state in with `sync_planning`."""
        joints = [self.model.joint(PREFIX + n) for n in ARM_JOINTS]
        world_geoms = frozenset(
            g for g in range(self.model.ngeom) if int(self.model.geom_bodyid[g]) == 0
        )
        return ArmModel(
            model=self.model,
            data=mujoco.MjData(self.model),
            qpos_ids=self.arm_qpos,
            dof_ids=self.arm_dofs,
            lower=np.array([j.range[0] for j in joints]),
            upper=np.array([j.range[1] for j in joints]),
            tcp_site=self.tcp_site,
            robot_geoms=self.robot_geoms,
            world_geoms=world_geoms,
        )

    def object_hull(self, k: int) -> trimesh.Trimesh:
        """Object k's collision hull (what the physics collides) in its body frame."""
        model, g = self.model, self.object_geoms[k]
        mesh = int(model.geom_dataid[g])
        start, count = model.mesh_vertadr[mesh], model.mesh_vertnum[mesh]
        rotation = np.zeros(9)
        mujoco.mju_quat2Mat(rotation, model.geom_quat[g])
        local = np.asarray(model.mesh_vert[start : start + count], dtype=np.float64)
        points = local @ rotation.reshape(3, 3).T + model.geom_pos[g]
        hull: trimesh.Trimesh = trimesh.convex.convex_hull(points)
        return hull

    def object_pose(self, k: int) -> FloatArray:
        """(4, 4) world pose of object k (centre-of-mass frame) in the physics state."""
        pose = np.eye(4)
        pose[:3, :3] = self.data.xmat[self.object_bodies[k]].reshape(3, 3)
        pose[:3, 3] = self.data.xpos[self.object_bodies[k]]
        return pose


def _add_bin(world: mujoco.MjsBody, spec: BinSpec) -> None:
    cx, cy = spec.center_xy
    half, wall = spec.inner_half_m, 0.01
    box = mujoco.mjtGeom.mjGEOM_BOX
    rgba = [0.35, 0.45, 0.6, 1.0]
    stand_half_z = (spec.floor_z_m - 0.01) / 2
    world.add_geom(
        name="bin_stand", type=box, size=[0.1, 0.1, stand_half_z], pos=[cx, cy, stand_half_z]
    )
    world.add_geom(
        name="bin_floor",
        type=box,
        size=[half + wall, half + wall, 0.005],
        pos=[cx, cy, spec.floor_z_m - 0.005],
        rgba=rgba,
    )
    hz = spec.wall_height_m / 2
    z = spec.floor_z_m + hz
    for k, (dx, dy, sx, sy) in enumerate(
        [
            (half + wall / 2, 0, wall / 2, half),
            (-half - wall / 2, 0, wall / 2, half),
            (0, half + wall / 2, half + wall, wall / 2),
            (0, -half - wall / 2, half + wall, wall / 2),
        ]
    ):
        world.add_geom(
            name=f"bin_wall_{k}", type=box, size=[sx, sy, hz], pos=[cx + dx, cy + dy, z], rgba=rgba
        )


def _look_at_quat(position: FloatArray, target: FloatArray) -> list[float]:
    """MuJoCo camera quaternion (wxyz) looking from position at target, image up ~ world up."""
    forward = (target - position) / np.linalg.norm(target - position)
    right = np.cross(forward, [0.0, 0.0, 1.0])
    right /= np.linalg.norm(right)
    up = np.cross(right, forward)
    rot = np.stack([right, up, -forward], axis=1)  # camera x right, y up, looks along -z
    quat = np.zeros(4)
    mujoco.mju_mat2Quat(quat, rot.ravel())
    return [float(v) for v in quat]


def build_pick_world(scene_file: str | Path, timestep_s: float, bin_spec: BinSpec) -> PickWorld:
    """The scene with the Panda at its base pose, the bin and the cameras (module doc).

    Raises:
        AssetsMissingError: robosuite (the arm's model files) is not installed.
        ConfigError: the scene file is missing or invalid.
    """
    file = Path(scene_file)
    scene_spec = load_tabletop_scene(file)
    t = scene_spec.table
    table = TableConfig(
        size_m=t.size_m,
        top_height_m=t.top_height_m,
        thickness_m=t.thickness_m,
        center_x_m=t.center_xy[0],
    )
    built = build_model(build_scene(tabletop_scenario(file)))
    spec = built.spec
    spec.option.timestep = timestep_s
    assets = robosuite_assets()
    arm = mujoco.MjSpec.from_file(str(assets / "robots" / "panda" / "robot.xml"))
    gripper = mujoco.MjSpec.from_file(str(assets / "grippers" / "panda_gripper.xml"))
    hand = arm.body("right_hand")
    hand.add_site(name="tcp", pos=[0.0, 0.0, TCP_OFFSET_M])
    hand.add_camera(
        name=WRIST_CAMERA, pos=[0.06, 0.0, 0.02], quat=[0.0, 0.7071068, 0.7071068, 0.0], fovy=75
    )
    for pad in ("finger1_pad_collision", "finger2_pad_collision"):
        # robosuite's pads give no torsional friction (condim 3): an object held off its centre
        # of mass turns about the grasp axis and slides out. A real pad's rubber patch resists.
        gripper.geom(pad).condim = 4
    hand.add_frame().attach_body(gripper.body("right_gripper"), GRIPPER_PREFIX, "")
    base = base_pose_world(table)
    spec.worldbody.add_frame(pos=base[:3, 3].tolist()).attach_body(arm.body("base"), PREFIX, "")
    add_pedestal(spec.worldbody, table, name="arm_pedestal")
    _add_bin(spec.worldbody, bin_spec)
    cam = scene_spec.camera
    head_pos, head_target = np.array(cam.position_xyz), np.array(cam.target_xyz)
    fovy = float(
        np.degrees(2 * np.arctan(np.tan(np.radians(cam.hfov_deg) / 2) * cam.height / cam.width))
    )
    spec.worldbody.add_camera(
        name=HEAD_CAMERA,
        pos=head_pos.tolist(),
        quat=_look_at_quat(head_pos, head_target),
        fovy=fovy,
    )
    view_pos = np.array([1.45, -1.15, 1.6])
    view_target = np.array([0.4, -0.2, table.top_height_m + 0.22])
    spec.worldbody.add_camera(
        name=VIEW_CAMERA, pos=view_pos.tolist(), quat=_look_at_quat(view_pos, view_target), fovy=50
    )
    model = spec.compile()
    data = mujoco.MjData(model)
    names = tuple(o.name for o in scene_spec.objects)
    bodies = tuple(model.body(n).id for n in names)
    geoms = tuple(
        next(
            g
            for g in range(model.ngeom)
            if int(model.geom_bodyid[g]) == b and model.geom_contype[g]
        )
        for b in bodies
    )
    robot_bodies = {b for b in range(model.nbody) if model.body(b).name.startswith(PREFIX)}
    robot_geoms = frozenset(
        g
        for g in range(model.ngeom)
        if int(model.geom_bodyid[g]) in robot_bodies
        and (model.geom_contype[g] or model.geom_conaffinity[g])
    )
    table_geom = next(g for g in range(model.ngeom) if model.geom(g).name.endswith(":table"))
    arm_joints = [model.joint(PREFIX + n) for n in ARM_JOINTS]
    fingers = [model.joint(PREFIX + GRIPPER_PREFIX + n) for n in FINGER_JOINTS]
    g = PREFIX + GRIPPER_PREFIX
    world = PickWorld(
        model=model,
        data=data,
        table=table,
        bin=bin_spec,
        object_names=names,
        object_bodies=bodies,
        object_geoms=geoms,
        object_qpos=tuple(int(model.joint(f"{n}/free").qposadr[0]) for n in names),
        arm_qpos=np.array([j.qposadr[0] for j in arm_joints]),
        arm_dofs=np.array([j.dofadr[0] for j in arm_joints]),
        arm_actuators=np.array([model.actuator(f"{PREFIX}torq_j{i}").id for i in range(1, 8)]),
        finger_qpos=np.array([j.qposadr[0] for j in fingers]),
        finger_dofs=np.array([j.dofadr[0] for j in fingers]),
        finger_actuators=np.array(
            [model.actuator(f"{g}gripper_finger_joint{i}").id for i in (1, 2)]
        ),
        pad_geoms=(
            model.geom(f"{g}finger1_pad_collision").id,
            model.geom(f"{g}finger2_pad_collision").id,
        ),
        tcp_site=model.site(PREFIX + "tcp").id,
        robot_geoms=robot_geoms,
        table_geom=table_geom,
        scene_file=file,
        scene_name=scene_spec.name,
        object_meshes=tuple(o.mesh for o in scene_spec.objects),
        pick_order=scene_spec.pick_order,
    )
    return world
