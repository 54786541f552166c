"""The recorded world at any physics step: the simulator's own MuJoCo model, posed from the record.

The scene is regenerated from the recorded scenario's seed (bit-exact, as `grade replay` does),
the robots take their recorded joint positions at the step and the actors their (seeded) poses,
and one forward-kinematics pass gives every geom's world pose. Nothing here knows what a geom
belongs to: people, flying objects, robots and furniture are all just geoms with an instance id.
Skinned people are MuJoCo skins: their triangles, texture coordinates and material are the
model's, and their world vertices at a step are the ones the simulator draws.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from grade_common.types import FloatArray
from grade_render import tessellate
from grade_render.errors import RenderError
from grade_sim.actors.people_group import People
from grade_sim.engine.bake.switch import with_bake
from grade_sim.engine.mujoco.engine import MujocoEngine
from grade_sim.io.record import ExperimentRecord, scene_from_record
from grade_sim.scene import build_scene

# MuJoCo draws geom groups 0-2 by default; 3+ hold collision-only geometry (URDF collisions).
VISIBLE_GROUPS = 3


def _visible(groups: NDArray[Any]) -> list[int]:
    """Ids of the geoms or skins (by their groups) that the cameras draw, in id order."""
    return [int(i) for i in np.flatnonzero(np.asarray(groups) < VISIBLE_GROUPS)]


def _rows_from_v0(texture: NDArray[np.uint8]) -> NDArray[np.uint8]:
    """A texture image with its rows in MuJoCo's order: from v = 0, the image's bottom row, the
    order texture coordinates address."""
    return np.ascontiguousarray(texture[::-1])


@dataclass(frozen=True)
class GeomShape:
    """One drawable geom: its triangles in the geom frame, surface and instance."""

    geom_id: int
    name: str
    vertices_xyz: FloatArray
    faces: NDArray[np.int32]
    smooth: bool  # curved primitive: shade with interpolated normals
    rgba: FloatArray  # (4,)
    texture_rgb: NDArray[np.uint8] | None  # (h, w, 3) the simulator's 2D texture, or None
    texrepeat_per_m: float  # texture tiles per metre (texuniform); per texcoord unit with uv
    instance_id: int
    # A textured mesh with texture coordinates: (F, 3, 2) per face corner, mapped like MuJoCo
    # (times texrepeat); None: the texture is mapped by the geom's x and y.
    texcoord_uv: FloatArray | None = None


@dataclass(frozen=True)
class SkinShape:
    """One drawable skin (a skinned person): triangles and texture coordinates of the model."""

    skin_id: int
    name: str
    faces: NDArray[np.int32]  # (F, 3) into the skin's vertices
    texcoord_uv: FloatArray  # (V, 2) MuJoCo's texture coordinates, per vertex
    rgba: FloatArray  # (4,)
    texture_rgb: NDArray[np.uint8] | None  # (h, w, 3) top row first
    instance_id: int


@dataclass(frozen=True)
class LightSpec:
    """A light as the simulator's renderer lights with it (MuJoCo / OpenGL fixed function)."""

    position_xyz: FloatArray
    direction_xyz: FloatArray
    diffuse_rgb: FloatArray
    directional: bool
    cast_shadow: bool
    cutoff_deg: float = 180.0  # spot cone half-angle
    exponent: float = 0.0  # spot fall-off: cos(angle to the axis) ** exponent
    attenuation: tuple[float, float, float] = (1.0, 0.0, 0.0)  # 1 / (a0 + a1 d + a2 d^2)


