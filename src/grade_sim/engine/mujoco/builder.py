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

import dataclasses
import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import mujoco
import numpy as np
from numpy.typing import NDArray

from grade_common.rotations import R_LINK_MJCAM, matrix_to_quat, quat_from_rpy, quat_to_matrix
from grade_common.textures import (
    TextureKind,
    TextureSpec,
    is_procedural,
    shared_cache,
    surface_of,
)
from grade_common.types import FloatArray
from grade_people.body_mesh import Clothing, body_mesh, clothing_texture
from grade_people.skeleton import JOINT_NAMES, BodyParams, rest_positions
from grade_sim.actors.geometry import ActorMaterial, SkinnedFigure, significant
from grade_sim.config.scenario import MountConfig
from grade_sim.engine.bake.albedo import baked_cube, baked_plane, baked_terrain, one_face
from grade_sim.engine.bake.cache import baked_lightmaps
from grade_sim.engine.bake.lightmap import Lightmaps, terrain_extent, terrain_mesh_index
from grade_sim.engine.bake.probes import ProbeGrid
from grade_sim.engine.mujoco.image_texture import add_image_texture
from grade_sim.optics.lens import lens_of
from grade_sim.optics.rig import source_views
from grade_sim.robots.model import JointKind
from grade_sim.robots.urdf import UrdfGeom, UrdfRobot, load_urdf
from grade_sim.scene import RobotSetup, Scene
from grade_sim.world.light_units import exposed_world
from grade_sim.world.model import Material, Sky, StaticBox, StaticMesh, StaticShape
from grade_sim.world.sky import sky_cube
from grade_sim.world.terrain import Terrain

# MuJoCo camera frame (x right, y up, looking along -z) <-> optical frame; its own inverse.
R_MJCAM_OPTICAL = np.diag([1.0, -1.0, -1.0])

VELOCITY_BANDWIDTH_HZ = 40.0  # actuator time constant 1 / (2 pi 40) ~ 4 ms
LINK_MASS_KG = 0.01
URDF_VISUAL_GROUP = 1  # rendered (groups 0-2 are visible by default)
URDF_COLLISION_GROUP = 3  # not rendered: cameras and segmentation see the visual geometry
# Collision bits: world geometry collides with robots, robots do not collide with each other.
WORLD_CONTYPE, WORLD_CONAFFINITY = 1, 3
ROBOT_CONTYPE = 2
CHASSIS_CLEARANCE_M = 0.01  # a ground robot's body box above the floor (its wheels)

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


SKY_FACE_PX = 256


@dataclass(frozen=True)
class BuiltModel:
    """A compiled scene and the instance of each of its geoms."""

    model: Any  # mujoco.MjModel
    spec: Any  # mujoco.MjSpec it was compiled from
    geom_instance_ids: NDArray[np.uint16]  # (ngeom,), by geom id; 0 = no instance
    skin_instance_ids: NDArray[np.uint16]  # (nskin,), by skin id
    probes: ProbeGrid | None = None  # the bake's light probes (lights.bake.probes)


def _g(values: float | Iterable[float] | FloatArray, digits: int = 9) -> list[float]:
    """`values` rounded to `digits` significant digits (see the module docstring)."""
    return significant(values, digits)


def _size3(size: list[float]) -> list[float]:
    """A geom size padded with the zeros MuJoCo gives the sizes a shape does not use."""
    return size + [0.0] * (3 - len(size))


def _mount_quat(mount: MountConfig) -> FloatArray:
    return quat_from_rpy(*mount.rpy)


