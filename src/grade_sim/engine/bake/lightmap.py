"""Lightmaps of a world's static boxes and terrain: soft direct light, one bounce, AO; and the
light probes (probes.py), gathered as six extra surfaces per probe after the terrain's texels.

Every face of every opaque static box gets a grid of texels (about `texel_m` apart), and the
terrain's ground one over its grid. At each
texel the irradiance is gathered in the raster renderer's own light units, so that a lit,
unshadowed texel comes out as bright as MuJoCo draws it today:

    E = ambient * ambient_scale * AO + sum_lights direct + sky_fill * sky_visibility + bounce

- direct: MuJoCo's formula for a spot (diffuse * cos * spot^exponent inside the cone *
  1 / attenuation(d)) averaged over `light_samples` points on a disc of `fixture_radius_m`
  (a ceiling fixture is a small area light, so its shadows are soft), with an Embree shadow ray
  each; a directional light (the sun) is jittered inside a cone of `sun_radius_deg`.
  Directional lights that cast no shadow (the sky fill) light the texel by the share of the
  sky it sees.
- bounce: `hemisphere_samples` cosine-weighted rays; where a ray hits the world, the light
  leaving that point (its mean albedo times the first pass's direct light of the texel there;
  on unbaked geometry, the direct light of one randomly picked light times the number of
  lights) is averaged in: one bounce of indirect light.
- AO: the share of those rays that travel further than `ao_distance_m`.

Units: a colour is albedo * E (the renderer's convention), so E carries the 1/pi of a
Lambertian surface already and the bounce is the plain mean of the colours its rays see. As the
renderer does, E is clamped to 1 per channel (`RASTER_MAX_IRRADIANCE`).

Randomness: one numpy Generator per chunk of texels, seeded by (seed, pass, chunk), so the
result does not depend on how chunks are spread over threads; the same world, lights and
settings give the same bytes.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import cv2
import numpy as np
from numpy.typing import NDArray

from grade_common.types import FloatArray
from grade_sim.config.scenario import BakeConfig
from grade_sim.engine import tessellate
from grade_sim.engine.bake.albedo import material_mean_rgb
from grade_sim.engine.bake.faces import FACES
from grade_sim.engine.bake.probes import PROBE_NORMALS, ProbeGrid, probe_grid, probe_layout
from grade_sim.engine.raycast import EmbreeDevice, InstanceMesh, InstanceScene
from grade_sim.world.model import Light, StaticBox, StaticShape, World
from grade_sim.world.terrain import Terrain

MAX_TEXELS_PER_SIDE = 192
MAX_TERRAIN_TEXELS = 512
RAY_EPSILON_M = 2e-3
FAR_M = 1e4
CHUNK_TEXELS = 2048
CYLINDER_SEGMENTS = 16
# MuJoCo's fixed-function lighting clamps the summed light of each channel to 1 before the
# texture multiplies it: the scenarios' light intensities were chosen under that rule, so the
# bake keeps it (a warm 1.5-bright fixture whitens a wall, as it does live).
RASTER_MAX_IRRADIANCE = 1.0


@dataclass(frozen=True)
class FaceGrid:
    """The texels of one box face: world positions and normal, rows x cols."""

    box: int  # index in World.boxes
    face: int  # 0..5, FACES order
    rows: int
    cols: int
    points_xyz: FloatArray  # (rows * cols, 3)
    normal_xyz: FloatArray  # (3,)


@dataclass(frozen=True)
class Lightmaps:
    """Irradiance (renderer units, RGB) per face of each baked box: (rows, cols, 3) float32."""

    faces: dict[tuple[int, int], NDArray[np.float32]]  # (box index, face) -> irradiance
    # The terrain's ground (outdoor worlds): rows along y, columns along x over its grid.
    terrain: NDArray[np.float32] | None = None
    # Light probes for moving things (config.probes), gathered with the same rays.
    probes: ProbeGrid | None = None

    def of_box(self, box: int) -> list[NDArray[np.float32]] | None:
        """The six faces of box `box`, or None when it is not baked."""
        if (box, 0) not in self.faces:
            return None
        return [self.faces[(box, f)] for f in range(6)]


def rotation_z(yaw_rad: float) -> FloatArray:
    c, s = math.cos(yaw_rad), math.sin(yaw_rad)
    out: FloatArray = np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])
    return out


def is_baked(box: StaticBox) -> bool:
    """Opaque boxes are baked; see-through ones (glass) and cylinders keep the live lights."""
    return box.shape is StaticShape.BOX and box.material.rgba[3] >= 1.0


def face_grids(world: World, texel_m: float) -> list[FaceGrid]:
    """The texel grid of every face of every baked box, in box then face order."""
    grids = []
    for b, box in enumerate(world.boxes):
        if not is_baked(box):
            continue
        half = np.asarray(box.half_size_xyz, dtype=np.float64)
        rot = rotation_z(box.yaw_rad)
        centre = np.asarray(box.center_xyz, dtype=np.float64)
        for f, (n_ax, n_sign, c_ax, c_sign, r_ax, r_sign) in enumerate(FACES):
            cols = int(np.clip(math.ceil(2 * half[c_ax] / texel_m), 2, MAX_TEXELS_PER_SIDE))
            rows = int(np.clip(math.ceil(2 * half[r_ax] / texel_m), 2, MAX_TEXELS_PER_SIDE))
            s = (np.arange(cols) + 0.5) / cols
            t = (np.arange(rows) + 0.5) / rows
            tt, ss = np.meshgrid(t, s, indexing="ij")
            local = np.zeros((rows * cols, 3))
            local[:, n_ax] = n_sign * half[n_ax]
            local[:, c_ax] = c_sign * (2 * ss.ravel() - 1) * half[c_ax]
            local[:, r_ax] = r_sign * (2 * tt.ravel() - 1) * half[r_ax]
            normal = np.zeros(3)
            normal[n_ax] = n_sign
            grids.append(FaceGrid(b, f, rows, cols, local @ rot.T + centre, rot @ normal))
    return grids


def terrain_mesh_index(world: World) -> int | None:
    """Index in World.meshes of the terrain's drawn ground, or None (no terrain)."""
    if world.terrain is None:
        return None
    count = world.terrain.heights_m.size
    for k, mesh in enumerate(world.meshes):
        if mesh.label == "ground" and len(mesh.vertices_xyz) == count:
            return k
    return None


