"""Contact shadows: soft dark footprints on the ground under people and animals (RGB only),
cast away from the light that lights each of them most.

The baked light covers the static world; moving things get no shadow from it. After the RGB
image is read back (and averaged down), each pixel inside an actor's projected footprint is
unprojected with the frame's exact depth (the segmentation pass's, the one the depth stream
gets) and darkened where that point lies on the ground (within `GROUND_FULL_M` of the terrain's
surface, fading out by `GROUND_FADE_M`; a person's body, furniture tops and grass tufts are
higher and are left alone). The darkening joins two soft shapes (as 1 - (1 - a)(1 - b)), both
falling off smoothly as (1 - d^2 / R^2)^2 to zero at their edge: a round patch where the feet
meet the ground, and a cast shadow along the direction away from the actor's dominant light (the
light whose unshadowed spot formula is strongest at its mid-height), as long as the shadow of a
body of that height would be under it, as dark as that light's share of all the light there,
widening (penumbra) and fading with the distance from the feet, and fading where the bake's
light probes see the live light blocked at the actor. One compiled pass (`_darken`,
numba `nogil`, vectorised) over each footprint's pixel box; nothing is added to MuJoCo's scene,
so depth, masks, normals and flow are the passes' own. Deterministic: the same state gives the
same bytes.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import numba
import numpy as np
from numpy.typing import NDArray

from grade_common.types import FloatArray
from grade_sim.engine.bake.probes import ProbeGrid
from grade_sim.scene import Scene
from grade_sim.world.model import Light

# Both shapes fall off as (1 - d^2 / R^2)^2 inside R, 0 outside: smooth to their edge (no step in
# value or slope) and of tight support, so the pass touches few pixels.
CONTACT_RADIUS_SHARE = 1.3  # the round patch's radius, per actor radius
CONTACT_DARKNESS = 0.5  # its darkening right under the actor
CAST_WIDTH_SHARE = 0.8  # the cast shadow's half width at the feet, per actor radius
CAST_WIDENING = 0.12  # its half width grows this much per metre from the feet (penumbra)
CAST_DARKNESS = 0.85  # its darkening at the feet when the dominant light is all the light there
MAX_SHADOW_M = 2.5  # the longest cast shadow (a low light or sun)
GROUND_FULL_M = 0.02  # points up to this high above the ground are fully darkened
GROUND_FADE_M = 0.06  # and none from this high up (a person's body, furniture, grass)
_NEAR_M = 1e-3  # corners of a footprint box nearer than this to the camera plane are clipped


@dataclass(frozen=True)
class LightArrays:
    """The scene's lights as arrays, for the spot formula at many points at once."""

    position: FloatArray  # (n, 3)
    aim: FloatArray  # (n, 3) unit
    brightness: FloatArray  # (n,) mean diffuse
    cos_cutoff: FloatArray
    exponent: FloatArray
    attenuation: FloatArray  # (n, 3)
    directional: NDArray[np.bool_]

    @classmethod
    def of(cls, lights: tuple[Light, ...]) -> LightArrays:
        aim = np.array([li.direction_xyz for li in lights], dtype=np.float64).reshape(-1, 3)
        aim /= np.maximum(np.linalg.norm(aim, axis=1, keepdims=True), 1e-12)
        return cls(
            np.array([li.position_xyz for li in lights], dtype=np.float64).reshape(-1, 3),
            aim,
            np.array([np.mean(li.diffuse_rgb) for li in lights], dtype=np.float64),
            np.cos(np.radians([li.cutoff_deg for li in lights])),
            np.array([li.exponent for li in lights], dtype=np.float64),
            np.array([li.attenuation for li in lights], dtype=np.float64).reshape(-1, 3),
            np.array([li.directional for li in lights], dtype=bool),
        )

    def towards(self, points: FloatArray) -> tuple[FloatArray, FloatArray]:
        """(p, n) light reaching points (spot formula on an upward surface, no shadows) and
        (p, n, 3) unit vectors from the points to each light."""
        to = self.position[None, :, :] - points[:, None, :]
        dist = np.linalg.norm(to, axis=2)
        unit = to / np.maximum(dist, 1e-9)[..., None]
        unit = np.where(self.directional[None, :, None], -self.aim[None, :, :], unit)
        cos_spot = np.einsum("pnk,nk->pn", -unit, self.aim)
        spot = np.where(
            cos_spot >= self.cos_cutoff[None, :],
            np.maximum(cos_spot, 0.0) ** self.exponent[None, :],
            0.0,
        )
        k0, k1, k2 = (self.attenuation[None, :, i] for i in range(3))
        atten = 1.0 / np.maximum(k0 + k1 * dist + k2 * dist * dist, 1e-9)
        atten = np.where(self.directional[None, :], 1.0, atten)
        spot = np.where(self.directional[None, :], 1.0, spot)
        weight = self.brightness[None, :] * np.maximum(unit[..., 2], 0.0) * spot * atten
        return weight, unit


