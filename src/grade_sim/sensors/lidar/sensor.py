"""A lidar as a whole (engine-agnostic core): rays cast, then returns with noise and ray drop.

Randomness: one generator per scan, seeded from (seed, scan stamp), so a scan does not depend on
how many scans came before it, and the same seed gives byte-identical scans.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from grade_common.rotations import matrix_to_quat
from grade_common.types import Float32Array, FloatArray
from grade_sim.config.lidar import LidarConfig, RayDropKind
from grade_sim.engine.raycast import InstanceMesh
from grade_sim.sensors.lidar.beams import BeamFiring
from grade_sim.sensors.lidar.cloud import POINT_DTYPE, LidarScan
from grade_sim.sensors.lidar.divergence import Footprint
from grade_sim.sensors.lidar.learned_drop import LearnedRayDrop
from grade_sim.sensors.lidar.returns import NoRayDrop, PhysicsRayDrop, RayDropModel
from grade_sim.sensors.lidar.scanner import (
    MovingPart,
    PartPosesAt,
    RawScan,
    ScanCaster,
    SensorPoseAt,
)


def footprint_of(config: LidarConfig) -> Footprint | None:
    """The beams' cone, or None for ideal thin rays (no divergence)."""
    if config.beam_divergence_mrad <= 0.0:
        return None
    return Footprint(
        config.beam_divergence_mrad * 1e-3,
        config.beam_subrays,
        config.echo_merge_m,
        config.return_mode,
    )


def ray_drop_model(config: LidarConfig) -> RayDropModel:
    table = config.resolved()
    if config.ray_drop is RayDropKind.PHYSICS:
        return PhysicsRayDrop(table.range_max_m, config.drop_baseline)
    if config.ray_drop is RayDropKind.LEARNED:
        return LearnedRayDrop.load(Path(config.ray_drop_model or ""))
    return NoRayDrop()


@dataclass(frozen=True)
class ScanResult:
    scan: LidarScan
    raw: RawScan
    returned: NDArray[np.bool_]  # per ray: hit, in range and not dropped


class LidarSensor:
    """Casts scans and turns the hits into returns (points with intensity, labels, time)."""

    def __init__(
        self,
        config: LidarConfig,
        static_meshes: Sequence[InstanceMesh],
        parts: Sequence[MovingPart],
        class_of_instance: NDArray[np.uint16],
        seed: int,
        physics_hz: float | None = None,
    ) -> None:
        """physics_hz: the rate at which part poses are known exactly (see ScanCaster)."""
        self.config = config
        self.table = config.resolved()
        self.caster = ScanCaster(
            self.table,
            static_meshes,
            parts,
            slices=config.actor_slices,
            rolling_shutter=config.rolling_shutter,
            footprint=footprint_of(config),
            physics_hz=physics_hz,
        )
        self.drop = ray_drop_model(config)
        self.class_of_instance = class_of_instance
        self.seed = seed
        self._dirs32: tuple[BeamFiring, Float32Array] | None = None

    def _directions32(self, fire: BeamFiring) -> Float32Array:
        """The firing's directions in float32 (the points' precision), kept while the pattern
        repeats (every sweep of a rotating lidar)."""
        if self._dirs32 is None or self._dirs32[0] is not fire:
            self._dirs32 = (fire, fire.directions.astype(np.float32))
        return self._dirs32[1]

    def scan(
        self,
        stamp_ns: int,
        sensor_pose_at: SensorPoseAt,
        part_poses_at: PartPosesAt,
    ) -> ScanResult:
        """One scan."""
        from grade_sim.sensors.lidar import scan_kernel

        raw = self.caster.cast(stamp_ns, sensor_pose_at, part_poses_at)
        hits = raw.hits
        n = len(hits.range_m)
        rng = np.random.default_rng([self.seed, stamp_ns])
        # Noise and drops are drawn for every ray, misses too (their range stays inf, their
        # drop probability is 1), so each ray's draws do not depend on what the others hit.
        sigma = self.config.range_noise_m
        noise = rng.standard_normal(n, dtype=np.float32) if sigma > 0.0 else np.zeros(0, np.float32)
        p_drop = self.drop.drop_probability(hits.range_m, hits.cos_incidence, hits.reflectivity)
        drop_draw = rng.random(n, dtype=np.float32)
        # Zeroed, not empty: the two padding bytes of each point go into messages and files.
        points = np.zeros(n, dtype=POINT_DTYPE)
        returned = np.empty(n, dtype=np.bool_)
        count = scan_kernel.returns(
            hits.range_m,
            hits.instance_id,
            hits.cos_incidence,
            hits.reflectivity,
            noise,
            sigma,
            drop_draw,
            p_drop,
            self._directions32(raw.firing),
            raw.offset_ns,
            raw.firing.ring,
            self.class_of_instance,
            points,
            returned,
        )
        points = points[:count]
        scan = LidarScan(
            stamp_ns,
            points,
            raw.position_world_sensor,
            matrix_to_quat(raw.rotation_world_sensor),
        )
        return ScanResult(scan, raw, returned)


def luminance(rgba: FloatArray) -> float:
    """Reflectivity proxy of a colour (Rec. 709 luma of its linear RGB)."""
    return float(0.2126 * rgba[0] + 0.7152 * rgba[1] + 0.0722 * rgba[2])
