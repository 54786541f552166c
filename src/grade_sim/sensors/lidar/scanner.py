"""One scan: every ray from the sensor pose at its firing time, against the world and the actors.

Rolling shutter (LiDARsim): the rays of a sweep leave from the sensor pose at their own firing
time (the caller interpolates the ego pose between physics steps), and the moving parts (people's
body parts, flying objects, other robots) are re-posed `slices` times per sweep. Static geometry
is one Embree scene built once, and so is each moving part's, in its own body frame; per slice
only the parts that the slice's rays can reach are cast, with those rays moved into the part's
frame: the bounding sphere against the slice's azimuth and elevation intervals (sensor frame),
then only the beams within the part's elevation window, then against each ray.
With `rolling_shutter` off every ray leaves at the scan stamp and sees one pose of the actors.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields

import numpy as np
from numpy.typing import NDArray

from grade_common.types import FloatArray
from grade_sim.config.lidar import LidarKind, LidarPreset
from grade_sim.sensors.lidar.beams import BeamFiring, firing
from grade_sim.sensors.lidar.divergence import Bundles, Footprint, combine, expand
from grade_sim.sensors.lidar.part_atlas import PartAtlas
from grade_sim.sensors.lidar.raycast import EmbreeDevice, Hits, InstanceMesh, InstanceScene

# times (n,) ns -> positions (n, 3) and rotations (n, 3, 3) of the sensor in the world
SensorPoseAt = Callable[[NDArray[np.int64]], tuple[FloatArray, FloatArray]]
# times (s,) ns -> positions (s, m, 3) and rotations (s, m, 3, 3) of every moving part (parts
# order) at each time
PartPosesAt = Callable[[NDArray[np.int64]], tuple[FloatArray, FloatArray]]


@dataclass(frozen=True)
class MovingPart:
    """A rigid moving mesh in its body frame, with its bounding sphere."""

    instance_id: int
    triangles: FloatArray  # (n, 3, 3) in the body frame
    reflectivity: FloatArray  # (n,)
    centre: FloatArray  # (3,) bounding-sphere centre in the body frame
    radius_m: float

    @classmethod
    def of(cls, instance_id: int, triangles: FloatArray, reflectivity: FloatArray) -> MovingPart:
        verts = triangles.reshape(-1, 3)
        centre = (verts.max(axis=0) + verts.min(axis=0)) / 2
        radius = float(np.linalg.norm(verts - centre, axis=1).max())
        return cls(instance_id, triangles, reflectivity, centre, radius)


@dataclass
class RawScan:
    """The rays of one scan and what each hit (range inf: none)."""

    stamp_ns: int  # firing time of the first ray
    firing: BeamFiring
    offset_ns: NDArray[np.int64]  # per ray, after stamp_ns (all 0 without rolling shutter)
    hits: Hits


class ScanCaster:
    """Casts the scans of one lidar; `excluded` instances (the robot itself) are never hit."""

    def __init__(
        self,
        table: LidarPreset,
        static_meshes: Sequence[InstanceMesh],
        parts: Sequence[MovingPart],
        *,
        slices: int,
        rolling_shutter: bool,
        device: EmbreeDevice | None = None,
        footprint: Footprint | None = None,
    ) -> None:
        self.table = table
        self.footprint = footprint
        self._bundles: Bundles | None = None
        self.device = device if device is not None else EmbreeDevice()
        self.static_meshes = tuple(static_meshes)
        self.static = InstanceScene(static_meshes, self.device)
        self.parts = tuple(parts)
        self.slices = slices if rolling_shutter else 1
        self.rolling_shutter = rolling_shutter
        self._part_centre = np.array([p.centre for p in parts]).reshape(-1, 3)
        self._part_radius = np.array([p.radius_m for p in parts])
        self._part_instance = np.array([p.instance_id for p in parts], dtype=np.uint16)
        # Reflectivity of every part triangle in one table: part, primitive -> row.
        sizes = np.array([len(p.triangles) for p in parts], dtype=np.int64)
        self._part_first_row = np.cumsum(sizes) - sizes
        self._part_reflectivity = np.concatenate(
            [np.asarray(p.reflectivity, dtype=np.float64) for p in parts] or [np.zeros(0)]
        )
        self._pattern: _Pattern | None = None
        self._beams = firing(table, 0)
        self._atlas = PartAtlas(
            [p.triangles for p in parts], self._part_centre, self._part_radius, self.device
        )

    def rays(
        self, stamp_ns: int, sensor_pose_at: SensorPoseAt
    ) -> tuple[BeamFiring, NDArray[np.int64], FloatArray, FloatArray]:
        """The scan's firing pattern, time offsets, and world ray origins and unit directions."""
        pattern, _, _, origins, dirs = self._rays(stamp_ns, sensor_pose_at)
        return pattern.fire, pattern.offset, origins, dirs

    def _rays(
        self, stamp_ns: int, sensor_pose_at: SensorPoseAt
    ) -> tuple[_Pattern, FloatArray, FloatArray, FloatArray, FloatArray]:
        """The pattern, the sensor poses at its firing times, and the world rays."""
        if self._pattern is None or self.table.kind is LidarKind.SOLID_STATE:
            # Rotating lidars and 2D lasers repeat their pattern every sweep: computed once.
            fire = firing(self.table, stamp_ns)
            self._beams = fire
            if self.footprint is not None:
                # A divergent beam is a bundle of sub-rays: they are the rays cast.
                self._bundles = expand(fire, self.footprint)
                fire = self._bundles.fire
            self._pattern = _Pattern.of(fire, self.rolling_shutter, self.slices)
        pattern = self._pattern
        pos, rot = sensor_pose_at(stamp_ns + pattern.times)
        origins = np.take(pos, pattern.inverse, axis=0)
        if pattern.per_time:
            # Rays grouped by firing time, the same count each (a rotating lidar's columns):
            # one batched matrix product per time instead of a rotation gathered per ray.
            local = pattern.fire.directions.reshape(len(pattern.times), pattern.per_time, 3)
            dirs = (local @ rot.transpose(0, 2, 1)).reshape(-1, 3)
        else:
            dirs = np.einsum("nij,nj->ni", rot[pattern.inverse], pattern.fire.directions)
        return pattern, pos, rot, origins, dirs

    def cast(
        self,
        stamp_ns: int,
        sensor_pose_at: SensorPoseAt,
        part_poses_at: PartPosesAt,
        deforming: Sequence[InstanceMesh] = (),
    ) -> RawScan:
        """The scan whose first ray fires at stamp_ns.

        deforming: meshes whose vertices change from scan to scan (skinned bodies), in world
        coordinates as posed for this scan (one pose per scan: no rolling shutter for them);
        they get a fresh Embree scene per scan, cast only with the rays that pass through
        their bounding spheres.
        """
        pattern, pos, rot, origins, dirs = self._rays(stamp_ns, sensor_pose_at)
        hits = self.static.cast(origins, dirs, self.table.range_max_m)
        if self.parts:
            near = self._parts_near_slices(pattern, pos, rot, stamp_ns, part_poses_at)
            if near is not None:
                self._cast_parts(pattern, near, origins, dirs, hits)
        if deforming:
            self._cast_deforming(deforming, origins, dirs, hits)
        if self._bundles is not None and self.footprint is not None:
            hits = combine(hits, self._bundles, self.footprint)
        far = hits.range_m < self.table.range_min_m
        hits.range_m[far] = np.inf  # too close for the receiver: no return
        beams = self._beams
        offset = beams.offset_ns if self.rolling_shutter else np.zeros_like(beams.offset_ns)
        return RawScan(stamp_ns, beams, offset, hits)

    def _cast_parts(
        self,
        pattern: _Pattern,
        near: _Near,
        origins: FloatArray,
        dirs: FloatArray,
        hits: Hits,
    ) -> None:
        pos, rot, centres = near.pos, near.rot, near.centres
        # Every (ray, part) pair whose slice meets the part, as flat arrays (`sl` indexes the
        # slices the near test kept).
        pair_s, pair_p = np.nonzero(near.mask)
        if not len(pair_s):
            return
        rows, pair = _pair_rays(
            pattern,
            near.slices[pair_s],
            near.el[pair_s, pair_p],
            near.alpha[pair_s, pair_p],
        )
        parts, sl = pair_p[pair], pair_s[pair]
        # np.take: a gather along axis 0 several times faster than fancy indexing here.
        n_parts = centres.shape[1]
        pose = sl * n_parts + parts
        ray_d = np.take(dirs, rows, axis=0)
        ray_o = np.take(origins, rows, axis=0)
        # Exact ray-sphere test, and not hidden behind what the ray hit already.
        oc = np.take(centres.reshape(-1, 3), pose, axis=0) - ray_o
        t_proj = np.einsum("nk,nk->n", oc, ray_d)
        r2 = self._part_radius[parts] ** 2
        half2 = r2 - (np.einsum("nk,nk->n", oc, oc) - t_proj**2)
        half = np.sqrt(np.maximum(half2, 0.0))
        best = hits.range_m[rows]
        keep = (half2 >= 0) & (t_proj + half > 0) & (t_proj - half < best)
        keep = np.flatnonzero(keep)
        if not len(keep):
            return
        rows, parts, pose = rows[keep], parts[keep], pose[keep]
        ray_d, ray_o = ray_d[keep], ray_o[keep]
        # The rays move into each part's frame (at their slice's pose), never its triangles
        # into the world; each ray is cast only over its stretch inside the part's sphere.
        r_wp = np.take(rot.reshape(-1, 3, 3), pose, axis=0)
        rel = ray_o - np.take(pos.reshape(-1, 3), pose, axis=0)
        local_o = _rotate_back(r_wp, rel)
        local_d = _rotate_back(r_wp, ray_d)
        t_mid, half = t_proj[keep], half[keep]
        t_start = np.maximum(t_mid - half - SPHERE_SLACK_M, 0.0)
        t_stop = np.minimum(t_mid + half + SPHERE_SLACK_M, best[keep])
        found = self._atlas.cast(parts, local_o, local_d, t_start, t_stop)
        if not len(found.which):
            return
        # Several parts may cover one ray: the nearest hit wins, and only if nearer than the
        # static world.
        at = rows[found.which]
        nearer = found.range_m < hits.range_m[at]
        order = np.flatnonzero(nearer)
        order = order[np.lexsort((found.range_m[order], at[order]))]
        first = order[np.r_[True, np.diff(at[order]) != 0]] if len(order) else order
        idx = at[first]
        part = found.part[first]
        hits.range_m[idx] = found.range_m[first]
        hits.instance_id[idx] = self._part_instance[part]
        hits.cos_incidence[idx] = found.cos_incidence[first]
        hits.reflectivity[idx] = self._part_reflectivity[
            self._part_first_row[part] + found.prim[first]
        ]

    def _cast_deforming(
        self,
        meshes: Sequence[InstanceMesh],
        origins: FloatArray,
        dirs: FloatArray,
        hits: Hits,
    ) -> None:
        scene = InstanceScene(meshes, self.device)
        if scene.empty:
            return
        # Rays whose line passes through a mesh's bounding sphere in front of what the ray hit
        # already (per mesh, so two people far apart do not make one huge sphere).
        picked = []
        for mesh in meshes:
            verts = np.asarray(mesh.triangles, dtype=np.float64).reshape(-1, 3)
            if not len(verts):
                continue
            centre = (verts.max(axis=0) + verts.min(axis=0)) / 2
            radius = float(np.linalg.norm(verts - centre, axis=1).max())
            oc = centre - origins
            t_proj = np.einsum("nk,nk->n", oc, dirs)
            d2 = np.einsum("nk,nk->n", oc, oc) - t_proj**2
            picked.append(
                np.flatnonzero(
                    (d2 <= radius**2) & (t_proj + radius > 0) & (t_proj - radius < hits.range_m)
                )
            )
        rows = np.unique(np.concatenate(picked)) if picked else np.zeros(0, dtype=np.int64)
        if len(rows):
            found = scene.cast(origins[rows], dirs[rows], self.table.range_max_m)
            hits.take_nearer(found, rows)

    def _parts_near_slices(
        self,
        pattern: _Pattern,
        sensor_pos: FloatArray,
        sensor_rot: FloatArray,
        stamp_ns: int,
        part_poses_at: PartPosesAt,
    ) -> _Near | None:
        """Which parts' bounding spheres can meet a ray of which slice (see `_Near`); None if
        none can.

        Coarse to fine: first per group of slices (the parts posed at the group's first, middle
        and last ray, spheres widened by twice the farthest their centres move from the middle
        one, plus 1 mm), then per slice of the groups that met a part, with the parts posed at
        the slice's middle ray, so the parts are posed at few slices' times.
        """
        trace = np.sum(sensor_rot[:-1] * sensor_rot[1:], axis=(1, 2))
        turn = np.r_[0.0, np.cumsum(np.arccos(np.clip((trace - 1) / 2, -1.0, 1.0)))]
        travel = np.r_[0.0, np.cumsum(np.linalg.norm(np.diff(sensor_pos, axis=0), axis=1))]
        motion = _SensorMotion(sensor_pos, sensor_rot, turn, travel)
        coarse = pattern.groups
        g = len(coarse.lo)
        # Each group's first ray (the next group's first bounds it too) and middle ray.
        ends = np.r_[coarse.lo, coarse.hi[-1] - 1]
        ray = np.r_[ends, (coarse.lo + coarse.hi - 1) // 2]
        pos, rot = part_poses_at(stamp_ns + pattern.offset[ray])
        centres = (rot @ self._part_centre[:, :, None])[..., 0] + pos
        edge, mid = centres[: g + 1], centres[g + 1 :]
        sway = np.maximum(
            np.linalg.norm(edge[:-1] - mid, axis=2), np.linalg.norm(edge[1:] - mid, axis=2)
        )
        coarse_mask, _, _ = self._meets(coarse, mid, 2 * sway + 1e-3, motion)
        groups = np.flatnonzero(coarse_mask.any(axis=1))
        if not len(groups):
            return None
        fine = pattern.fine
        per = pattern.group_size
        chosen = (groups[:, None] * per + np.arange(per)).ravel()
        chosen = chosen[chosen < len(fine.lo)]
        sub = fine.take(chosen)
        pos, rot = part_poses_at(stamp_ns + pattern.offset[(sub.lo + sub.hi - 1) // 2])
        centres_f = (rot @ self._part_centre[:, :, None])[..., 0] + pos  # (S', P, 3)
        mask, el, alpha = self._meets(sub, centres_f, np.zeros(1), motion)
        mask &= coarse_mask[chosen // per]
        return _Near(chosen, mask, pos, rot, centres_f, el, alpha)

    def _meets(
        self,
        sl: _Slices,
        centres: FloatArray,
        extra_radius_m: FloatArray,
        motion: _SensorMotion,
    ) -> tuple[NDArray[np.bool_], FloatArray, FloatArray]:
        """Per slice and part: can the part's sphere (widened by extra_radius_m) meet a ray of
        the slice; and the centre's elevation and angular radius in the sensor frame.

        The test is on azimuth and elevation intervals of each slice's rays in the sensor frame
        (a rotating lidar's slice is tall and thin, so a cone would let far too much through),
        worked out once per pattern; per scan only the parts' centres move into the sensor frame
        at each slice's middle ray. The rays of a slice leave from other poses: spheres are
        widened by the sensor's travel and angles by its turn between the slice's firing times
        (path lengths through the sampled poses, which bound both).
        """
        turn, travel = motion.turn, motion.travel
        mid, t_lo, t_hi = sl.mid_time, sl.first_time, sl.last_time
        theta = np.maximum(turn[mid] - turn[t_lo], turn[t_hi] - turn[mid])
        spread = np.maximum(travel[mid] - travel[t_lo], travel[t_hi] - travel[mid])
        # Part centres in the sensor frame at each slice's middle ray.
        to_part = (centres - motion.pos[mid][:, None]) @ motion.rot[mid]  # (S, P, 3)
        dist = np.linalg.norm(to_part, axis=2)
        flat = np.hypot(to_part[..., 0], to_part[..., 1])
        radius = self._part_radius[None] + spread[:, None] + extra_radius_m
        # Angular radius of the sphere plus the turn, and a margin for rounding (arccos near 1
        # above loses up to ~1e-8 rad).
        alpha = np.arcsin(np.clip(radius / np.maximum(dist, 1e-12), 0.0, 1.0))
        alpha = alpha + theta[:, None] + 1e-6
        p_el = np.arctan2(to_part[..., 2], flat)
        # A cap reaching over a pole spans every azimuth.
        all_az = alpha >= np.pi / 2 - np.abs(p_el)
        ang_az = np.arcsin(
            np.clip(np.sin(np.minimum(alpha, np.pi / 2)) / np.maximum(np.cos(p_el), 1e-12), 0, 1)
        )
        p_az = _wrap(np.arctan2(to_part[..., 1], to_part[..., 0]) - sl.az_mid[:, None])
        overlap = (
            (all_az | (p_az + ang_az >= sl.az_lo[:, None]))
            & (all_az | (p_az - ang_az <= sl.az_hi[:, None]))
            & (p_el + alpha >= sl.el_lo[:, None])
            & (p_el - alpha <= sl.el_hi[:, None])
            & (dist - radius < self.table.range_max_m)
        )
        mask: NDArray[np.bool_] = (dist <= radius) | overlap
        return mask, p_el, alpha


SPHERE_SLACK_M = 1e-4  # rays enter a part's sphere a little early and leave it a little late


@dataclass(frozen=True)
class _SensorMotion:
    """The sensor's poses at the pattern's firing times, and its cumulative turn (rad) and
    travel (m) through them."""

    pos: FloatArray
    rot: FloatArray
    turn: FloatArray
    travel: FloatArray


@dataclass(frozen=True)
class _Near:
    """For the kept slices `slices` (s indexes them) and every part p (arrays (S', P, ...)):
    whether the part's bounding sphere can meet a ray of the slice; the part's pose and sphere
    centre at the slice; in the sensor frame at the slice's middle ray, the centre's elevation
    and the angle within which a ray of the slice that meets the sphere points (sphere, sensor
    turn and travel)."""

    slices: NDArray[np.int64]
    mask: NDArray[np.bool_]
    pos: FloatArray
    rot: FloatArray
    centres: FloatArray
    el: FloatArray
    alpha: FloatArray


def _pair_rays(
    pattern: _Pattern, pair_s: NDArray[np.int64], el: FloatArray, alpha: FloatArray
) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """The rays (row indices) of each (slice, part) pair that can meet the part, and the pair of
    each. With a beam table (the same sorted elevations in every column) only the beams within
    the part's elevation window of each column the slice touches; otherwise every ray."""
    lo, hi = pattern.fine.lo[pair_s], pattern.fine.hi[pair_s]
    if pattern.beam_el is None:
        count = hi - lo
        pair = np.repeat(np.arange(len(pair_s)), count)
        return lo[pair] + _ramp(count), pair
    k = pattern.per_time
    b0 = np.searchsorted(pattern.beam_el, el - alpha, side="left")
    b1 = np.searchsorted(pattern.beam_el, el + alpha, side="right")
    c0 = lo // k
    n_col = (hi - 1) // k + 1 - c0
    by_col = np.repeat(np.arange(len(pair_s)), n_col)  # one entry per (pair, column)
    col = c0[by_col] + _ramp(n_col)
    n_beam = (b1 - b0)[by_col]
    entry = np.repeat(np.arange(len(by_col)), n_beam)
    rows = col[entry] * k + b0[by_col][entry] + _ramp(n_beam)
    pair = by_col[entry]
    inside = (rows >= lo[pair]) & (rows < hi[pair])
    return rows[inside], pair[inside]


def _rotate_back(rot: FloatArray, v: FloatArray) -> FloatArray:
    """rot[i].T @ v[i] for every i, written out per component (several times faster than a
    batched einsum or matmul of 3x3 matrices)."""
    out: FloatArray = rot[:, 0, :] * v[:, 0:1] + rot[:, 1, :] * v[:, 1:2] + rot[:, 2, :] * v[:, 2:3]
    return out


def _ramp(count: NDArray[np.int64]) -> NDArray[np.int64]:
    """0, 1, ..., count[0] - 1, 0, 1, ..., count[1] - 1, ... (one run per entry)."""
    total = int(count.sum())
    starts = np.cumsum(count) - count
    out: NDArray[np.int64] = np.arange(total) - np.repeat(starts, count)
    return out


@dataclass(frozen=True)
class _Slices:
    """Runs of consecutive rays [lo, hi): per run, the azimuth interval of its rays (relative to
    their mean azimuth) and elevation interval in the sensor frame, its middle ray's firing-time
    index and the first and last firing-time indices it spans."""

    lo: NDArray[np.int64]
    hi: NDArray[np.int64]
    mid_time: NDArray[np.int64]
    first_time: NDArray[np.int64]
    last_time: NDArray[np.int64]
    az_mid: FloatArray
    az_lo: FloatArray
    az_hi: FloatArray
    el_lo: FloatArray
    el_hi: FloatArray

    @classmethod
    def of(
        cls,
        directions: FloatArray,
        elevation: FloatArray,
        inverse: NDArray[np.int64],
        bounds: NDArray[np.int64],
    ) -> _Slices:
        lo, hi = bounds[:-1], bounds[1:]
        d = directions
        mean = np.add.reduceat(d, lo, axis=0)
        az_mid = np.arctan2(mean[:, 1], mean[:, 0])
        slice_of_ray = np.repeat(np.arange(len(lo)), hi - lo)
        rel_az = _wrap(np.arctan2(d[:, 1], d[:, 0]) - az_mid[slice_of_ray])
        return cls(
            lo,
            hi,
            inverse[(lo + hi - 1) // 2],
            np.minimum.reduceat(inverse, lo),
            np.maximum.reduceat(inverse, lo),
            az_mid,
            np.minimum.reduceat(rel_az, lo),
            np.maximum.reduceat(rel_az, lo),
            np.minimum.reduceat(elevation, lo),
            np.maximum.reduceat(elevation, lo),
        )

    def take(self, index: NDArray[np.int64]) -> _Slices:
        return _Slices(*(np.take(getattr(self, f.name), index) for f in fields(self)))


SLICES_PER_GROUP = 16  # the coarse step of the actor cull (see ScanCaster._parts_near_slices)


@dataclass(frozen=True)
class _Pattern:
    """A scan's firing pattern with what the actor slices need, computed once per pattern.

    Rays are split into `slices` runs of consecutive rays (`fine`), and those into groups of
    `group_size` slices (`groups`) for a coarse first pass of the cull.
    """

    fire: BeamFiring
    offset: NDArray[np.int64]  # per ray
    times: NDArray[np.int64]  # distinct firing offsets, sorted
    inverse: NDArray[np.int64]  # per ray: index into times
    per_time: int  # rays per firing time when rays come grouped by time, equal counts; else 0
    beam_el: FloatArray | None  # (per_time,) ascending elevations shared by every firing time
    fine: _Slices
    groups: _Slices
    group_size: int

    @classmethod
    def of(cls, fire: BeamFiring, rolling_shutter: bool, slices: int) -> _Pattern:
        offset = fire.offset_ns if rolling_shutter else np.zeros_like(fire.offset_ns)
        times, inverse = np.unique(offset, return_inverse=True)
        n = len(offset)
        per_time = n // len(times)
        if not np.array_equal(inverse, np.repeat(np.arange(len(times)), per_time)):
            per_time = 0
        bounds = np.unique(np.linspace(0, n, slices + 1).round().astype(np.int64))
        group_bounds = np.unique(np.r_[bounds[::SLICES_PER_GROUP], bounds[-1]])
        d = fire.directions
        el = np.arcsin(np.clip(d[:, 2], -1.0, 1.0))
        beam_el = None
        if per_time:
            table = el.reshape(len(times), per_time)
            if np.all(table == table[0]) and np.all(np.diff(table[0]) >= 0):
                beam_el = table[0]
        return cls(
            fire,
            offset,
            times,
            inverse,
            per_time,
            beam_el,
            _Slices.of(d, el, inverse, bounds),
            _Slices.of(d, el, inverse, group_bounds),
            SLICES_PER_GROUP,
        )


def _wrap(angle: FloatArray) -> FloatArray:
    """Angles into [-pi, pi)."""
    out: FloatArray = (angle + np.pi) % (2 * np.pi) - np.pi
    return out
