"""What a replay may change, and how each change is applied without touching the scene draw.

The world, the people and the objects of a run are regenerated from the scenario seed, so a
change must never alter an input of that draw (seed, environment, people, flying objects,
lights config, durations, physics rate, robots' start and motion). Changes therefore act in two
places only:

- the scenario's sensor side (cameras, sensor rates), edited on the plain mapping and validated
  again, so errors name the field exactly as in a scenario file;
- the drawn Scene (light colours and intensities, hidden instances), after the draw.
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass, fields, replace
from typing import Any

import yaml

from grade_common.errors import ConfigError
from grade_common.names import ROS_NAME_RULE, is_ros_name
from grade_replay.errors import ReplayConfigError
from grade_sim.actors.flying import FlyingObjects
from grade_sim.config.lidar import LidarConfig
from grade_sim.config.scenario import (
    RatesConfig,
    Scenario,
    scenario_from_mapping,
    scenario_to_mapping,
)
from grade_sim.robots.model import robot_model
from grade_sim.scene import RobotSetup, Scene

# Camera fields a replay may set (`--camera robot/name:key=value,...`).
CAMERA_KEYS = ("width", "height", "hfov_deg", "near_m", "far_m", "rate_hz", "streams")
# Lidar fields a replay may set (`--lidar robot/name:key=value,...`): every scenario field.
LIDAR_KEYS = tuple(f.name for f in fields(LidarConfig) if f.name not in ("name", "mount"))
# Fields given as lists on the command line, items joined by '+'.
LIST_KEYS = ("streams", "elevations_deg")
MOUNT_KEYS = ("mount_x", "mount_y", "mount_z", "mount_roll", "mount_pitch", "mount_yaw")
RATE_KEYS = tuple(f for f in RatesConfig.__dataclass_fields__ if f != "physics_hz")
# Classes of instances that `--hide` accepts besides the scene's own labels.
OBJECT_CLASS = "object"  # every flying object, whatever its shape

# Scenario keys that drive the seeded scene draw; a replay must leave them as recorded.
DRAW_KEYS = (
    "seed",
    "environment",
    "people",
    "flying_objects",
    "animals",
    "lights",
    "duration_s",
    "bootstrap_s",
)
ROBOT_DRAW_KEYS = ("name", "type", "start_xyz", "start_yaw", "motion", "body_size_m")


@dataclass(frozen=True)
class SensorChange:
    """Set fields of sensor `robot/name`; a sensor that does not exist yet is added."""

    robot: str
    name: str
    values: tuple[tuple[str, Any], ...]

    @property
    def key(self) -> str:
        return f"{self.robot}/{self.name}"


class CameraChange(SensorChange):
    """A camera's change (`--camera`)."""

    @property
    def camera(self) -> str:
        return self.name


class LidarChange(SensorChange):
    """A lidar's change (`--lidar`; GRADE: "add a LiDAR and regenerate")."""

    @property
    def lidar(self) -> str:
        return self.name