def terrain_extent(terrain: Terrain) -> tuple[float, float, float, float]:
    """(x0, y0, x1, y1) of the terrain's grid."""
    nx, ny = (n - 1 for n in terrain.heights_m.shape)
    x0, y0 = terrain.origin_xy
    return (x0, y0, x0 + nx * terrain.spacing_m, y0 + ny * terrain.spacing_m)


def terrain_texels(terrain: Terrain, texel_m: float) -> tuple[int, int, FloatArray, FloatArray]:
    """rows, cols, points and unit normals of the terrain's texels (on the drawn triangles)."""
    x0, y0, x1, y1 = terrain_extent(terrain)
    cols = int(np.clip(math.ceil((x1 - x0) / texel_m), 2, MAX_TERRAIN_TEXELS))
    rows = int(np.clip(math.ceil((y1 - y0) / texel_m), 2, MAX_TERRAIN_TEXELS))
    yy, xx = np.meshgrid(
        y0 + (np.arange(rows) + 0.5) / rows * (y1 - y0),
        x0 + (np.arange(cols) + 0.5) / cols * (x1 - x0),
        indexing="ij",
    )
    x, y = xx.ravel(), yy.ravel()
    e = 0.25 * terrain.spacing_m
    dzdx = (terrain.height_at(x + e, y) - terrain.height_at(x - e, y)) / (2 * e)
    dzdy = (terrain.height_at(x, y + e) - terrain.height_at(x, y - e)) / (2 * e)
    normals = np.stack([-dzdx, -dzdy, np.ones_like(x)], axis=1)
    normals /= np.linalg.norm(normals, axis=1, keepdims=True)
    points = np.stack([x, y, terrain.height_at(x, y)], axis=1)
    return rows, cols, points, normals


