"""`grade export usd`: a recorded run as one USD stage that Isaac Sim, Omniverse and Blender open.

The world is the simulator's own MuJoCo model, rebuilt from the record and posed at every
recorded physics step as grade render does (`grade_render.world_state`), so the stage shows
exactly the geometry the simulator drew. Stage layout (metersPerUnit 1, upAxis Z, one time code
per physics step: time code = stamp x physics_hz):

    /World                     the default prim
      Looks/mat_N              UsdPreviewSurface materials (textures in STAGE.textures/)
      Static/<geom>            geoms that never move (walls, furniture, terrain), world posed
      Bodies/<body>/<geom>     every moving rigid body (robot links, flying objects, animal
                               parts): translate + orient sampled at every physics step
      People/<person>          SkelRoot: Skeleton, SkelAnimation (joint rotations and
                               translations at the people rate) and the skinned Mesh
      Cameras/<robot>_<cam>    UsdGeom.Camera: intrinsics from K, pose at every physics step
      Lights/light_N           UsdLux lights in physical units (grade_sim.world.light_units)

Every drawn prim carries its semantic class and instance id (grade_sim.world.usd_semantics).
"""

from __future__ import annotations

import dataclasses
import math
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from grade_common.atomic import StagedOutput
from grade_common.errors import GradeError
from grade_common.rotations import matrix_to_quat, quat_to_matrix
from grade_common.rundir import RECORD_NPZ, RunLayout
from grade_common.types import FloatArray
from grade_render.world_state import GeomShape, WorldState
from grade_sim.actors.people_group import People
from grade_sim.io.record import load_record
from grade_sim.optics.lens import lens_of
from grade_sim.world.light_units import SATURATION_K, intensity_cd
from grade_sim.world.usd_semantics import apply_semantics
from grade_usd.baked import baked_box_st
from grade_usd.errors import UsdExportError, UsdOutputExistsError
from grade_usd.materials import ST, MaterialLibrary
from grade_usd.people import define_people, sample_people

STAGE_SUFFIXES = (".usd", ".usda", ".usdc")
TEXTURES_SUFFIX = ".textures"
# A point or spot light is a small sphere (soft shadows); its luminance gives the recorded
# intensity: I = L * pi * r^2 (UsdLux sphere light seen from afar).
LIGHT_RADIUS_M = 0.1
# The film is 36 mm wide in USD's tenths of a unit (36 mm: a full-frame sensor, Blender's
# default); only the ratios focal / aperture matter for the projection.
APERTURE_H = 36.0


@dataclass(frozen=True)
class UsdExportResult:
    path: Path
    textures: Path | None  # the textures folder (None: the world has no texture)
    prims: int
    start_time_code: float
    end_time_code: float
    time_codes_per_second: float
    seconds: float  # wall time of the export
    bytes: int  # stage plus textures


def textures_dir_of(stage: Path) -> Path:
    """Where a stage's textures go: STAGE.usd -> STAGE.textures/ beside it."""
    return stage.with_suffix(TEXTURES_SUFFIX)


def _check_paths(run_dir: Path, out: Path) -> RunLayout:
    """Everything that can refuse the export, checked before anything is written."""
    if out.suffix.lower() not in STAGE_SUFFIXES:
        raise UsdExportError(
            f"--out {str(out)!r}: use one of {', '.join(STAGE_SUFFIXES)} (.usd: binary crate)"
        )
    for path in (out, textures_dir_of(out)):
        if path.exists() or path.is_symlink():
            raise UsdOutputExistsError(f"{str(path)!r} exists; exports never overwrite")
    layout = RunLayout(run_dir)
    if not layout.run_yaml.is_file():
        raise UsdExportError(f"{str(run_dir)!r} is not a grade run directory (no run.yaml)")
    if not layout.record.is_file():
        raise UsdExportError(
            f"{str(run_dir)!r} has no {RECORD_NPZ}: record the run with experiment_record on"
        )
    return layout