@dataclass(frozen=True)
class ReplayChanges:
    """Every change of one replay; the default changes nothing."""

    light_scale: float = 1.0
    light_color_rgb: tuple[float, float, float] | None = None
    hide_classes: tuple[str, ...] = ()
    hide_ids: tuple[int, ...] = ()
    cameras: tuple[CameraChange, ...] = ()
    remove_cameras: tuple[str, ...] = ()  # "robot/camera"
    lidars: tuple[LidarChange, ...] = ()
    remove_lidars: tuple[str, ...] = ()  # "robot/lidar"
    rates_hz: tuple[tuple[str, float], ...] = ()
    noise_seed: int | None = None

    def __post_init__(self) -> None:
        if not (math.isfinite(self.light_scale) and 0.0 <= self.light_scale <= 10.0):
            raise ReplayConfigError(
                f"light_scale: {self.light_scale!r} is out of range; allowed [0, 10]"
            )
        if self.light_color_rgb is not None:
            rgb = self.light_color_rgb
            if len(rgb) != 3 or not all(math.isfinite(c) and 0.0 <= c <= 10.0 for c in rgb):
                raise ReplayConfigError(
                    f"light_color: {list(rgb)!r} is not allowed; give three factors R,G,B "
                    "in [0, 10] (1,1,1 keeps the recorded colour)"
                )
        for name, rate in self.rates_hz:
            if name == "physics_hz":
                continue  # checked against the record in apply_to_scenario
            if name not in RATE_KEYS:
                raise ReplayConfigError(
                    f"rate {name!r} is unknown; allowed: {', '.join(('physics_hz', *RATE_KEYS))}"
                )
            if not (math.isfinite(rate) and rate > 0):
                raise ReplayConfigError(f"rate {name}: {rate!r} Hz must be a positive number")
        if self.noise_seed is not None and not 0 <= self.noise_seed < 2**63:
            raise ReplayConfigError(f"noise_seed: {self.noise_seed!r} must be in [0, 2^63)")
        sensors: list[tuple[str, SensorChange, tuple[str, ...]]]
        sensors = [("camera", c, CAMERA_KEYS) for c in self.cameras]
        sensors += [("lidar", c, LIDAR_KEYS) for c in self.lidars]
        for kind, change, keys in sensors:
            for key, _ in change.values:
                if key not in keys + MOUNT_KEYS:
                    raise ReplayConfigError(
                        f"{kind} {change.key}: key {key!r} is unknown; allowed: "
                        f"{', '.join(keys + MOUNT_KEYS)}"
                    )

    def to_mapping(self) -> dict[str, Any]:
        """Plain data for run.yaml (only what differs from 'no change')."""
        out: dict[str, Any] = {}
        if self.light_scale != 1.0:
            out["light_scale"] = self.light_scale
        if self.light_color_rgb is not None:
            out["light_color_rgb"] = list(self.light_color_rgb)
        if self.hide_classes:
            out["hide_classes"] = list(self.hide_classes)
        if self.hide_ids:
            out["hide_ids"] = list(self.hide_ids)
        if self.cameras:
            out["cameras"] = {c.key: dict(c.values) for c in self.cameras}
        if self.remove_cameras:
            out["remove_cameras"] = list(self.remove_cameras)
        if self.lidars:
            out["lidars"] = {c.key: dict(c.values) for c in self.lidars}
        if self.remove_lidars:
            out["remove_lidars"] = list(self.remove_lidars)
        if self.rates_hz:
            out["rates_hz"] = dict(self.rates_hz)
        if self.noise_seed is not None:
            out["noise_seed"] = self.noise_seed
        return out


# -- parsing of command-line forms --------------------------------------------------------------
def parse_camera_change(text: str) -> CameraChange:
    """`robot/camera:key=value,key=value` (values as YAML; streams as rgb+depth)."""
    return CameraChange(
        *_parse_sensor_change(text, "--camera", "uav1/wide:width=320,height=240,hfov_deg=100")
    )


def parse_lidar_change(text: str) -> LidarChange:
    """`robot/lidar:key=value,key=value` (values as YAML; elevations_deg as -10+0+10)."""
    return LidarChange(
        *_parse_sensor_change(text, "--lidar", "uav1/lidar:preset=hdl64e,rolling_shutter=true")
    )


def _parse_sensor_change(
    text: str, option: str, example: str
) -> tuple[str, str, tuple[tuple[str, Any], ...]]:
    head, sep, body = text.partition(":")
    robot, slash, sensor = head.partition("/")
    kind = option.lstrip("-").upper()
    if not slash or not robot or not sensor:
        raise ReplayConfigError(
            f"{option} {text!r}: expected ROBOT/{kind}:key=value,... e.g. {example}"
        )
    for part, name in (("ROBOT", robot), (kind, sensor)):
        # Both become folder names (gt/<robot>/<sensor>) and topic names.
        if not is_ros_name(name):
            raise ReplayConfigError(
                f"{option} {text!r}: {part} {name!r} is not a valid ROS name; use {ROS_NAME_RULE}"
            )
    values: list[tuple[str, Any]] = []
    for item in body.split(",") if sep and body else []:
        key, eq, raw = item.partition("=")
        key = key.strip()
        if not eq or not key:
            raise ReplayConfigError(f"{option} {text!r}: {item!r} is not key=value")
        try:
            value: Any = (
                [yaml.safe_load(s.strip()) for s in raw.split("+") if s.strip()]
                if key in LIST_KEYS
                else yaml.safe_load(raw)
            )
        except yaml.YAMLError as err:
            raise ReplayConfigError(f"{option} {text!r}: {key}={raw!r}: {err}") from err
        values.append((key, value))
    return robot, sensor, tuple(values)