class WorldState:
    """The run's MuJoCo model; `pose(step)` sets the recorded state at a step."""

    def __init__(self, record: ExperimentRecord, baked: bool = False) -> None:
        """`baked`: the materials as the simulator drew them (its baked lighting, when the
        scenario turns it on); off, the materials without it (a path tracer lights itself)."""
        import mujoco

        self._mj = mujoco
        self.record = record
        self.scene = scene_from_record(build_scene(record.scenario), record)
        if record.n_steps > self.scene.n_steps:
            raise RenderError(
                f"the record has {record.n_steps} steps but its scenario only "
                f"{self.scene.n_steps}; the record does not belong to this scenario"
            )
        # Cycles lights the world itself: the model's materials without the baked light.
        self.engine = MujocoEngine(self.scene if baked else with_bake(self.scene, False))
        self.model: Any = self.engine.model
        self.data: Any = self.engine.data

    def step_of(self, stamp_ns: int) -> int:
        """The recorded physics step at `stamp_ns` (within 1 us: TUM stamps have 6 decimals).

        Raises:
            RenderError: no recorded step is that close.
        """
        stamps = self.record.stamps_ns
        k = int(np.argmin(np.abs(stamps - stamp_ns)))
        if abs(int(stamps[k]) - stamp_ns) > 1000:
            raise RenderError(f"stamp {stamp_ns / 1e9:.6f} s is not a recorded step of this run")
        return k

    def pose(self, step: int) -> None:
        """Set the recorded state of `step` and run forward kinematics."""
        rec = self.record
        k = min(max(step, 0), rec.n_steps - 1)
        for robot in rec.joint_positions:
            self.engine.set_robot_kinematics(
                robot,
                rec.joint_positions[robot][k],
                rec.joint_velocities[robot][k],
                rec.joint_accelerations[robot][k],
            )
        self.engine.set_actor_poses(*self.scene.actor_body_poses(k))
        self._mj.mj_forward(self.model, self.data)

    def geom_poses(self) -> tuple[FloatArray, FloatArray]:
        """World positions (ngeom, 3) and rotation matrices (ngeom, 3, 3) of the current state."""
        return self.data.geom_xpos.copy(), self.data.geom_xmat.reshape(-1, 3, 3).copy()

    def shapes(self) -> list[GeomShape]:
        """Every visible geom as triangles with its material (hidden groups, rgba.a = 0 skipped)."""
        m = self.model
        ids = self.engine.geom_instance_ids
        out: list[GeomShape] = []
        for g in _visible(m.geom_group):
            mesh = self._triangles(g)
            if mesh is None:
                continue
            matid = int(m.geom_matid[g])
            rgba = self._rgba(matid, m.geom_rgba[g])
            if rgba[3] <= 0.0:
                continue
            texture, repeat = self._texture(matid)
            box = int(m.geom_type[g]) == int(self._mj.mjtGeom.mjGEOM_BOX)
            if box and texture is not None and not m.mat_texuniform[matid]:
                from grade_sim.engine.mujoco.builder import main_face_m

                # Library textures on boxes span each face (grade_sim's builder): back to the
                # tiles per metre of the box's main face, which the job's mapping expects.
                half = m.geom_size[g]
                repeat /= main_face_m((float(half[0]), float(half[1]), float(half[2])))[0]
            gtype = int(m.geom_type[g])
            smooth = gtype in (
                self._mj.mjtGeom.mjGEOM_SPHERE,
                self._mj.mjtGeom.mjGEOM_CAPSULE,
                self._mj.mjtGeom.mjGEOM_ELLIPSOID,
                self._mj.mjtGeom.mjGEOM_CYLINDER,
            )
            name = self._name(self._mj.mjtObj.mjOBJ_GEOM, g, "geom")
            uv = self._mesh_texcoords(g) if texture is not None else None
            if uv is not None and texture is not None:
                texture = _rows_from_v0(texture)
            out.append(
                GeomShape(g, name, mesh[0], mesh[1], smooth, rgba, texture, repeat, int(ids[g]), uv)
            )
        return out

    def _mesh_texcoords(self, g: int) -> FloatArray | None:
        """(F, 3, 2) texture coordinates of a mesh geom's face corners, or None."""
        m = self.model
        if int(m.geom_type[g]) != int(self._mj.mjtGeom.mjGEOM_MESH):
            return None
        mid = int(m.geom_dataid[g])
        t0 = int(m.mesh_texcoordadr[mid])
        if t0 < 0:
            return None
        f0, nf = int(m.mesh_faceadr[mid]), int(m.mesh_facenum[mid])
        corners = m.mesh_facetexcoord[f0 : f0 + nf].astype(np.int64)
        uv: FloatArray = m.mesh_texcoord[t0 + corners].astype(np.float64)
        return uv

    def skins(self) -> list[SkinShape]:
        """Every visible skin with its triangles, texture coordinates and material."""
        m = self.model
        ids = self.engine.skin_instance_ids
        out: list[SkinShape] = []
        for s in _visible(m.skin_group):
            f0, nf = int(m.skin_faceadr[s]), int(m.skin_facenum[s])
            nv, t0 = int(m.skin_vertnum[s]), int(m.skin_texcoordadr[s])
            if t0 < 0:
                raise RenderError(f"skin {s} has no texture coordinates; grade render needs them")
            matid = int(m.skin_matid[s])
            rgba = self._rgba(matid, m.skin_rgba[s])
            texture, _ = self._texture(matid)
            name = self._name(self._mj.mjtObj.mjOBJ_SKIN, s, "skin")
            out.append(
                SkinShape(
                    s,
                    name,
                    m.skin_face[f0 : f0 + nf].astype(np.int32),
                    m.skin_texcoord[t0 : t0 + nv].astype(np.float64),
                    rgba,
                    None if texture is None else _rows_from_v0(texture),
                    int(ids[s]),
                )
            )
        return out

    def skin_vertices(self, step: int) -> list[FloatArray]:
        """World vertices (V, 3) of every skin at `step`, by skin id: what the simulator draws.

        Raises:
            RenderError: the recorded people's skins do not match the model's (another run).
        """
        k = min(max(step, 0), self.record.n_steps - 1)
        skins = self.scene.group(People).skins_world(k)
        m = self.model
        if len(skins) != m.nskin or any(
            len(v) != int(m.skin_vertnum[s]) for s, v in enumerate(skins)
        ):
            raise RenderError("the people's skins do not match the model's; rebuild the run")
        return skins

    def _triangles(self, g: int) -> tessellate.Mesh | None:
        mj, m = self._mj, self.model
        gtype = int(m.geom_type[g])
        size = m.geom_size[g]
        if gtype == mj.mjtGeom.mjGEOM_BOX:
            return tessellate.box(size)
        if gtype == mj.mjtGeom.mjGEOM_SPHERE:
            return tessellate.sphere(float(size[0]))
        if gtype == mj.mjtGeom.mjGEOM_ELLIPSOID:
            return tessellate.ellipsoid(size)
        if gtype == mj.mjtGeom.mjGEOM_CYLINDER:
            return tessellate.cylinder(float(size[0]), float(size[1]))
        if gtype == mj.mjtGeom.mjGEOM_CAPSULE:
            return tessellate.capsule(float(size[0]), float(size[1]))
        if gtype == mj.mjtGeom.mjGEOM_MESH:
            mid = int(m.geom_dataid[g])
            v0, nv = int(m.mesh_vertadr[mid]), int(m.mesh_vertnum[mid])
            f0, nf = int(m.mesh_faceadr[mid]), int(m.mesh_facenum[mid])
            verts = m.mesh_vert[v0 : v0 + nv].astype(np.float64)
            faces = m.mesh_face[f0 : f0 + nf].astype(np.int32)
            return verts, faces
        if gtype == mj.mjtGeom.mjGEOM_PLANE:
            half = np.array([size[0] or 100.0, size[1] or 100.0, 1e-4])
            return tessellate.box(half)
        raise RenderError(f"geom {g} has a MuJoCo geom type ({gtype}) grade render cannot draw")

    def _rgba(self, matid: int, own_rgba: NDArray[Any]) -> FloatArray:
        """A geom's or skin's colour: its material's, or its own where it has none."""
        rgba: FloatArray = (self.model.mat_rgba[matid] if matid >= 0 else own_rgba).astype(
            np.float64
        )
        return rgba

    def _name(self, kind: Any, index: int, fallback: str) -> str:
        """A geom's or skin's MuJoCo name, or `<fallback>_<index>` for an unnamed one."""
        return str(self._mj.mj_id2name(self.model, kind, index) or f"{fallback}_{index}")

    def _texture(self, matid: int) -> tuple[NDArray[np.uint8] | None, float]:
        m = self.model
        if matid < 0:
            return None, 1.0
        texid = int(m.mat_texid[matid][self._mj.mjtTextureRole.mjTEXROLE_RGB])
        if texid < 0:
            return None, 1.0
        w, h, nc = int(m.tex_width[texid]), int(m.tex_height[texid]), int(m.tex_nchannel[texid])
        adr = int(m.tex_adr[texid])
        pixels = m.tex_data[adr : adr + w * h * nc].reshape(h, w, nc)[:, :, :3]
        return np.ascontiguousarray(pixels, dtype=np.uint8), float(m.mat_texrepeat[matid][0])

    def lights(self) -> list[LightSpec]:
        m, d = self.model, self.data
        return [
            LightSpec(
                d.light_xpos[k].copy(),
                d.light_xdir[k].copy(),
                m.light_diffuse[k].astype(np.float64),
                int(m.light_type[k]) == int(self._mj.mjtLightType.mjLIGHT_DIRECTIONAL),
                bool(m.light_castshadow[k]),
                float(m.light_cutoff[k]),
                float(m.light_exponent[k]),
                (
                    float(m.light_attenuation[k][0]),
                    float(m.light_attenuation[k][1]),
                    float(m.light_attenuation[k][2]),
                ),
            )
            for k in range(m.nlight)
        ]

    def close(self) -> None:
        self.engine.close()


def load_world(run_root: Path, record: ExperimentRecord) -> WorldState:
    """The world of a run (`run_root` only names it in errors)."""
    try:
        return WorldState(record)
    except RenderError as err:
        raise RenderError(f"{run_root}: {err}") from err