@dataclass(frozen=True)
class Footprints:
    """Every actor's shadow on the ground, as the kernel reads it (one row per actor)."""

    feet_xyz: FloatArray  # (n, 3) the ground under the actor
    away_xy: FloatArray  # (n, 2) unit, away from the dominant light (zero: no cast shadow)
    length_m: FloatArray  # (n,) of the cast shadow from the feet
    contact_radius_m: FloatArray
    contact_darkness: FloatArray
    cast_half_width_m: FloatArray  # at the feet
    cast_darkness: FloatArray  # at the feet

    def extent(self) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
        """Each footprint's support, a rectangle outside which it is zero: its long axis
        ((n, 2) unit: away from the light, or +x without a cast shadow), and how far it
        reaches behind the feet, in front of them and to each side ((n,) each)."""
        away = self.away_xy
        has_cast = (self.cast_darkness > 0.0) & (away[:, 0] ** 2 + away[:, 1] ** 2 > 0.25)
        axis = np.where(has_cast[:, None], away, np.array([1.0, 0.0]))
        cast_half = np.where(has_cast, self.cast_half_width_m, 0.0)
        tip_half = np.where(has_cast, cast_half + CAST_WIDENING * self.length_m, 0.0)
        back = np.maximum(self.contact_radius_m, cast_half)
        front = np.maximum(self.contact_radius_m, np.where(has_cast, self.length_m, 0.0) + tip_half)
        half = np.maximum(self.contact_radius_m, tip_half)
        return axis, back, front, half

    def darkness_at(self, points_xyz: FloatArray, ground_z: FloatArray) -> FloatArray:
        """(p,) share of light taken away at world points whose ground is `ground_z` (the
        kernel's own formula, for tests and tools)."""
        out = np.empty(len(points_xyz))
        _darkness_points(
            np.ascontiguousarray(points_xyz, dtype=np.float64),
            np.ascontiguousarray(ground_z, dtype=np.float64),
            self.table(),
            out,
        )
        return out

    def table(self, axis: FloatArray | None = None) -> FloatArray:
        """(n, 10) the kernels' view, one row per actor (columns `_FEET_X` ... `_FEET_Z`);
        `axis` is `extent()[0]` where the caller has it already."""
        if axis is None:
            axis = self.extent()[0]
        out = np.empty((len(self.feet_xyz), 10))
        out[:, [_FEET_X, _FEET_Y]] = self.feet_xyz[:, :2]
        out[:, [_AXIS_X, _AXIS_Y]] = axis
        out[:, _LENGTH] = self.length_m
        out[:, _CONTACT_INV_R2] = 1.0 / np.maximum(self.contact_radius_m, 1e-6) ** 2
        out[:, _CONTACT_DARK] = self.contact_darkness
        out[:, _CAST_HALF] = self.cast_half_width_m
        out[:, _CAST_DARK] = self.cast_darkness
        out[:, _FEET_Z] = self.feet_xyz[:, 2]
        return out


