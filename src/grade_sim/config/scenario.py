"""The scenario file: one YAML document describing the world, robots, sensors, actors and rates.

Loaded once and validated completely at start-up; every error names the key path, the value and
what is allowed. All randomness downstream is drawn from one generator seeded by `seed`.
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from grade_common.bagfile.compression import Compression
from grade_common.errors import ConfigError
from grade_common.names import check_ros_name, ros_name
from grade_common.overrides import apply_overrides
from grade_common.schema import Range, bounds, check_range_pair, from_mapping, to_mapping
from grade_people.clips import is_named_clip, named_clip_path
from grade_people.config import PeopleConfig

# Re-exported: they moved to config.camera_model so that the optics need not import this module.
from grade_sim.config.camera_model import DISTORTION_COEFFICIENTS as DISTORTION_COEFFICIENTS
from grade_sim.config.camera_model import CameraModel as CameraModel
from grade_sim.config.lidar import LidarConfig

# Re-exported: it moved to config.mount so that lidar configs can use it too.
from grade_sim.config.mount import MountConfig as MountConfig
from grade_sim.optics.rig import build_rig

Vec3 = tuple[float, float, float]


def _check_fisheye_monotonic(coeffs: tuple[float, ...], theta_max_rad: float, path: str) -> None:
    """theta_d(theta) must grow up to the widest ray, or two rays would land on one pixel."""
    k1, k2, k3, k4 = coeffs or (0.0, 0.0, 0.0, 0.0)
    t = np.linspace(0.0, min(theta_max_rad, math.pi), 2001)
    slope = 1 + 3 * k1 * t**2 + 5 * k2 * t**4 + 7 * k3 * t**6 + 9 * k4 * t**8
    if np.any(slope <= 0):
        worst = math.degrees(float(t[np.argmax(slope <= 0)]))
        raise ConfigError(
            f"{path}.distortion: {list(coeffs)} folds the image at {worst:.1f} deg off-axis "
            f"(theta_d stops growing); the coefficients must keep theta_d increasing up to "
            f"{math.degrees(theta_max_rad):.1f} deg (half of fov_deg, or 180): lower them or "
            "fov_deg"
        )


class EnvironmentKind(enum.Enum):
    PROCEDURAL = "procedural"
    MESH = "mesh"
    OUTDOOR = "outdoor"
    TABLETOP = "tabletop"  # a SceneReplica table scene file (grade_sim.config.tabletop)


class RobotKind(enum.Enum):
    UAV = "uav"
    OMNI = "omni"


class MotionMode(enum.Enum):
    PATH = "path"  # follow waypoints through the physics with a built-in tracker (data generation)
    COMMANDS = "commands"  # joint velocity commands from /<robot>/joint_commands (closed loop)
    # Exactly on the waypoint path, set kinematically every step (pure data generation); the IMU
    # reads the path's own acceleration (MuJoCo inverse dynamics), walls do not stop the robot.
    TELEPORT = "teleport"


class Stream(enum.Enum):
    RGB = "rgb"
    DEPTH = "depth"
    INSTANCE = "instance"
    # Opt-in ground truth (docs/ground_truth.md): class ids, optical-frame normals, optical flow.
    SEMANTIC = "semantic"
    NORMALS = "normals"
    FLOW = "flow"


# The images every camera renders by default (CameraConfig.streams): colour, depth, instances.
IMAGE_STREAMS = frozenset({Stream.RGB, Stream.DEPTH, Stream.INSTANCE})


PINHOLE_MAX_HFOV_DEG = 170.0


class Pipeline(enum.Enum):
    """How the step loop runs (docs/simulator.md): cameras render on a thread of their own while
    physics goes on (parallel), or everything in turn on one thread (sequential, for debugging).
    Both give the same outputs, byte for byte."""

    SEQUENTIAL = "sequential"
    PARALLEL = "parallel"


class AnimalKind(enum.Enum):
    """Quadrupeds of the outdoor scenario (grade_sim.actors.animals has their proportions)."""

    ZEBRA = "zebra"
    HORSE = "horse"
    GAZELLE = "gazelle"
    DOG = "dog"


class AnimalGait(enum.Enum):
    WALK = "walk"
    GRAZE = "graze"  # stand with the head down at the ground
    RUN = "run"


@dataclass(frozen=True)
class ProceduralConfig:
    # Rooms along x in the grid of rooms.
    rooms_x: int = field(default=2, metadata=bounds(1, 6))
    # Rooms along y in the grid of rooms.
    rooms_y: int = field(default=2, metadata=bounds(1, 6))
    # Side length of each room, drawn per room from [min, max].
    room_size_m: Range = field(default=(5.0, 7.0), metadata=bounds(2.5, 30.0))
    # Height of the walls (and the ceiling).
    wall_height_m: float = field(default=2.7, metadata=bounds(2.0, 10.0))
    # Thickness of the walls.
    wall_thickness_m: float = field(default=0.15, metadata=bounds(0.05, 1.0))
    # People (0.35 m radius on a 0.2 m planning grid) need at least 1 m to pass a doorway.
    door_width_m: float = field(default=1.2, metadata=bounds(1.0, 3.0))
    # Pieces of furniture per room, drawn from [min, max].
    furniture_per_room: tuple[int, int] = field(default=(1, 3), metadata=bounds(0, 12))

    def validate(self, path: str) -> None:
        check_range_pair(self.room_size_m, f"{path}.room_size_m")
        check_range_pair(
            (float(self.furniture_per_room[0]), float(self.furniture_per_room[1])),
            f"{path}.furniture_per_room",
        )
        if self.door_width_m > self.room_size_m[0] - 0.5:
            raise ConfigError(
                f"{path}.door_width_m: {self.door_width_m} does not fit rooms of "
                f"{self.room_size_m[0]} m; allowed up to {self.room_size_m[0] - 0.5}"
            )


@dataclass(frozen=True)
class MeshEnvironmentConfig:
    # The mesh file (OBJ, glTF/GLB, STL, PLY, USD), relative to the scenario file.
    path: str | None = None
    # Metres per file unit. None: the file's own (a USD stage's metersPerUnit), else 1.0; set,
    # it wins over the file's.
    scale: float | None = field(default=None, metadata=bounds(1e-4, 1e4, exclusive_min=True))
    # The file's up axis, y or z. None: the file's own (a USD stage's upAxis), else z; set, it
    # wins over the file's.
    up_axis: str | None = None
    # Height above the floor that must be free where robots and actors are placed.
    free_space_height_m: float = field(default=1.0, metadata=bounds(0.1, 10.0))
    # YAML glob pattern -> class for the parts' labels (world/labels.py), relative to this file.
    label_map: str | None = None

    def validate(self, path: str) -> None:
        if self.up_axis is not None and self.up_axis not in ("y", "z"):
            raise ConfigError(f"{path}.up_axis: {self.up_axis!r} is not allowed; use 'y' or 'z'")


@dataclass(frozen=True)
class OutdoorConfig:
    """GRADE's savanna-like outdoor world: terrain, trees, rocks, bushes, grass (world/outdoor)."""

    # The flat walk area, x and y.
    size_m: tuple[float, float] = field(default=(40.0, 40.0), metadata=bounds(10.0, 500.0))
    # Number of trees.
    trees: int = field(default=30, metadata=bounds(0, 2000))
    # Tree height, drawn per tree from [min, max].
    tree_height_m: Range = field(default=(3.0, 7.0), metadata=bounds(1.5, 30.0))
    # Number of rocks.
    rocks: int = field(default=20, metadata=bounds(0, 2000))
    # Rock size, drawn per rock from [min, max].
    rock_size_m: Range = field(default=(0.3, 1.2), metadata=bounds(0.05, 5.0))
    # Number of bushes.
    bushes: int = field(default=25, metadata=bounds(0, 2000))
    # Bush size, drawn per bush from [min, max].
    bush_size_m: Range = field(default=(0.4, 1.5), metadata=bounds(0.1, 5.0))
    # Robots loop on a regular polygon around the centre; no obstacle comes near its edges.
    tour_radius_m: float = field(default=10.0, metadata=bounds(1.0, 240.0))
    # Corners of the polygon the robots loop on.
    tour_points: int = field(default=8, metadata=bounds(3, 64))
    # Distance kept free of obstacles around the tour.
    tour_clearance_m: float = field(default=2.0, metadata=bounds(0.5, 20.0))
    # Terrain (world/terrain.py): the walk area (size_m) stays flat; hills rise around it.
    terrain_border_m: float = field(default=30.0, metadata=bounds(0.0, 500.0))
    # Height of the hills around the walk area.
    hill_height_m: float = field(default=5.0, metadata=bounds(0.0, 50.0))
    # Number of grass patches.
    grass_patches: int = field(default=80, metadata=bounds(0, 5000))

    def validate(self, path: str) -> None:
        for name in ("tree_height_m", "rock_size_m", "bush_size_m"):
            check_range_pair(getattr(self, name), f"{path}.{name}")
        limit = min(self.size_m) / 2 - self.tour_clearance_m
        if self.tour_radius_m > limit:
            raise ConfigError(
                f"{path}.tour_radius_m: {self.tour_radius_m} does not fit a {list(self.size_m)} m "
                f"ground with tour_clearance_m {self.tour_clearance_m}; allowed up to {limit}"
            )