def parse_rgb(text: str) -> tuple[float, float, float]:
    """`R,G,B` factors."""
    parts = text.split(",")
    try:
        rgb = tuple(float(p) for p in parts)
    except ValueError:
        rgb = ()
    if len(rgb) != 3:
        raise ReplayConfigError(f"--light-color {text!r}: expected three numbers R,G,B")
    return (rgb[0], rgb[1], rgb[2])


def parse_rate(text: str) -> tuple[str, float]:
    """`name=hz`, e.g. imu_hz=100."""
    name, eq, raw = text.partition("=")
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not eq or not math.isfinite(value):
        raise ReplayConfigError(f"--rate {text!r}: expected NAME=HZ, e.g. imu_hz=100")
    return name.strip(), value


# -- application ---------------------------------------------------------------------------------
def _find_robot(data: dict[str, Any], robot: str, what: str) -> dict[str, Any]:
    for r in data["robots"]:
        if r["name"] == robot:
            found: dict[str, Any] = r
            return found
    names = [r["name"] for r in data["robots"]]
    raise ReplayConfigError(f"{what}: robot {robot!r} is not in the recorded run; robots: {names}")


def apply_to_scenario(recorded: Scenario, changes: ReplayChanges) -> Scenario:
    """The replay's scenario: recorded one with changed cameras and rates, run as fast as possible.

    Raises:
        ReplayConfigError: an unknown robot/camera, a physics rate change, or an invalid value
            (the message names the scenario field as a scenario file would).
    """
    data = copy.deepcopy(scenario_to_mapping(recorded))
    data["realtime"] = False
    for key in changes.remove_cameras:
        _remove_sensor(data, "cameras", key, "--remove-camera")
    for key in changes.remove_lidars:
        _remove_sensor(data, "lidars", key, "--remove-lidar")
    for change in changes.cameras:
        r = _find_robot(data, change.robot, f"--camera {change.key}")
        _set_sensor(r, "cameras", change.camera, change.values, [0.12, 0.0, 0.0])
    for lidar in changes.lidars:
        r = _find_robot(data, lidar.robot, f"--lidar {lidar.key}")
        _set_sensor(r, "lidars", lidar.lidar, lidar.values, [0.0, 0.0, 0.15])
    physics_hz = recorded.rates.physics_hz
    for name, rate in changes.rates_hz:
        if name == "physics_hz":
            if rate != physics_hz:
                raise ReplayConfigError(
                    f"rates.physics_hz: {rate} Hz differs from the recorded {physics_hz} Hz; a "
                    "replay steps on the recorded physics steps, so it must stay "
                    f"{physics_hz} Hz (change the sensor rates instead)"
                )
            continue
        data["rates"][name] = rate
    try:
        scenario = scenario_from_mapping(data, "replay scenario")
    except ConfigError as err:
        raise ReplayConfigError(str(err)) from None
    check_draw_inputs_unchanged(recorded, scenario)
    return scenario


def _remove_sensor(data: dict[str, Any], kind: str, key: str, option: str) -> None:
    robot, _, name = key.partition("/")
    r = _find_robot(data, robot, f"{option} {key}")
    names = [c["name"] for c in r.get(kind, [])]
    if name not in names:
        raise ReplayConfigError(
            f"{option} {key}: {kind[:-1]} {name!r} is unknown on robot {robot!r}; {kind}: {names}"
        )
    r[kind] = [c for c in r[kind] if c["name"] != name]