@dataclass(frozen=True)
class ContactShadows:
    """The bodies whose xy a shadow follows, their instance, radius and height, the lights and
    the ground."""

    body_ids: NDArray[np.int64]
    instance_ids: NDArray[np.int64]
    radius_m: FloatArray
    height_m: FloatArray
    lights: LightArrays
    ambient: float
    scene: Scene
    # The bake's light probes: where they say the live light is blocked at an actor (under a
    # canopy, behind a wall from the lamp), its cast shadow fades by as much.
    probes: ProbeGrid | None = None

    @classmethod
    def of_scene(cls, scene: Scene, model: Any, probes: ProbeGrid | None = None) -> ContactShadows:
        import mujoco

        casters = [c for group in scene.groups for c in group.shadow_casters()]
        ids = [mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, c.body_name) for c in casters]
        instance_of = {info.name: i for i, info in scene.instances.items()}
        actors = [c.actor_name for c in casters]
        radii = [c.radius_m for c in casters]
        heights = [c.height_m for c in casters]
        ambience = scene.world.ambience
        return cls(
            np.asarray(ids, np.int64),
            np.asarray([instance_of.get(a, -1) for a in actors], np.int64),
            np.asarray(radii, np.float64),
            np.asarray(heights, np.float64),
            LightArrays.of(tuple(scene.world.lights)),
            float(np.mean(ambience.ambient_rgb)),
            scene,
            probes,
        )

    def subset(self, keep: NDArray[np.bool_]) -> ContactShadows:
        """These shadows of the actors where `keep` is true."""
        return dataclasses.replace(
            self,
            body_ids=self.body_ids[keep],
            instance_ids=self.instance_ids[keep],
            radius_m=self.radius_m[keep],
            height_m=self.height_m[keep],
        )

    def footprints(self, xy: FloatArray) -> Footprints:
        """The shadows of actors standing at `xy` ((n, 2))."""
        n = len(xy)
        ground = np.atleast_1d(self.scene.world.terrain_height(xy[:, 0], xy[:, 1]))
        feet = np.column_stack([xy, ground]).astype(np.float64)
        r, h = self.radius_m, self.height_m
        away = np.zeros((n, 2))
        length = np.zeros(n)
        cast = np.zeros(n)
        if len(self.lights.position) and n:
            mid = feet + np.column_stack([np.zeros((n, 2)), 0.5 * h])
            weight, unit = self.lights.towards(mid)
            best = np.argmax(weight, axis=1)
            rows = np.arange(n)
            w_best = weight[rows, best]
            to_light = unit[rows, best]
            flat = np.hypot(to_light[:, 0], to_light[:, 1])
            lit = (w_best > 0.0) & (flat > 1e-6)  # straight overhead: the round patch only
            share = w_best / (weight.sum(axis=1) + self.ambient)
            safe = np.where(lit, flat, 1.0)
            away = np.where(lit[:, None], -to_light[:, :2] / safe[:, None], 0.0)
            length = np.where(
                lit, np.minimum(MAX_SHADOW_M, h * flat / np.maximum(to_light[:, 2], 0.15)), 0.0
            )
            cast = np.where(lit, CAST_DARKNESS * np.clip(share, 0.0, 1.0), 0.0)
            if self.probes is not None:  # baked / live light at mid-height: 0 in full shade
                gain = self.probes.gain_at(mid, self.scene.world).mean(axis=1)
                cast = cast * np.clip(gain, 0.0, 1.0)
        return Footprints(
            feet,
            away,
            length,
            CONTACT_RADIUS_SHARE * r,
            np.full(n, CONTACT_DARKNESS),
            CAST_WIDTH_SHARE * r,
            cast,
        )

    def darken(
        self,
        rgb: NDArray[np.uint8],
        depth_m: NDArray[np.float32],
        k: FloatArray,
        position_world_optical: FloatArray,
        r_world_optical: FloatArray,
        data: Any,
        hidden: frozenset[int] = frozenset(),
    ) -> None:
        """Darken `rgb` (h, w, 3, top row first) in place where the ground under the actors in
        `data` shows, with `depth_m` the same view's planar depth (0: nothing there)."""
        actors = self
        if hidden:  # hidden ones cast none
            shown = np.array([int(i) not in hidden for i in self.instance_ids], dtype=bool)
            if not shown.any():
                return
            actors = self if shown.all() else self.subset(shown)
        prints = actors.footprints(np.asarray(data.xpos)[actors.body_ids, :2])
        h, w = depth_m.shape
        heights, origin, spacing = self._terrain_grid()
        axis, back, front, half = prints.extent()
        table = prints.table(axis)
        k = np.ascontiguousarray(k, dtype=np.float64)
        position = np.ascontiguousarray(position_world_optical, dtype=np.float64)
        r = np.ascontiguousarray(r_world_optical, dtype=np.float64)
        boxes = np.zeros((len(table), 4), np.int64)
        reach = np.empty((len(table), 3))
        reach[:, 0], reach[:, 1], reach[:, 2] = back, front, half
        _pixel_boxes(table, reach, k, position, r, w, h, heights, origin, spacing, boxes)
        if not (boxes[:, 2] > boxes[:, 0]).any():
            return
        base = r[:, 2] - k[0, 2] / k[0, 0] * r[:, 0] - k[1, 2] / k[1, 1] * r[:, 1]
        _darken(
            rgb,
            depth_m,
            position,
            base,
            r[:, 0] / k[0, 0],
            r[:, 1] / k[1, 1],
            boxes,
            table,
            heights,
            origin,
            spacing,
            self.scene.world.terrain is not None,
        )

    def _terrain_grid(self) -> tuple[FloatArray, FloatArray, float]:
        """The ground as `_ground_z` reads it: heights, origin and spacing of the terrain."""
        terrain = self.scene.world.terrain
        if terrain is None:  # flat at z = 0: one cell of zeros, far larger than any world
            return np.zeros((2, 2)), np.array([-1e9, -1e9]), 2e9
        heights = np.ascontiguousarray(terrain.heights_m, dtype=np.float64)
        return heights, np.asarray(terrain.origin_xy, np.float64), float(terrain.spacing_m)