@dataclass(frozen=True)
class TabletopEnvironmentConfig:
    scene: str | None = None  # a tabletop scene file (grade scenes generate), relative to this file
    # Side of the square floor around the table.
    floor_size_m: float = field(default=6.0, metadata=bounds(2.0, 100.0))


@dataclass(frozen=True)
class EnvironmentConfig:
    # Which world: procedural rooms, a mesh file, the outdoor savanna or a tabletop scene.
    type: EnvironmentKind = EnvironmentKind.PROCEDURAL
    procedural: ProceduralConfig = field(default_factory=ProceduralConfig)
    mesh: MeshEnvironmentConfig = field(default_factory=MeshEnvironmentConfig)
    outdoor: OutdoorConfig = field(default_factory=OutdoorConfig)
    tabletop: TabletopEnvironmentConfig = field(default_factory=TabletopEnvironmentConfig)

    def validate(self, path: str) -> None:
        if self.type is EnvironmentKind.MESH and not self.mesh.path:
            raise ConfigError(f"{path}.mesh.path: required when {path}.type is 'mesh'")
        if self.type is EnvironmentKind.TABLETOP and not self.tabletop.scene:
            raise ConfigError(f"{path}.tabletop.scene: required when {path}.type is 'tabletop'")


@dataclass(frozen=True)
class FlyingObjectsConfig:
    # Number of flying objects.
    count: int = field(default=3, metadata=bounds(0, 64))
    # Object size, drawn per object from [min, max].
    size_m: Range = field(default=(0.15, 0.45), metadata=bounds(0.02, 2.0))
    # Object speed, drawn per object from [min, max].
    speed_mps: Range = field(default=(0.3, 1.0), metadata=bounds(0.0, 10.0))
    # Below the 2.1 m door lintels: keyframe segments are checked on the ground-plane map only.
    height_m: Range = field(default=(0.5, 1.8), metadata=bounds(0.05, 10.0))
    # Keyframes of each object's path.
    keyframes: int = field(default=6, metadata=bounds(2, 100))

    def validate(self, path: str) -> None:
        for name in ("size_m", "speed_mps", "height_m"):
            check_range_pair(getattr(self, name), f"{path}.{name}")