class _SceneBuilder:
    """Adds a scene's parts to one MjSpec and remembers each geom's instance."""

    def __init__(self, scene: Scene) -> None:
        # The lights as the cameras' exposure sees them (the scene itself at the default).
        world = exposed_world(scene.world, scene.scenario.render.exposure_ev100)
        self.scene = scene if world is scene.world else dataclasses.replace(scene, world=world)
        self.spec = mujoco.MjSpec()
        self._instance_geoms: list[tuple[Any, int]] = []
        self._textures: dict[TextureSpec, str] = {}  # one MuJoCo texture per distinct image
        self._image_textures: dict[int, str] = {}  # id() of a mesh image -> texture name
        self._box_materials: dict[tuple[Material, tuple[float, float] | None], str] = {}
        self._uv_materials: dict[Material, str] = {}
        self._skin_instances: list[int] = []
        self._lightmaps_built: Lightmaps | None = None

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
        skins = np.array(self._skin_instances, dtype=np.uint16)
        probes = self._lightmaps_built.probes if self._lightmaps_built is not None else None
        return BuiltModel(model, self.spec, ids, skins, probes)

    def _geom(self, parent: Any, instance_id: int, name: str, **attrs: Any) -> Any:
        """A geom of instance `instance_id`, named `i<instance_id>:<name>` (every geom is)."""
        geom = parent.add_geom(name=f"i{instance_id}:{name}", **attrs)
        self._instance_geoms.append((geom, instance_id))
        return geom

    # -- model options and the world ---------------------------------------------------------
    def _set_globals(self) -> None:
        scene, spec = self.scene, self.spec
        sc = scene.scenario
        cams = [c for r in scene.robots for c in r.model.config.cameras]
        cams += [v.config(c) for c in cams for v in source_views(c)]  # distorted cameras' views
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
        # RGB is drawn supersample times larger (antialiasing).
        vis.global_.offwidth = sc.render.supersampled(max((c.width for c in cams), default=64))
        vis.global_.offheight = sc.render.supersampled(max((c.height for c in cams), default=64))
        vis.quality.shadowsize = 2048 if sc.lights.shadows else 0
        # offsamples=0: no multisampling. It would blend segmentation colours at object edges
        # into ids of other objects; the engine antialiases RGB by supersampling instead.
        vis.quality.offsamples = 0
        ambience = scene.world.ambience
        vis.headlight.active = any(v > 0 for v in (*ambience.ambient_rgb, *ambience.headlight_rgb))
        vis.headlight.ambient = _g(ambience.ambient_rgb)
        vis.headlight.diffuse = _g(ambience.headlight_rgb)
        vis.headlight.specular = [0.0, 0.0, 0.0]
        vis.map.znear = _g(near / extent)[0]
        vis.map.zfar = _g(far * 1.5 / extent)[0]

    def _material(self, name: str, mat: Material, face_m: tuple[float, float] | None = None) -> str:
        """A material for `mat`; `face_m` (width, height) of a box's main face in metres."""
        spec = self.spec
        if is_procedural(mat.texture):
            return self._procedural_material(name, mat, face_m)
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

    def _procedural_material(
        self, name: str, mat: Material, face_m: tuple[float, float] | None
    ) -> str:
        """A material showing an image of the texture library (one texture per distinct image).

        MuJoCo's spatially uniform mapping (texuniform) stretches 2D textures on the sides of
        boxes, so a box's texture instead spans each face once, repeated face size / tile size
        times: exact on the box's largest face (and its opposite), stretched only on the others.
        """
        spec = self.spec
        tex_spec = TextureSpec(
            mat.texture,
            (mat.rgba[0], mat.rgba[1], mat.rgba[2]),
            mat.rgb2,
            seed=mat.seed,
            size_px=self.scene.scenario.render.texture_size_px,
        )
        tex_name = self._textures.get(tex_spec)
        if tex_name is None:
            image = shared_cache().image(tex_spec)
            tex_name = f"tex_{len(self._textures)}_{mat.texture.value}"
            self._textures[tex_spec] = add_image_texture(spec, tex_name, image)
        surface = surface_of(mat.texture)
        if face_m is None:
            repeat = _g([1.0 / mat.texrepeat_m] * 2, 6)
        else:
            repeat = _g([face_m[0] / mat.texrepeat_m, face_m[1] / mat.texrepeat_m], 6)
        material = spec.add_material(
            name=name,
            rgba=[1.0, 1.0, 1.0, *_g(mat.rgba[3])],  # the image carries the colour
            texrepeat=repeat,
            texuniform=face_m is None,
            specular=surface.specular,
            shininess=surface.shininess,
            reflectance=surface.reflectance,
        )
        material.textures[mujoco.mjtTextureRole.mjTEXROLE_RGB] = tex_name
        return name

    def _add_sky(self, sky: Sky) -> None:
        """A cube-map skybox: gradient from horizon to zenith with a sun disc."""
        image = sky_cube(sky, SKY_FACE_PX)
        add_image_texture(self.spec, "sky", image, mujoco.mjtTexture.mjTEXTURE_SKYBOX)

    def _box_material(
        self, box_name: str, mat: Material, face_m: tuple[float, float] | None
    ) -> str:
        """One MuJoCo material per distinct material and face size: the parts of a piece of
        furniture share theirs (textures are shared per image anyway)."""
        key = (mat, face_m)
        if key not in self._box_materials:
            self._box_materials[key] = self._material(f"mat_{box_name}", mat, face_m)
        return self._box_materials[key]

    def _mesh_material(self, name: str, mesh: StaticMesh) -> str:
        """A mesh's material: its own image through its texture coordinates, else the kind."""
        if mesh.texture_rgb is None or mesh.texcoords_uv is None:
            if mesh.texcoords_uv is None or mesh.material.texture is TextureKind.NONE:
                return self._material(name, mesh.material)
            # Procedural kinds on generated meshes whose texcoords are in metres; the parts of
            # one tree share theirs.
            if mesh.material not in self._uv_materials:
                self._material(name, mesh.material)
                self.spec.material(name).texuniform = False
                self._uv_materials[mesh.material] = name
            return self._uv_materials[mesh.material]
        key = id(mesh.texture_rgb)
        if key not in self._image_textures:
            image = np.asarray(mesh.texture_rgb, dtype=np.uint8)
            self._image_textures[key] = add_image_texture(self.spec, f"{name}_image", image)
        # The image already holds the surface colour; the diffuse colour of the file tints it.
        material = self.spec.add_material(name=name, rgba=_g(mesh.material.rgba), specular=0.1)
        material.textures[mujoco.mjtTextureRole.mjTEXROLE_RGB] = self._image_textures[key]
        return name

    def _lightmaps(self) -> Lightmaps | None:
        """The world's baked lighting when the scenario turns it on (cached on disk)."""
        cfg = self.scene.scenario.lights.bake
        if not cfg.enabled or not self.scene.world.lights:
            return None
        maps, _ = baked_lightmaps(self.scene.world, cfg)
        return maps

    def _baked_material(self, k: int, box: StaticBox, irradiance: list[NDArray[np.float32]]) -> str:
        """A box's own texture (albedo x lightmap) in an emissive material: a 2D texture for a
        floor or ceiling (one face is seen; MuJoCo mipmaps it), else a cube texture (one image
        per face)."""
        sc = self.scene.scenario
        cfg = sc.lights.bake
        if one_face(box) is not None:
            image = baked_plane(box, irradiance, cfg.texture_px_per_m, sc.render.texture_size_px)
            kind = mujoco.mjtTexture.mjTEXTURE_2D
        else:
            image = baked_cube(
                box, irradiance, cfg.texture_px_per_m, cfg.max_face_px, sc.render.texture_size_px
            )
            kind = mujoco.mjtTexture.mjTEXTURE_CUBE
        texture = add_image_texture(self.spec, f"baked_{k}", image, kind)
        name = self._emissive_material(f"mat_baked_{k}", texture, box.material.texture)
        if kind == mujoco.mjtTexture.mjTEXTURE_2D:
            # Each face spans the image once: the seen face shows it as baked.
            self.spec.material(name).texuniform = False
            self.spec.material(name).texrepeat = [1.0, 1.0]
        return name

    def _baked_terrain_material(
        self, mesh: StaticMesh, terrain: Terrain, irradiance: NDArray[np.float32]
    ) -> str:
        """The terrain's own baked 2D texture (addressed by texcoords over its grid)."""
        sc = self.scene.scenario
        image = baked_terrain(
            mesh.material,
            terrain_extent(terrain),
            irradiance,
            sc.lights.bake.texture_px_per_m,
            sc.render.texture_size_px,
        )
        texture = add_image_texture(self.spec, "baked_terrain", image)
        return self._emissive_material("mat_baked_terrain", texture, mesh.material.texture)

    def _emissive_material(self, name: str, texture: str, kind: TextureKind) -> str:
        """A fully emissive material showing `texture` as the final colour: the live lights
        only add their specular highlights."""
        surface = surface_of(kind)
        material = self.spec.add_material(
            name=name,
            rgba=[1.0, 1.0, 1.0, 1.0],
            emission=1.0,
            specular=surface.specular,
            shininess=surface.shininess,
            reflectance=surface.reflectance,
        )
        material.textures[mujoco.mjtTextureRole.mjTEXROLE_RGB] = texture
        return name

    def _add_world(self) -> None:
        scene, world = self.scene, self.spec.worldbody
        shadows = bool(scene.scenario.lights.shadows)
        if scene.world.sky is not None:
            self._add_sky(scene.world.sky)
        for k, light in enumerate(scene.world.lights):
            world.add_light(
                name=f"light_{k}",
                pos=_g(light.position_xyz),
                dir=_g(light.direction_xyz),
                diffuse=_g(light.diffuse_rgb),
                specular=[0.05, 0.05, 0.05],
                cutoff=_g(light.cutoff_deg)[0],
                exponent=_g(light.exponent)[0],
                attenuation=_g(light.attenuation),
                castshadow=shadows and light.casts_shadow,
                type=(
                    mujoco.mjtLightType.mjLIGHT_DIRECTIONAL
                    if light.directional
                    else mujoco.mjtLightType.mjLIGHT_SPOT
                ),
            )
        lightmaps = self._lightmaps_built = self._lightmaps()
        for k, box in enumerate(scene.world.boxes):
            irradiance = lightmaps.of_box(k) if lightmaps is not None else None
            if irradiance is not None:
                material = self._baked_material(k, box, irradiance)
            else:
                material = self._box_material(
                    box.name, box.material, main_face_m(box.half_size_xyz)
                )
            if box.shape is StaticShape.CYLINDER:
                shape = {
                    "type": mujoco.mjtGeom.mjGEOM_CYLINDER,
                    "size": _g((box.half_size_xyz[0], box.half_size_xyz[2], 0.0)),
                }
            else:
                shape = {"type": mujoco.mjtGeom.mjGEOM_BOX, "size": _g(box.half_size_xyz)}
            geom = self._geom(
                world,
                box.instance_id,
                box.name,
                pos=_g(box.center_xyz),
                **shape,
                material=material,
                contype=WORLD_CONTYPE,
                conaffinity=WORLD_CONAFFINITY,
            )
            geom.alt.type = mujoco.mjtOrientation.mjORIENTATION_EULER
            geom.alt.euler = [0.0, 0.0, _g(box.yaw_rad)[0]]
        parts_seen: dict[int, int] = {}
        ground = terrain_mesh_index(scene.world)
        for m, mesh in enumerate(scene.world.meshes):
            # Several meshes may share an instance (parts of one object): number the later ones.
            k = parts_seen[mesh.instance_id] = parts_seen.get(mesh.instance_id, -1) + 1
            mesh_name = f"mesh_{mesh.instance_id}" if k == 0 else f"mesh_{mesh.instance_id}_{k}"
            textured: dict[str, Any] = {}
            ground_light = lightmaps.terrain if lightmaps is not None and m == ground else None
            if ground_light is not None and scene.world.terrain is not None:
                material = self._baked_terrain_material(mesh, scene.world.terrain, ground_light)
                x0, y0, x1, y1 = terrain_extent(scene.world.terrain)
                uv = (mesh.vertices_xyz[:, :2] - [x0, y0]) / [x1 - x0, y1 - y0]
                textured["usertexcoord"] = _g(uv.ravel())
            else:
                material = self._mesh_material(f"mat_{mesh_name}", mesh)
                if mesh.texcoords_uv is not None:
                    textured["usertexcoord"] = _g(mesh.texcoords_uv.ravel())
            if not mesh.collides:
                # Flat or open surfaces have no convex hull; they are drawn only.
                textured["inertia"] = mujoco.mjtMeshInertia.mjMESH_INERTIA_SHELL
            self._geom(
                world,
                mesh.instance_id,
                mesh.name,
                **self._add_mesh(mesh_name, mesh.vertices_xyz, mesh.faces, **textured),
                material=material,
                contype=WORLD_CONTYPE if mesh.collides else 0,
                conaffinity=WORLD_CONAFFINITY if mesh.collides else 0,
            )

    def _add_free_bodies(self) -> None:
        """Loose objects (tabletop): a free joint each, explicit mass and inertia, hull contacts."""
        for body in self.scene.world.free_bodies:
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
                body.name,
                **self._add_mesh(
                    f"free_mesh_{body.instance_id}",
                    body.vertices_xyz,
                    body.faces,
                    inertia=mujoco.mjtMeshInertia.mjMESH_INERTIA_SHELL,
                ),
                material=self._material(f"mat_free_{body.instance_id}", body.material),
                contype=WORLD_CONTYPE,
                conaffinity=WORLD_CONAFFINITY,
                mass=0.0,
            )

    def _add_actors(self) -> None:
        """Every group's geometry, in order: materials, rigid parts and skinned figures."""
        for group in self.scene.groups:
            for item in group.geometry():
                if isinstance(item, ActorMaterial):
                    self._add_actor_material(item)
                elif isinstance(item, SkinnedFigure):
                    self._add_skinned_person(item.name, item.instance_id, item.body, item.clothing)
                else:
                    self._add_mocap(
                        item.body_name,
                        item.instance_id,
                        item.shape,
                        list(item.size),
                        None if item.rgba is None else list(item.rgba),
                        item.material,
                    )

    def _add_actor_material(self, material: ActorMaterial) -> None:
        texture = material.texture
        if texture is None:
            self.spec.add_material(
                name=material.name, rgba=list(material.rgba or ()), specular=material.specular
            )
            return
        rgb = np.where(
            texture.dark[..., None], np.asarray(texture.dark_rgb), np.asarray(texture.light_rgb)
        )
        image = np.round(rgb * 255).astype(np.uint8)
        tex = add_image_texture(self.spec, texture.name, image, mujoco.mjtTexture.mjTEXTURE_CUBE)
        mat = self.spec.add_material(name=material.name, specular=material.specular)
        mat.textures[mujoco.mjtTextureRole.mjTEXROLE_RGB] = tex

    def _add_skinned_person(
        self, name: str, instance_id: int, body: BodyParams, clothing: Clothing
    ) -> None:
        """One mocap body per skeleton joint (world-aligned at rest) and one textured <skin>."""
        mesh = body_mesh(body, clothing)
        rest = rest_positions(body)
        for joint in JOINT_NAMES:
            self.spec.worldbody.add_body(name=f"{name}/{joint}", mocap=True)
        tex = clothing_texture(clothing)
        add_image_texture(self.spec, f"tex_{name}", tex[::-1])
        mat = self.spec.add_material(name=f"mat_{name}", specular=0.1, shininess=0.1)
        mat.textures[mujoco.mjtTextureRole.mjTEXROLE_RGB] = f"tex_{name}"
        skin = self.spec.add_skin(name=f"i{instance_id}:{name}", material=f"mat_{name}")
        skin.vert = _g(mesh.vertices.ravel())
        skin.face = [int(i) for i in mesh.faces.ravel()]
        skin.texcoord = [float(v) for v in mesh.texcoord.ravel()]
        bones = [j for j in range(len(JOINT_NAMES)) if mesh.weights[:, j].any()]
        skin.bodyname = [f"{name}/{JOINT_NAMES[j]}" for j in bones]
        skin.bindpos = _g(rest[bones].ravel())
        skin.bindquat = [1.0, 0.0, 0.0, 0.0] * len(bones)
        skin.vertid = [[int(v) for v in np.flatnonzero(mesh.weights[:, j])] for j in bones]
        skin.vertweight = [
            [float(w) for w in mesh.weights[mesh.weights[:, j] > 0, j]] for j in bones
        ]
        self._skin_instances.append(instance_id)

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
            name,
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
        # A robot without a z joint (the ground robot) rides at its start height, its body box
        # (the chassis) just clear of the floor on its wheels: sunk half into the floor, as it
        # was, or resting on it, floor contacts brake every joint.
        height = (
            []
            if any(j.name == "z" for j in chain)
            else _g(setup.start_xyz[2] + CHASSIS_CLEARANCE_M)
        )
        for k, joint in enumerate(chain):
            is_base = k == len(chain) - 1
            body_name = f"{name}/base_link" if is_base else f"{name}/{joint.name}_link"
            at = {"pos": [0.0, 0.0, *height]} if k == 0 and height else {}
            parent = parent.add_body(name=body_name, gravcomp=1.0, **at)
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
                f"{name}/body",
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
                    f"{name}/rotor_{sx}{sy}",
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
                f"{name}/mast",
                type=mujoco.mjtGeom.mjGEOM_CYLINDER,
                size=[0.04, 0.05, 0.0],
                rgba=[0.3, 0.3, 0.3, 1.0],
                contype=0,
                conaffinity=0,
                mass=0.0,
            )
        for cam in cfg.cameras:
            # A distorted camera's own MuJoCo camera gives its pose; its views are rendered.
            renders = [(cam.name, cam, np.eye(3))]
            renders += [
                (f"{cam.name}/{v.name}", v.config(cam), v.r_optical_view) for v in source_views(cam)
            ]
            for view_name, view, r_optical_view in renders:
                focal_px = lens_of(view).k[1, 1]
                fovy = math.degrees(2 * math.atan(0.5 * view.height / focal_px))
                r_mount_mjcam = R_LINK_MJCAM @ R_MJCAM_OPTICAL @ r_optical_view @ R_MJCAM_OPTICAL
                q = matrix_to_quat(quat_to_matrix(_mount_quat(cam.mount)) @ r_mount_mjcam)
                camera_body.add_camera(
                    name=f"{name}/{view_name}",
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
                    f"{robot}/{g.name}",
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
        return self._add_mesh(
            mesh_name, g.vertices_xyz, g.faces, inertia=mujoco.mjtMeshInertia.mjMESH_INERTIA_SHELL
        )

    def _add_mesh(
        self, mesh_name: str, vertices_xyz: FloatArray, faces: NDArray[Any], **options: Any
    ) -> dict[str, Any]:
        """Add a triangle mesh asset; returns the attributes of a geom that shows it."""
        self.spec.add_mesh(
            name=mesh_name,
            uservert=_g(vertices_xyz.ravel()),
            userface=[int(v) for v in faces.ravel()],
            **options,
        )
        return {"type": mujoco.mjtGeom.mjGEOM_MESH, "meshname": mesh_name}


def main_face_m(half_xyz: tuple[float, float, float]) -> tuple[float, float]:
    """Width and height (metres) of a box's largest face along MuJoCo's texture axes.

    Per face MuJoCo maps u, v to: x, y (top and bottom), x, z (faces along x), y, z (faces
    along y); every face of a box shares one texrepeat, so it is set for the largest.
    """
    sx, sy, sz = (2.0 * h for h in half_xyz)
    faces = {(sx, sy): sx * sy, (sx, sz): sx * sz, (sy, sz): sy * sz}
    return max(faces, key=lambda f: faces[f])


def build_model(scene: Scene) -> BuiltModel:
    """Compile the MuJoCo model of a scene.

    Raises:
        ValueError: MuJoCo rejects the model (the engine wraps it in a BackendError).
    """
    return _SceneBuilder(scene).build()