# Columns of Footprints.table.
_FEET_X, _FEET_Y, _AXIS_X, _AXIS_Y, _LENGTH = range(5)
_CONTACT_INV_R2, _CONTACT_DARK, _CAST_HALF, _CAST_DARK, _FEET_Z = range(5, 10)
# Edges of a footprint's box: corners 0-3 at its lowest ground, 4-7 above them.
_BOX_EDGES = np.array(
    [[0, 1], [1, 2], [2, 3], [3, 0], [4, 5], [5, 6], [6, 7], [7, 4], [0, 4], [1, 5], [2, 6], [3, 7]]
)
# The darkness field is computed on every HALF_RES-th pixel and spread bilinearly: the shadows
# are soft over centimetres to a metre, so a 2-pixel grid loses nothing visible
# (test_the_half_resolution_darkness_matches_the_exact_one bounds it); the ground test stays per
# pixel, with its exact depth, so where the ground ends (feet, furniture) stays exact.
HALF_RES = 2
# Rays meeting the ground plane at a grazing angle (or missing it) cast nothing there.
_MIN_DOWN = 1e-9
# Grid samples further apart on the ground than this share of a footprint's smallest radius
# leave its pixels there to their own darkness (far away or at a grazing view): the bilinear
# error of a (1 - d^2 / R^2)^2 fall-off over samples h apart is at most about (h / R)^2.
GRID_SHARE = 0.15
# Pixels further than this from the ground take their darkness at their own point, not the grid's.
_ON_PLANE_M = 1e-3
# Steps of finding where a pixel's ray meets hilly ground from the actor's own ground plane.
_TERRAIN_STEPS = 2