@dataclass(frozen=True)
class AnimalsConfig:
    """Quadrupeds moving like the people (kinematic, drawn from the seed; see docs/animals.md).

    Each animal's kind is drawn uniformly from `kinds` (list a kind twice to make it twice as
    common); its size is the kind's size times a factor drawn from `size_scale`.
    """

    # Number of animals.
    count: int = field(default=0, metadata=bounds(0, 64))
    # The kinds an animal is drawn from (uniformly).
    kinds: tuple[AnimalKind, ...] = (AnimalKind.ZEBRA, AnimalKind.GAZELLE)
    # The gaits animals use (walk is required).
    gaits: tuple[AnimalGait, ...] = (AnimalGait.WALK, AnimalGait.GRAZE, AnimalGait.RUN)
    # Factor on the kind's size, drawn per animal from [min, max].
    size_scale: Range = field(default=(0.9, 1.1), metadata=bounds(0.3, 3.0))
    # Walking speed, drawn per walk from [min, max].
    walk_speed_mps: Range = field(default=(0.7, 1.4), metadata=bounds(0.1, 3.0))
    # Running speed, drawn per run from [min, max].
    run_speed_mps: Range = field(default=(3.0, 6.0), metadata=bounds(1.0, 15.0))
    # Duration of a grazing stop, drawn from [min, max].
    graze_s: Range = field(default=(3.0, 10.0), metadata=bounds(0.5, 600.0))
    # Of the choices after each walk, run or graze: how often the next one is a run.
    run_fraction: float = field(default=0.15, metadata=bounds(0.0, 1.0))
    # Of the choices after each walk: how often the next one is grazing.
    graze_fraction: float = field(default=0.4, metadata=bounds(0.0, 1.0))
    # Placement (actors/animal_placement.py): an animal whose whole trace touches the world, an
    # earlier animal or a robot's planned path is drawn again this many times, then rejected.
    retries: int = field(default=8, metadata=bounds(0, 50))
    # Kept free around every part of an animal's body (so two animals stay twice this apart).
    clearance_m: float = field(default=0.05, metadata=bounds(0.0, 1.0))

    def validate(self, path: str) -> None:
        for name in ("size_scale", "walk_speed_mps", "run_speed_mps", "graze_s"):
            check_range_pair(getattr(self, name), f"{path}.{name}")
        if not self.kinds:
            raise ConfigError(f"{path}.kinds: list at least one of {[k.value for k in AnimalKind]}")
        if AnimalGait.WALK not in self.gaits and self.count:
            raise ConfigError(
                f"{path}.gaits: must include 'walk' (animals walk between stops); "
                f"got {[g.value for g in self.gaits]}"
            )
        if self.run_fraction + self.graze_fraction > 1.0:
            raise ConfigError(
                f"{path}: run_fraction + graze_fraction is "
                f"{self.run_fraction + self.graze_fraction:g}; allowed at most 1 (the rest walks)"
            )