def export_usd(run_dir: Path, out: Path, *, albedo: bool = False) -> UsdExportResult:
    """Write the run in `run_dir` as the USD stage `out` (and its textures folder).

    The materials are those the simulator drew: with the scenario's baked lighting on, the
    static world's baked textures as emissive surfaces (its look without any light); `albedo`
    writes the unlit materials instead, for a renderer that lights the world itself.

    Raises:
        UsdExportError: not a recorded run, an unreadable record, or a bad `out` suffix.
        UsdOutputExistsError: `out` or its textures folder exists.
    """
    started = time.perf_counter()
    run_dir, out = Path(run_dir), Path(out)
    layout = _check_paths(run_dir, out)
    try:
        record = load_record(layout.record)
        world = WorldState(record, baked=not albedo)
    except GradeError as err:
        raise UsdExportError(f"{run_dir}: {err}") from err
    tex_final = textures_dir_of(out)
    stage_out = StagedOutput(out, exists_error=UsdOutputExistsError, inputs=[run_dir])
    tex_out = StagedOutput(tex_final, exists_error=UsdOutputExistsError, inputs=[run_dir])
    try:
        stats = _StageWriter(world, stage_out.path, tex_out.path, tex_final.name).write()
        # The textures first: once the stage is in place, everything it names is there.
        if tex_out.path.exists():
            tex_out.commit()
        else:
            tex_out.discard()
        stage_out.commit()
    except BaseException:
        tex_out.discard()
        stage_out.discard()
        raise
    finally:
        world.close()
    size = out.stat().st_size + (
        sum(p.stat().st_size for p in tex_final.iterdir()) if tex_final.is_dir() else 0
    )
    return UsdExportResult(
        out,
        tex_final if tex_final.is_dir() else None,
        stats[0],
        stats[1],
        stats[2],
        stats[3],
        time.perf_counter() - started,
        size,
    )


def _name(text: str) -> str:
    from pxr import Tf

    return str(Tf.MakeValidIdentifier(text))


def _transform_ops(xform: Any) -> tuple[Any, Any]:
    from pxr import UsdGeom

    api = UsdGeom.Xformable(xform)
    return (
        api.AddTranslateOp(UsdGeom.XformOp.PrecisionDouble),
        api.AddOrientOp(UsdGeom.XformOp.PrecisionFloat),
    )


def _quatf(q_wxyz: FloatArray) -> Any:
    from pxr import Gf

    return Gf.Quatf(float(q_wxyz[0]), float(q_wxyz[1]), float(q_wxyz[2]), float(q_wxyz[3]))