def _set_sensor(
    robot: dict[str, Any],
    kind: str,
    name: str,
    values: tuple[tuple[str, Any], ...],
    default_xyz: list[float],
) -> None:
    """Set fields of sensor `name` in robot[kind] (cameras, lidars), adding it if new."""
    sensors = robot.setdefault(kind, [])
    entry = next((c for c in sensors if c["name"] == name), None)
    if entry is None:
        entry = {"name": name}
        sensors.append(entry)
    for key, value in values:
        if key in MOUNT_KEYS:
            mount = entry.setdefault("mount", {"xyz": list(default_xyz)})
            axis = MOUNT_KEYS.index(key)
            part = "xyz" if axis < 3 else "rpy"
            vec = list(mount.get(part, [0.0, 0.0, 0.0]))
            vec[axis % 3] = value
            mount[part] = vec
        else:
            entry[key] = value


def check_draw_inputs_unchanged(recorded: Scenario, replayed: Scenario) -> None:
    """Guard: the scene-drawing inputs of the two scenarios are equal.

    Raises:
        ReplayConfigError: naming the first differing field.
    """
    a, b = scenario_to_mapping(recorded), scenario_to_mapping(replayed)
    for key in DRAW_KEYS:
        if a[key] != b[key]:
            raise ReplayConfigError(f"{key}: a replay must keep the recorded value {a[key]!r}")
    if a["rates"]["physics_hz"] != b["rates"]["physics_hz"]:
        raise ReplayConfigError("rates.physics_hz: a replay must keep the recorded physics rate")
    if len(a["robots"]) != len(b["robots"]):
        raise ReplayConfigError("robots: a replay must keep the recorded robots")
    for i, (ra, rb) in enumerate(zip(a["robots"], b["robots"], strict=True)):
        for key in ROBOT_DRAW_KEYS:
            if ra[key] != rb[key]:
                raise ReplayConfigError(
                    f"robots[{i}].{key}: a replay must keep the recorded value {ra[key]!r}"
                )


def hidden_instance_ids(scene: Scene, changes: ReplayChanges) -> frozenset[int]:
    """Instance ids to hide: by class (scene labels, or 'object' for all flying objects) or id.

    Raises:
        ReplayConfigError: an unknown class or id (lists what the scene has).
    """
    labels = sorted({info.label for info in scene.instances.values()})
    out: set[int] = set()
    for cls in changes.hide_classes:
        if cls == OBJECT_CLASS:
            ids = {o.instance_id for o in scene.group(FlyingObjects).specs}
        else:
            ids = {i for i, info in scene.instances.items() if info.label == cls}
        if not ids and cls not in labels and cls != OBJECT_CLASS:
            raise ReplayConfigError(
                f"--hide {cls!r}: no instance of this class in the run; classes: "
                f"{', '.join([OBJECT_CLASS, *labels])}"
            )
        out |= ids
    for iid in changes.hide_ids:
        if iid not in scene.instances:
            raise ReplayConfigError(
                f"--hide-id {iid}: no such instance id in the run; ids "
                f"{min(scene.instances)}..{max(scene.instances)} (see gt/instances.yaml)"
            )
        out.add(iid)
    return frozenset(out)


def apply_to_scene(drawn: Scene, scenario: Scenario, changes: ReplayChanges) -> Scene:
    """The replay's Scene: the recorded draw with the replay scenario's sensors and new lights.

    `drawn` must come from build_scene(recorded scenario); actors, world geometry, instance ids
    and robot placements are kept as they are, so every pose is regenerated bit-exactly.
    """
    check_draw_inputs_unchanged(drawn.scenario, scenario)
    robots = []
    for setup, rc in zip(drawn.robots, scenario.robots, strict=True):
        # The path follower never runs in a replay: the record drives the joints.
        robots.append(
            RobotSetup(robot_model(rc), setup.instance_id, setup.start_xyz, setup.start_yaw, None)
        )
    lights = drawn.world.lights
    if changes.light_scale != 1.0 or changes.light_color_rgb is not None:
        tint = changes.light_color_rgb or (1.0, 1.0, 1.0)
        lights = tuple(
            replace(
                light,
                diffuse_rgb=(
                    light.diffuse_rgb[0] * changes.light_scale * tint[0],
                    light.diffuse_rgb[1] * changes.light_scale * tint[1],
                    light.diffuse_rgb[2] * changes.light_scale * tint[2],
                ),
            )
            for light in lights
        )
    return replace(
        drawn,
        scenario=scenario,
        world=replace(drawn.world, lights=lights),
        robots=tuple(robots),
    )
