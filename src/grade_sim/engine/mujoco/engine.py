"""The embedded default engine: MuJoCo physics with offscreen CPU rendering (EGL, else OSMesa).

The model comes from `builder.build_model`; this module steps it, reads robot states and camera
poses, renders RGB, depth, instance and semantic masks, surface normals and optical flow
(docs/ground_truth.md), and hides instances for replays.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterator
from concurrent.futures import Future
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cv2
import numpy as np
from numpy.typing import NDArray

from grade_common.rotations import R_LINK_OPTICAL, matrix_to_quat, quat_to_matrix
from grade_common.types import FloatArray
from grade_sim.config.scenario import CameraConfig, Stream
from grade_sim.engine import fxaa
from grade_sim.engine.flow import (
    PoseSnapshot,
    flow_from_points_before,
    pinhole_projection,
    points_before,
    skin_points_before,
)
from grade_sim.engine.mujoco import contact_shadows, draw_order, pixel_kernels, view_cull
from grade_sim.engine.mujoco.contact_shadows import ContactShadows
from grade_sim.engine.mujoco.probe_shading import ProbeShading
from grade_sim.engine.mujoco.render_thread import RenderThread
from grade_sim.engine.mujoco.scene_geoms import SceneGeoms
from grade_sim.engine.normals import normals_camera
from grade_sim.engine.pixels import backproject
from grade_sim.engine.protocol import CameraFrame, RayMesh, RobotState
from grade_sim.engine.semantic import ClassTable, semantic_image
from grade_sim.errors import BackendError, SimulationUnstableError
from grade_sim.optics.rig import CameraRig, FieldRule, build_rig
from grade_sim.scene import Scene

HIDDEN_GROUP = 5
# Streams that need the per-pixel geom ids of the segmentation pass, and those that need depth.
_SEGMENT_STREAMS = frozenset({Stream.INSTANCE, Stream.SEMANTIC, Stream.NORMALS, Stream.FLOW})
_DEPTH_STREAMS = frozenset({Stream.DEPTH, Stream.NORMALS, Stream.FLOW})


def is_available() -> bool:
    try:
        import mujoco  # noqa: F401
    except ImportError:
        return False
    return True


UNAVAILABLE_REASON = "the 'mujoco' package is not installed"


@dataclass
class _CameraSlot:
    config: CameraConfig
    cam_id: int
    robot: str
    output_cam_id: int | None = None  # a distorted camera's view: the camera it is rendered for


def _wants_contact(scene: Scene) -> bool:
    bake = scene.scenario.lights.bake
    return bake.enabled and bake.contact_shadows and any(g.shadow_casters() for g in scene.groups)


class MujocoEngine:
    """EngineBackend on MuJoCo."""

    name = "mujoco"

    def __init__(self, scene: Scene) -> None:
        _select_gl()
        # Imported here, not at the top: the registry imports this module to ask is_available().
        import mujoco

        from grade_sim.engine.mujoco.builder import build_model

        self._mj = mujoco
        self.scene = scene
        try:
            built = build_model(scene)
        except ValueError as err:
            raise BackendError(f"mujoco: the scene's model does not compile: {err}") from err
        self.model = built.model
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
        names = [name for group in scene.groups for name in group.body_names()]
        body_ids = [mujoco.mj_name2id(self.model, mujoco.mjtObj.mjOBJ_BODY, n) for n in names]
        self._mocap_ids = np.array([self.model.body_mocapid[b] for b in body_ids], dtype=np.int64)
        self._free_body_ids = np.array(
            [self.model.body(b.name).id for b in scene.world.free_bodies], dtype=np.int64
        )
        # geom id -> instance id, for segmentation and hiding.
        self._geom_instance = built.geom_instance_ids
        table = ClassTable.of_labels(info.label for info in scene.instances.values())
        self._class_lut = table.instance_lut({i: info.label for i, info in scene.instances.items()})
        # The poses at each camera's last frame with flow: the flow of its next frame needs them.
        self._flow_previous: dict[tuple[str, str], PoseSnapshot] = {}
        # Distorted cameras with flow: their optical frame's rotation at their last frame.
        self._lens_rotation_before: dict[tuple[str, str], FloatArray] = {}
        self._skin_instance = built.skin_instance_ids
        self._cameras: dict[tuple[str, str], _CameraSlot] = {}
        self._rigs: dict[tuple[str, str], CameraRig] = {}
        for name, setup in self._robots.items():
            for cam in setup.model.config.cameras:
                cid = mujoco.mj_name2id(
                    self.model, mujoco.mjtObj.mjOBJ_CAMERA, f"{name}/{cam.name}"
                )
                self._cameras[(name, cam.name)] = _CameraSlot(cam, cid, name)
                rig = build_rig(cam, f"robots.{name}.cameras.{cam.name}")
                if rig is not None:  # a distorted camera: rendered as pinhole views, remapped
                    self._rigs[(name, cam.name)] = rig
                    for view in rig.views:
                        vcfg = view.config(cam)
                        vid = mujoco.mj_name2id(
                            self.model, mujoco.mjtObj.mjOBJ_CAMERA, f"{name}/{vcfg.name}"
                        )
                        self._cameras[(name, vcfg.name)] = _CameraSlot(vcfg, vid, name, cid)
        self._hidden: frozenset[int] = frozenset()
        self._original_groups = self.model.geom_group.copy()
        self._original_skin_groups = self.model.skin_group.copy()
        self._gl: Any = None
        self._con: Any = None
        self._vscene: Any = None
        self._geoms: SceneGeoms | None = None  # the scene's entries as records (scene_geoms)
        # The state cameras render from: `data`, or the render thread's copy of it.
        self._render_data: Any = self.data
        self._render_thread: RenderThread | None = None
        self._version = 0  # changes whenever the state a camera would see may have changed
        self.gl_renderer = ""
        self._contact = (
            ContactShadows.of_scene(scene, self.model, built.probes)
            if _wants_contact(scene)
            else None
        )
        # Moving things shaded by the bake's light probes (RGB pass only).
        self._probe_shading = (
            ProbeShading.of_model(self.model, built.probes, scene.world)
            if built.probes is not None
            else None
        )
        # Leave out of each pass what lies wholly outside the view (view_cull; off: draw all).
        self.cull_unseen = True
        # Draw the colour pass's entries nearest first (draw_order; off: the scene's own order).
        self.near_first = True
        pixel_kernels.warm_up()
        if scene.scenario.render.fxaa:
            fxaa.warm_up()
        if self._contact is not None:
            contact_shadows.warm_up()
        view_cull.warm_up()
        self._vopt = mujoco.MjvOption()
        self._vopt.geomgroup[HIDDEN_GROUP] = 0
        self._vopt.skingroup[HIDDEN_GROUP] = 0
        self._reset()

    @property
    def geom_instance_ids(self) -> NDArray[np.uint16]:
        """Instance id of every geom, by geom id (0 = none): what segmentation maps to."""
        return self._geom_instance

    @property
    def skin_instance_ids(self) -> NDArray[np.uint16]:
        """Instance id of every skin (skinned people), by skin id."""
        return self._skin_instance

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
            # Several engines in one process (grade bench looks) take turns on their contexts.
            self._gl.make_current()
            return
        mj = self._mj
        ss = self.scene.scenario.render
        width = ss.supersampled(max((s.config.width for s in self._cameras.values()), default=64))
        height = ss.supersampled(max((s.config.height for s in self._cameras.values()), default=64))
        try:
            self._gl = mj.GLContext(width, height)
            self._gl.make_current()
        except Exception as err:
            raise BackendError(
                f"mujoco: cannot create an offscreen OpenGL context with "
                f"MUJOCO_GL={os.environ.get('MUJOCO_GL')!r}: {err}. Install Mesa's "
                "EGL (libegl1, libegl-mesa0, libgl1-mesa-dri) or OSMesa (libosmesa6)"
            ) from err
        self.gl_renderer = _gl_renderer()
        self._con = mj.MjrContext(self.model, mj.mjtFontScale.mjFONTSCALE_100.value)
        mj.mjr_setBuffer(mj.mjtFramebuffer.mjFB_OFFSCREEN.value, self._con)
        self._con.readDepthMap = mj.mjtDepthMap.mjDEPTH_ZEROFAR
        self._vscene = mj.MjvScene(self.model, maxgeom=max(1000, 2 * self.model.ngeom))
        self._geoms = SceneGeoms(mj, self._vscene)
        self._vscene.flags[mj.mjtRndFlag.mjRND_SHADOW] = bool(self.scene.scenario.lights.shadows)
        self._vscene.flags[mj.mjtRndFlag.mjRND_REFLECTION] = False
        self._vscene.flags[mj.mjtRndFlag.mjRND_SKYBOX] = self.scene.world.sky is not None

    # -- EngineBackend --------------------------------------------------------------------------
    def step(self) -> None:
        self._version += 1
        warned = self._instability_warnings()
        self._mj.mj_step(self.model, self.data)
        if self._instability_warnings() > warned:
            # MuJoCo met NaN/Inf/huge values and reset the state: the run cannot go on.
            raise SimulationUnstableError(
                f"mujoco: Nan, Inf or huge value in the simulation at t = {self.data.time:.6f} s "
                f"({self._worst_dof()}); the physics diverged: lower the robots' velocity "
                "limits, keep start_xyz and waypoints inside the world, or raise rates.physics_hz"
            )
        # mj_step leaves positions, sensors and accelerations of the state *before* integration;
        # recompute them so poses, IMU and joint states all describe the same instant.
        self._mj.mj_forward(self.model, self.data)

    def _instability_warnings(self) -> int:
        w = self._mj.mjtWarning
        kinds = (w.mjWARN_BADQPOS, w.mjWARN_BADQVEL, w.mjWARN_BADQACC)
        return sum(int(self.data.warning[k].number) for k in kinds)

    def _worst_dof(self) -> str:
        """The joint named in MuJoCo's last instability warning (`lastinfo` is its DOF)."""
        w = self._mj.mjtWarning
        for kind, label in ((w.mjWARN_BADQPOS, "QPOS"), (w.mjWARN_BADQVEL, "QVEL")):
            stat = self.data.warning[kind]
            if stat.number:
                dof = int(stat.lastinfo)
                joint = int(self.model.dof_jntid[dof]) if 0 <= dof < self.model.nv else -1
                name = self._mj.mj_id2name(self.model, self._mj.mjtObj.mjOBJ_JOINT, joint)
                return f"{label} of joint {name!r}" if name else f"{label} of DOF {dof}"
        return "QACC"

    def set_robot_kinematics(
        self, robot: str, positions: FloatArray, velocities: FloatArray, accelerations: FloatArray
    ) -> None:
        self._version += 1
        self.data.qpos[self._joint_qpos[robot]] = positions
        self.data.qvel[self._joint_dof[robot]] = velocities
        self.data.qacc[self._joint_dof[robot]] = accelerations

    def update_kinematic_sensors(self) -> None:
        # Inverse dynamics takes qacc as given, so the accelerometer reads the trajectory's own
        # acceleration (other robots keep the qacc of their last forward pass).
        self._version += 1
        self._mj.mj_inverse(self.model, self.data)

    def set_joint_velocity_commands(self, robot: str, velocities: FloatArray) -> None:
        self.data.ctrl[self._actuators[robot]] = velocities

    def free_body_poses(self) -> tuple[FloatArray, FloatArray]:
        ids = self._free_body_ids
        return self.data.xpos[ids].copy(), self.data.xquat[ids].copy()

    def set_actor_poses(self, positions: FloatArray, quats_wxyz: FloatArray) -> None:
        self._version += 1
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
        return self._camera_pose_in(self.data, robot, camera)

    def _camera_pose_in(self, data: Any, robot: str, camera: str) -> tuple[FloatArray, FloatArray]:
        slot = self._cameras[(robot, camera)]
        r_world_mjcam = data.cam_xmat[slot.cam_id].reshape(3, 3)
        r_world_optical = r_world_mjcam @ np.diag([1.0, -1.0, -1.0])
        return data.cam_xpos[slot.cam_id].copy(), matrix_to_quat(r_world_optical)

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
            mask = np.isin(self._geom_instance, np.array(sorted(instance_ids)))
            groups[mask] = HIDDEN_GROUP
        self.model.geom_group[:] = groups
        skin_groups = self._original_skin_groups.copy()
        if instance_ids:
            skin_groups[np.isin(self._skin_instance, np.array(sorted(instance_ids)))] = HIDDEN_GROUP
        self.model.skin_group[:] = skin_groups

    def render(
        self, robot: str, camera: str, streams: frozenset[Stream], flow_restart: bool = False
    ) -> CameraFrame:
        if self._render_thread is not None:  # its thread owns the GL context now
            return self.render_later(robot, camera, streams, flow_restart).result()
        return self._render_from(self.data, robot, camera, streams, flow_restart)

    def render_later(
        self, robot: str, camera: str, streams: frozenset[Stream], flow_restart: bool = False
    ) -> Future[CameraFrame]:
        return self._started_render_thread().submit(
            self.data, self._version, robot, camera, streams, flow_restart
        )

    def prepare_rendering(self, parallel: bool) -> None:
        if parallel and self._cameras:
            self._started_render_thread().wait_ready()

    def _started_render_thread(self) -> RenderThread:
        if self._render_thread is None:
            if self._con is not None:  # made on this thread: the render thread makes its own
                self._free_gl()
            self._render_thread = RenderThread(
                self._mj, self.model, self._render_from, self._free_gl, self._ensure_renderer
            )
        return self._render_thread

    def _render_from(
        self, data: Any, robot: str, camera: str, streams: frozenset[Stream], flow_restart: bool
    ) -> CameraFrame:
        self._render_data = data
        rig = self._rigs.get((robot, camera))
        if flow_restart:
            self._flow_previous.pop((robot, camera), None)
            self._lens_rotation_before.pop((robot, camera), None)
            for v in rig.views if rig is not None else ():
                self._flow_previous.pop((robot, f"{camera}/{v.name}"), None)
        if rig is None:
            return self._render_view(robot, camera, streams, keep_before=False)[0]
        # A distorted camera: pinhole views remapped through its lens. Flow is not remapped
        # (pixel motion in a view is not pixel motion through the lens): each view gives where
        # its pixels' points were at t-1, those points are remapped like vectors into the
        # camera's frame, and the camera's own lens projects them.
        want_flow = Stream.FLOW in streams
        views = [
            self._render_view(robot, f"{camera}/{v.name}", streams - {Stream.FLOW}, want_flow)
            for v in rig.views
        ]
        frame = rig.remap([f for f, _ in views])
        if not want_flow:
            return frame
        # Each output pixel takes its nearest view pixel's point (p_nb, and where it was at t-1,
        # b_nb); moved onto the pixel's own ray at the same range, with the camera's rotation
        # since t-1, so flow is exact to well under a pixel however views and lens sample.
        p_nb, b_nb = (
            np.asarray(rig.remap_field(FieldRule.VECTOR_CAM, arrays), dtype=np.float64)
            for arrays in zip(*(pb for _, pb in views), strict=True)
        )
        _, quat = self._camera_pose_in(self._render_data, robot, camera)
        r_now = quat_to_matrix(quat)
        r_before = self._lens_rotation_before.get((robot, camera), r_now)
        self._lens_rotation_before[(robot, camera)] = r_now
        rays, _ = rig.lens.pixel_rays
        on_ray = rays * np.linalg.norm(p_nb, axis=-1, keepdims=True)
        before = b_nb + (on_ray - p_nb) @ (r_before.T @ r_now).T
        flow = flow_from_points_before(before, rig.lens.project)
        return dataclasses.replace(frame, flow_px=flow)

    def _render_view(
        self, robot: str, camera: str, streams: frozenset[Stream], keep_before: bool
    ) -> tuple[CameraFrame, tuple[NDArray[np.float32], NDArray[np.float32]] | None]:
        """One pinhole render; with keep_before, also each pixel's point now (optical frame at
        t) and where it was at t-1 (optical frame at t-1: flow.points_before), float32."""
        mj = self._mj
        self._ensure_renderer()
        slot = self._cameras[(robot, camera)]
        cfg = slot.config
        w, h = cfg.width, cfg.height
        rect = mj.MjrRect(0, 0, w, h)
        cam = mj.MjvCamera()
        cam.type = mj.mjtCamera.mjCAMERA_FIXED
        cam.fixedcamid = slot.cam_id
        vscene, entries = self._vscene, self._geoms
        assert entries is not None
        big_w, big_h = (
            self.scene.scenario.render.supersampled(w),
            self.scene.scenario.render.supersampled(h),
        )
        every = mj.mjtCatBit.mjCAT_ALL.value
        mj.mjv_updateScene(self.model, self._render_data, self._vopt, None, cam, every, vscene)
        if slot.output_cam_id is not None:
            self._aim_headlight(slot.output_cam_id)
        # What lies wholly outside the view is not drawn (view_cull): before every pass, or,
        # where shadow maps or reflections may show it, before the segmentation pass only.
        flags = vscene.flags
        unseen_shows = bool(
            flags[mj.mjtRndFlag.mjRND_SHADOW] or flags[mj.mjtRndFlag.mjRND_REFLECTION]
        )
        aspect = max(w / h, big_w / big_h)
        culled = False
        if self.cull_unseen and not unseen_shows:
            view_cull.cull_scene(mj, self.model, self._render_data, entries, aspect)
            culled = True
        want_rgb = Stream.RGB in streams
        motion = Stream.FLOW in streams or keep_before
        # Contact shadows darken the RGB image where its exact depth shows the ground.
        shadows = self._contact if want_rgb else None
        want_depth = bool(streams & _DEPTH_STREAMS) or motion or shadows is not None
        segment = bool(streams & _SEGMENT_STREAMS) or motion
        out_rgb = out_depth = None
        if want_rgb and self._probe_shading is not None:
            # Colours only: the segmentation pass below ignores them.
            self._probe_shading.apply(mj, vscene)
        if (big_w, big_h) != (w, h) and want_rgb:
            # Antialiasing: RGB drawn larger and averaged down. Depth and masks come from the
            # exact segmentation pass below, never from blended samples.
            big = mj.MjrRect(0, 0, big_w, big_h)
            with self._colour_order():
                mj.mjr_render(big, vscene, self._con)
            big_buf = np.empty((big_h, big_w, 3), dtype=np.uint8)
            mj.mjr_readPixels(big_buf, None, big, self._con)
            small = cv2.resize(big_buf[::-1], (w, h), interpolation=cv2.INTER_AREA)
            out_rgb = np.asarray(small, dtype=np.uint8)
        elif want_rgb or want_depth:
            with self._colour_order():
                mj.mjr_render(rect, vscene, self._con)
            rgb_buf = np.empty((h, w, 3), dtype=np.uint8) if want_rgb else None
            # The skybox writes depth; with a sky, depth comes from the exact pass below.
            sky = bool(vscene.flags[mj.mjtRndFlag.mjRND_SKYBOX])
            depth_buf = np.empty((h, w), dtype=np.float32) if want_depth and not sky else None
            mj.mjr_readPixels(rgb_buf, depth_buf, rect, self._con)
            if rgb_buf is not None:
                out_rgb = np.ascontiguousarray(rgb_buf[::-1])
            if depth_buf is not None:
                out_depth = self._linear_depth(depth_buf, cfg)
        exact_depth = want_depth and out_depth is None
        if segment or exact_depth:
            if self.cull_unseen and not culled:
                view_cull.cull_scene(mj, self.model, self._render_data, entries, aspect)
            geoms, seg_depth = self._geom_ids(rect, h, w, exact_depth)
            if seg_depth is not None:
                out_depth = self._linear_depth(seg_depth, cfg)
        if shadows is not None and out_rgb is not None and out_depth is not None:
            pos, quat = self._camera_pose_in(self._render_data, robot, camera)
            shadows.darken(
                out_rgb,
                out_depth,
                self._intrinsics(slot),
                pos,
                quat_to_matrix(quat),
                self._render_data,
                self._hidden,
            )
        if out_rgb is not None and self.scene.scenario.render.fxaa:
            # After the contact shadows: their soft edges are part of the image FXAA smooths.
            out_rgb = fxaa.fxaa(out_rgb)
        if not segment:
            return CameraFrame(out_rgb, out_depth if Stream.DEPTH in streams else None, None), None
        instance = pixel_kernels.instances(geoms, self._geom_instance, self._skin_instance)
        normals = flow = before = None
        if Stream.NORMALS in streams or motion:
            assert out_depth is not None
            points = backproject(out_depth, self._intrinsics(slot))
            pos, quat = self._camera_pose_in(self._render_data, robot, camera)
            now = PoseSnapshot(
                pos,
                quat_to_matrix(quat),
                self._render_data.geom_xpos.copy(),
                self._render_data.geom_xmat.reshape(-1, 3, 3).copy(),
                self._skin_vertices() if motion else (),
            )
            if Stream.NORMALS in streams:
                normals = normals_camera(
                    points,
                    geoms,
                    now.r_world_optical,
                    now.position_world_optical,
                    self.model.geom_type,
                    self.model.geom_size,
                    now.geom_pos,
                    now.geom_rot,
                )
            if motion:
                previous = self._flow_previous.get((robot, camera))
                before = points_before(points, geoms, now, previous)
                skin = geoms <= -2
                if skin.any():
                    skin_ids = np.where(skin, -2 - geoms, -1)
                    skin_points_before(points, skin_ids, now, previous, before)
                self._flow_previous[(robot, camera)] = now
                if Stream.FLOW in streams:
                    projection = pinhole_projection(self._intrinsics(slot))
                    flow = flow_from_points_before(before, projection)
        frame = CameraFrame(
            out_rgb,
            out_depth if Stream.DEPTH in streams else None,
            instance if Stream.INSTANCE in streams else None,
            semantic_image(instance, self._class_lut) if Stream.SEMANTIC in streams else None,
            normals,
            flow,
        )
        if not keep_before or before is None:
            return frame, None
        return frame, (points.astype(np.float32), before.astype(np.float32))

    def _colour_order(self) -> AbstractContextManager[None]:
        """The colour pass's draw order: nearest first (draw_order) unless `near_first` is off."""
        if not self.near_first:
            return nullcontext()
        assert self._geoms is not None
        eye = np.asarray(self._vscene.camera[0].pos, dtype=np.float64)
        return draw_order.drawn_nearest_first(self._geoms, eye, self._entry_objects())

    def _entry_objects(self) -> NDArray[np.int64]:
        """The instance id of each of this frame's scene entries (its object: a geom's or a
        skin's instance), -1 for entries of no instance (decor, static scenery without one)."""
        assert self._geoms is not None
        entries = self._geoms.records
        objtype, objid = entries["objtype"], entries["objid"].astype(np.int64)
        out = np.full(len(entries), -1, dtype=np.int64)
        geom = (objtype == int(self._mj.mjtObj.mjOBJ_GEOM)) & (objid >= 0)
        skin = (objtype == int(self._mj.mjtObj.mjOBJ_SKIN)) & (objid >= 0)
        out[geom] = self._geom_instance[objid[geom]]
        out[skin] = self._skin_instance[objid[skin]]
        out[out == 0] = -1  # instance 0 is "none"
        return out

    def _geom_ids(
        self, rect: Any, h: int, w: int, with_depth: bool
    ) -> tuple[NDArray[np.int32], NDArray[np.float32] | None]:
        """The segmentation pass: the geom id of every pixel, -2 - skin id on a skin, -1 on none.

        With `with_depth`, also this pass's (exact, never supersampled, sky-free) depth buffer,
        as read (bottom row first).
        """
        mj = self._mj
        vscene = self._vscene
        flags = vscene.flags
        saved = (flags[mj.mjtRndFlag.mjRND_SEGMENT], flags[mj.mjtRndFlag.mjRND_IDCOLOR])
        flags[mj.mjtRndFlag.mjRND_SEGMENT] = True
        flags[mj.mjtRndFlag.mjRND_IDCOLOR] = True
        try:
            mj.mjr_render(rect, vscene, self._con)
            seg = np.empty((h, w, 3), dtype=np.uint8)
            seg_depth = np.empty((h, w), dtype=np.float32) if with_depth else None
            mj.mjr_readPixels(seg, seg_depth, rect, self._con)
        finally:
            flags[mj.mjtRndFlag.mjRND_SEGMENT], flags[mj.mjtRndFlag.mjRND_IDCOLOR] = saved
        assert self._geoms is not None
        entries = self._geoms.records
        segid, objtype, objid = entries["segid"], entries["objtype"], entries["objid"]
        lut = np.full(vscene.ngeom + 2, -1, dtype=np.int32)
        shown = segid >= 0
        geom = shown & (objtype == int(mj.mjtObj.mjOBJ_GEOM))
        skin = shown & (objtype == int(mj.mjtObj.mjOBJ_SKIN))
        lut[segid[geom] + 1] = objid[geom]
        lut[segid[skin] + 1] = -2 - objid[skin]
        return pixel_kernels.geom_ids(seg, lut), seg_depth

    def _skin_vertices(self) -> tuple[FloatArray, ...]:
        """World vertices of every skin as mjv_updateScene last placed them (by skin id)."""
        vs = self._vscene
        flat = np.asarray(vs.skinvert, dtype=np.float64)
        return tuple(
            flat[3 * int(a) : 3 * (int(a) + int(n))].reshape(-1, 3).copy()
            for a, n in zip(vs.skinvertadr[: vs.nskin], vs.skinvertnum[: vs.nskin], strict=True)
        )

    def _intrinsics(self, slot: _CameraSlot) -> FloatArray:
        """K of the rendered image, from the MuJoCo camera's own vertical field of view."""
        h, w = slot.config.height, slot.config.width
        f = 0.5 * h / np.tan(np.radians(float(self.model.cam_fovy[slot.cam_id])) / 2)
        return np.array([[f, 0.0, (w - 1) / 2], [0.0, f, (h - 1) / 2], [0.0, 0.0, 1.0]])

    def _aim_headlight(self, output_cam_id: int) -> None:
        """Light a distorted camera's view with the camera's own headlight.

        MuJoCo's headlight shines along the rendering camera's axis: each cube face would be lit
        from its own direction and shading would step at the seams. It becomes a world-frame
        directional light along the output camera's axis instead, the same for every view.
        """
        forward = -self._render_data.cam_xmat[output_cam_id].reshape(3, 3)[:, 2]
        for i in range(self._vscene.nlight):
            light = self._vscene.lights[i]
            if light.headlight:
                light.dir = forward
                light.headlight = 0

    def _linear_depth(self, buf: NDArray[np.float32], cfg: CameraConfig) -> NDArray[np.float32]:
        """Planar depth in metres, rows top to bottom, of a depth buffer as read (bottom first)."""
        extent = self.model.stat.extent
        return pixel_kernels.linear_depth(
            buf,
            near=self.model.vis.map.znear * extent,
            far=self.model.vis.map.zfar * extent,
            near_m=cfg.near_m,
            far_m=cfg.far_m,
            flip=True,
        )

    def ray_meshes(self, segments: int) -> list[RayMesh]:
        from grade_sim.engine.mujoco.ray_meshes import ray_meshes

        return ray_meshes(
            self.model,
            self.data,
            self._geom_instance,
            self._mocap_ids,
            segments,
            self._skin_instance,
        )

    def close(self) -> None:
        if self._render_thread is not None:
            self._render_thread.close()  # frees the GL context on its own thread
            self._render_thread = None
        self._free_gl()

    def _free_gl(self) -> None:
        if self._con is not None:
            self._con.free()
            self._con = None
        if self._gl is not None:
            self._gl.free()
            self._gl = None


LOG_FILE = "MUJOCO_LOG.TXT"


@contextmanager
def log_into(folder: Path) -> Iterator[None]:
    """MuJoCo's warnings go to `folder`/MUJOCO_LOG.TXT (not the current directory) meanwhile."""
    import mujoco

    config = mujoco.MjLogConfig.get()
    previous = config.logfile
    config.logfile = str(folder / LOG_FILE)
    config.set()
    try:
        yield
    finally:
        config.logfile = previous
        config.set()


def _gl_renderer() -> str:
    """GL_RENDERER of the current context (e.g. llvmpipe, or an NVIDIA GPU through EGL)."""
    try:
        from OpenGL import GL  # type: ignore[import-untyped]

        raw = GL.glGetString(GL.GL_RENDERER)
    except Exception as err:  # PyOpenGL missing or no entry point: say so in run.yaml
        return f"unknown ({type(err).__name__}: {err})"
    return raw.decode(errors="replace") if isinstance(raw, bytes) else str(raw)


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