@dataclass(frozen=True)
class BakeConfig:
    """Baked lighting of the static world (engine/bake; docs/looks.md): soft shadows from area
    lights, one bounce of indirect light and ambient occlusion, computed once per world and
    drawn by the raster renderer at no frame cost. Changes RGB only."""

    # Bake the static world's lighting (soft shadows, a bounce, ambient occlusion).
    enabled: bool = False
    texel_m: float = field(default=0.1, metadata=bounds(0.02, 1.0))  # lightmap texel size
    light_samples: int = field(default=8, metadata=bounds(1, 64))  # per light and texel
    hemisphere_samples: int = field(default=64, metadata=bounds(4, 256))  # bounce and AO rays
    fixture_radius_m: float = field(default=0.15, metadata=bounds(0.0, 2.0))  # area of a fixture
    sun_radius_deg: float = field(
        default=1.5, metadata=bounds(0.0, 10.0)
    )  # softness of sun shadows
    # Reach of the ambient-occlusion rays.
    ao_distance_m: float = field(default=0.6, metadata=bounds(0.05, 10.0))
    # Share of the scene's ambient light kept: the bounce now carries part of what it stood for.
    ambient_scale: float = field(default=0.6, metadata=bounds(0.0, 1.0))
    # Density of the baked textures of boxes.
    texture_px_per_m: float = field(default=48.0, metadata=bounds(8.0, 512.0))
    # Largest side of a baked cube-texture face.
    max_face_px: int = field(default=256, metadata=bounds(16, 2048))
    # Seed of the bake's random sampling.
    seed: int = 0
    # Soft dark footprints on the ground under people and animals, cast away from the dominant
    # light, drawn into the RGB image with its exact depth (engine/mujoco/contact_shadows.py;
    # about 1.6 ms a frame for 20 people, docs/looks.md). RGB only; on whenever the bake is.
    contact_shadows: bool = True
    # Light probes (engine/bake/probes.py): a grid of the baked light in the air, gathered with
    # the lightmaps, that shades moving things (people, animals, robots, flying objects) by
    # where they are: dark in a shadowed corner, lit under a lamp. RGB only.
    probes: bool = True
    # Spacing of the light probes in x and y.
    probe_spacing_m: float = field(default=0.5, metadata=bounds(0.1, 5.0))
    # Most light probes; the spacing widens beyond this.
    max_probes: int = field(default=4096, metadata=bounds(8, 65536))


@dataclass(frozen=True)
class LightsConfig:
    # Number of lights.
    count: int = field(default=2, metadata=bounds(1, 8))
    # Light intensity, drawn per light from [min, max].
    intensity: Range = field(default=(0.45, 0.8), metadata=bounds(0.0, 2.0))
    # Random change of each light's colour.
    color_jitter: float = field(default=0.1, metadata=bounds(0.0, 0.5))
    # Live shadow maps for every light (costly on a CPU).
    shadows: bool = False
    # Generated worlds (procedural rooms, outdoor) only; see docs/looks.md.
    count_jitter: int = field(default=0, metadata=bounds(0, 4))  # count +- this many lights
    # Colour temperature of indoor lights, drawn from [min, max].
    color_temperature_k: Range = field(default=(2700.0, 6500.0), metadata=bounds(1000.0, 12000.0))
    # Ambient light level, drawn from [min, max].
    ambient: Range = field(default=(0.1, 0.2), metadata=bounds(0.0, 1.0))
    # Time of day outdoors (the sun's position), drawn from [min, max].
    time_of_day_h: Range = field(default=(7.0, 17.0), metadata=bounds(0.0, 24.0))
    bake: BakeConfig = field(default_factory=BakeConfig)

    def validate(self, path: str) -> None:
        for name in ("intensity", "color_temperature_k", "ambient", "time_of_day_h"):
            check_range_pair(getattr(self, name), f"{path}.{name}")


@dataclass(frozen=True)
class RenderConfig:
    """How cameras render (see docs/looks.md for what each costs)."""

    # RGB is drawn at this many times the camera's width and height, then averaged down
    # (antialiasing); depth and masks come from a separate exact pass. 1 (the default) turns
    # it off: 1.5 shades 2.25x the pixels, about 15 ms more CPU a 640x480 frame on llvmpipe.
    supersample: float = field(default=1.0, metadata=bounds(1.0, 3.0))
    # FXAA on the final RGB image (grade_sim.engine.fxaa, about 2 ms a 640x480 frame): smooth
    # edges at the camera's own size; mean SSIM 0.994 against supersample 1.5 (docs/looks.md).
    fxaa: bool = True
    # Side of the generated texture images (a power of two).
    texture_size_px: int = field(default=512, metadata=bounds(64, 2048))
    # The cameras' exposure (EV100, world/light_units.py): None uses the world's reference
    # exposure, at which its lights are drawn as designed; one EV more halves every light.
    exposure_ev100: float | None = field(default=None, metadata=bounds(-6.0, 24.0))

    def supersampled(self, pixels: int) -> int:
        """Pixels of one side of the supersampled RGB image for a camera side of `pixels`."""
        return math.ceil(pixels * self.supersample - 1e-9)

    def validate(self, path: str) -> None:
        n = self.texture_size_px
        if n & (n - 1):
            raise ConfigError(f"{path}.texture_size_px: {n}; allowed: a power of two in [64, 2048]")