def occluders(world: World) -> tuple[list[InstanceMesh], FloatArray]:
    """Triangles that cast shadows and bounce light (opaque boxes, cylinders, meshes), one
    Embree geometry each, and each one's mean albedo (geomID -> row)."""
    meshes: list[InstanceMesh] = []
    albedo: list[FloatArray] = []
    for k, box in enumerate(world.boxes):
        if box.material.rgba[3] < 1.0:
            continue  # glass lets the light through
        half = np.asarray(box.half_size_xyz, dtype=np.float64)
        local = (
            tessellate.cylinder(float(half[0]), float(half[2]), CYLINDER_SEGMENTS)
            if box.shape is StaticShape.CYLINDER
            else tessellate.box(half)
        )
        tri = tessellate.transform(local, rotation_z(box.yaw_rad), np.asarray(box.center_xyz))
        meshes.append(InstanceMesh(k + 1, tri, np.zeros(len(tri))))
        albedo.append(material_mean_rgb(box.material))
    for mesh in world.meshes:
        tri = np.asarray(mesh.vertices_xyz, dtype=np.float64)[np.asarray(mesh.faces)]
        meshes.append(InstanceMesh(mesh.instance_id, tri, np.zeros(len(tri))))
        albedo.append(material_mean_rgb(mesh.material))
    return meshes, np.asarray(albedo, dtype=np.float64).reshape(-1, 3)