@numba.njit(nogil=True, cache=True, error_model="numpy", inline="always")
def _ground_weight(above_m: float) -> float:  # pragma: no cover - compiled
    """How much of the darkening a point `above_m` over the ground gets: 1 on it, 0 above."""
    off = abs(above_m)
    if off >= GROUND_FADE_M:
        return 0.0
    if off <= GROUND_FULL_M:
        return 1.0
    return (GROUND_FADE_M - off) / (GROUND_FADE_M - GROUND_FULL_M)


@numba.njit(nogil=True, cache=True, error_model="numpy", inline="always")
def _darkness(x: float, y: float, table: Any, a: int) -> float:  # pragma: no cover - compiled
    """Share of light actor `a` (a row of `table`) takes away on the ground at (x, y).

    Both shapes fall off as (1 - q)^2 (q: squared distance over squared radius) and are 0 from
    q = 1 on. Written without branches (min / max only), so that the compiler vectorises the
    loops over pixel rows that call it.
    """
    dx = x - table[a, _FEET_X]
    dy = y - table[a, _FEET_Y]
    fall = max(1.0 - (dx * dx + dy * dy) * table[a, _CONTACT_INV_R2], 0.0)
    contact = table[a, _CONTACT_DARK] * fall * fall
    u = dx * table[a, _AXIS_X] + dy * table[a, _AXIS_Y]  # along the shadow
    v = dy * table[a, _AXIS_X] - dx * table[a, _AXIS_Y]  # across it
    uc = min(max(u, 0.0), table[a, _LENGTH])
    w0 = table[a, _CAST_HALF]
    inv_width = 1.0 / (w0 + CAST_WIDENING * uc)
    off = u - uc  # behind the feet or beyond the tip: round ends
    fall = max(1.0 - (v * v + off * off) * inv_width * inv_width, 0.0)
    cast = table[a, _CAST_DARK] * w0 * inv_width * fall * fall
    return float(1.0 - (1.0 - contact) * (1.0 - cast))


@numba.njit(nogil=True, cache=True, error_model="numpy", inline="always")
def _ground_z(x: float, y: float, heights: Any, origin: Any, spacing: float) -> float:
    """Terrain.height_at for one point (the same triangles), compiled."""  # pragma: no cover
    nx = heights.shape[0] - 1
    ny = heights.shape[1] - 1
    u = min(max((x - origin[0]) / spacing, 0.0), float(nx))
    v = min(max((y - origin[1]) / spacing, 0.0), float(ny))
    i = min(int(u), nx - 1)  # u >= 0: int is floor
    j = min(int(v), ny - 1)
    fu = u - i
    fv = v - j
    h00 = heights[i, j]
    if fu >= fv:
        lower = (
            h00 + fu * (heights[i + 1, j] - h00) + fv * (heights[i + 1, j + 1] - heights[i + 1, j])
        )
        return float(lower)
    upper = h00 + fv * (heights[i, j + 1] - h00) + fu * (heights[i + 1, j + 1] - heights[i, j + 1])
    return float(upper)


