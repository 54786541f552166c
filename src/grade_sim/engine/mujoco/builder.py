"""The MuJoCo model of a scene, built with the engine's model API (`mujoco.MjSpec`).

One model holds the whole scene: static boxes/meshes (collide with robots), actors as mocap
bodies (kinematic, no contacts), and each robot as a chain of virtual joints with velocity
actuators and gravity compensation, an IMU site with MuJoCo's accelerometer and gyro sensors, and
one MuJoCo camera per configured camera. The builder also records which instance every geom
belongs to, so segmentation never has to read ids back from names.

Numbers are rounded to the significant digits the model was first written with (as MJCF text):
the compiled model, and so every run, stays identical to those runs.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import mujoco
import numpy as np
from numpy.typing import NDArray

from grade_common.rotations import R_LINK_MJCAM, matrix_to_quat, quat_from_rpy, quat_to_matrix
from grade_common.types import FloatArray
from grade_sim.actors.animals import PART_NAMES as ANIMAL_PART_NAMES
from grade_sim.actors.flying import ObjectShape
from grade_sim.actors.people import PartShape
from grade_sim.config.scenario import MountConfig
from grade_sim.engine.mujoco.animal_coats import animal_materials
from grade_sim.robots.model import JointKind
from grade_sim.robots.urdf import UrdfGeom, UrdfRobot, load_urdf
from grade_sim.scene import RobotSetup, Scene
from grade_sim.world.model import Material, TextureKind

VELOCITY_BANDWIDTH_HZ = 40.0  # actuator time constant 1 / (2 pi 40) ~ 4 ms
LINK_MASS_KG = 0.01
URDF_VISUAL_GROUP = 1  # rendered (groups 0-2 are visible by default)
URDF_COLLISION_GROUP = 3  # not rendered: cameras and segmentation see the visual geometry
# Collision bits: world geometry collides with robots, robots do not collide with each other.
WORLD_CONTYPE, WORLD_CONAFFINITY = 1, 3
ROBOT_CONTYPE = 2

_GEOM_TYPES = {
    "box": mujoco.mjtGeom.mjGEOM_BOX,
    "sphere": mujoco.mjtGeom.mjGEOM_SPHERE,
    "capsule": mujoco.mjtGeom.mjGEOM_CAPSULE,
    "cylinder": mujoco.mjtGeom.mjGEOM_CYLINDER,
    "ellipsoid": mujoco.mjtGeom.mjGEOM_ELLIPSOID,
    "mesh": mujoco.mjtGeom.mjGEOM_MESH,
}
_JOINT_TYPES = {
    JointKind.SLIDE: mujoco.mjtJoint.mjJNT_SLIDE,
    JointKind.HINGE: mujoco.mjtJoint.mjJNT_HINGE,
}
_BUILTIN_TEXTURES = {
    TextureKind.CHECKER: mujoco.mjtBuiltin.mjBUILTIN_CHECKER,
    TextureKind.GRADIENT: mujoco.mjtBuiltin.mjBUILTIN_GRADIENT,
}


@dataclass(frozen=True)
class BuiltModel:
    """A compiled scene and the instance of each of its geoms."""

    model: Any  # mujoco.MjModel
    spec: Any  # mujoco.MjSpec it was compiled from
    geom_instance_ids: NDArray[np.uint16]  # (ngeom,), by geom id; 0 = no instance


def _g(values: float | Iterable[float] | FloatArray, digits: int = 9) -> list[float]:
    """`values` rounded to `digits` significant digits (see the module docstring)."""
    arr = np.atleast_1d(np.asarray(values, dtype=np.float64))
    return [float(f"{v:.{digits}g}") for v in arr]


def _size3(size: list[float]) -> list[float]:
    """A geom size padded with the zeros MuJoCo gives the sizes a shape does not use."""
    return size + [0.0] * (3 - len(size))


def _mount_quat(mount: MountConfig) -> FloatArray:
    return quat_from_rpy(*mount.rpy)


class _SceneBuilder:
    """Adds a scene's parts to one MjSpec and remembers each geom's instance."""

    def __init__(self, scene: Scene) -> None:
        self.scene = scene
        self.spec = mujoco.MjSpec()
        self._instance_geoms: list[tuple[Any, int]] = []

    def build(self) -> BuiltModel:
        self._set_globals()
        self._add_world()
        self._add_free_bodies()
        self._add_actors()
        for setup in self.scene.robots:
            self._add_robot(setup)
        model = self.spec.compile()
        ids = np.zeros(model.ngeom, dtype=np.uint16)
        for geom, instance_id in self._instance_geoms:
            ids[geom.id] = instance_id
        return BuiltModel(model, self.spec, ids)

    def _geom(self, parent: Any, instance_id: int, name: str, **attrs: Any) -> Any:
        geom = parent.add_geom(name=name, **attrs)
        self._instance_geoms.append((geom, instance_id))
        return geom

    # -- model options and the world ---------------------------------------------------------
    def _set_globals(self) -> None:
        scene, spec = self.scene, self.spec
        sc = scene.scenario
        cams = [c for r in scene.robots for c in r.model.config.cameras]
        near = min((c.near_m for c in cams), default=0.05)
        far = max((c.far_m for c in cams), default=50.0)
        lo, hi = np.asarray(scene.world.bounds_min_xyz), np.asarray(scene.world.bounds_max_xyz)
        extent = max(float(np.linalg.norm(hi - lo)), 1.0)
        spec.modelname = "grade"
        spec.compiler.degree = False
        spec.compiler.autolimits = True
        spec.option.timestep = _g(sc.physics_dt_s, 12)[0]
        spec.option.integrator = mujoco.mjtIntegrator.mjINT_IMPLICITFAST
        spec.option.gravity = [0.0, 0.0, -9.81]
        spec.stat.extent = _g(extent, 6)[0]
        spec.stat.center = _g((lo + hi) / 2)
        vis = spec.visual
        vis.global_.offwidth = max((c.width for c in cams), default=64)
        vis.global_.offheight = max((c.height for c in cams), default=64)
        vis.quality.shadowsize = 2048 if sc.lights.shadows else 0
        # offsamples=0: no multisampling. It would blend segmentation colours at object edges
        # into ids of other objects, and it is most of llvmpipe's rendering time.
        vis.quality.offsamples = 0
        vis.headlight.ambient = [0.3, 0.3, 0.3]
        vis.headlight.diffuse = [0.35, 0.35, 0.35]
        vis.headlight.specular = [0.0, 0.0, 0.0]
        vis.map.znear = _g(near / extent)[0]
        vis.map.zfar = _g(far * 1.5 / extent)[0]

    def _material(self, name: str, mat: Material) -> str:
        spec = self.spec
        if mat.texture is TextureKind.NONE:
            spec.add_material(name=name, rgba=_g(mat.rgba), specular=0.1)
            return name
        tex = spec.add_texture(
            name=f"{name}_tex", type=mujoco.mjtTexture.mjTEXTURE_2D, width=128, height=128
        )
        tex.rgb1 = _g(mat.rgba[:3])
        if mat.texture in _BUILTIN_TEXTURES:
            tex.builtin = _BUILTIN_TEXTURES[mat.texture]
            tex.rgb2 = _g(mat.rgb2)
        else:
            tex.builtin = mujoco.mjtBuiltin.mjBUILTIN_FLAT
            tex.mark = mujoco.mjtMark.mjMARK_RANDOM
            tex.random = 0.25
            tex.markrgb = _g(mat.rgb2)
        repeat = _g(1.0 / mat.texrepeat_m, 6)[0]
        material = spec.add_material(
            name=name, texrepeat=[repeat, repeat], texuniform=True, specular=0.1
        )
        material.textures[mujoco.mjtTextureRole.mjTEXROLE_RGB] = tex.name
        return name

    def _add_world(self) -> None:
        scene, world = self.scene, self.spec.worldbody
        shadows = bool(scene.scenario.lights.shadows)
        for k, light in enumerate(scene.world.lights):
            world.add_light(
                name=f"light_{k}",
                pos=_g(light.position_xyz),
                dir=[0.0, 0.0, -1.0],
                diffuse=_g(light.diffuse_rgb),
                specular=[0.05, 0.05, 0.05],
                castshadow=shadows,
                type=(
                    mujoco.mjtLightType.mjLIGHT_DIRECTIONAL
                    if light.directional
                    else mujoco.mjtLightType.mjLIGHT_SPOT
                ),
            )
        for box in scene.world.boxes:
            geom = self._geom(
                world,
                box.instance_id,
                f"i{box.instance_id}:{box.name}",
                type=mujoco.mjtGeom.mjGEOM_BOX,
                pos=_g(box.center_xyz),
                size=_g(box.half_size_xyz),
                material=self._material(f"mat_{box.name}", box.material),
                contype=WORLD_CONTYPE,
                conaffinity=WORLD_CONAFFINITY,
            )
            geom.alt.type = mujoco.mjtOrientation.mjORIENTATION_EULER
            geom.alt.euler = [0.0, 0.0, _g(box.yaw_rad)[0]]
        for mesh in scene.world.meshes:
            mesh_name = f"mesh_{mesh.instance_id}"
            self.spec.add_mesh(
                name=mesh_name,
                uservert=_g(mesh.vertices_xyz.ravel()),
                userface=[int(v) for v in mesh.faces.ravel()],
            )
            self._geom(
                world,
                mesh.instance_id,
                f"i{mesh.instance_id}:{mesh.name}",
                type=mujoco.mjtGeom.mjGEOM_MESH,
                meshname=mesh_name,
                material=self._material(f"mat_mesh_{mesh.instance_id}", mesh.material),
                contype=WORLD_CONTYPE,
                conaffinity=WORLD_CONAFFINITY,
            )

    def _add_free_bodies(self) -> None:
        """Loose objects (tabletop): a free joint each, explicit mass and inertia, hull contacts."""
        for body in self.scene.world.free_bodies:
            mesh_name = f"free_mesh_{body.instance_id}"
            self.spec.add_mesh(
                name=mesh_name,
                uservert=_g(body.vertices_xyz.ravel()),
                userface=[int(v) for v in body.faces.ravel()],
                inertia=mujoco.mjtMeshInertia.mjMESH_INERTIA_SHELL,
            )
            node = self.spec.worldbody.add_body(
                name=body.name, pos=_g(body.position_xyz), quat=_g(body.quat_wxyz)
            )
            node.add_freejoint(name=f"{body.name}/free")
            node.explicitinertial = True
            node.ipos = [0.0, 0.0, 0.0]
            node.mass = body.mass_kg
            node.fullinertia = _g(body.inertia_kg_m2)
            self._geom(
                node,
                body.instance_id,
                f"i{body.instance_id}:{body.name}",
                type=mujoco.mjtGeom.mjGEOM_MESH,
                meshname=mesh_name,
                material=self._material(f"mat_free_{body.instance_id}", body.material),
                contype=WORLD_CONTYPE,
                conaffinity=WORLD_CONAFFINITY,
                mass=0.0,
            )

    def _add_actors(self) -> None:
        for person in self.scene.people:
            for part in person.parts():
                if part.shape is PartShape.CAPSULE:
                    size = _g(part.size[:2], 6)
                elif part.shape is PartShape.SPHERE:
                    size = _g(part.size[0], 6)
                else:
                    size = _g(part.size)
                self._add_mocap(
                    f"{person.name}/{part.name}",
                    person.instance_id,
                    part.shape.value,
                    size,
                    _g(person.colors[part.color]),
                )
        for obj in self.scene.objects:
            h = obj.half_size
            size = {
                ObjectShape.BOX: _g(h),
                ObjectShape.SPHERE: _g(h[0], 6),
                ObjectShape.CAPSULE: _g((h[0], h[2]), 6),
                ObjectShape.CYLINDER: _g((h[0], h[2]), 6),
                ObjectShape.ELLIPSOID: _g(h),
            }[obj.shape]
            self._add_mocap(obj.name, obj.instance_id, obj.shape.value, size, _g(obj.rgba))
        for animal in self.scene.animals:
            materials = animal_materials(self.spec, animal)
            for part_name, (shape, size3), material in zip(
                ANIMAL_PART_NAMES, animal.part_shapes(), materials, strict=True
            ):
                self._add_mocap(
                    f"{animal.name}/{part_name}",
                    animal.instance_id,
                    shape,
                    _g(size3, 6),
                    None,
                    material,
                )

    def _add_mocap(
        self,
        name: str,
        instance_id: int,
        shape: str,
        size: list[float],
        rgba: list[float] | None,
        material: str = "",
    ) -> None:
        """An actor body: posed kinematically (mocap), seen by cameras, colliding with nothing.
        Its colour is `rgba`, or with None its material's (MuJoCo lets a geom rgba override
        the material's)."""
        body = self.spec.worldbody.add_body(name=name, mocap=True)
        self._geom(
            body,
            instance_id,
            f"i{instance_id}:{name}",
            type=_GEOM_TYPES[shape],
            size=_size3(size),
            contype=0,
            conaffinity=0,
            **({"rgba": rgba} if rgba is not None else {}),
            **({"material": material} if material else {}),
        )

    # -- robots ------------------------------------------------------------------------------
    def _add_robot(self, setup: RobotSetup) -> None:
        cfg = setup.model.config
        name = cfg.name
        instance_id = setup.instance_id
        urdf = load_urdf(cfg.urdf, cfg.urdf_base_link) if cfg.urdf is not None else None
        half = np.asarray(cfg.body_size_m) / 2
        body_inertia: FloatArray = (
            cfg.mass_kg
            / 3
            * np.array(
                [
                    half[1] ** 2 + half[2] ** 2,
                    half[0] ** 2 + half[2] ** 2,
                    half[0] ** 2 + half[1] ** 2,
                ]
            )
        )
        # The virtual joints: one massless-ish link body per joint, the last one is base_link.
        chain = [j for j in setup.model.joints if j.name != setup.model.camera_joint]
        parent = self.spec.worldbody
        for k, joint in enumerate(chain):
            is_base = k == len(chain) - 1
            body_name = f"{name}/base_link" if is_base else f"{name}/{joint.name}_link"
            parent = parent.add_body(name=body_name, gravcomp=1.0)
            parent.add_joint(
                name=f"{name}/{joint.name}",
                type=_JOINT_TYPES[joint.kind],
                axis=_g(joint.axis),
                damping=0.0,
                **({"range": _g(joint.range, 6)} if joint.range else {}),
            )
            if not is_base:
                self._inertial(parent, LINK_MASS_KG, np.full(3, 1e-5))
        base = parent
        # Base body: mass, geometry, IMU, and (UAV) cameras.
        mass_kg = cfg.mass_kg
        if urdf is not None and urdf.mass_kg is not None:
            mass_kg = urdf.mass_kg
            com = urdf.com_base_xyz
            i_com = urdf.inertia_com_base
            base.explicitinertial = True
            base.ipos = _g(com)
            base.mass = _g(mass_kg)[0]
            base.fullinertia = _g(
                [i_com[0, 0], i_com[1, 1], i_com[2, 2], i_com[0, 1], i_com[0, 2], i_com[1, 2]]
            )
            # The hinges turn the body about base_link's origin: their actuators see that inertia.
            i_origin = i_com + mass_kg * (float(com @ com) * np.eye(3) - np.outer(com, com))
            body_inertia = np.asarray(np.linalg.eigvalsh(i_origin), dtype=np.float64)
        else:
            self._inertial(base, _g(cfg.mass_kg, 6)[0], body_inertia)
        if urdf is not None:
            self._add_urdf_geoms(base, urdf, instance_id, name)
        else:
            self._geom(
                base,
                instance_id,
                f"i{instance_id}:{name}/body",
                type=mujoco.mjtGeom.mjGEOM_BOX,
                size=_g(half),
                rgba=[0.2, 0.2, 0.25, 1.0],
                contype=ROBOT_CONTYPE,
                conaffinity=0,
                mass=0.0,
            )
        if cfg.type.value == "uav" and urdf is None:
            for sx, sy in ((1, 1), (1, -1), (-1, 1), (-1, -1)):
                self._geom(
                    base,
                    instance_id,
                    f"i{instance_id}:{name}/rotor_{sx}{sy}",
                    type=mujoco.mjtGeom.mjGEOM_CYLINDER,
                    size=[*_g(half[0] * 0.45, 4), 0.008, 0.0],
                    pos=_g((sx * half[0], sy * half[1], half[2]), 4),
                    rgba=[0.1, 0.1, 0.1, 1.0],
                    contype=0,
                    conaffinity=0,
                    mass=0.0,
                )
        imu = cfg.imu
        base.add_site(
            name=f"{name}/imu_link", pos=_g(imu.mount.xyz), quat=_g(_mount_quat(imu.mount))
        )
        if imu.enabled:
            for kind, sensor_type in (
                ("accel", mujoco.mjtSensor.mjSENS_ACCELEROMETER),
                ("gyro", mujoco.mjtSensor.mjSENS_GYRO),
            ):
                self.spec.add_sensor(
                    name=f"{name}/imu_{kind}",
                    type=sensor_type,
                    objtype=mujoco.mjtObj.mjOBJ_SITE,
                    objname=f"{name}/imu_link",
                )
        camera_body = base
        if setup.model.camera_joint is not None:
            camera_body = base.add_body(
                name=f"{name}/camera_mount", pos=[0.0, 0.0, *_g(half[2] + 0.25, 6)], gravcomp=1.0
            )
            camera_body.add_joint(
                name=f"{name}/{setup.model.camera_joint}",
                type=mujoco.mjtJoint.mjJNT_HINGE,
                axis=[0.0, 0.0, 1.0],
            )
            self._inertial(camera_body, 0.2, np.full(3, 1e-3))
            self._geom(
                camera_body,
                instance_id,
                f"i{instance_id}:{name}/mast",
                type=mujoco.mjtGeom.mjGEOM_CYLINDER,
                size=[0.04, 0.05, 0.0],
                rgba=[0.3, 0.3, 0.3, 1.0],
                contype=0,
                conaffinity=0,
                mass=0.0,
            )
        for cam in cfg.cameras:
            fovy = math.degrees(
                2 * math.atan(math.tan(math.radians(cam.hfov_deg) / 2) * cam.height / cam.width)
            )
            q = matrix_to_quat(quat_to_matrix(_mount_quat(cam.mount)) @ R_LINK_MJCAM)
            camera_body.add_camera(
                name=f"{name}/{cam.name}",
                pos=_g(cam.mount.xyz),
                quat=_g(q),
                fovy=_g(fovy)[0],
                mode=mujoco.mjtCamLight.mjCAMLIGHT_FIXED,
            )
        bandwidth = 2 * math.pi * VELOCITY_BANDWIDTH_HZ
        for joint in setup.model.joints:
            if joint.kind is JointKind.SLIDE:
                inertia = mass_kg + 0.2
            elif joint.name == setup.model.camera_joint:
                inertia = 1e-3
            else:
                inertia = float(np.max(body_inertia)) + 0.2 * 0.25**2
            actuator = self.spec.add_actuator(
                name=f"{name}/{joint.name}",
                trntype=mujoco.mjtTrn.mjTRN_JOINT,
                target=f"{name}/{joint.name}",
            )
            actuator.set_to_velocity(kv=_g(inertia * bandwidth, 6)[0])

    @staticmethod
    def _inertial(body: Any, mass_kg: float, diag_inertia: FloatArray) -> None:
        body.explicitinertial = True
        body.ipos = [0.0, 0.0, 0.0]
        body.mass = mass_kg
        body.inertia = _g(diag_inertia)

    def _add_urdf_geoms(self, body: Any, urdf: UrdfRobot, instance_id: int, robot: str) -> None:
        """Geoms of a URDF body: visuals drawn but not colliding, collisions colliding but hidden.

        Collision meshes collide as their convex hull (MuJoCo's rule for mesh geoms). Mesh
        inertia is computed as a shell only so that open or flat meshes compile: the body's
        inertial is explicit and the geoms are massless.
        """
        for kind, geoms, contype, group in (
            ("visual", urdf.visuals, 0, URDF_VISUAL_GROUP),
            ("collision", urdf.collisions, ROBOT_CONTYPE, URDF_COLLISION_GROUP),
        ):
            for k, g in enumerate(geoms):
                self._geom(
                    body,
                    instance_id,
                    f"i{instance_id}:{robot}/{g.name}",
                    **self._urdf_shape(g, f"{robot}/{kind}_mesh_{k}"),
                    pos=_g(g.pos_base_xyz),
                    quat=_g(g.quat_base_wxyz),
                    rgba=_g(g.rgba),
                    contype=contype,
                    conaffinity=0,
                    group=group,
                    mass=0.0,
                )

    def _urdf_shape(self, g: UrdfGeom, mesh_name: str) -> dict[str, Any]:
        if g.vertices_xyz is None or g.faces is None:
            return {"type": _GEOM_TYPES[g.shape.value], "size": _size3(_g(g.size))}
        self.spec.add_mesh(
            name=mesh_name,
            uservert=_g(g.vertices_xyz.ravel()),
            userface=[int(v) for v in g.faces.ravel()],
            inertia=mujoco.mjtMeshInertia.mjMESH_INERTIA_SHELL,
        )
        return {"type": mujoco.mjtGeom.mjGEOM_MESH, "meshname": mesh_name}


def build_model(scene: Scene) -> BuiltModel:
    """Compile the MuJoCo model of a scene.

    Raises:
        ValueError: MuJoCo rejects the model (the engine wraps it in a BackendError).
    """
    return _SceneBuilder(scene).build()
