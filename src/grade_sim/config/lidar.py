"""LiDAR and 2D laser scanners in the scenario: presets, custom beam tables, returns, ray drop.

A lidar is mounted on a robot link like a camera (`robots[i].lidars`). A `preset` fills in the
beam table, rate and range limits of a known sensor; any of those fields written in the file
overrides the preset; `preset: custom` takes them all from the file. Everything random about a
lidar (range noise, ray drop, reflectivity jitter) is drawn from the scenario's seed.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

from grade_common.errors import ConfigError
from grade_common.names import ros_name
from grade_common.schema import bounds
from grade_sim.config.mount import MountConfig


class LidarKind(enum.Enum):
    ROTATING = "rotating"  # multi-beam spinning lidar: beams x azimuth columns per sweep
    SOLID_STATE = "solid_state"  # Livox-like non-repetitive rosette pattern, forward-looking
    LASER_2D = "laser_2d"  # planar scanner (sensor_msgs/LaserScan)


class ReturnMode(enum.Enum):
    """Which echo of a divergent beam is reported when its sub-rays' echoes stay apart."""

    STRONGEST = "strongest"
    FIRST = "first"
    LAST = "last"


class RayDropKind(enum.Enum):
    NONE = "none"
    PHYSICS = "physics"  # range, incidence, reflectivity and a random baseline
    LEARNED = "learned"  # a model fitted by `grade lidar fit-raydrop` (ray_drop_model: file)


@dataclass(frozen=True)
class LidarPreset:
    """A known sensor's beam table and limits (datasheet values)."""

    kind: LidarKind
    elevations_deg: tuple[float, ...]
    columns: int  # azimuth steps per sweep (rotating, 2D) or points per frame (solid state)
    fov_deg: float  # horizontal field of view (rotating: 360), solid state: cone diameter
    rate_hz: float
    range_min_m: float
    range_max_m: float


def _uniform(low: float, high: float, n: int) -> tuple[float, ...]:
    step = (high - low) / (n - 1)
    return tuple(round(low + i * step, 6) for i in range(n))


PRESETS: dict[str, LidarPreset] = {
    # Velodyne VLP-16: 16 beams -15..+15 deg every 2 deg, 0.2 deg at 10 Hz, 100 m.
    "vlp16": LidarPreset(
        LidarKind.ROTATING, _uniform(-15.0, 15.0, 16), 1800, 360.0, 10.0, 0.4, 100.0
    ),
    # Velodyne HDL-32E: 32 beams -30.67..+10.67 deg, ~0.16 deg at 10 Hz, 100 m.
    "hdl32e": LidarPreset(
        LidarKind.ROTATING, _uniform(-30.67, 10.67, 32), 2250, 360.0, 10.0, 1.0, 100.0
    ),
    # Velodyne HDL-64E (LiDARsim's sensor): 64 beams +2..-24.9 deg, 2048 steps at 10 Hz, 120 m.
    "hdl64e": LidarPreset(
        LidarKind.ROTATING, _uniform(-24.9, 2.0, 64), 2048, 360.0, 10.0, 0.9, 120.0
    ),
    # Ouster OS1-64 / OS1-128: 45 deg vertical field, 2048 columns at 10 Hz, 120 m.
    "os1_64": LidarPreset(
        LidarKind.ROTATING, _uniform(-22.5, 22.5, 64), 2048, 360.0, 10.0, 0.3, 120.0
    ),
    "os1_128": LidarPreset(
        LidarKind.ROTATING, _uniform(-22.5, 22.5, 128), 2048, 360.0, 10.0, 0.3, 120.0
    ),
    # Livox Mid-40-like: 38.4 deg circular field, 100k points/s, non-repetitive rosette.
    "livox_mid40": LidarPreset(LidarKind.SOLID_STATE, (0.0,), 10000, 38.4, 10.0, 0.1, 260.0),
    # Hokuyo UTM-30LX: 270 deg, 0.25 deg steps (1081 beams), 40 Hz, 0.1-30 m.
    "utm30lx": LidarPreset(LidarKind.LASER_2D, (0.0,), 1081, 270.0, 40.0, 0.1, 30.0),
}
CUSTOM = "custom"