@numba.njit(nogil=True, cache=True, error_model="numpy")
def _pixel_boxes(
    table: Any,
    reach: Any,
    k: Any,
    position: Any,
    r: Any,
    width: int,
    height: int,
    heights: Any,
    origin: Any,
    spacing: float,
    out: Any,
) -> None:  # pragma: no cover - compiled
    """(n, 4) pixel boxes [x0, y0, x1, y1) into `out` of each footprint's support (`reach`:
    (n, 3) back, front and half width of `Footprints.extent`) in the image: the box over its
    ground rectangle (between the lowest ground under it less 0.1 m and the highest plus
    GROUND_FADE_M + 0.1 m), clipped at the camera plane; empty (all 0) when out of view."""
    cam = np.empty((8, 3))
    for a in range(table.shape[0]):
        ax, ay = table[a, _AXIS_X], table[a, _AXIS_Y]
        low = high = table[a, _FEET_Z]
        for c in range(4):  # corners (behind / in front, right / left): (-,-) (-,+) (+,+) (+,-)
            along = reach[a, 0] if c < 2 else -reach[a, 1]
            across = -reach[a, 2] if c % 3 == 0 else reach[a, 2]
            cx = table[a, _FEET_X] - along * ax - across * ay
            cy = table[a, _FEET_Y] - along * ay + across * ax
            ground = _ground_z(cx, cy, heights, origin, spacing)
            low, high = min(low, ground), max(high, ground)
            cam[c, 0], cam[c, 1] = cx, cy
            cam[c + 4, 0], cam[c + 4, 1] = cx, cy
        for c in range(4):
            cam[c, 2] = low - 0.1
            cam[c + 4, 2] = high + GROUND_FADE_M + 0.1
        for c in range(8):  # into the optical frame
            px, py, pz = cam[c, 0] - position[0], cam[c, 1] - position[1], cam[c, 2] - position[2]
            for j in range(3):
                cam[c, j] = px * r[0, j] + py * r[1, j] + pz * r[2, j]
        x0 = y0 = 1e9
        x1 = y1 = -1e9
        for e in range(_BOX_EDGES.shape[0] + 8):
            if e < 8:  # the corners in front of the camera plane
                if cam[e, 2] < _NEAR_M:
                    continue
                qx, qy, qz = cam[e, 0], cam[e, 1], cam[e, 2]
            else:  # where an edge crosses it
                p, q = _BOX_EDGES[e - 8, 0], _BOX_EDGES[e - 8, 1]
                za, zb = cam[p, 2], cam[q, 2]
                if (za >= _NEAR_M) == (zb >= _NEAR_M):
                    continue
                t = min(max((_NEAR_M - za) / (zb - za), 0.0), 1.0)
                qx = cam[p, 0] + t * (cam[q, 0] - cam[p, 0])
                qy = cam[p, 1] + t * (cam[q, 1] - cam[p, 1])
                qz = max(za + t * (zb - za), _NEAR_M)
            u = k[0, 0] * qx / qz + k[0, 2]
            v = k[1, 1] * qy / qz + k[1, 2]
            x0, x1, y0, y1 = min(x0, u), max(x1, u), min(y0, v), max(y1, v)
        b0 = min(max(np.floor(x0) - 1, 0), width)
        b1 = min(max(np.floor(y0) - 1, 0), height)
        b2 = min(max(np.ceil(x1) + 2, 0), width)
        b3 = min(max(np.ceil(y1) + 2, 0), height)
        if b2 <= b0 or b3 <= b1:
            out[a, 0] = out[a, 1] = out[a, 2] = out[a, 3] = 0
        else:
            out[a, 0], out[a, 1], out[a, 2], out[a, 3] = int(b0), int(b1), int(b2), int(b3)


