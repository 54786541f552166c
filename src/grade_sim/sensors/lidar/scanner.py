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
from grade_sim.config.lidar import LidarPreset
from grade_sim.sensors.lidar.beams import BeamFiring, firing
from grade_sim.sensors.lidar.raycast import EmbreeDevice, Hits, InstanceMesh, InstanceScene

# times (n,) ns -> positions (n, 3) and rotations (n, 3, 3) of the sensor in the world
SensorPoseAt = Callable[[NDArray[np.int64]], tuple[FloatArray, FloatArray]]
# time ns -> positions (m, 3) and rotations (m, 3, 3) of every moving part, in parts order
PartPosesAt = Callable[[int], tuple[FloatArray, FloatArray]]


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

    def cast(
        self, stamp_ns: int, sensor_pose_at: SensorPoseAt, part_poses_at: PartPosesAt
    ) -> RawScan:
        """The scan whose first ray fires at stamp_ns."""
        fire = firing(self.table, stamp_ns)
        offset = fire.offset_ns if self.rolling_shutter else np.zeros_like(fire.offset_ns)
        times, inverse = np.unique(offset, return_inverse=True)
        pos, rot = sensor_pose_at(stamp_ns + times)
        origins = pos[inverse]
        dirs = np.einsum("nij,nj->ni", rot[inverse], fire.directions)
        hits = self.static.cast(origins, dirs, self.table.range_max_m)
        if self.parts:
            bounds = np.linspace(0, len(offset), self.slices + 1).round().astype(np.int64)
            for lo, hi in itertools.pairwise(bounds):
                if hi > lo:
                    rows = np.arange(lo, hi)
                    t_ns = stamp_ns + int(offset[(lo + hi - 1) // 2])
                    self._cast_parts(rows, origins[lo:hi], dirs[lo:hi], t_ns, part_poses_at, hits)
        far = hits.range_m < self.table.range_min_m
        hits.range_m[far] = np.inf  # too close for the receiver: no return
        return RawScan(stamp_ns, fire, offset, hits)

    def _cast_parts(
        self,
        rows: NDArray[np.int64],
        origins: FloatArray,
        dirs: FloatArray,
        t_ns: int,
        part_poses_at: PartPosesAt,
        hits: Hits,
    ) -> None:
        pos, rot = part_poses_at(t_ns)
        centres = np.einsum("pij,pj->pi", rot, self._part_centre) + pos
        # Cone of the slice's rays, widened by how far their origins spread (rolling shutter).
        apex = origins.mean(axis=0)
        spread = float(np.linalg.norm(origins - apex, axis=1).max())
        axis = dirs.sum(axis=0)
        axis /= max(float(np.linalg.norm(axis)), 1e-12)
        half_angle = float(np.arccos(np.clip(dirs @ axis, -1.0, 1.0)).max())
        to_part = centres - apex
        dist = np.linalg.norm(to_part, axis=1)
        radius = self._part_radius + spread
        inside = dist <= radius
        cos_to = (to_part @ axis) / np.maximum(dist, 1e-12)
        angle = np.arccos(np.clip(cos_to, -1.0, 1.0))
        reach = np.arcsin(np.clip(radius / np.maximum(dist, 1e-12), 0.0, 1.0))
        near = inside | ((angle <= half_angle + reach) & (dist - radius < self.table.range_max_m))
        candidates = np.flatnonzero(near)
        if not len(candidates):
            return
        # Exact ray-sphere test: only rays that can reach a candidate are cast.
        oc = centres[candidates][None] - origins[:, None]  # (m, c, 3)
        t_proj = np.einsum("mck,mk->mc", oc, dirs)
        d2 = np.einsum("mck,mck->mc", oc, oc) - t_proj**2
        r = self._part_radius[candidates][None]
        reach_rays = (d2 <= r**2) & (t_proj + r > 0)
        # Each part keeps its own Embree scene in its body frame: the rays move into the part's
        # frame instead of the part's triangles into the world (no rebuild per slice).
        for col, p in enumerate(candidates):
            sel = np.flatnonzero(reach_rays[:, col])
            if not len(sel):
                continue
            r_t = rot[p].T
            local_o = (origins[sel] - pos[p]) @ r_t.T
            local_d = dirs[sel] @ r_t.T
            moving = self._part_scenes[p].cast(local_o, local_d, self.table.range_max_m)
            hits.take_nearer(moving, rows[sel])