# The range of every rate but physics_hz (validate() also holds each to at most physics_hz).
_STREAM_RATE_HZ = bounds(1.0, 2000.0)


@dataclass(frozen=True)
class RatesConfig:
    # Physics steps per simulated second; every other rate is at most this.
    physics_hz: float = field(default=240.0, metadata=bounds(30.0, 2000.0))
    # Rate of /clock.
    clock_hz: float = field(default=240.0, metadata=_STREAM_RATE_HZ)
    # Rate of each robot's IMU.
    imu_hz: float = field(default=240.0, metadata=_STREAM_RATE_HZ)
    # Rate of /tf.
    tf_hz: float = field(default=120.0, metadata=_STREAM_RATE_HZ)
    # Rate of each robot's joint states.
    joint_states_hz: float = field(default=120.0, metadata=_STREAM_RATE_HZ)
    # Rate of each robot's odometry (and lockstep's command exchange).
    odom_hz: float = field(default=60.0, metadata=_STREAM_RATE_HZ)
    # Rate of the ground-truth pose topics.
    camera_pose_hz: float = field(default=60.0, metadata=_STREAM_RATE_HZ)

    def validate(self, path: str) -> None:
        for name in ("clock_hz", "imu_hz", "tf_hz", "joint_states_hz", "odom_hz", "camera_pose_hz"):
            rate = getattr(self, name)
            if rate > self.physics_hz:
                raise ConfigError(
                    f"{path}.{name}: {rate} Hz exceeds physics_hz {self.physics_hz}; "
                    f"allowed (0, {self.physics_hz}]"
                )


@dataclass(frozen=True)
class CameraConfig:
    name: str = field(default="camera", metadata=ros_name())  # a topic token and a folder
    # Image width in pixels.
    width: int = field(default=640, metadata=bounds(16, 4096))
    # Image height in pixels.
    height: int = field(default=480, metadata=bounds(16, 4096))
    # Horizontal field of view across the image width; up to 170 for pinhole and plumb_bob (the
    # focal length of K), up to 360 for equidistant (the angle at the left and right edges).
    hfov_deg: float = field(default=88.95, metadata=bounds(10.0, 360.0))
    # Frames per simulated second.
    rate_hz: float = field(default=30.0, metadata=bounds(0.1, 240.0))
    # Nearest distance rendered.
    near_m: float = field(default=0.05, metadata=bounds(0.001, 10.0))
    # Farthest distance rendered; depth beyond is 0 (no return).
    far_m: float = field(default=20.0, metadata=bounds(0.1, 1000.0))
    # The images rendered: rgb, depth, instance, and the opt-in semantic, normals, flow.
    streams: tuple[Stream, ...] = (Stream.RGB, Stream.DEPTH, Stream.INSTANCE)
    mount: MountConfig = field(default_factory=lambda: MountConfig(xyz=(0.12, 0.0, 0.0)))
    # Lens model: pinhole, plumb_bob (distorted) or equidistant (fisheye).
    model: CameraModel = CameraModel.PINHOLE
    # plumb_bob: k1 k2 p1 p2 k3; equidistant: k1 k2 k3 k4 (OpenCV's order); empty: all zero.
    distortion: tuple[float, ...] = field(default=(), metadata=bounds(-10.0, 10.0))
    # equidistant only: the lens's full field of view (its image circle); pixels whose ray is
    # further off-axis than fov_deg / 2 stay empty. None: no circle, the whole image sees.
    fov_deg: float | None = field(default=None, metadata=bounds(10.0, 360.0))
    # Focal length of the pinhole source renders over the output's (distorted models only).
    supersample: float = field(default=1.0, metadata=bounds(0.5, 4.0))

    def validate(self, path: str) -> None:
        if self.near_m >= self.far_m:
            raise ConfigError(f"{path}.near_m: {self.near_m} must be below far_m {self.far_m}")
        if not self.streams:
            allowed = ", ".join(s.value for s in Stream)
            raise ConfigError(f"{path}.streams: empty; allowed any of {allowed}")
        self._validate_lens(path)

    def _validate_lens(self, path: str) -> None:
        model = self.model.value
        if self.model is not CameraModel.EQUIDISTANT and self.hfov_deg > PINHOLE_MAX_HFOV_DEG:
            raise ConfigError(
                f"{path}.hfov_deg: value {self.hfov_deg} with model {model} is outside [10.0, "
                f"{PINHOLE_MAX_HFOV_DEG}] (up to 360 with model equidistant)"
            )
        wanted = DISTORTION_COEFFICIENTS[self.model]
        if len(self.distortion) not in (0, wanted):
            names = {5: "[k1, k2, p1, p2, k3]", 4: "[k1, k2, k3, k4]", 0: "[] (no distortion)"}
            raise ConfigError(
                f"{path}.distortion: {list(self.distortion)} has {len(self.distortion)} "
                f"coefficients; model {model} takes {names[wanted]}"
            )
        if self.fov_deg is not None and self.model is not CameraModel.EQUIDISTANT:
            raise ConfigError(
                f"{path}.fov_deg: {self.fov_deg}; only model equidistant has an image circle "
                f"(model is {model}): remove fov_deg"
            )
        if self.model is CameraModel.EQUIDISTANT:
            limit_deg = 360.0 if self.fov_deg is None else self.fov_deg
            if self.hfov_deg > limit_deg:
                raise ConfigError(
                    f"{path}.hfov_deg: {self.hfov_deg} is wider than fov_deg {limit_deg}; "
                    f"allowed [10.0, {limit_deg}]"
                )
            _check_fisheye_monotonic(self.distortion, math.radians(limit_deg) / 2, path)
        if self.model is not CameraModel.PINHOLE:
            build_rig(self, path)  # a distortion that folds, or a source view too large