def _basis(normals: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Two unit tangents per normal (any, but fixed: part of the deterministic result)."""
    helper = np.where(np.abs(normals[:, 2:3]) < 0.9, [[0.0, 0.0, 1.0]], [[1.0, 0.0, 0.0]])
    t1 = np.cross(normals, helper)
    t1 /= np.linalg.norm(t1, axis=1, keepdims=True)
    return t1, np.cross(normals, t1)


def _cosine_directions(rng: np.random.Generator, normals: FloatArray, samples: int) -> FloatArray:
    """(n, samples, 3) cosine-weighted directions about each normal, stratified per texel."""
    n = len(normals)
    side = max(1, math.isqrt(samples))
    k = np.arange(samples)
    # Strata on a side x side grid (the rest at random), shifted per texel (Cranley-Patterson).
    u0 = np.where(k < side * side, (k % side + 0.5) / side, rng.random(samples))
    v0 = np.where(k < side * side, (k // side + 0.5) / side, rng.random(samples))
    shift = rng.random((n, 2))
    u = (u0[None, :] + shift[:, :1]) % 1.0
    v = (v0[None, :] + shift[:, 1:]) % 1.0
    r, phi = np.sqrt(u), 2 * math.pi * v
    x, y, z = r * np.cos(phi), r * np.sin(phi), np.sqrt(np.maximum(0.0, 1 - u))
    t1, t2 = _basis(normals)
    out: FloatArray = (
        x[..., None] * t1[:, None, :]
        + y[..., None] * t2[:, None, :]
        + z[..., None] * normals[:, None, :]
    )
    return out


class _Tracer:
    """Shadow and gather rays against one committed Embree scene."""

    def __init__(self, world: World, config: BakeConfig) -> None:
        meshes, self.albedo = occluders(world)
        self._scene = InstanceScene(meshes, EmbreeDevice())
        self.config = config
        self.lights = tuple(world.lights)
        self.ambient = np.asarray(world.ambience.ambient_rgb, dtype=np.float64)
        self.shadowed = [li for li in self.lights if li.casts_shadow or not li.directional]
        self.sky = [li for li in self.lights if not li.casts_shadow and li.directional]

    def visible(
        self, origins: FloatArray, directions: FloatArray, dist_m: FloatArray
    ) -> FloatArray:
        """1.0 where a ray (unit direction) reaches dist_m without hitting anything, else 0."""
        if len(origins) == 0 or self._scene.empty:
            return np.ones(len(origins))
        res = self._scene.embree_hits(origins, directions, dist_m)
        return (res["geomID"] < 0).astype(np.float64)

    def direct(
        self,
        rng: np.random.Generator,
        points: FloatArray,
        normals: FloatArray,
        light: Light,
        samples: int,
        shadows: bool = True,
    ) -> FloatArray:
        """(n, 3) direct irradiance of one light, averaged over `samples` points of its area
        (with `shadows` False, as the live renderer gives it: unshadowed)."""
        n = len(points)
        cfg = self.config
        diffuse = np.asarray(light.diffuse_rgb, dtype=np.float64)
        origins = np.repeat(points + RAY_EPSILON_M * normals, samples, axis=0)
        normals_s = np.repeat(normals, samples, axis=0)
        aim = np.asarray(light.direction_xyz, dtype=np.float64)
        aim = aim / max(float(np.linalg.norm(aim)), 1e-12)
        t1, t2 = _basis(aim[None, :])
        if light.directional:
            # Points of a small disc of directions around the sun's.
            radius = math.tan(math.radians(cfg.sun_radius_deg))
            a, rr = 2 * math.pi * rng.random(n * samples), radius * np.sqrt(rng.random(n * samples))
            to_light = (
                -aim[None, :] + (rr * np.cos(a))[:, None] * t1 + (rr * np.sin(a))[:, None] * t2
            )
            dist = np.linalg.norm(to_light, axis=1)
            to_light /= dist[:, None]
            weight = np.maximum(0.0, np.einsum("ij,ij->i", normals_s, to_light))
            reach = np.full(n * samples, FAR_M)
        else:
            a, rr = 2 * math.pi * rng.random(n * samples), np.sqrt(rng.random(n * samples))
            rr = rr * cfg.fixture_radius_m
            at = (
                np.asarray(light.position_xyz)[None, :]
                + (rr * np.cos(a))[:, None] * t1
                + (rr * np.sin(a))[:, None] * t2
            )
            to_light = at - origins
            dist = np.linalg.norm(to_light, axis=1)
            to_light /= np.maximum(dist, 1e-9)[:, None]
            cos_spot = -to_light @ aim
            inside = cos_spot >= math.cos(math.radians(light.cutoff_deg))
            spot = np.where(inside, np.maximum(cos_spot, 0.0) ** light.exponent, 0.0)
            k0, k1, k2 = light.attenuation
            atten = 1.0 / np.maximum(k0 + k1 * dist + k2 * dist * dist, 1e-9)
            weight = np.maximum(0.0, np.einsum("ij,ij->i", normals_s, to_light)) * spot * atten
            reach = np.maximum(dist - RAY_EPSILON_M, 0.0)
        lit = np.flatnonzero(weight > 0)
        if shadows and light.casts_shadow:
            weight[lit] *= self.visible(origins[lit], to_light[lit], reach[lit])
        out: FloatArray = weight.reshape(n, samples).mean(axis=1)[:, None] * diffuse[None, :]
        return out

    def direct_sum(
        self,
        rng: np.random.Generator,
        points: FloatArray,
        normals: FloatArray,
        lights: Sequence[Light],
        shadows: bool,
    ) -> FloatArray:
        """(n, 3) direct irradiance summed over `lights` (area-sampled): the bake's first bounce
        is `shadowed` with soft shadows, the probes' live light every light without them."""
        total = np.zeros((len(points), 3))
        for light in lights:
            total += self.direct(rng, points, normals, light, self.config.light_samples, shadows)
        return total

    def gather(
        self,
        rng: np.random.Generator,
        points: FloatArray,
        normals: FloatArray,
        direct: FloatArray,
        table: _DirectTable,
    ) -> FloatArray:
        """(n, 3) irradiance at texels: their direct light plus ambient x AO, sky and bounce.

        The bounce reads the direct light where a ray lands from the first pass's lightmaps
        (`table`): no extra shadow rays and no noise from picking lights. Rays landing on
        unbaked geometry (cylinders, meshes) sample one random light there instead.
        """
        cfg = self.config
        n = len(points)
        h = cfg.hemisphere_samples
        dirs = _cosine_directions(rng, normals, h).reshape(-1, 3)
        origins = np.repeat(points + RAY_EPSILON_M * normals, h, axis=0)
        geom = np.full(n * h, -1)
        tfar = np.full(n * h, FAR_M)
        ng = np.zeros((n * h, 3), np.float32)
        if not self._scene.empty:
            res = self._scene.embree_hits(origins, dirs, FAR_M)
            geom, tfar, ng = res["geomID"], res["tfar"].astype(np.float64), res["Ng"]
        hit = geom >= 0
        ao = (~hit | (tfar > cfg.ao_distance_m)).reshape(n, h).mean(axis=1)
        sky_seen = (~hit).reshape(n, h).mean(axis=1)
        total: FloatArray = direct + cfg.ambient_scale * ao[:, None] * self.ambient[None, :]
        for light in self.sky:
            total += sky_seen[:, None] * np.asarray(light.diffuse_rgb)[None, :]
        idx = np.flatnonzero(hit)
        if not self.shadowed or not len(idx):
            return total
        hit_p = origins[idx] + tfar[idx, None] * dirs[idx]
        landed = np.zeros((len(idx), 3))
        boxes = table.box_of_geom[geom[idx]]
        on_box = boxes >= 0
        landed[on_box] = table.lookup(boxes[on_box], hit_p[on_box])
        other = np.flatnonzero(~on_box)
        if len(other):
            n_o = ng[idx[other]].astype(np.float64)
            n_o /= np.maximum(np.linalg.norm(n_o, axis=1, keepdims=True), 1e-12)
            n_o *= -np.sign(np.einsum("ij,ij->i", n_o, dirs[idx[other]]))[:, None]  # face the ray
            pick = rng.integers(0, len(self.shadowed), len(other))
            for k, light in enumerate(self.shadowed):
                sel = np.flatnonzero(pick == k)
                if len(sel):
                    landed[other[sel]] = len(self.shadowed) * self.direct(
                        rng, hit_p[other[sel]], n_o[sel], light, 1
                    )
        per_ray = np.zeros((n * h, 3))
        per_ray[idx] = landed * self.albedo[geom[idx]]
        bounce: FloatArray = per_ray.reshape(n, h, 3).mean(axis=1)
        out: FloatArray = total + bounce
        return out


class _DirectTable:
    """The first pass's direct light of every texel, looked up by box and world point."""

    def __init__(self, world: World, grids: Sequence[FaceGrid], direct: FloatArray) -> None:
        nb = len(world.boxes)
        self.direct = direct
        self.centre = np.array([b.center_xyz for b in world.boxes], dtype=np.float64).reshape(-1, 3)
        self.half = np.array([b.half_size_xyz for b in world.boxes], dtype=np.float64).reshape(
            -1, 3
        )
        self.rot = np.array([rotation_z(b.yaw_rad) for b in world.boxes]).reshape(-1, 3, 3)
        self.offset = np.zeros((nb, 6), np.int64)
        self.rows = np.ones((nb, 6), np.int64)
        self.cols = np.ones((nb, 6), np.int64)
        at = 0
        for g in grids:
            self.offset[g.box, g.face] = at
            self.rows[g.box, g.face], self.cols[g.box, g.face] = g.rows, g.cols
            at += g.rows * g.cols
        baked = np.zeros(nb, bool)
        baked[[g.box for g in grids]] = True
        # geomID -> box index (-1: not a baked box), in `occluders` order.
        kept = [k for k, b in enumerate(world.boxes) if b.material.rgba[3] >= 1.0]
        self.box_of_geom = np.array(
            [k if baked[k] else -1 for k in kept] + [-1] * len(world.meshes), dtype=np.int64
        )

    def lookup(self, boxes: NDArray[np.int64], points: FloatArray) -> FloatArray:
        """(n, 3) direct light of the texel under each world point on box `boxes[i]`."""
        local = np.einsum("nji,nj->ni", self.rot[boxes], points - self.centre[boxes])
        rel = local / np.maximum(self.half[boxes], 1e-9)
        axis = np.argmax(np.abs(rel), axis=1)
        sign = np.sign(rel[np.arange(len(rel)), axis]) >= 0
        face = 2 * axis + (~sign).astype(np.int64)  # FACES order: +x, -x, +y, -y, +z, -z
        spec = np.asarray(FACES)[face]
        c_ax, c_sign, r_ax, r_sign = spec[:, 2], spec[:, 3], spec[:, 4], spec[:, 5]
        ar = np.arange(len(rel))
        s = (c_sign * rel[ar, c_ax] + 1) / 2
        t = (r_sign * rel[ar, r_ax] + 1) / 2
        rows, cols = self.rows[boxes, face], self.cols[boxes, face]
        col = np.clip((s * cols).astype(np.int64), 0, cols - 1)
        row = np.clip((t * rows).astype(np.int64), 0, rows - 1)
        out: FloatArray = self.direct[self.offset[boxes, face] + row * cols + col]
        return out


def bake_lightmaps(
    world: World,
    config: BakeConfig,
    progress: Callable[[int], None] | None = None,
    threads: int = 2,
) -> Lightmaps:
    """Irradiance of every texel of every baked box face (see the module docstring).

    Two passes over the texels: direct light (soft shadows), then ambient occlusion, sky and
    one bounce, which reads the first pass's result where its rays land.

    Args:
        progress: called with the number of texels finished after each chunk (each texel is
            counted twice, once per pass).
        threads: chunks run on this many threads (Embree releases the GIL); the result is the
            same for any count.
    """
    grids = face_grids(world, config.texel_m)
    ground = None
    if world.terrain is not None and terrain_mesh_index(world) is not None:
        ground = terrain_texels(world.terrain, config.texel_m)
    if not grids and ground is None:
        return Lightmaps({})
    tracer = _Tracer(world, config)
    layout = probe_layout(world, config) if config.probes else None
    # Probes join the texels as six surfaces each (facing +-x, +-y, +-z), after the terrain.
    probe_points = (
        np.repeat(layout.points_xyz(world), len(PROBE_NORMALS), axis=0)
        if layout is not None
        else np.zeros((0, 3))
    )
    probe_normals = np.tile(PROBE_NORMALS, (len(probe_points) // len(PROBE_NORMALS), 1))
    points = np.concatenate(
        [g.points_xyz for g in grids] + ([ground[2]] if ground else []) + [probe_points]
    )
    normals = np.concatenate(
        [np.broadcast_to(g.normal_xyz, g.points_xyz.shape) for g in grids]
        + ([ground[3]] if ground else [])
        + [probe_normals]
    )
    starts = list(range(0, len(points), CHUNK_TEXELS))

    def chunk(c: int) -> slice:
        return slice(starts[c], starts[c] + CHUNK_TEXELS)

    def first(c: int) -> FloatArray:
        rng = np.random.default_rng([config.seed, 0, c])
        out = tracer.direct_sum(rng, points[chunk(c)], normals[chunk(c)], tracer.shadowed, True)
        if progress is not None:
            progress(len(out))
        return out

    with ThreadPoolExecutor(max_workers=max(1, threads)) as pool:
        direct = np.concatenate(list(pool.map(first, range(len(starts)))))
        table = _DirectTable(world, grids, direct)

        def second(c: int) -> FloatArray:
            rng = np.random.default_rng([config.seed, 1, c])
            sl = chunk(c)
            out = tracer.gather(rng, points[sl], normals[sl], direct[sl], table)
            if progress is not None:
                progress(len(out))
            return out

        irradiance = np.concatenate(list(pool.map(second, range(len(starts)))))
    faces: dict[tuple[int, int], NDArray[np.float32]] = {}
    at = 0
    for g in grids:
        size = g.rows * g.cols
        face = irradiance[at : at + size].reshape(g.rows, g.cols, 3).astype(np.float32)
        np.minimum(face, RASTER_MAX_IRRADIANCE, out=face)
        # A light blur takes the sampling noise out (the texels are ~texel_m apart).
        faces[(g.box, g.face)] = np.asarray(
            cv2.GaussianBlur(face, (3, 3), 0.0, borderType=cv2.BORDER_REPLICATE), dtype=np.float32
        )
        at += size
    terrain = None
    if ground is not None:
        rows, cols = ground[0], ground[1]
        terrain = np.minimum(
            irradiance[at : at + rows * cols].reshape(rows, cols, 3).astype(np.float32),
            RASTER_MAX_IRRADIANCE,
        )
        at += rows * cols
        terrain = np.asarray(
            cv2.GaussianBlur(terrain, (3, 3), 0.0, borderType=cv2.BORDER_REPLICATE),
            dtype=np.float32,
        )
    probes = None
    if layout is not None:
        rng = np.random.default_rng([config.seed, 2])
        live = tracer.direct_sum(rng, probe_points, probe_normals, tracer.lights, False)
        probes = probe_grid(world, layout, irradiance[at:], live, RASTER_MAX_IRRADIANCE)
    return Lightmaps(faces, terrain, probes)


def texel_count(world: World, config: BakeConfig) -> int:
    """How many texels a bake of `world` gathers (its cost), probes' six surfaces included."""
    texel_m = config.texel_m
    n = sum(g.rows * g.cols for g in face_grids(world, texel_m))
    if world.terrain is not None and terrain_mesh_index(world) is not None:
        rows, cols, _, _ = terrain_texels(world.terrain, texel_m)
        n += rows * cols
    if config.probes:
        nz, ny, nx = probe_layout(world, config).shape
        n += nz * ny * nx * len(PROBE_NORMALS)
    return n
