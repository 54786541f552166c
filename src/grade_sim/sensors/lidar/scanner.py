"""One scan: every ray from the sensor pose at its firing time, against the world and the actors.

Rolling shutter (LiDARsim): the rays of a sweep leave from the sensor pose at their own firing
time (the caller interpolates the ego pose between physics steps), and the moving parts (people's
body parts, flying objects, other robots) are re-posed `slices` times per sweep. Static geometry
is one Embree scene built once, and so is each moving part's, in its own body frame; per slice
only the parts that the slice's rays can reach (bounding sphere against the slice's cone of
rays, then against each ray) are cast, with those rays moved into the part's frame.
With `rolling_shutter` off every ray leaves at the scan stamp and sees one pose of the actors.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from grade_common.types import FloatArray
from grade_sim.config.lidar import LidarKind, LidarPreset
from grade_sim.sensors.lidar.beams import BeamFiring, firing
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
    ) -> None:
        self.table = table
        self.device = device if device is not None else EmbreeDevice()
        self.static_meshes = tuple(static_meshes)
        self.static = InstanceScene(static_meshes, self.device)
        self.parts = tuple(parts)
        self.slices = slices if rolling_shutter else 1
        self.rolling_shutter = rolling_shutter
        self._part_centre = np.array([p.centre for p in parts]).reshape(-1, 3)
        self._part_radius = np.array([p.radius_m for p in parts])
        self._pattern: (
            tuple[BeamFiring, NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]] | None
        ) = None
        self._part_scenes = [
            InstanceScene([InstanceMesh(p.instance_id, p.triangles, p.reflectivity)], self.device)
            for p in parts
        ]

    def rays(
        self, stamp_ns: int, sensor_pose_at: SensorPoseAt
    ) -> tuple[BeamFiring, NDArray[np.int64], FloatArray, FloatArray]:
        """The scan's firing pattern, time offsets, and world ray origins and unit directions."""
        if self._pattern is None or self.table.kind is LidarKind.SOLID_STATE:
            fire = firing(self.table, stamp_ns)
            offset = fire.offset_ns if self.rolling_shutter else np.zeros_like(fire.offset_ns)
            times, inverse = np.unique(offset, return_inverse=True)
            # Rotating lidars and 2D lasers repeat their pattern every sweep: computed once.
            self._pattern = (fire, offset, times, inverse)
        fire, offset, times, inverse = self._pattern
        pos, rot = sensor_pose_at(stamp_ns + times)
        origins = pos[inverse]
        dirs = np.einsum("nij,nj->ni", rot[inverse], fire.directions)
        return fire, offset, origins, dirs

    def cast(
        self, stamp_ns: int, sensor_pose_at: SensorPoseAt, part_poses_at: PartPosesAt
    ) -> RawScan:
        """The scan whose first ray fires at stamp_ns."""
        fire, offset, origins, dirs = self.rays(stamp_ns, sensor_pose_at)
        hits = self.static.cast(origins, dirs, self.table.range_max_m)
        if self.parts:
            self._cast_parts(stamp_ns, offset, origins, dirs, part_poses_at, hits)
        far = hits.range_m < self.table.range_min_m
        hits.range_m[far] = np.inf  # too close for the receiver: no return
        return RawScan(stamp_ns, fire, offset, hits)

    def _cast_parts(
        self,
        stamp_ns: int,
        offset: NDArray[np.int64],
        origins: FloatArray,
        dirs: FloatArray,
        part_poses_at: PartPosesAt,
        hits: Hits,
    ) -> None:
        bounds = np.unique(np.linspace(0, len(offset), self.slices + 1).round().astype(np.int64))
        lo, hi = bounds[:-1], bounds[1:]
        pos, rot = part_poses_at(stamp_ns + offset[(lo + hi - 1) // 2])  # every slice at once
        centres = np.einsum("spij,pj->spi", rot, self._part_centre) + pos  # (S, P, 3)
        slice_of_ray = np.repeat(np.arange(len(lo)), hi - lo)
        near = self._parts_in_cones(lo, hi, slice_of_ray, origins, dirs, centres)
        # Every (ray, part) pair whose slice cone meets the part, as flat arrays.
        pair_s, pair_p = np.nonzero(near)
        if not len(pair_s):
            return
        count = (hi - lo)[pair_s]
        first = np.repeat(lo[pair_s] - np.cumsum(count) + count, count)
        rows = first + np.arange(int(count.sum()))
        parts = np.repeat(pair_p, count)
        sl = np.repeat(pair_s, count)
        # Exact ray-sphere test, and not hidden behind what the ray hit already.
        oc = centres[sl, parts] - origins[rows]
        t_proj = np.einsum("nk,nk->n", oc, dirs[rows])
        d2 = np.einsum("nk,nk->n", oc, oc) - t_proj**2
        radius = self._part_radius[parts]
        entry = t_proj - np.sqrt(np.maximum(radius**2 - d2, 0.0))
        keep = (d2 <= radius**2) & (t_proj + radius > 0) & (entry < hits.range_m[rows])
        rows, parts, sl = rows[keep], parts[keep], sl[keep]
        if not len(rows):
            return
        # Each part keeps its own Embree scene in its body frame: the rays move into the part's
        # frame (at their slice's pose) instead of its triangles into the world, and each part
        # is cast once per scan.
        r_wp, p_wp = rot[sl, parts], pos[sl, parts]
        local_o = np.einsum("nji,nj->ni", r_wp, origins[rows] - p_wp)
        local_d = np.einsum("nji,nj->ni", r_wp, dirs[rows])
        order = np.argsort(parts, kind="stable")
        bounds_p = np.flatnonzero(np.r_[True, np.diff(parts[order]) != 0, True])
        for a, b in itertools.pairwise(bounds_p):
            idx = order[a:b]
            p = int(parts[idx[0]])
            moving = self._part_scenes[p].cast(local_o[idx], local_d[idx], self.table.range_max_m)
            hits.take_nearer(moving, rows[idx])

    def _parts_in_cones(
        self,
        lo: NDArray[np.int64],
        hi: NDArray[np.int64],
        slice_of_ray: NDArray[np.int64],
        origins: FloatArray,
        dirs: FloatArray,
        centres: FloatArray,
    ) -> NDArray[np.bool_]:
        """(S, P): whether part p's bounding sphere can meet a ray of slice s.

        The test is on azimuth and elevation intervals around each slice's mean direction
        (a rotating lidar's slice is tall and thin, so a cone would let far too much through);
        spheres are widened by how far the slice's ray origins spread (rolling shutter).
        """
        count = (hi - lo)[:, None]
        apex = np.add.reduceat(origins, lo, axis=0) / count
        spread = np.maximum.reduceat(np.linalg.norm(origins - apex[slice_of_ray], axis=1), lo)
        mean = np.add.reduceat(dirs, lo, axis=0)
        mean_az = np.arctan2(mean[:, 1], mean[:, 0])
        rel_az = _wrap(np.arctan2(dirs[:, 1], dirs[:, 0]) - mean_az[slice_of_ray])
        el = np.arcsin(np.clip(dirs[:, 2], -1.0, 1.0))
        az_lo, az_hi = np.minimum.reduceat(rel_az, lo), np.maximum.reduceat(rel_az, lo)
        el_lo, el_hi = np.minimum.reduceat(el, lo), np.maximum.reduceat(el, lo)
        to_part = centres - apex[:, None]
        dist = np.linalg.norm(to_part, axis=2)
        flat = np.hypot(to_part[..., 0], to_part[..., 1])
        radius = self._part_radius[None] + spread[:, None]
        ang_el = np.arcsin(np.clip(radius / np.maximum(dist, 1e-12), 0.0, 1.0))
        # Seen from above or below, a sphere spans every azimuth.
        ang_az = np.where(
            flat > radius, np.arcsin(np.clip(radius / np.maximum(flat, 1e-12), 0.0, 1.0)), np.pi
        )
        p_az = _wrap(np.arctan2(to_part[..., 1], to_part[..., 0]) - mean_az[:, None])
        p_el = np.arcsin(np.clip(to_part[..., 2] / np.maximum(dist, 1e-12), -1.0, 1.0))
        overlap = (
            (p_az + ang_az >= az_lo[:, None])
            & (p_az - ang_az <= az_hi[:, None])
            & (p_el + ang_el >= el_lo[:, None])
            & (p_el - ang_el <= el_hi[:, None])
            & (dist - radius < self.table.range_max_m)
        )
        out: NDArray[np.bool_] = (dist <= radius) | overlap
        return out


def _wrap(angle: FloatArray) -> FloatArray:
    """Angles into [-pi, pi)."""
    out: FloatArray = (angle + np.pi) % (2 * np.pi) - np.pi
    return out