@dataclass(frozen=True)
class ImuConfig:
    # Publish and record the robot's IMU.
    enabled: bool = True
    mount: MountConfig = field(default_factory=MountConfig)


@dataclass(frozen=True)
class MotionConfig:
    # Who moves the robot: path (built-in tracker), teleport (exactly on the path) or commands.
    mode: MotionMode = MotionMode.PATH
    # Empty: a loop through the room centres of the procedural environment.
    waypoints: tuple[Vec3, ...] = ()
    # Cruise speed along the path.
    speed_mps: float = field(default=0.8, metadata=bounds(0.05, 5.0))
    # Turning rate at the waypoints.
    yaw_rate_rps: float = field(default=0.6, metadata=bounds(0.05, 5.0))
    # Return to the start and repeat the path.
    loop: bool = True
    # Flight height of a UAV on the generated tour.
    altitude_m: float = field(default=1.4, metadata=bounds(0.0, 50.0))
    # A UAV's roll and pitch on its path (path and teleport modes): held level (GRADE's
    # stabilised flight, the "H" sequences), or tilted as a multirotor tilts to accelerate.
    stabilised: bool = True
    # How quickly an unstabilised UAV's tilt follows the path's acceleration.
    tilt_response_s: float = field(default=0.4, metadata=bounds(0.05, 5.0))


@dataclass(frozen=True)
class RobotConfig:
    # The robot's namespace (/<name>/...) and frame prefix.
    name: str = "robot"
    # uav (x, y, z, roll, pitch, yaw joints) or omni (x, y, yaw and a camera yaw joint).
    type: RobotKind = RobotKind.UAV
    start_xyz: Vec3 | None = None  # None: placed collision-free by the seeded generator
    # Heading at the start, radians.
    start_yaw: float = field(default=0.0, metadata=bounds(-6.2832, 6.2832))
    motion: MotionConfig = field(default_factory=MotionConfig)
    cameras: tuple[CameraConfig, ...] = field(default_factory=lambda: (CameraConfig(),))
    imu: ImuConfig = field(default_factory=ImuConfig)
    lidars: tuple[LidarConfig, ...] = ()
    # The body box (also the placement clearance when a URDF gives the body).
    body_size_m: Vec3 = field(default=(0.35, 0.35, 0.12), metadata=bounds(0.02, 5.0))
    # Body mass (a URDF's inertial tags take precedence).
    mass_kg: float = field(default=1.5, metadata=bounds(0.01, 1000.0))
    # Limit of each linear joint velocity.
    max_velocity_mps: float = field(default=2.0, metadata=bounds(0.01, 50.0))
    # Limit of each angular joint velocity.
    max_angular_velocity_rps: float = field(default=2.0, metadata=bounds(0.01, 50.0))
    # Body geometry (and mass, if given) from a URDF, relative to the scenario file; None: a box.
    urdf: str | None = None
    urdf_base_link: str | None = None  # the URDF link on the virtual joints; None: its root link

    def validate(self, path: str) -> None:
        if self.urdf_base_link is not None and self.urdf is None:
            raise ConfigError(f"{path}.urdf_base_link: set only together with {path}.urdf")
        check_ros_name(self.name, f"{path}.name")
        names = [c.name for c in self.cameras]
        if len(set(names)) != len(names):
            raise ConfigError(f"{path}.cameras: duplicate camera names {names}")
        sensors = names + [lidar.name for lidar in self.lidars]
        if len(set(sensors)) != len(sensors):
            raise ConfigError(f"{path}.lidars: names must differ from each other and the cameras")
        if not self.motion.stabilised and self.type is not RobotKind.UAV:
            raise ConfigError(
                f"{path}.motion.stabilised: false is for a uav (which tilts as it accelerates); "
                f"a {self.type.value} robot has no roll or pitch"
            )


