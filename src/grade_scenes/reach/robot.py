"""The arm: robosuite's Franka Panda (MuJoCo model) on a pedestal at the table's height.

The model is built with MjSpec from robosuite's `robots/panda/robot.xml`; visual meshes are
discarded (collision meshes only, for speed). robosuite mounts its grippers from a separate
file; here a box of the Panda hand's size (with closed fingers) stands for it in collision
checks, and a site 0.1034 m beyond the flange is the tool centre point (TCP), as on the real
hand.
"""

from __future__ import annotations

from dataclasses import dataclass

import mujoco
import numpy as np

from grade_common.types import FloatArray
from grade_scenes.assets import robosuite_assets
from grade_scenes.table import TableConfig

ARM_JOINTS = tuple(f"joint{i}" for i in range(1, 8))
# A comfortable "ready" pose of the Panda (franka_ros), the first IK seed.
HOME_Q = np.array([0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785])
TCP_OFFSET_M = 0.1034
HAND_HALF_SIZE_M = (0.03, 0.105, 0.055)  # hand + fingers, about the flange's z axis


@dataclass
class ArmModel:
    """A compiled arm + table model and the indices IK needs."""

    model: mujoco.MjModel
    data: mujoco.MjData
    qpos_ids: np.ndarray  # arm joints' qpos addresses
    dof_ids: np.ndarray
    lower: FloatArray
    upper: FloatArray
    tcp_site: int
    robot_geoms: frozenset[int]
    world_geoms: frozenset[int]


def base_pose_world(table: TableConfig) -> FloatArray:
    """(4, 4) pose of the arm's base in the world: at the origin, raised to the table top's
    height (the pedestal), axes as the world's (x towards the table)."""
    pose = np.eye(4)
    pose[2, 3] = table.top_height_m
    return pose


def add_pedestal(world: mujoco.MjsBody, table: TableConfig, name: str = "pedestal") -> None:
    """The box the base stands on, from the floor to 1 cm below the base (collides)."""
    world.add_geom(
        name=name,
        type=mujoco.mjtGeom.mjGEOM_BOX,
        size=[0.1, 0.1, (table.top_height_m - 0.01) / 2],
        pos=[-0.05, 0.0, (table.top_height_m - 0.01) / 2],
    )


def build_arm(table: TableConfig, pedestal: bool = True) -> ArmModel:
    """The Panda at the origin, its base at the table top's height, with the table in front.

    Raises:
        AssetsMissingError: robosuite (for the model files) is not installed.
    """
    path = robosuite_assets() / "robots" / "panda" / "robot.xml"
    spec = mujoco.MjSpec.from_file(str(path))
    spec.compiler.discardvisual = True
    base = spec.body("base")
    base.pos = base_pose_world(table)[:3, 3].tolist()
    hand = spec.body("right_hand")
    hand.add_geom(
        name="hand_box",
        type=mujoco.mjtGeom.mjGEOM_BOX,
        size=list(HAND_HALF_SIZE_M),
        pos=[0.0, 0.0, HAND_HALF_SIZE_M[2]],
    )
    hand.add_site(name="tcp", pos=[0.0, 0.0, TCP_OFFSET_M])
    world = spec.worldbody
    table_center = [table.center_x_m, 0.0, table.top_height_m - table.thickness_m / 2]
    world.add_geom(
        name="table",
        type=mujoco.mjtGeom.mjGEOM_BOX,
        size=[table.size_m[0] / 2, table.size_m[1] / 2, table.thickness_m / 2],
        pos=table_center,
    )
    if pedestal:
        add_pedestal(world, table)
    model = spec.compile()
    data = mujoco.MjData(model)
    joints = [model.joint(name) for name in ARM_JOINTS]
    body_of = model.geom_bodyid
    robot_bodies = {model.body(n).id for n in ("link0", "link1", "link2", "link3", "link4")}
    robot_bodies |= {model.body(n).id for n in ("link5", "link6", "link7", "right_hand")}
    robot_geoms = frozenset(g for g in range(model.ngeom) if int(body_of[g]) in robot_bodies)
    world_geoms = frozenset(g for g in range(model.ngeom) if int(body_of[g]) == 0)
    return ArmModel(
        model=model,
        data=data,
        qpos_ids=np.array([j.qposadr[0] for j in joints]),
        dof_ids=np.array([j.dofadr[0] for j in joints]),
        lower=np.array([j.range[0] for j in joints]),
        upper=np.array([j.range[1] for j in joints]),
        tcp_site=model.site("tcp").id,
        robot_geoms=robot_geoms,
        world_geoms=world_geoms,
    )