@numba.njit(nogil=True, cache=True, error_model="numpy")
def _darken(
    rgb: Any,
    depth: Any,
    origin_cam: Any,
    base: Any,
    step_x: Any,
    step_y: Any,
    boxes: Any,
    table: Any,
    heights: Any,
    origin: Any,
    spacing: float,
    hilly: bool,
) -> None:  # pragma: no cover - compiled
    x_lo, y_lo = rgb.shape[1], rgb.shape[0]
    x_hi = y_hi = 0
    smallest = np.inf  # the smallest radius of any footprint in view (see GRID_SHARE)
    for a in range(boxes.shape[0]):
        if boxes[a, 2] > boxes[a, 0] and boxes[a, 3] > boxes[a, 1]:
            x_lo, y_lo = min(x_lo, boxes[a, 0]), min(y_lo, boxes[a, 1])
            x_hi, y_hi = max(x_hi, boxes[a, 2]), max(y_hi, boxes[a, 3])
            smallest = min(smallest, 1.0 / np.sqrt(table[a, _CONTACT_INV_R2]))
            if table[a, _CAST_DARK] > 0.0:
                smallest = min(smallest, table[a, _CAST_HALF])
    if x_hi <= x_lo:
        return
    # What every footprint leaves of the light, multiplied up, on a grid of every HALF_RES-th
    # pixel over the boxes' union (its last row and column at or past the union's edge). The
    # field is a smooth function of where each pixel's ray meets the ground, so it is taken
    # there, not at the pixel's depth (that has steps where a body or a table stands in front).
    rows = (y_hi - 1 - y_lo) // HALF_RES + 2
    cols = (x_hi - 1 - x_lo) // HALF_RES + 2
    keep = np.ones((rows, cols))
    for a in range(boxes.shape[0]):
        if boxes[a, 2] <= boxes[a, 0] or boxes[a, 3] <= boxes[a, 1]:
            continue
        plane = table[a, _FEET_Z] - origin_cam[2]  # the actor's ground, from the camera
        i0 = (boxes[a, 0] - x_lo) // HALF_RES
        i1 = (boxes[a, 2] - 1 - x_lo) // HALF_RES + 2
        for j in range((boxes[a, 1] - y_lo) // HALF_RES, (boxes[a, 3] - 1 - y_lo) // HALF_RES + 2):
            y = y_lo + HALF_RES * j
            ray_x = base[0] + y * step_y[0] + x_lo * step_x[0]
            ray_y = base[1] + y * step_y[1] + x_lo * step_x[1]
            ray_z = base[2] + y * step_y[2] + x_lo * step_x[2]
            if hilly:  # from the actor's plane onto the terrain under it, a few times
                for i in range(i0, i1):
                    dx = ray_x + HALF_RES * i * step_x[0]
                    dy = ray_y + HALF_RES * i * step_x[1]
                    down = min(ray_z + HALF_RES * i * step_x[2], -_MIN_DOWN)
                    z = plane / down  # planar depth where the ray meets that plane
                    for _ in range(_TERRAIN_STEPS):
                        ground = _ground_z(
                            origin_cam[0] + z * dx, origin_cam[1] + z * dy, heights, origin, spacing
                        )
                        z = (ground - origin_cam[2]) / down
                    dark = _darkness(origin_cam[0] + z * dx, origin_cam[1] + z * dy, table, a)
                    keep[j, i] *= 1.0 - (dark if z > 0.0 else 0.0)
            else:  # flat: branch-free, so that the compiler vectorises it
                for i in range(i0, i1):
                    dx = ray_x + HALF_RES * i * step_x[0]
                    dy = ray_y + HALF_RES * i * step_x[1]
                    z = plane / min(ray_z + HALF_RES * i * step_x[2], -_MIN_DOWN)
                    dark = _darkness(origin_cam[0] + z * dx, origin_cam[1] + z * dy, table, a)
                    keep[j, i] *= 1.0 - (dark if z > 0.0 else 0.0)
    # Ground steps between the grid's samples longer than this (far away, grazing) leave a
    # pixel to its own darkness; squared, per pixel step.
    coarse = (GRID_SHARE * smallest / HALF_RES) ** 2
    # Only points on the ground are darkened (not the actors, furniture tops or grass): tested
    # per pixel with its exact depth. The grid's cells (HALF_RES^2 pixels each) with light
    # left at all four corners are skipped whole.
    for j in range(rows - 1):
        for i in range(cols - 1):
            k00, k01, k10, k11 = keep[j, i], keep[j, i + 1], keep[j + 1, i], keep[j + 1, i + 1]
            if min(min(k00, k01), min(k10, k11)) >= 1.0:
                continue
            for y in range(y_lo + HALF_RES * j, min(y_lo + HALF_RES * (j + 1), y_hi)):
                sy = (y - y_lo - HALF_RES * j) / HALF_RES
                for x in range(x_lo + HALF_RES * i, min(x_lo + HALF_RES * (i + 1), x_hi)):
                    sx = (x - x_lo - HALF_RES * i) / HALF_RES
                    left = (1.0 - sy) * ((1.0 - sx) * k00 + sx * k01) + sy * (
                        (1.0 - sx) * k10 + sx * k11
                    )
                    if left >= 1.0:
                        continue
                    z = np.float64(depth[y, x])
                    dx = base[0] + y * step_y[0] + x * step_x[0]
                    dy = base[1] + y * step_y[1] + x * step_x[1]
                    dz = base[2] + y * step_y[2] + x * step_x[2]
                    wx, wy = origin_cam[0] + z * dx, origin_cam[1] + z * dy
                    ground = _ground_z(wx, wy, heights, origin, spacing) if hilly else 0.0
                    above = origin_cam[2] + z * dz - ground
                    weight = _ground_weight(above)
                    if weight <= 0.0 or z <= 0.0:
                        continue
                    # The ground moved per pixel step, horizontally: z (step - step_z / dz ray).
                    down = min(dz, -_MIN_DOWN)
                    ux = step_x[0] - step_x[2] / down * dx
                    uy = step_x[1] - step_x[2] / down * dy
                    vx = step_y[0] - step_y[2] / down * dx
                    vy = step_y[1] - step_y[2] / down * dy
                    far = z * z * max(ux * ux + uy * uy, vx * vx + vy * vy) > coarse
                    # A sole or a table leg's foot is not where its ray meets the ground; and
                    # where the grid is coarse: the exact darkness at the pixel's own point.
                    if far or abs(above) > _ON_PLANE_M:
                        left = 1.0
                        for a in range(boxes.shape[0]):
                            if boxes[a, 0] <= x < boxes[a, 2] and boxes[a, 1] <= y < boxes[a, 3]:
                                left *= 1.0 - _darkness(wx, wy, table, a)
                    scale = 1.0 - weight * (1.0 - left)
                    for c in range(3):
                        rgb[y, x, c] = np.uint8(rgb[y, x, c] * scale + 0.5)


@numba.njit(nogil=True, cache=True, error_model="numpy")
def _darkness_points(points: Any, ground: Any, table: Any, out: Any) -> None:  # pragma: no cover
    for p in range(points.shape[0]):
        keep = 1.0
        for a in range(table.shape[0]):
            keep *= 1.0 - _darkness(points[p, 0], points[p, 1], table, a)
        out[p] = _ground_weight(points[p, 2] - ground[p]) * (1.0 - keep)


def warm_up() -> None:
    """Compile (or load from numba's cache) the kernels now, not at the first frame."""
    one = np.zeros((1, 3))
    prints = Footprints(one, np.zeros((1, 2)), *(np.ones(1) for _ in range(5)))
    prints.darkness_at(one, np.zeros(1))
    table = prints.table()
    ground = (np.zeros((2, 2)), np.zeros(2), 1.0)
    boxes = np.zeros((1, 4), np.int64)
    _pixel_boxes(table, np.ones((1, 3)), np.eye(3), np.zeros(3), np.eye(3), 1, 1, *ground, boxes)
    for hilly in (False, True):
        _darken(
            np.zeros((1, 1, 3), np.uint8),
            np.ones((1, 1), np.float32),
            np.zeros(3),
            np.array([0.0, 0.0, -1.0]),
            np.zeros(3),
            np.zeros(3),
            np.array([[0, 0, 1, 1]], np.int64),
            table,
            *ground,
            hilly,
        )
