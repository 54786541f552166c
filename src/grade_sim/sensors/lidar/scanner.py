"""One scan: every ray from the sensor pose at its firing time, against the world and the actors.

Rolling shutter (LiDARsim): the rays of a sweep leave from the sensor pose at their own firing
time (the caller interpolates the ego pose between physics steps), and see the moving parts
(people's body parts, flying objects, other robots) where they are at that time. LiDARsim
re-poses the actors in ~360 slices per sweep; here Embree's multi-segment motion blur does it
continuously: each part is an instance of its own scene (its triangles in its body frame, built
once) whose transform is given at `slices` + 1 evenly spaced times of the sweep, and Embree
interpolates linearly between them for each ray's firing time. The static world is a flat
scene of its own, built once. Per scan only the parts' transforms change, so only the parts'
scene of a few hundred instances is rebuilt, and one compiled pass (scan_kernel) builds each
ray, casts it through the static world and then the parts up to that hit, and decodes it.
With `rolling_shutter` off every ray leaves at the scan stamp and sees one pose of the actors.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from grade_common.types import FloatArray
from grade_sim.config.lidar import LidarKind, LidarPreset
from grade_sim.engine.raycast import Hits, InstanceMesh
from grade_sim.sensors.lidar import embree_api
from grade_sim.sensors.lidar.beams import BeamFiring, firing
from grade_sim.sensors.lidar.divergence import Bundles, Footprint, combine, expand
from grade_sim.sensors.schedule import stamp_ns_of, step_stamps_ns, steps_at_or_before

# times (n,) ns -> positions (n, 3) and rotations (n, 3, 3) of the sensor in the world
SensorPoseAt = Callable[[NDArray[np.int64]], tuple[FloatArray, FloatArray]]
# times (s,) ns -> positions (s, m, 3) and rotations (s, m, 3, 3) of every moving part (parts
# order) at each time
PartPosesAt = Callable[[NDArray[np.int64]], tuple[FloatArray, FloatArray]]

# Embree takes at most 129 time steps per instance: 128 segments of linear motion per sweep.
MAX_SLICES = embree_api.MAX_TIME_STEPS - 1


@dataclass(frozen=True)
class MovingPart:
    """A rigid moving mesh in its body frame."""

    instance_id: int
    triangles: FloatArray  # (n, 3, 3) in the body frame
    reflectivity: FloatArray  # (n,)


@dataclass
class RawScan:
    """The rays of one scan and what each hit (range inf: none)."""

    stamp_ns: int  # firing time of the first ray
    firing: BeamFiring
    offset_ns: NDArray[np.int64]  # per ray, after stamp_ns (all 0 without rolling shutter)
    hits: Hits
    position_world_sensor: FloatArray  # (3,) at stamp_ns
    rotation_world_sensor: FloatArray  # (3, 3) at stamp_ns


def _reflectivity_table(
    meshes: Sequence[InstanceMesh | MovingPart],
) -> tuple[NDArray[np.int64], FloatArray]:
    """Every mesh's triangle reflectivities in one table, and each mesh's first row."""
    sizes = np.array([len(m.triangles) for m in meshes], dtype=np.int64)
    rows = np.concatenate(
        [np.asarray(m.reflectivity, dtype=np.float64) for m in meshes] or [np.zeros(0)]
    )
    return np.cumsum(sizes) - sizes, rows


class ScanCaster:
    """Casts the scans of one lidar against static meshes and moving parts (the caller leaves
    out the robot's own body)."""

    def __init__(
        self,
        table: LidarPreset,
        static_meshes: Sequence[InstanceMesh],
        parts: Sequence[MovingPart],
        *,
        slices: int,
        rolling_shutter: bool,
        footprint: Footprint | None = None,
        physics_hz: float | None = None,
    ) -> None:
        """slices: at most this many linear motion segments per sweep for the moving parts.
        physics_hz: the rate at which part_poses_at knows poses exactly; the segments then
        start and end on physics steps (a whole number of steps each), so a scan asks for the
        parts' poses at slices + 1 steps and never between two (where each would cost two)."""
        from grade_sim.sensors.lidar import scan_kernel  # compiles (or loads) on first use

        self._kernel = scan_kernel
        self.table = table
        self.footprint = footprint
        self._bundles: Bundles | None = None
        self.static_meshes = tuple(m for m in static_meshes if len(m.triangles))
        self.parts = tuple(parts)
        self.rolling_shutter = rolling_shutter
        self._physics_hz = physics_hz
        self._beams = firing(table, 0)
        span_ns = int(self._beams.offset_ns.max(initial=0)) if rolling_shutter else 0
        self.slices, self._steps_per_slice = _segments(min(slices, MAX_SLICES), span_ns, physics_hz)
        self._steps = self.slices + 1 if span_ns > 0 else 1
        self._device = embree_api.Device()
        dev = self._device
        self._static = dev.scene()
        for mesh in self.static_meshes:
            dev.triangles(self._static, mesh.triangles)  # geomID = index in static_meshes
        dev.commit(self._static, "building the static world's scene")
        # Instance p of the parts' scene: moving part p, its own scene in its body frame.
        self._parts_scene = dev.scene(dynamic=True) if self.parts else 0
        handles = []
        for part in self.parts:
            scene = dev.scene()
            dev.triangles(scene, part.triangles)
            dev.commit(scene, f"building moving part {part.instance_id}'s scene")
            handles.append(dev.instance(self._parts_scene, scene, self._steps))
        self._part_geoms = np.array(handles, dtype=np.uint64)
        self._static_instance = np.array(
            [m.instance_id for m in self.static_meshes], dtype=np.uint16
        )
        self._static_first_row, self._static_reflectivity = _reflectivity_table(self.static_meshes)
        self._part_instance = np.array([p.instance_id for p in self.parts], dtype=np.uint16)
        self._part_first_row, self._part_reflectivity = _reflectivity_table(self.parts)
        self._packet, self._valid = embree_api.packet_buffer()
        self._pattern: _Pattern | None = None

    def close(self) -> None:
        """Releases the Embree scenes (also done when the caster is collected)."""
        self._device.close()

    def _pattern_of(self, stamp_ns: int) -> _Pattern:
        if self._pattern is None or self.table.kind is LidarKind.SOLID_STATE:
            # Rotating lidars and 2D lasers repeat their pattern every sweep: computed once.
            fire = firing(self.table, stamp_ns)
            self._beams = fire
            if self.footprint is not None:
                # A divergent beam is a bundle of sub-rays: they are the rays cast.
                self._bundles = expand(fire, self.footprint)
                fire = self._bundles.fire
            self._pattern = _Pattern.of(fire, self.rolling_shutter)
        return self._pattern

    def part_pose_times(self, stamp_ns: int) -> NDArray[np.int64] | None:
        """The times at which `cast(stamp_ns, ...)` will ask for the moving parts' poses, when
        they are known without changing the caster (it may be casting on another thread): a
        rotating lidar's or a 2D laser's pattern, made at its first scan, repeats every sweep.
        None before the first scan and for solid-state lidars (a pattern per scan)."""
        pattern = self._pattern
        if pattern is None or self.table.kind is LidarKind.SOLID_STATE:
            return None
        return self._pose_times(stamp_ns, pattern.span_ns)

    def rays(
        self, stamp_ns: int, sensor_pose_at: SensorPoseAt
    ) -> tuple[BeamFiring, NDArray[np.int64], FloatArray, FloatArray]:
        """The scan's firing pattern, time offsets, and world ray origins and unit directions
        (what the scan casts; for comparisons such as `grade bench lidar`)."""
        pattern = self._pattern_of(stamp_ns)
        pos, rot = sensor_pose_at(stamp_ns + pattern.times)
        origins = np.take(pos, pattern.inverse, axis=0)
        dirs = np.einsum("nij,nj->ni", rot[pattern.inverse], pattern.fire.directions)
        return pattern.fire, pattern.offset, origins, dirs

    def cast(
        self, stamp_ns: int, sensor_pose_at: SensorPoseAt, part_poses_at: PartPosesAt
    ) -> RawScan:
        """The scan whose first ray fires at stamp_ns."""
        pattern = self._pattern_of(stamp_ns)
        pos, rot = sensor_pose_at(stamp_ns + pattern.times)
        steps = self._steps
        m = len(self.parts)
        part_rot = np.zeros((m, steps, 3, 3))
        at = self._pose_times(stamp_ns, pattern.span_ns)
        if m:
            p_pos, p_rot = part_poses_at(at)
            part_rot = np.ascontiguousarray(p_rot.transpose(1, 0, 2, 3))
            # 3x4 column-major per part and time step: the rotation's columns, then the origin.
            xfm = np.concatenate(
                [part_rot.transpose(0, 1, 3, 2).reshape(m, steps, 9), p_pos.transpose(1, 0, 2)],
                axis=2,
            )
            self._kernel.set_transforms(
                self._part_geoms, np.ascontiguousarray(xfm, dtype=np.float32)
            )
            self._device.commit(self._parts_scene, "rebuilding the moving parts' scene")
        n = len(pattern.offset)
        hits = Hits(np.empty(n), np.empty(n, np.uint16), np.empty(n), np.empty(n))
        self._kernel.cast(
            self._static,
            self._parts_scene,
            pattern.directions,
            pattern.inverse,
            np.ascontiguousarray(pos, dtype=np.float64),
            np.ascontiguousarray(rot, dtype=np.float64),
            pattern.offset,
            float(stamp_ns - at[0]),
            float(at[-1] - at[0]),
            # Sub-rays combine first; the receiver's minimum range applies to the combined echo.
            0.0 if self._bundles is not None else float(self.table.range_min_m),
            float(self.table.range_max_m),
            self._static_instance,
            self._static_first_row,
            self._static_reflectivity,
            self._part_instance,
            self._part_first_row,
            self._part_reflectivity,
            part_rot,
            self._packet,
            self._valid,
            hits.range_m,
            hits.instance_id,
            hits.cos_incidence,
            hits.reflectivity,
        )
        if self._bundles is not None and self.footprint is not None:
            hits = combine(hits, self._bundles, self.footprint)
            far = hits.range_m < self.table.range_min_m
            hits.range_m[far] = np.inf  # too close for the receiver: no return
        beams = self._beams
        offset = beams.offset_ns if self.rolling_shutter else np.zeros_like(beams.offset_ns)
        # times[0] is the first ray's offset, 0: the pose at the stamp.
        return RawScan(stamp_ns, beams, offset, hits, pos[0], rot[0])

    def _pose_times(self, stamp_ns: int, span_ns: int) -> NDArray[np.int64]:
        """The times of the moving parts' motion-blur steps for a scan (ns): evenly spaced,
        covering the sweep; on physics steps when the physics rate is known, the last one on
        the first step at or after the sweep's last ray (never a step the simulation has not
        reached when the scan is taken)."""
        steps = self._steps
        if steps == 1:
            return np.array([stamp_ns], dtype=np.int64)
        if self._physics_hz is None:
            return (stamp_ns + (np.arange(steps) * span_ns) // (steps - 1)).astype(np.int64)
        hz = self._physics_hz
        end = np.array([stamp_ns + span_ns], dtype=np.int64)
        before = int(steps_at_or_before(end, hz)[0])
        last = before if stamp_ns_of(before, hz) == end[0] else before + 1
        q = self._steps_per_slice
        return step_stamps_ns(last - (steps - 1 - np.arange(steps)) * q, hz)


def _segments(slices: int, span_ns: int, physics_hz: float | None) -> tuple[int, int]:
    """Motion segments per sweep and physics steps per segment (0: not on physics steps)."""
    if physics_hz is None or span_ns <= 0:
        return slices, 0
    # A sweep that starts just before a physics step reaches into one more step.
    reach = math.ceil(span_ns * physics_hz / 1e9 - 1e-9) + 1
    per = math.ceil(reach / slices)
    return math.ceil(reach / per), per


@dataclass(frozen=True)
class _Pattern:
    """A scan's firing pattern with what the kernel needs, computed once per pattern."""

    fire: BeamFiring
    directions: FloatArray  # fire.directions, C-contiguous float64 (the kernel's layout)
    offset: NDArray[np.int64]  # per ray
    times: NDArray[np.int64]  # distinct firing offsets, sorted
    inverse: NDArray[np.int64]  # per ray: index into times
    span_ns: int  # last firing offset

    @classmethod
    def of(cls, fire: BeamFiring, rolling_shutter: bool) -> _Pattern:
        offset = fire.offset_ns if rolling_shutter else np.zeros_like(fire.offset_ns)
        times, inverse = np.unique(offset, return_inverse=True)
        return cls(
            fire,
            np.ascontiguousarray(fire.directions, dtype=np.float64),
            offset,
            times,
            inverse.astype(np.int64),
            int(offset.max(initial=0)),
        )
