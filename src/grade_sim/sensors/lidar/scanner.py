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

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from grade_common.types import FloatArray
from grade_sim.config.lidar import LidarPreset
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
        self._part_scenes = [
            InstanceScene([InstanceMesh(p.instance_id, p.triangles, p.reflectivity)], self.device)
            for p in parts
        ]

    def rays(
        self, stamp_ns: int, sensor_pose_at: SensorPoseAt
    ) -> tuple[BeamFiring, NDArray[np.int64], FloatArray, FloatArray]:
        """The scan's firing pattern, time offsets, and world ray origins and unit directions."""
        fire = firing(self.table, stamp_ns)
        offset = fire.offset_ns if self.rolling_shutter else np.zeros_like(fire.offset_ns)
        times, inverse = np.unique(offset, return_inverse=True)
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
        # Each part keeps its own Embree scene in its body frame: the rays move into the part's
        # frame (at their slice's pose) instead of its triangles into the world, and each part
        # is cast once per scan, with only the rays that can reach it before the static world.
        for p in np.flatnonzero(near.any(axis=0)):
            rows = np.concatenate([np.arange(lo[s], hi[s]) for s in np.flatnonzero(near[:, p])])
            sl = slice_of_ray[rows]
            oc = centres[sl, p] - origins[rows]
            t_proj = np.einsum("nk,nk->n", oc, dirs[rows])
            d2 = np.einsum("nk,nk->n", oc, oc) - t_proj**2
            r2 = self._part_radius[p] ** 2
            entry = t_proj - np.sqrt(np.maximum(r2 - d2, 0.0))
            reach = (d2 <= r2) & (t_proj + self._part_radius[p] > 0)
            reach &= entry < hits.range_m[rows]  # not hidden behind what the ray hit already
            rows, sl = rows[reach], sl[reach]
            if not len(rows):
                continue
            r_wp, p_wp = rot[sl, p], pos[sl, p]
            local_o = np.einsum("nji,nj->ni", r_wp, origins[rows] - p_wp)
            local_d = np.einsum("nji,nj->ni", r_wp, dirs[rows])
            moving = self._part_scenes[p].cast(local_o, local_d, self.table.range_max_m)
            hits.take_nearer(moving, rows)

    def _parts_in_cones(
        self,
        lo: NDArray[np.int64],
        hi: NDArray[np.int64],
        slice_of_ray: NDArray[np.int64],
        origins: FloatArray,
        dirs: FloatArray,
        centres: FloatArray,
    ) -> NDArray[np.bool_]:
        """(S, P): whether part p's bounding sphere meets slice s's cone of rays, the cone widened
        by how far the slice's ray origins spread (rolling shutter)."""
        count = (hi - lo)[:, None]
        apex = np.add.reduceat(origins, lo, axis=0) / count
        spread = np.maximum.reduceat(np.linalg.norm(origins - apex[slice_of_ray], axis=1), lo)
        axis = np.add.reduceat(dirs, lo, axis=0)
        axis /= np.maximum(np.linalg.norm(axis, axis=1, keepdims=True), 1e-12)
        cos_ray = np.einsum("nk,nk->n", dirs, axis[slice_of_ray])
        half_angle = np.arccos(np.clip(np.minimum.reduceat(cos_ray, lo), -1.0, 1.0))
        to_part = centres - apex[:, None]
        dist = np.linalg.norm(to_part, axis=2)
        radius = self._part_radius[None] + spread[:, None]
        cos_to = np.einsum("spk,sk->sp", to_part, axis) / np.maximum(dist, 1e-12)
        angle = np.arccos(np.clip(cos_to, -1.0, 1.0))
        reach = np.arcsin(np.clip(radius / np.maximum(dist, 1e-12), 0.0, 1.0))
        in_range = dist - radius < self.table.range_max_m
        out: NDArray[np.bool_] = (dist <= radius) | (
            (angle <= half_angle[:, None] + reach) & in_range
        )
        return out