@dataclass(frozen=True)
class SimConfig:
    """How the simulator runs its step loop (not what it simulates: outputs do not depend on it)."""

    # parallel: cameras and lidars on threads beside physics; sequential: one thread (same outputs).
    pipeline: Pipeline = Pipeline.PARALLEL


@dataclass(frozen=True)
class RecordConfig:
    # Record every topic into bag/.
    bag: bool = True
    # Write the ground truth under gt/.
    ground_truth: bool = True
    # Write record.npz (what grade replay replays).
    experiment_record: bool = True
    # zlib level of the ground-truth PNGs.
    png_compression: int = field(default=1, metadata=bounds(0, 9))
    # MCAP chunk compression of bag/ (zstd: about 10x smaller on rendered images).
    bag_compression: Compression = Compression.ZSTD


@dataclass(frozen=True)
class FramesConfig:
    """TF frame names (REP 105) and who owns the link from the fixed frame to odometry.

    `odom` and `base` are per robot: the frames are `<robot>/<odom>` and `<robot>/<base>`.
    With `publish_world_odom: false` the simulator leaves `<world> -> <robot>/<odom>` out of
    /tf_static, so a SLAM stack can publish `map -> <robot>/<odom>` (set `world: map` to name
    the fixed frame of the ground-truth topics the same). docs/frames.md draws both trees.
    """

    # The fixed frame of the ground truth.
    world: str = field(default="world", metadata=ros_name())
    # Each robot's odometry frame, <robot>/<odom>.
    odom: str = field(default="odom", metadata=ros_name())
    # Each robot's body frame, <robot>/<base>.
    base: str = field(default="base_link", metadata=ros_name())
    # Publish the static world -> <robot>/<odom> link (false when a SLAM stack owns map -> odom).
    publish_world_odom: bool = True

    def odom_frame(self, robot: str) -> str:
        return f"{robot}/{self.odom}"

    def base_frame(self, robot: str) -> str:
        return f"{robot}/{self.base}"


@dataclass(frozen=True)
class Scenario:
    """A validated scenario; `load_scenario` builds it from a YAML file."""

    # The simulator engine (mujoco).
    backend: str = "mujoco"
    # Seed of every random choice of the run.
    seed: int = field(default=0, metadata=bounds(0, 2**63 - 1))
    # Simulated seconds recorded after the bootstrap.
    duration_s: float = field(default=20.0, metadata=bounds(0.0, 86400.0, exclusive_min=True))
    # Simulated seconds run before recording starts.
    bootstrap_s: float = field(default=1.0, metadata=bounds(0.0, 60.0))
    # Pace simulated time to the wall clock.
    realtime: bool = False
    environment: EnvironmentConfig = field(default_factory=EnvironmentConfig)
    people: PeopleConfig = field(default_factory=PeopleConfig)
    flying_objects: FlyingObjectsConfig = field(default_factory=FlyingObjectsConfig)
    animals: AnimalsConfig = field(default_factory=AnimalsConfig)
    lights: LightsConfig = field(default_factory=LightsConfig)
    render: RenderConfig = field(default_factory=RenderConfig)
    rates: RatesConfig = field(default_factory=RatesConfig)
    robots: tuple[RobotConfig, ...] = field(default_factory=lambda: (RobotConfig(name="uav1"),))
    record: RecordConfig = field(default_factory=RecordConfig)
    frames: FramesConfig = field(default_factory=FramesConfig)
    sim: SimConfig = field(default_factory=SimConfig)

    def validate(self, path: str) -> None:
        names = [r.name for r in self.robots]
        if not names:
            raise ConfigError("robots: at least one robot is required")
        if len(set(names)) != len(names):
            raise ConfigError(
                f"robots: duplicate robot names {names}; each needs its own namespace"
            )
        planned = (MotionMode.PATH, MotionMode.TELEPORT)
        if self.people.toward_robots > 0.0 and all(
            r.motion.mode not in planned for r in self.robots
        ):
            raise ConfigError(
                f"people.toward_robots: {self.people.toward_robots} needs a robot whose "
                f"motion.mode is path or teleport (a planned path to walk toward); got modes "
                f"{[r.motion.mode.value for r in self.robots]}"
            )
        # Cameras are sampled on physics steps: a faster rate would silently come out slower.
        for i, r in enumerate(self.robots):
            for j, cam in enumerate(r.cameras):
                if cam.rate_hz > self.rates.physics_hz:
                    raise ConfigError(
                        f"robots[{i}].cameras[{j}].rate_hz: {cam.rate_hz} Hz exceeds physics_hz "
                        f"{self.rates.physics_hz}; allowed (0, {self.rates.physics_hz}]"
                    )
            # A lidar scan is emitted on a physics step: its rate cannot exceed the physics rate.
            for j, lidar in enumerate(r.lidars):
                rate = lidar.resolved().rate_hz
                if rate > self.rates.physics_hz:
                    raise ConfigError(
                        f"robots[{i}].lidars[{j}].rate_hz: {rate} Hz exceeds physics_hz "
                        f"{self.rates.physics_hz}; allowed (0, {self.rates.physics_hz}]"
                    )

    @property
    def physics_dt_s(self) -> float:
        return 1.0 / self.rates.physics_hz