class _StageWriter:
    """One export: the posed world written prim by prim, then sampled step by step."""

    def __init__(self, world: WorldState, path: Path, texture_dir: Path, texture_ref: str) -> None:
        from pxr import Usd, UsdGeom

        self.world = world
        self.path = path
        self.stage = Usd.Stage.CreateNew(str(path))
        UsdGeom.SetStageMetersPerUnit(self.stage, 1.0)
        UsdGeom.SetStageUpAxis(self.stage, UsdGeom.Tokens.z)
        root = UsdGeom.Xform.Define(self.stage, "/World")
        self.stage.SetDefaultPrim(root.GetPrim())
        self.looks = MaterialLibrary(self.stage, "/World/Looks", texture_dir, f"./{texture_ref}")
        scenario = world.record.scenario
        self.hz = float(scenario.rates.physics_hz)
        stamps = world.record.stamps_ns
        # One time code per physics step; the first is the first recorded stamp's.
        self.first_code = round(int(stamps[0]) * self.hz / 1e9)
        self.n = world.record.n_steps
        # A baked surface's display value v is the luminance v * 1.2 * 2^EV100 cd/m^2: what a
        # camera at the world's exposure shows as v (grade_sim.world.light_units).
        self.ev100 = float(world.scene.world.exposure_ev100)
        self.baked_nits = SATURATION_K * 2.0**self.ev100

    def code(self, step: int) -> float:
        return float(self.first_code + step)

    def write(self) -> tuple[int, float, float, float]:
        """Write the stage; returns (prims, start and end time codes, time codes per second)."""
        from pxr import Sdf

        st = self.stage
        st.SetTimeCodesPerSecond(self.hz)
        st.SetFramesPerSecond(self.hz)
        st.SetStartTimeCode(self.code(0))
        st.SetEndTimeCode(self.code(self.n - 1))
        record = self.world.record
        layer = st.GetRootLayer()
        layer.customLayerData = {
            "grade:source": "grade export usd",
            "grade:physicsHz": self.hz,
            "grade:experimentStartTimeCode": self.code(record.start_step),
            "grade:seed": int(record.scenario.seed),
            "grade:exposureEv100": self.ev100,
        }
        self.world.pose(0)
        shapes = self.world.shapes()
        moving = self._write_geoms(shapes)
        cameras = self._write_cameras()
        self._write_lights()
        anims = define_people(st, self.world, self.looks)
        # One change notice for all the time samples, not one per value set.
        with Sdf.ChangeBlock():
            sample_people(anims, self.world, self._people_steps(), self.code)
            self._sample(moving, cameras)
        layer.Save()
        prims = sum(1 for _ in st.Traverse())
        return prims, self.code(0), self.code(self.n - 1), self.hz

    def _people_steps(self) -> list[int]:
        """The steps people are sampled at: every camera frame's rate or finer (the fastest
        camera's, at least 30 Hz), and the last step."""
        rates = [c.rate_hz for r in self.world.record.scenario.robots for c in r.cameras]
        rate = max([30.0, *rates])
        every = max(1, int(self.hz // rate))
        steps = list(range(0, self.n, every))
        if steps[-1] != self.n - 1:
            steps.append(self.n - 1)
        return steps

    def _write_geoms(self, shapes: list[GeomShape]) -> dict[int, tuple[Any, Any]]:
        """Static geoms world-posed, moving ones under their body; returns body -> its ops."""
        from pxr import UsdGeom

        m, d = self.world.model, self.world.data
        instances = self.world.scene.instances
        UsdGeom.Scope.Define(self.stage, "/World/Static")
        UsdGeom.Scope.Define(self.stage, "/World/Bodies")
        bodies: dict[int, tuple[Any, Any]] = {}
        for shape in shapes:
            body = int(m.geom_bodyid[shape.geom_id])
            static = int(m.body_weldid[body]) == 0
            if static:
                parent = "/World/Static"
            else:
                bname = self._body_name(body)
                parent = f"/World/Bodies/{_name(f'b{body}_{bname}')}"
                if body not in bodies:
                    xf = UsdGeom.Xform.Define(self.stage, parent)
                    bodies[body] = _transform_ops(xf)
            prim_name = _name(f"g{shape.geom_id}_{shape.name}")
            path = f"{parent}/{prim_name}"
            mesh = self._mesh(path, shape)
            api = UsdGeom.Xformable(mesh)
            if static:
                t_op, r_op = _transform_ops(mesh)
                t_op.Set(tuple(float(v) for v in d.geom_xpos[shape.geom_id]))
                r_op.Set(_quatf(matrix_to_quat(d.geom_xmat[shape.geom_id].reshape(3, 3))))
            else:
                t_op, r_op = _transform_ops(api)
                t_op.Set(tuple(float(v) for v in m.geom_pos[shape.geom_id]))
                r_op.Set(_quatf(m.geom_quat[shape.geom_id]))
            info = instances.get(shape.instance_id)
            if info is not None:
                apply_semantics(mesh.GetPrim(), info.label, shape.instance_id)
        return bodies

    def _body_name(self, body: int) -> str:
        import mujoco

        name = mujoco.mj_id2name(self.world.model, mujoco.mjtObj.mjOBJ_BODY, body)
        return str(name or f"body_{body}")

    def _mesh(self, path: str, shape: GeomShape) -> Any:
        from pxr import Sdf, UsdGeom, UsdShade, Vt

        mesh = UsdGeom.Mesh.Define(self.stage, path)
        faces = shape.faces.astype(np.int32)
        mesh.CreatePointsAttr(Vt.Vec3fArray.FromNumpy(shape.vertices_xyz.astype(np.float32)))
        mesh.CreateFaceVertexCountsAttr(Vt.IntArray.FromNumpy(np.full(len(faces), 3, np.int32)))
        mesh.CreateFaceVertexIndicesAttr(Vt.IntArray.FromNumpy(faces.ravel()))
        mesh.CreateSubdivisionSchemeAttr(UsdGeom.Tokens.none)
        lo, hi = shape.vertices_xyz.min(axis=0), shape.vertices_xyz.max(axis=0)
        mesh.CreateExtentAttr([tuple(float(v) for v in lo), tuple(float(v) for v in hi)])
        rgba = shape.rgba
        mesh.CreateDisplayColorAttr([tuple(float(v) for v in rgba[:3])])
        baked = self._baked(shape)
        if shape.texture_rgb is not None:
            if baked is not None and shape.texcoord_uv is None:
                half = self.world.model.geom_size[shape.geom_id]
                st = baked_box_st(shape.vertices_xyz, shape.faces, half, cube=baked)
                interp = UsdGeom.Tokens.faceVarying
            elif shape.texcoord_uv is not None:
                st = shape.texcoord_uv.reshape(-1, 2) * shape.texrepeat_per_m
                interp = UsdGeom.Tokens.faceVarying
            else:
                # MuJoCo maps a 2D texture on a geom linearly in its x and y (object-linear).
                st = shape.vertices_xyz[:, :2] * shape.texrepeat_per_m
                interp = UsdGeom.Tokens.vertex
            primvar = UsdGeom.PrimvarsAPI(mesh).CreatePrimvar(
                ST, Sdf.ValueTypeNames.TexCoord2fArray, interp
            )
            primvar.Set(Vt.Vec2fArray.FromNumpy(np.ascontiguousarray(st, dtype=np.float32)))
        nits = self.baked_nits if baked is not None else 0.0
        material = self.looks.material(rgba, shape.texture_rgb, emission_nits=nits)
        UsdShade.MaterialBindingAPI.Apply(mesh.GetPrim()).Bind(material)
        return mesh

    def _baked(self, shape: GeomShape) -> bool | None:
        """None: an ordinary material; else the geom shows its baked lighting (the texture is
        the final colour), True with a cube texture, False with a 2D one."""
        import mujoco

        m = self.world.model
        matid = int(m.geom_matid[shape.geom_id])
        if shape.texture_rgb is None or matid < 0 or float(m.mat_emission[matid]) <= 0:
            return None
        texid = int(m.mat_texid[matid][mujoco.mjtTextureRole.mjTEXROLE_RGB])
        return bool(int(m.tex_type[texid]) == int(mujoco.mjtTexture.mjTEXTURE_CUBE))

    def _write_cameras(self) -> dict[tuple[str, str], tuple[Any, Any]]:
        from pxr import Gf, Sdf, UsdGeom, Vt

        UsdGeom.Scope.Define(self.stage, "/World/Cameras")
        out = {}
        for rc in self.world.record.scenario.robots:
            for cam in rc.cameras:
                lens = lens_of(cam)
                k = lens.k
                w, h = lens.width, lens.height
                prim = UsdGeom.Camera.Define(
                    self.stage, f"/World/Cameras/{_name(f'{rc.name}_{cam.name}')}"
                )
                # Pinhole projection of K: fx = focal * w / aperture_h; principal point from
                # the aperture offsets (ROS pixel centres are integers, the film's edges at 0, w).
                focal = float(k[0, 0]) * APERTURE_H / w
                aperture_v = focal * h / float(k[1, 1])
                prim.CreateFocalLengthAttr(focal)
                prim.CreateHorizontalApertureAttr(APERTURE_H)
                prim.CreateVerticalApertureAttr(aperture_v)
                prim.CreateHorizontalApertureOffsetAttr((w / 2 - (k[0, 2] + 0.5)) * APERTURE_H / w)
                prim.CreateVerticalApertureOffsetAttr((k[1, 2] + 0.5 - h / 2) * aperture_v / h)
                prim.CreateClippingRangeAttr((float(cam.near_m), float(cam.far_m)))
                prim.CreateProjectionAttr(UsdGeom.Tokens.perspective)
                p = prim.GetPrim()
                # USD cameras are pinholes: the lens model and its coefficients ride along.
                p.CreateAttribute("grade:distortionModel", Sdf.ValueTypeNames.Token).Set(
                    lens.distortion_model if cam.distortion else "pinhole"
                )
                p.CreateAttribute("grade:cameraModel", Sdf.ValueTypeNames.Token).Set(
                    cam.model.value
                )
                p.CreateAttribute(
                    "grade:distortionCoefficients", Sdf.ValueTypeNames.DoubleArray
                ).Set(Vt.DoubleArray([float(v) for v in lens.d]))
                p.CreateAttribute("grade:cameraMatrix", Sdf.ValueTypeNames.Matrix3d).Set(
                    _matrix3d(k)
                )
                p.CreateAttribute("grade:imageSize", Sdf.ValueTypeNames.Int2).Set(Gf.Vec2i(w, h))
                p.CreateAttribute("grade:rateHz", Sdf.ValueTypeNames.Double).Set(float(cam.rate_hz))
                out[(rc.name, cam.name)] = _transform_ops(prim)
        return out

    def _write_lights(self) -> None:
        from pxr import Sdf, UsdGeom, UsdLux

        UsdGeom.Scope.Define(self.stage, "/World/Lights")
        ev100 = self.ev100
        ambient = np.asarray(self.world.model.vis.headlight.ambient, dtype=np.float64)
        if float(ambient.max()) > 0:
            # MuJoCo's ambient term lights every surface of albedo a with a * ambient: the
            # outgoing radiance under a uniform sky of luminance L is a * L, so a dome of
            # ambient x 1.2 x 2^EV100 nits (as baked surfaces emit, grade:exposureEv100).
            dome = UsdLux.DomeLight.Define(self.stage, "/World/Lights/ambient")
            dome.CreateIntensityAttr(float(ambient.max()) * self.baked_nits)
            dome.CreateColorAttr(tuple(float(v) / float(ambient.max()) for v in ambient))
            dome.GetPrim().CreateAttribute("grade:ambient", Sdf.ValueTypeNames.Double3).Set(
                tuple(float(v) for v in ambient)
            )
        for n, light in enumerate(self.world.lights()):
            peak = float(np.max(light.diffuse_rgb))
            if peak <= 0:
                continue
            rgb = tuple(float(v) / peak for v in light.diffuse_rgb)
            value = intensity_cd(light.diffuse_rgb.tolist(), ev100)  # cd, or lux when directional
            path = f"/World/Lights/light_{n}"
            z = -np.asarray(light.direction_xyz, dtype=np.float64)  # lights shine along -z
            rot = _frame_with_z(z)
            lux: Any
            if light.directional:
                lux = UsdLux.DistantLight.Define(self.stage, path)
                lux.CreateIntensityAttr(value)  # illuminance, lux
                lux.CreateAngleAttr(0.53)  # the sun's disc
            else:
                lux = UsdLux.SphereLight.Define(self.stage, path)
                lux.CreateRadiusAttr(LIGHT_RADIUS_M)
                lux.CreateIntensityAttr(value / (math.pi * LIGHT_RADIUS_M**2))  # nits
                if light.cutoff_deg < 180.0:
                    shaping = UsdLux.ShapingAPI.Apply(lux.GetPrim())
                    shaping.CreateShapingConeAngleAttr(float(light.cutoff_deg))
                    shaping.CreateShapingFocusAttr(float(light.exponent))
            lux.CreateColorAttr(rgb)
            lux.CreateNormalizeAttr(False)
            p = lux.GetPrim()
            unit = "grade:illuminanceLux" if light.directional else "grade:intensityCd"
            p.CreateAttribute(unit, Sdf.ValueTypeNames.Double).Set(value)
            p.CreateAttribute("grade:attenuation", Sdf.ValueTypeNames.Double3).Set(
                light.attenuation
            )
            p.CreateAttribute("grade:castShadow", Sdf.ValueTypeNames.Bool).Set(light.cast_shadow)
            t_op, r_op = _transform_ops(lux)
            t_op.Set(tuple(float(v) for v in light.position_xyz))
            r_op.Set(_quatf(matrix_to_quat(rot)))

    def _sample(
        self, bodies: dict[int, tuple[Any, Any]], cameras: dict[tuple[str, str], tuple[Any, Any]]
    ) -> None:
        """Every moving body's and camera's pose at every recorded physics step."""
        import mujoco
        from pxr import Gf

        world, d = self.world, self.world.data
        ids = np.array(sorted(bodies), dtype=np.int64)
        flip = np.diag([1.0, -1.0, -1.0])  # optical (z forward, y down) -> USD camera (-z, y up)
        poses = _RigidActorPoses(world)
        for k in range(self.n):
            for robot, q in world.record.joint_positions.items():
                world.engine.set_robot_kinematics(
                    robot,
                    q[k],
                    world.record.joint_velocities[robot][k],
                    world.record.joint_accelerations[robot][k],
                )
            world.engine.set_actor_poses(*poses.at(k))
            # Positions only: the poses of bodies, geoms and cameras (no dynamics).
            mujoco.mj_kinematics(world.model, d)
            mujoco.mj_camlight(world.model, d)
            t = self.code(k)
            pos, quat = d.xpos[ids], d.xquat[ids]
            for j, b in enumerate(ids):
                t_op, r_op = bodies[int(b)]
                t_op.Set(Gf.Vec3d(*pos[j].tolist()), t)
                r_op.Set(Gf.Quatf(*quat[j].tolist()), t)
            for (robot, cam), (t_op, r_op) in cameras.items():
                p, q_opt = world.engine.camera_pose(robot, cam)
                r_usd = quat_to_matrix(q_opt) @ flip
                t_op.Set(Gf.Vec3d(*p.tolist()), t)
                r_op.Set(_quatf(matrix_to_quat(r_usd)), t)


class _RigidActorPoses:
    """The actors' mocap poses at a step, without posing skinned people's skeletons.

    A skinned person's joint bodies carry no drawn geom (the skin is drawn from the record
    through UsdSkel at the people rate), so at every physics step only the flying objects,
    animals and rigid-part people need their poses: the skinned people's bodies stay at rest.
    """

    def __init__(self, world: WorldState) -> None:
        scene = world.scene
        self.scene = scene
        self.skinned = scene.group(People).skinned
        if self.skinned:
            self.rest = dataclasses.replace(
                scene, groups=tuple(g for g in scene.groups if not isinstance(g, People))
            )
            self.n_people = scene.n_actor_bodies - self.rest.n_actor_bodies

    def at(self, k: int) -> tuple[FloatArray, FloatArray]:
        if not self.skinned:
            return self.scene.actor_body_poses(k)
        pos, quat = self.rest.actor_body_poses(k)
        still_q = np.tile([1.0, 0.0, 0.0, 0.0], (self.n_people, 1))
        return (
            np.concatenate([np.zeros((self.n_people, 3)), pos.reshape(-1, 3)]),
            np.concatenate([still_q, quat.reshape(-1, 4)]),
        )


def _matrix3d(k: FloatArray) -> Any:
    from pxr import Gf

    return Gf.Matrix3d(*(float(v) for v in np.asarray(k).ravel()))


def _frame_with_z(z: FloatArray) -> FloatArray:
    """A rotation whose z axis is `z` (any roll)."""
    z = z / max(float(np.linalg.norm(z)), 1e-12)
    helper = np.array([1.0, 0.0, 0.0]) if abs(z[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
    x = np.cross(helper, z)
    x /= np.linalg.norm(x)
    y = np.cross(z, x)
    return np.stack([x, y, z], axis=1)