@dataclass(frozen=True)
class LidarConfig:
    """One lidar or laser scanner on a robot; None fields come from the preset."""

    # The lidar's topic token and folder name.
    name: str = field(default="lidar", metadata=ros_name())
    preset: str = "vlp16"  # a key of PRESETS, or "custom" (every field below is then required)
    # rotating, solid_state or laser_2d; null: the preset's.
    kind: LidarKind | None = None
    # Beam elevations; null: the preset's.
    elevations_deg: tuple[float, ...] | None = field(default=None, metadata=bounds(-90.0, 90.0))
    # Azimuth steps per sweep; null: the preset's.
    columns: int | None = field(default=None, metadata=bounds(1, 100000))
    # Horizontal field of view; null: the preset's.
    fov_deg: float | None = field(default=None, metadata=bounds(1.0, 360.0))
    # Sweeps per simulated second; null: the preset's.
    rate_hz: float | None = field(default=None, metadata=bounds(0.1, 2000.0))
    # Nearest return; null: the preset's.
    range_min_m: float | None = field(default=None, metadata=bounds(0.0, 10000.0))
    # Farthest return; null: the preset's.
    range_max_m: float | None = field(default=None, metadata=bounds(0.0, 10000.0))
    mount: MountConfig = field(default_factory=lambda: MountConfig(xyz=(0.0, 0.0, 0.15)))
    # False: every ray of a scan leaves from the pose at the scan stamp and sees the actors
    # there (a motion-free scan, for comparison); True: each ray at its own firing time.
    rolling_shutter: bool = True
    # Moving parts move linearly between poses at most this many + 1 times per sweep, on
    # physics steps (Embree motion blur; at most 128). LiDARsim re-posed its actors in ~360
    # constant slices; on the default scenario 8 (7 segments of 4 steps at 240 Hz) keeps 99 %
    # of hits on walking people within 2.1 mm of per-step poses (docs/lidar.md,
    # scripts/lidar_motion_accuracy.py).
    actor_slices: int = field(default=8, metadata=bounds(1, 128))
    # Curved surfaces (spheres, capsules, cylinders, ellipsoids) become triangle meshes with this
    # many segments around; the chord error is r * (1 - cos(pi / segments)).
    mesh_segments: int = field(default=32, metadata=bounds(8, 1024))
    # Standard deviation of the range noise.
    range_noise_m: float = field(default=0.01, metadata=bounds(0.0, 10.0))
    # Random change of each return's reflectivity.
    reflectivity_jitter: float = field(default=0.1, metadata=bounds(0.0, 1.0))
    # How returns are dropped: none, physics or learned.
    ray_drop: RayDropKind = RayDropKind.PHYSICS
    # Drop probability of every ray before the physics terms.
    drop_baseline: float = field(default=0.1, metadata=bounds(0.0, 1.0))
    ray_drop_model: str | None = None  # a file from `grade lidar fit-raydrop` (ray_drop: learned)
    # Beam divergence (full cone angle; 0: ideal thin rays). Each beam is then cast as
    # `beam_subrays` sub-rays whose echoes combine (grade_sim/sensors/lidar/divergence.py):
    # echoes within `echo_merge_m` in range merge (mixed pixels), otherwise `return_mode` picks.
    beam_divergence_mrad: float = field(default=0.0, metadata=bounds(0.0, 100.0))
    # Sub-rays per divergent beam.
    beam_subrays: int = field(default=7, metadata=bounds(3, 64))
    # Echoes of one beam closer in range than this merge.
    echo_merge_m: float = field(default=0.3, metadata=bounds(0.0, 100.0))
    # Which echo a divergent beam reports: strongest, first or last.
    return_mode: ReturnMode = ReturnMode.STRONGEST

    def validate(self, path: str) -> None:
        if self.preset != CUSTOM and self.preset not in PRESETS:
            raise ConfigError(
                f"{path}.preset: unknown preset {self.preset!r}; allowed "
                f"{[*sorted(PRESETS), CUSTOM]}"
            )
        if self.preset == CUSTOM:
            missing = [
                f
                for f in (
                    "kind",
                    "elevations_deg",
                    "columns",
                    "fov_deg",
                    "rate_hz",
                    "range_min_m",
                    "range_max_m",
                )
                if getattr(self, f) is None
            ]
            if missing:
                raise ConfigError(f"{path}: preset 'custom' needs {missing} in the file")
        table = self.resolved()
        if not table.elevations_deg:
            raise ConfigError(f"{path}.elevations_deg: the beam table is empty; give >= 1 beam")
        if table.range_max_m <= table.range_min_m:
            raise ConfigError(
                f"{path}.range_max_m: {table.range_max_m} must be above range_min_m "
                f"{table.range_min_m}"
            )
        if table.kind is LidarKind.LASER_2D and len(table.elevations_deg) != 1:
            raise ConfigError(
                f"{path}.elevations_deg: a 2D laser has one beam, got {len(table.elevations_deg)}"
            )
        if self.ray_drop is RayDropKind.LEARNED and not self.ray_drop_model:
            raise ConfigError(f"{path}.ray_drop_model: required when {path}.ray_drop is 'learned'")

    def resolved(self) -> LidarPreset:
        """The beam table and limits: the preset's, with the fields given in the file on top."""
        base = PRESETS.get(self.preset)

        def pick(name: str) -> object:
            own = getattr(self, name)
            return own if own is not None or base is None else getattr(base, name)

        return LidarPreset(
            kind=pick("kind"),  # type: ignore[arg-type]
            elevations_deg=tuple(pick("elevations_deg")),  # type: ignore[arg-type]
            columns=pick("columns"),  # type: ignore[arg-type]
            fov_deg=pick("fov_deg"),  # type: ignore[arg-type]
            rate_hz=pick("rate_hz"),  # type: ignore[arg-type]
            range_min_m=pick("range_min_m"),  # type: ignore[arg-type]
            range_max_m=pick("range_max_m"),  # type: ignore[arg-type]
        )