def scenario_from_mapping(data: Any, source: str = "scenario") -> Scenario:
    """Validate plain data (a parsed YAML document) into a Scenario."""
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(
            f"{source}: expected a mapping at the top level, got {type(data).__name__}"
        )
    try:
        return from_mapping(Scenario, data)
    except ConfigError as err:
        raise ConfigError(f"{source}: {err}") from None


def _existing_file(file: Path, value: str, key: str, kind: str = "") -> Path:
    """The file `value` names, relative to the scenario file's folder unless absolute.

    Raises:
        ConfigError: there is no such file (the message names the key and the path).
    """
    path = Path(value)
    if not path.is_absolute():
        path = (file.parent / path).resolve()
    if not path.is_file():
        named = f"{kind} {str(path)!r}" if kind else repr(str(path))
        raise ConfigError(f"{file}: {key}: {named} does not exist")
    return path


def load_scenario(path: str | Path, overrides: dict[str, Any] | None = None) -> Scenario:
    """Load and validate a scenario YAML file; `overrides` (dotted key paths such as
    `people.count`, or whole top-level keys) are set in the document first.

    Raises:
        ConfigError: the file is missing, not YAML, or a value is invalid (message names the key).
    """
    file = Path(path)
    if not file.is_file():
        raise ConfigError(f"scenario file {str(file)!r} does not exist")
    try:
        data = yaml.safe_load(file.read_text(encoding="utf-8"))
    except OSError as err:
        raise ConfigError(f"{file}: cannot be read: {err.strerror or err}") from err
    except UnicodeDecodeError as err:
        raise ConfigError(
            f"{file}: not UTF-8 text (byte {err.start}); a scenario is a UTF-8 YAML file"
        ) from err
    except (yaml.YAMLError, RecursionError) as err:
        raise ConfigError(f"{file}: not valid YAML: {err}") from err
    if data is None:
        # An empty file is a mistake (a wrong or truncated file), never "run the defaults".
        raise ConfigError(
            f"{file}: the scenario file is empty; write the keys to change (`{{}}` for all "
            "defaults), e.g. duration_s: 20"
        )
    if overrides:
        if not isinstance(data, dict):
            raise ConfigError(f"{file}: expected a mapping at the top level")
        data = apply_overrides(data, overrides.items(), f"{file}: override")
    scenario = scenario_from_mapping(data, str(file))
    mesh = scenario.environment.mesh
    if scenario.environment.type is EnvironmentKind.MESH:
        mesh_path = _existing_file(file, mesh.path or "", "environment.mesh.path", "mesh file")
        label_map = mesh.label_map
        if label_map is not None and not Path(label_map).is_absolute():
            label_map = str((file.parent / label_map).resolve())
        scenario = replace(
            scenario,
            environment=replace(
                scenario.environment,
                mesh=replace(mesh, path=str(mesh_path), label_map=label_map),
            ),
        )
    tabletop = scenario.environment.tabletop
    if scenario.environment.type is EnvironmentKind.TABLETOP and tabletop.scene:
        scene_path = _existing_file(file, tabletop.scene, "environment.tabletop.scene")
        scenario = replace(
            scenario,
            environment=replace(
                scenario.environment, tabletop=replace(tabletop, scene=str(scene_path))
            ),
        )
    clips = []
    for i, clip in enumerate(scenario.people.clips):
        if is_named_clip(clip):  # a clip set-up fetched (grade_people.clips.NAMED_CLIPS)
            named_clip_path(clip, f"{file}: people.clips[{i}]")
            clips.append(clip)
            continue
        clips.append(str(_existing_file(file, clip, f"people.clips[{i}]", "BVH file")))
    scenario = replace(scenario, people=replace(scenario.people, clips=tuple(clips)))
    robots = []
    for i, robot in enumerate(scenario.robots):
        if robot.urdf is not None:
            urdf_path = _existing_file(file, robot.urdf, f"robots[{i}].urdf", "URDF file")
            robot = replace(robot, urdf=str(urdf_path))
        robots.append(robot)
    return replace(scenario, robots=tuple(robots))


def scenario_to_mapping(scenario: Scenario) -> dict[str, Any]:
    """Plain data of a scenario (the run snapshot); load(dump(s)) == s."""
    data: dict[str, Any] = to_mapping(scenario)
    return data
