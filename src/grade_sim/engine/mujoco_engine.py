"""The embedded default engine: MuJoCo physics with offscreen CPU rendering (EGL, else OSMesa).

The scene is compiled to one MJCF model: static boxes/meshes (collide with robots), actors as
mocap bodies (kinematic, no contacts), and each robot as a chain of virtual joints with velocity
actuators and gravity compensation, an IMU site with MuJoCo's accelerometer and gyro sensors, and
one MuJoCo camera per configured camera.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from typing import Any
from xml.sax.saxutils import quoteattr

import numpy as np
from numpy.typing import NDArray

from grade_common.rotations import (
    R_LINK_MJCAM,
    R_LINK_OPTICAL,
    matrix_to_quat,
    quat_from_rpy,
    quat_to_matrix,
)
from grade_common.types import FloatArray
from grade_sim.actors.flying import ObjectShape
from grade_sim.actors.people import PART_NAMES, PartShape
from grade_sim.config.scenario import CameraConfig, MountConfig
from grade_sim.engine.protocol import CameraFrame, RobotState
from grade_sim.errors import BackendError
from grade_sim.robots.model import JointKind
from grade_sim.robots.urdf import UrdfRobot, load_urdf
from grade_sim.scene import RobotSetup, Scene
from grade_sim.world.model import Material, TextureKind

HIDDEN_GROUP = 5
VELOCITY_BANDWIDTH_HZ = 40.0  # actuator time constant 1 / (2 pi 40) ~ 4 ms
LINK_MASS_KG = 0.01
URDF_VISUAL_GROUP = 1  # rendered (groups 0-2 are visible by default)
URDF_COLLISION_GROUP = 3  # not rendered: cameras and segmentation see the visual geometry


def is_available() -> bool:
    try:
        import mujoco  # noqa: F401
    except ImportError:
        return False
    return True


UNAVAILABLE_REASON = "the 'mujoco' package is not installed"


def _f(values: object) -> str:
    arr = np.atleast_1d(np.asarray(values, dtype=np.float64))
    return " ".join(f"{v:.9g}" for v in arr)


def _mount_quat(mount: MountConfig) -> FloatArray:
    return quat_from_rpy(*mount.rpy)


@dataclass
class _CameraSlot:
    config: CameraConfig
    cam_id: int
    robot: str


class MujocoEngine:
    """EngineBackend on MuJoCo."""

    name = "mujoco"

    def __init__(self, scene: Scene) -> None:
        _select_gl()
        import mujoco

        self._mj = mujoco
        self.scene = scene
        xml = build_mjcf(scene)
        try:
            self.model = mujoco.MjModel.from_xml_string(xml)
        except ValueError as err:
            raise BackendError(f"mujoco: the generated model does not compile: {err}") from err
        self.data = mujoco.MjData(self.model)
        self._robots = {r.model.name: r for r in scene.robots}
        self._joint_qpos: dict[str, NDArray[np.int64]] = {}
        self._joint_dof: dict[str, NDArray[np.int64]] = {}
        self._actuators: dict[str, NDArray[np.int64]] = {}
        self._base_body: dict[str, int] = {}
        self._sensor_adr: dict[str, tuple[int, int]] = {}
        for name, setup in self._robots.items():
            jids = [
                mujoco.mj_name2id(self.model, mujoco.mjtObj.mjOBJ_JOINT, f"{name}/{j.name}")
                for j in setup.model.joints
            ]
            self._joint_qpos[name] = np.array([self.model.jnt_qposadr[j] for j in jids])
            self._joint_dof[name] = np.array([self.model.jnt_dofadr[j] for j in jids])
            self._actuators[name] = np.array(
                [
                    mujoco.mj_name2id(self.model, mujoco.mjtObj.mjOBJ_ACTUATOR, f"{name}/{j.name}")
                    for j in setup.model.joints
                ]
            )
            self._base_body[name] = mujoco.mj_name2id(
                self.model, mujoco.mjtObj.mjOBJ_BODY, f"{name}/base_link"
            )
            if setup.model.config.imu.enabled:
                acc = mujoco.mj_name2id(self.model, mujoco.mjtObj.mjOBJ_SENSOR, f"{name}/imu_accel")
                gyro = mujoco.mj_name2id(self.model, mujoco.mjtObj.mjOBJ_SENSOR, f"{name}/imu_gyro")
                self._sensor_adr[name] = (
                    int(self.model.sensor_adr[acc]),
                    int(self.model.sensor_adr[gyro]),
                )
        # Mocap bodies in Scene.actor_body_poses order.
        names = [f"{p.name}/{part}" for p in scene.people for part in PART_NAMES]
        names += [o.name for o in scene.objects]
        body_ids = [mujoco.mj_name2id(self.model, mujoco.mjtObj.mjOBJ_BODY, n) for n in names]
        self._mocap_ids = np.array([self.model.body_mocapid[b] for b in body_ids], dtype=np.int64)
        # geom id -> instance id lookup for segmentation.
        self._geom_instance = np.zeros(self.model.ngeom + 1, dtype=np.uint16)
        for g in range(self.model.ngeom):
            gname = mujoco.mj_id2name(self.model, mujoco.mjtObj.mjOBJ_GEOM, g) or ""
            if gname.startswith("i") and ":" in gname:
                self._geom_instance[g] = int(gname[1 : gname.index(":")])
        self._cameras: dict[tuple[str, str], _CameraSlot] = {}
        for name, setup in self._robots.items():
            for cam in setup.model.config.cameras:
                cid = mujoco.mj_name2id(
                    self.model, mujoco.mjtObj.mjOBJ_CAMERA, f"{name}/{cam.name}"
                )
                self._cameras[(name, cam.name)] = _CameraSlot(cam, cid, name)
        self._hidden: frozenset[int] = frozenset()
        self._original_groups = self.model.geom_group.copy()
        self._gl: Any = None
        self._con: Any = None
        self._vscene: Any = None
        self._vopt = mujoco.MjvOption()
        self._vopt.geomgroup[HIDDEN_GROUP] = 0
        self._reset()

    # -- set-up ---------------------------------------------------------------------------------
    def _reset(self) -> None:
        mj = self._mj
        mj.mj_resetData(self.model, self.data)
        for name, setup in self._robots.items():
            q = np.zeros(len(setup.model.joints))
            for k, j in enumerate(setup.model.joints):
                if j.name in ("x", "y", "z"):
                    q[k] = setup.start_xyz["xyz".index(j.name)]
                elif j.name == "yaw":
                    q[k] = setup.start_yaw
            self.data.qpos[self._joint_qpos[name]] = q
        pos, quat = self.scene.actor_body_poses(0)
        self.set_actor_poses(pos, quat)
        mj.mj_forward(self.model, self.data)

    def _ensure_renderer(self) -> None:
        if self._con is not None:
            return
        mj = self._mj
        width = max((s.config.width for s in self._cameras.values()), default=64)
        height = max((s.config.height for s in self._cameras.values()), default=64)
        try:
            self._gl = mj.GLContext(width, height)
            self._gl.make_current()
        except Exception as err:
            raise BackendError(
                f"mujoco: cannot create an offscreen OpenGL context with "
                f"MUJOCO_GL={os.environ.get('MUJOCO_GL')!r}: {err}. Install Mesa's "
                "EGL (libegl1, libegl-mesa0, libgl1-mesa-dri) or OSMesa (libosmesa6)"
            ) from err
        self._con = mj.MjrContext(self.model, mj.mjtFontScale.mjFONTSCALE_100.value)
        mj.mjr_setBuffer(mj.mjtFramebuffer.mjFB_OFFSCREEN.value, self._con)
        self._con.readDepthMap = mj.mjtDepthMap.mjDEPTH_ZEROFAR
        self._vscene = mj.MjvScene(self.model, maxgeom=max(1000, 2 * self.model.ngeom))
        self._vscene.flags[mj.mjtRndFlag.mjRND_SHADOW] = bool(self.scene.scenario.lights.shadows)
        self._vscene.flags[mj.mjtRndFlag.mjRND_REFLECTION] = False
        self._vscene.flags[mj.mjtRndFlag.mjRND_SKYBOX] = False

    # -- EngineBackend --------------------------------------------------------------------------
    def step(self) -> None:
        self._mj.mj_step(self.model, self.data)
        # mj_step leaves positions, sensors and accelerations of the state *before* integration;
        # recompute them so poses, IMU and joint states all describe the same instant.
        self._mj.mj_forward(self.model, self.data)

    def set_robot_kinematics(
        self, robot: str, positions: FloatArray, velocities: FloatArray, accelerations: FloatArray
    ) -> None:
        self.data.qpos[self._joint_qpos[robot]] = positions
        self.data.qvel[self._joint_dof[robot]] = velocities
        self.data.qacc[self._joint_dof[robot]] = accelerations

    def update_kinematic_sensors(self) -> None:
        # Inverse dynamics takes qacc as given, so the accelerometer reads the trajectory's own
        # acceleration (other robots keep the qacc of their last forward pass).
        self._mj.mj_inverse(self.model, self.data)

    def forward(self) -> None:
        self._mj.mj_forward(self.model, self.data)

    def set_joint_velocity_commands(self, robot: str, velocities: FloatArray) -> None:
        self.data.ctrl[self._actuators[robot]] = velocities

    def set_robot_joint_state(
        self, robot: str, positions: FloatArray, velocities: FloatArray
    ) -> None:
        self.data.qpos[self._joint_qpos[robot]] = positions
        self.data.qvel[self._joint_dof[robot]] = velocities

    def set_actor_poses(self, positions: FloatArray, quats_wxyz: FloatArray) -> None:
        if len(self._mocap_ids):
            self.data.mocap_pos[self._mocap_ids] = positions
            self.data.mocap_quat[self._mocap_ids] = quats_wxyz

    def robot_state(self, robot: str) -> RobotState:
        mj = self._mj
        body = self._base_body[robot]
        vel = np.zeros(6)
        mj.mj_objectVelocity(self.model, self.data, mj.mjtObj.mjOBJ_BODY, body, vel, 1)
        if robot in self._sensor_adr:
            acc_adr, gyro_adr = self._sensor_adr[robot]
            accel = self.data.sensordata[acc_adr : acc_adr + 3].copy()
            gyro = self.data.sensordata[gyro_adr : gyro_adr + 3].copy()
        else:
            accel = np.zeros(3)
            gyro = np.zeros(3)
        return RobotState(
            joint_positions=self.data.qpos[self._joint_qpos[robot]].copy(),
            joint_velocities=self.data.qvel[self._joint_dof[robot]].copy(),
            position_world_base=self.data.xpos[body].copy(),
            quat_world_base=self.data.xquat[body].copy(),
            linear_velocity_base=vel[3:].copy(),
            angular_velocity_base=vel[:3].copy(),
            imu_angular_velocity=gyro,
            imu_specific_force=accel,
            joint_velocity_commands=self.data.ctrl[self._actuators[robot]].copy(),
            joint_accelerations=self.data.qacc[self._joint_dof[robot]].copy(),
        )

    def camera_pose(self, robot: str, camera: str) -> tuple[FloatArray, FloatArray]:
        slot = self._cameras[(robot, camera)]
        r_world_mjcam = self.data.cam_xmat[slot.cam_id].reshape(3, 3)
        r_world_optical = r_world_mjcam @ np.diag([1.0, -1.0, -1.0])
        return self.data.cam_xpos[slot.cam_id].copy(), matrix_to_quat(r_world_optical)

    def link_pose(self, robot: str, link: str) -> tuple[FloatArray, FloatArray]:
        mj = self._mj
        if link.endswith("_link") and link not in ("base_link", "imu_link"):
            cam = link[: -len("_link")]
            pos, quat_opt = self.camera_pose(robot, cam)
            r_world_opt = quat_to_matrix(quat_opt)
            return pos, matrix_to_quat(r_world_opt @ R_LINK_OPTICAL.T)
        if link == "imu_link":
            sid = mj.mj_name2id(self.model, mj.mjtObj.mjOBJ_SITE, f"{robot}/imu_link")
            return self.data.site_xpos[sid].copy(), matrix_to_quat(
                self.data.site_xmat[sid].reshape(3, 3)
            )
        bid = mj.mj_name2id(self.model, mj.mjtObj.mjOBJ_BODY, f"{robot}/{link}")
        if bid < 0:
            raise BackendError(f"mujoco: robot {robot!r} has no link {link!r}")
        return self.data.xpos[bid].copy(), self.data.xquat[bid].copy()

    def set_hidden_instances(self, instance_ids: frozenset[int]) -> None:
        self._hidden = instance_ids
        groups = self._original_groups.copy()
        if instance_ids:
            mask = np.isin(self._geom_instance[: self.model.ngeom], np.array(sorted(instance_ids)))
            groups[mask] = HIDDEN_GROUP
        self.model.geom_group[:] = groups

    def render(
        self, robot: str, camera: str, rgb: bool, depth: bool, instance: bool
    ) -> CameraFrame:
        mj = self._mj
        self._ensure_renderer()
        slot = self._cameras[(robot, camera)]
        cfg = slot.config
        w, h = cfg.width, cfg.height
        rect = mj.MjrRect(0, 0, w, h)
        cam = mj.MjvCamera()
        cam.type = mj.mjtCamera.mjCAMERA_FIXED
        cam.fixedcamid = slot.cam_id
        vscene = self._vscene
        mj.mjv_updateScene(
            self.model, self.data, self._vopt, None, cam, mj.mjtCatBit.mjCAT_ALL.value, vscene
        )
        out_rgb = out_depth = out_inst = None
        if rgb or depth:
            mj.mjr_render(rect, vscene, self._con)
            rgb_buf = np.empty((h, w, 3), dtype=np.uint8) if rgb else None
            depth_buf = np.empty((h, w), dtype=np.float32) if depth else None
            mj.mjr_readPixels(rgb_buf, depth_buf, rect, self._con)
            if rgb_buf is not None:
                out_rgb = np.ascontiguousarray(rgb_buf[::-1])
            if depth_buf is not None:
                out_depth = self._linear_depth(depth_buf[::-1], cfg)
        if instance:
            flags = vscene.flags
            saved = (flags[mj.mjtRndFlag.mjRND_SEGMENT], flags[mj.mjtRndFlag.mjRND_IDCOLOR])
            flags[mj.mjtRndFlag.mjRND_SEGMENT] = True
            flags[mj.mjtRndFlag.mjRND_IDCOLOR] = True
            try:
                mj.mjr_render(rect, vscene, self._con)
                seg = np.empty((h, w, 3), dtype=np.uint8)
                mj.mjr_readPixels(seg, None, rect, self._con)
            finally:
                flags[mj.mjtRndFlag.mjRND_SEGMENT], flags[mj.mjtRndFlag.mjRND_IDCOLOR] = saved
            segid = (
                seg[::-1, :, 0].astype(np.int32)
                | (seg[::-1, :, 1].astype(np.int32) << 8)
                | (seg[::-1, :, 2].astype(np.int32) << 16)
            )
            ngeom = vscene.ngeom
            lut = np.zeros(ngeom + 2, dtype=np.uint16)
            for i in range(ngeom):
                g = vscene.geoms[i]
                if g.segid >= 0 and g.objtype == mj.mjtObj.mjOBJ_GEOM:
                    lut[g.segid + 1] = self._geom_instance[g.objid]
            out_inst = lut[np.clip(segid, 0, ngeom + 1)]
        return CameraFrame(out_rgb, out_depth, out_inst)

    def _linear_depth(self, buf: NDArray[np.float32], cfg: CameraConfig) -> NDArray[np.float32]:
        extent = self.model.stat.extent
        near = self.model.vis.map.znear * extent
        far = self.model.vis.map.zfar * extent
        c_coef = -(far + near) / (far - near)
        d_coef = -(2.0 * far * near) / (far - near)
        c_coef = -0.5 * c_coef - 0.5
        d_coef = -0.5 * d_coef
        z = d_coef / (buf.astype(np.float64) + c_coef)
        z[(z >= far * 0.999) | (z > cfg.far_m) | (z < cfg.near_m)] = 0.0
        out: NDArray[np.float32] = z.astype(np.float32)
        return out

    def close(self) -> None:
        if self._con is not None:
            self._con.free()
            self._con = None
        if self._gl is not None:
            self._gl.free()
            self._gl = None


def _select_gl() -> None:
    """EGL by default; fall back to OSMesa when EGL cannot start (no libEGL)."""
    if "MUJOCO_GL" in os.environ:
        os.environ.setdefault("PYOPENGL_PLATFORM", os.environ["MUJOCO_GL"])
        return
    try:
        import ctypes.util

        egl = ctypes.util.find_library("EGL")
    except Exception:
        egl = None
    backend = "egl" if egl else "osmesa"
    os.environ["MUJOCO_GL"] = backend
    os.environ.setdefault("PYOPENGL_PLATFORM", backend)


# ---------------------------------------------------------------------------------------------
# MJCF generation
# ---------------------------------------------------------------------------------------------
def _material_xml(name: str, mat: Material, assets: list[str]) -> str:
    rgba = _f(mat.rgba)
    if mat.texture is TextureKind.NONE:
        assets.append(f'<material name="{name}" rgba="{rgba}" specular="0.1"/>')
        return name
    rgb1 = _f(mat.rgba[:3])
    rgb2 = _f(mat.rgb2)
    if mat.texture is TextureKind.CHECKER:
        tex = f'builtin="checker" rgb1="{rgb1}" rgb2="{rgb2}"'
    elif mat.texture is TextureKind.GRADIENT:
        tex = f'builtin="gradient" rgb1="{rgb1}" rgb2="{rgb2}"'
    else:
        tex = f'builtin="flat" rgb1="{rgb1}" mark="random" random="0.25" markrgb="{rgb2}"'
    assets.append(f'<texture name="{name}_tex" type="2d" {tex} width="128" height="128"/>')
    repeat = 1.0 / mat.texrepeat_m
    assets.append(
        f'<material name="{name}" texture="{name}_tex" texrepeat="{repeat:.6g} {repeat:.6g}" '
        f'texuniform="true" specular="0.1"/>'
    )
    return name


def _urdf_geoms_xml(urdf: UrdfRobot, instance_id: int, robot: str, assets: list[str]) -> list[str]:
    """Geoms of a URDF body: visuals drawn but not colliding, collisions colliding but hidden.

    Collision meshes collide as their convex hull (MuJoCo's rule for mesh geoms). Mesh inertia
    is computed as a shell only so that open or flat meshes compile: the body's inertial is
    explicit and the geoms are massless.
    """
    out = []
    visual = f'contype="0" conaffinity="0" group="{URDF_VISUAL_GROUP}"'
    collision = f'contype="2" conaffinity="0" group="{URDF_COLLISION_GROUP}"'
    for kind, geoms, flags in (
        ("visual", urdf.visuals, visual),
        ("collision", urdf.collisions, collision),
    ):
        for k, g in enumerate(geoms):
            if g.vertices_xyz is not None and g.faces is not None:
                mesh = f"{robot}/{kind}_mesh_{k}"
                assets.append(
                    f'<mesh name={quoteattr(mesh)} vertex="{_f(g.vertices_xyz.ravel())}" '
                    f'face="{" ".join(str(int(v)) for v in g.faces.ravel())}" inertia="shell"/>'
                )
                shape = f'type="mesh" mesh={quoteattr(mesh)}'
            else:
                shape = f'type="{g.shape.value}" size="{_f(g.size)}"'
            out.append(
                f"<geom name={quoteattr(f'i{instance_id}:{robot}/{g.name}')} {shape} "
                f'pos="{_f(g.pos_base_xyz)}" quat="{_f(g.quat_base_wxyz)}" rgba="{_f(g.rgba)}" '
                f'{flags} mass="0"/>'
            )
    return out


def _robot_xml(
    setup: RobotSetup,
    instance_id: int,
    sensors: list[str],
    actuators: list[str],
    assets: list[str],
) -> str:
    cfg = setup.model.config
    name = cfg.name
    urdf = load_urdf(cfg.urdf, cfg.urdf_base_link) if cfg.urdf is not None else None
    parts: list[str] = []
    closers: list[str] = []
    link_inertial = f'<inertial pos="0 0 0" mass="{LINK_MASS_KG}" diaginertia="1e-5 1e-5 1e-5"/>'
    half = np.asarray(cfg.body_size_m) / 2
    body_inertia: FloatArray = (
        cfg.mass_kg
        / 3
        * np.array(
            [half[1] ** 2 + half[2] ** 2, half[0] ** 2 + half[2] ** 2, half[0] ** 2 + half[1] ** 2]
        )
    )
    chain = [j for j in setup.model.joints if j.name != setup.model.camera_joint]
    base_z = 0.0
    for k, joint in enumerate(chain):
        is_base = k == len(chain) - 1
        body_name = f"{name}/base_link" if is_base else f"{name}/{joint.name}_link"
        pos = f' pos="0 0 {base_z:.6g}"' if (is_base and cfg.type.value == "omni") else ""
        parts.append(f'<body name="{body_name}"{pos} gravcomp="1">')
        rng = f' range="{joint.range[0]:.6g} {joint.range[1]:.6g}"' if joint.range else ""
        parts.append(
            f'<joint name="{name}/{joint.name}" type="{joint.kind.value}" axis="{_f(joint.axis)}"'
            f' damping="0"{rng}/>'
        )
        if not is_base:
            parts.append(link_inertial)
        closers.append("</body>")
    # Base body: geometry, IMU, and (UAV) cameras.
    mass_kg = cfg.mass_kg
    if urdf is not None and urdf.mass_kg is not None:
        mass_kg = urdf.mass_kg
        com = urdf.com_base_xyz
        i_com = urdf.inertia_com_base
        full = [i_com[0, 0], i_com[1, 1], i_com[2, 2], i_com[0, 1], i_com[0, 2], i_com[1, 2]]
        parts.append(f'<inertial pos="{_f(com)}" mass="{mass_kg:.9g}" fullinertia="{_f(full)}"/>')
        # The hinges turn the body about base_link's origin: their actuators see that inertia.
        i_origin = i_com + mass_kg * (float(com @ com) * np.eye(3) - np.outer(com, com))
        body_inertia = np.asarray(np.linalg.eigvalsh(i_origin), dtype=np.float64)
    else:
        parts.append(
            f'<inertial pos="0 0 0" mass="{cfg.mass_kg:.6g}" diaginertia="{_f(body_inertia)}"/>'
        )
    if urdf is not None:
        parts.extend(_urdf_geoms_xml(urdf, instance_id, name, assets))
    else:
        gname = f"i{instance_id}:{name}/body"
        parts.append(
            f'<geom name="{gname}" type="box" size="{_f(half)}" rgba="0.2 0.2 0.25 1" '
            f'contype="2" conaffinity="0" mass="0"/>'
        )
    if cfg.type.value == "uav" and urdf is None:
        for sx, sy in ((1, 1), (1, -1), (-1, 1), (-1, -1)):
            parts.append(
                f'<geom name="i{instance_id}:{name}/rotor_{sx}{sy}" type="cylinder" '
                f'size="{half[0] * 0.45:.4g} 0.008" pos="{sx * half[0]:.4g} {sy * half[1]:.4g} '
                f'{half[2]:.4g}" rgba="0.1 0.1 0.1 1" contype="0" conaffinity="0" mass="0"/>'
            )
    imu = cfg.imu
    parts.append(
        f'<site name="{name}/imu_link" pos="{_f(imu.mount.xyz)}" '
        f'quat="{_f(_mount_quat(imu.mount))}"/>'
    )
    if imu.enabled:
        sensors.append(f'<accelerometer name="{name}/imu_accel" site="{name}/imu_link"/>')
        sensors.append(f'<gyro name="{name}/imu_gyro" site="{name}/imu_link"/>')
    cam_xml = []
    for cam in cfg.cameras:
        fovy = math.degrees(
            2 * math.atan(math.tan(math.radians(cam.hfov_deg) / 2) * cam.height / cam.width)
        )
        q = matrix_to_quat(quat_to_matrix(_mount_quat(cam.mount)) @ R_LINK_MJCAM)
        cam_xml.append(
            f'<camera name="{name}/{cam.name}" pos="{_f(cam.mount.xyz)}" quat="{_f(q)}" '
            f'fovy="{fovy:.9g}" mode="fixed"/>'
        )
    if setup.model.camera_joint is not None:
        mount_z = half[2] + 0.25
        parts.append(f'<body name="{name}/camera_mount" pos="0 0 {mount_z:.6g}" gravcomp="1">')
        parts.append(f'<joint name="{name}/{setup.model.camera_joint}" type="hinge" axis="0 0 1"/>')
        parts.append('<inertial pos="0 0 0" mass="0.2" diaginertia="1e-3 1e-3 1e-3"/>')
        parts.append(
            f'<geom name="i{instance_id}:{name}/mast" type="cylinder" size="0.04 0.05" '
            f'rgba="0.3 0.3 0.3 1" contype="0" conaffinity="0" mass="0"/>'
        )
        parts.extend(cam_xml)
        parts.append("</body>")
    else:
        parts.extend(cam_xml)
    parts.extend(closers)
    bandwidth = 2 * math.pi * VELOCITY_BANDWIDTH_HZ
    for joint in setup.model.joints:
        if joint.kind is JointKind.SLIDE:
            inertia = mass_kg + 0.2
        elif joint.name == setup.model.camera_joint:
            inertia = 1e-3
        else:
            inertia = float(np.max(body_inertia)) + 0.2 * 0.25**2
        actuators.append(
            f'<velocity name="{name}/{joint.name}" joint="{name}/{joint.name}" '
            f'kv="{inertia * bandwidth:.6g}"/>'
        )
    return "\n".join(parts)


def build_mjcf(scene: Scene) -> str:
    """The MJCF document of a scene."""
    sc = scene.scenario
    cams = [c for r in scene.robots for c in r.model.config.cameras]
    width = max((c.width for c in cams), default=64)
    height = max((c.height for c in cams), default=64)
    near = min((c.near_m for c in cams), default=0.05)
    far = max((c.far_m for c in cams), default=50.0)
    lo, hi = np.asarray(scene.world.bounds_min_xyz), np.asarray(scene.world.bounds_max_xyz)
    extent = max(float(np.linalg.norm(hi - lo)), 1.0)
    assets: list[str] = []
    body: list[str] = []
    for k, light in enumerate(scene.world.lights):
        body.append(
            f'<light name="light_{k}" pos="{_f(light.position_xyz)}" dir="0 0 -1" '
            f'diffuse="{_f(light.diffuse_rgb)}" specular="0.05 0.05 0.05" '
            f'castshadow="{"true" if sc.lights.shadows else "false"}" '
            f'directional="{"true" if light.directional else "false"}"/>'
        )
    for box in scene.world.boxes:
        mat = _material_xml(f"mat_{box.name}", box.material, assets)
        body.append(
            f'<geom name="i{box.instance_id}:{box.name}" type="box" pos="{_f(box.center_xyz)}" '
            f'size="{_f(box.half_size_xyz)}" euler="0 0 {box.yaw_rad:.9g}" material="{mat}" '
            f'contype="1" conaffinity="3"/>'
        )
    for mesh in scene.world.meshes:
        assets.append(
            f'<mesh name="mesh_{mesh.instance_id}" vertex="{_f(mesh.vertices_xyz.ravel())}" '
            f'face="{" ".join(str(int(v)) for v in mesh.faces.ravel())}"/>'
        )
        mat = _material_xml(f"mat_mesh_{mesh.instance_id}", mesh.material, assets)
        body.append(
            f'<geom name="i{mesh.instance_id}:{mesh.name}" type="mesh" '
            f'mesh="mesh_{mesh.instance_id}" '
            f'material="{mat}" contype="1" conaffinity="3"/>'
        )
    for person in scene.people:
        for part in person.parts():
            rgba = _f(person.colors[part.color])
            if part.shape is PartShape.CAPSULE:
                geom = f'type="capsule" size="{part.size[0]:.6g} {part.size[1]:.6g}"'
            elif part.shape is PartShape.SPHERE:
                geom = f'type="sphere" size="{part.size[0]:.6g}"'
            else:
                geom = f'type="box" size="{_f(part.size)}"'
            body.append(
                f'<body name="{person.name}/{part.name}" mocap="true">'
                f'<geom name="i{person.instance_id}:{person.name}/{part.name}" {geom} '
                f'rgba="{rgba}" '
                f'contype="0" conaffinity="0"/></body>'
            )
    for obj in scene.objects:
        h = obj.half_size
        size = {
            ObjectShape.BOX: _f(h),
            ObjectShape.SPHERE: f"{h[0]:.6g}",
            ObjectShape.CAPSULE: f"{h[0]:.6g} {h[2]:.6g}",
            ObjectShape.CYLINDER: f"{h[0]:.6g} {h[2]:.6g}",
            ObjectShape.ELLIPSOID: _f(h),
        }[obj.shape]
        body.append(
            f'<body name="{obj.name}" mocap="true"><geom name="i{obj.instance_id}:{obj.name}" '
            f'type="{obj.shape.value}" size="{size}" rgba="{_f(obj.rgba)}" contype="0" '
            f'conaffinity="0"/></body>'
        )
    sensors: list[str] = []
    actuators: list[str] = []
    for setup in scene.robots:
        body.append(_robot_xml(setup, setup.instance_id, sensors, actuators, assets))
    shadow = 2048 if sc.lights.shadows else 0
    # offsamples=0: no multisampling. It would blend segmentation colours at object edges into
    # ids of other objects, and it is most of llvmpipe's rendering time.
    return f"""<mujoco model={quoteattr("grade")}>
  <compiler angle="radian" autolimits="true"/>
  <option timestep="{sc.physics_dt_s:.12g}" integrator="implicitfast" gravity="0 0 -9.81"/>
  <statistic extent="{extent:.6g}" center="{_f((lo + hi) / 2)}"/>
  <visual>
    <global offwidth="{width}" offheight="{height}"/>
    <quality shadowsize="{shadow}" offsamples="0"/>
    <headlight ambient="0.3 0.3 0.3" diffuse="0.35 0.35 0.35" specular="0 0 0"/>
    <map znear="{near / extent:.9g}" zfar="{far * 1.5 / extent:.9g}"/>
  </visual>
  <asset>
    {chr(10).join(assets)}
  </asset>
  <worldbody>
    {chr(10).join(body)}
  </worldbody>
  <actuator>
    {chr(10).join(actuators)}
  </actuator>
  <sensor>
    {chr(10).join(sensors)}
  </sensor>
</mujoco>
"""
