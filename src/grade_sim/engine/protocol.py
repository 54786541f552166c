"""The engine backend interface: what the orchestrator needs from a physics + rendering engine.

The orchestrator owns time and calls a backend in a fixed order every step; backends never call
each other or the ROS layer. Poses are (position xyz, quaternion wxyz) in the world frame.
"""

from __future__ import annotations

import enum
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Protocol

import numpy as np
from numpy.typing import NDArray

from grade_common.types import FloatArray
from grade_sim.config.scenario import Stream


@dataclass(frozen=True)
class RobotState:
    """Exact state of one robot after a physics step."""

    joint_positions: FloatArray  # chain order (RobotModel.joints)
    joint_velocities: FloatArray
    position_world_base: FloatArray  # (3,)
    quat_world_base: FloatArray  # (4,) wxyz
    linear_velocity_base: FloatArray  # (3,) in the base frame
    angular_velocity_base: FloatArray  # (3,) in the base frame
    imu_angular_velocity: FloatArray  # (3,) rad/s in the IMU frame
    imu_specific_force: FloatArray  # (3,) m/s^2 in the IMU frame, gravity included
    joint_velocity_commands: FloatArray  # the velocity targets acting on the joints
    joint_accelerations: FloatArray  # chain order, of the instant described (replay needs them)


@dataclass(frozen=True)
class CameraFrame:
    """One rendered frame; arrays are None for streams not asked for."""

    rgb: NDArray[np.uint8] | None  # (h, w, 3)
    depth_m: NDArray[np.float32] | None  # (h, w), planar depth, 0 = no return
    instance: NDArray[np.uint16] | None  # (h, w), 0 = background
    # The ground-truth streams of docs/ground_truth.md, rendered only when asked for.
    semantic: NDArray[np.uint16] | None = None  # (h, w) class ids of the scene's ClassTable
    normals_cam: NDArray[np.float32] | None = None  # (h, w, 3) unit, optical frame; 0 = none
    flow_px: NDArray[np.float32] | None = None  # (h, w, 2) backward flow (dx, dy); NaN = none


class MeshOwner(enum.Enum):
    """What moves a mesh: nothing, the actor timelines, or a robot's link."""

    STATIC = "static"
    ACTOR = "actor"
    ROBOT = "robot"


@dataclass(frozen=True)
class RayMesh:
    """The triangles of one geom the cameras see, for ray casting (the lidar).

    STATIC meshes are in the world frame; ACTOR meshes in the frame of actor body
    `actor_index` (Scene.actor_body_poses order); ROBOT meshes in the frame of `robot`'s `link`.
    """

    instance_id: int
    owner: MeshOwner
    triangles: FloatArray  # (n, 3, 3)
    rgba: FloatArray  # (4,) the colour the cameras see (the lidar derives reflectivity from it)
    actor_index: int = -1
    robot: str = ""
    link: str = ""


class EngineBackend(Protocol):
    """A physics + rendering engine for one scene."""

    name: str

    def step(self) -> None:
        """Advance the physics by one step of the scenario's physics period."""

    def set_joint_velocity_commands(self, robot: str, velocities: FloatArray) -> None:
        """Velocity targets for a robot's joints, in chain order; held until changed."""

    def set_robot_kinematics(
        self, robot: str, positions: FloatArray, velocities: FloatArray, accelerations: FloatArray
    ) -> None:
        """Put a robot on a kinematic trajectory; then call update_kinematic_sensors()."""

    def update_kinematic_sensors(self) -> None:
        """Recompute poses and sensors from positions, velocities and the given accelerations."""

    def free_body_poses(self) -> tuple[FloatArray, FloatArray]:
        """Positions (n, 3) and wxyz quaternions (n, 4) of the world's free bodies, in
        World.free_bodies order (tabletop objects)."""
        ...

    def set_actor_poses(self, positions: FloatArray, quats_wxyz: FloatArray) -> None:
        """Kinematic poses of every actor body (Scene.actor_body_poses order)."""

    def robot_state(self, robot: str) -> RobotState:
        """The exact state of a robot."""

    def camera_pose(self, robot: str, camera: str) -> tuple[FloatArray, FloatArray]:
        """World pose of a camera's optical frame (z forward, x right, y down)."""

    def link_pose(self, robot: str, link: str) -> tuple[FloatArray, FloatArray]:
        """World pose of a robot link (base_link, <camera>_link, imu_link, camera_mount)."""

    def render(
        self, robot: str, camera: str, streams: frozenset[Stream], flow_restart: bool = False
    ) -> CameraFrame:
        """Render the asked-for streams of a camera at the current state (others are None).

        A camera's FLOW is relative to its previous render that asked for FLOW; with
        `flow_restart` there is none (FLOW is NaN, the next frame's is relative to this one)."""

    def render_later(
        self, robot: str, camera: str, streams: frozenset[Stream], flow_restart: bool = False
    ) -> Future[CameraFrame]:
        """`render` of the current state, done on the engine's own render thread while the
        caller steps on (sim.pipeline: parallel); frames come back in the order asked for, each
        exactly as `render` would have made it. From the first call on, `render` waits on it."""
        ...

    def prepare_rendering(self, parallel: bool) -> None:
        """Make what rendering needs (a GL context holding the model's meshes and textures)
        before the step loop, on the thread that will render: with `parallel`, the engine's
        render thread. Nothing is rendered. Without it the first frame pays for it."""
        ...

    @property
    def gl_renderer(self) -> str:
        """GL_RENDERER of the context that drew the cameras ('' before the first frame)."""
        ...

    def set_hidden_instances(self, instance_ids: frozenset[int]) -> None:
        """Make these instances invisible to every camera (replay with changed surroundings)."""

    def ray_meshes(self, segments: int) -> list[RayMesh]:
        """Every geom the cameras see as triangles (curved ones with `segments` steps around)."""
        ...

    def close(self) -> None:
        """Release rendering contexts and native resources."""
