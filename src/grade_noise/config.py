"""The one validated configuration of the noise pipeline, shared by `noise_node` and `grade noise`.

It is read from a ROS 2 parameters file (`noise_node: ros__parameters: ...`, see
config/noise.yaml) or from the node's declared parameters; topics are given as parallel lists
so the file stays a plain ROS 2 parameters file:

    input_topics:  [/robot/imu, /robot/camera/rgb/image_raw, ...]
    output_topics: [/robot/imu/noisy, /robot/camera/rgb/noisy/image_raw, ...]
    models:        [imu, rgb, ...]       # imu | rgb | depth | odometry
    presets:       [drone, online, ...]  # per model, see the *_PRESETS tables
"""

from __future__ import annotations

import enum
import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from grade_noise.depth import DEPTH_PRESETS
from grade_noise.errors import NoiseConfigError
from grade_noise.imu import IMU_PRESETS
from grade_noise.odometry import ODOMETRY_PRESETS
from grade_noise.rgb import RGB_PRESETS, RgbNoiseParams, rgb_preset

NODE_NAME = "noise_node"


class ModelKind(enum.Enum):
    """Noise model of one topic; it fixes the accepted message type."""

    IMU = "imu"
    RGB = "rgb"
    DEPTH = "depth"
    ODOMETRY = "odometry"


MESSAGE_TYPES: dict[ModelKind, str] = {
    ModelKind.IMU: "sensor_msgs/msg/Imu",
    ModelKind.RGB: "sensor_msgs/msg/Image",
    ModelKind.DEPTH: "sensor_msgs/msg/Image",
    ModelKind.ODOMETRY: "nav_msgs/msg/Odometry",
}

PRESETS: dict[ModelKind, Mapping[str, object]] = {
    ModelKind.IMU: IMU_PRESETS,
    ModelKind.RGB: RGB_PRESETS,
    ModelKind.DEPTH: DEPTH_PRESETS,
    ModelKind.ODOMETRY: ODOMETRY_PRESETS,
}


@dataclass(frozen=True)
class TopicNoise:
    """One noised stream: input topic, output topic, model and preset name."""

    input_topic: str
    output_topic: str
    model: ModelKind
    preset: str


@dataclass(frozen=True)
class NoiseConfig:
    """Validated configuration of the noise pipeline.

    Attributes:
        seed: seeds every stream (each topic gets its own generator from seed and topic name).
        topics: the noised streams.
        motion_topic: IMU (sensor_msgs/Imu) or odometry topic whose angular/linear velocity drive
            RGB blur and rolling shutter; "" = none (then RGB presets with motion effects fail).
        motion_type: "imu" or "odometry", the type of motion_topic.
        camera_hfov_deg: horizontal field of view used for K when no intrinsics are known.
        blur_plane_depth_m: depth of the fronto-parallel plane for translational blur.
        imu_rate_hz: nominal IMU rate, used for the first sample's period.
        depth_uint16_scale_m: metres per unit of 16UC1 depth messages (REP 118: 0.001).
    """

    seed: int
    topics: tuple[TopicNoise, ...]
    motion_topic: str = ""
    motion_type: str = "imu"
    camera_hfov_deg: float = 88.95
    blur_plane_depth_m: float = 2.0
    imu_rate_hz: float = 240.0
    depth_uint16_scale_m: float = 0.001

    def __post_init__(self) -> None:
        if not 0 <= self.seed < 2**63:
            raise NoiseConfigError(f"noise field 'seed' = {self.seed!r}: must be in [0, 2^63)")
        checks = {
            "camera_hfov_deg": 0.0 < self.camera_hfov_deg < 180.0,
            "blur_plane_depth_m": math.isfinite(self.blur_plane_depth_m)
            and self.blur_plane_depth_m > 0.0,
            "imu_rate_hz": math.isfinite(self.imu_rate_hz) and self.imu_rate_hz > 0.0,
            "depth_uint16_scale_m": math.isfinite(self.depth_uint16_scale_m)
            and self.depth_uint16_scale_m > 0.0,
        }
        for name, ok in checks.items():
            if not ok:
                allowed = "(0, 180)" if name == "camera_hfov_deg" else "> 0"
                raise NoiseConfigError(
                    f"noise field '{name}' = {getattr(self, name)!r}: must be {allowed}"
                )
        if self.motion_type not in ("imu", "odometry"):
            raise NoiseConfigError(
                f"noise field 'motion_type' = {self.motion_type!r}: allowed 'imu' or 'odometry'"
            )
        if not self.topics:
            raise NoiseConfigError("noise field 'input_topics' is empty: nothing to add noise to")
        inputs = [t.input_topic for t in self.topics]
        outputs = [t.output_topic for t in self.topics]
        for name, values in (("input_topics", inputs), ("output_topics", outputs)):
            dup = sorted({v for v in values if values.count(v) > 1})
            if dup:
                raise NoiseConfigError(f"noise field '{name}' lists {dup} more than once")
            bad = [v for v in values if not v.startswith("/")]
            if bad:
                raise NoiseConfigError(
                    f"noise field '{name}': topics {bad} must be absolute ('/...')"
                )
        clash = sorted(set(inputs) & set(outputs))
        if clash:
            raise NoiseConfigError(
                f"noise field 'output_topics' reuses input topics {clash}: outputs must be new"
            )
        for t in self.topics:
            if t.preset not in PRESETS[t.model]:
                raise NoiseConfigError(
                    f"noise field 'presets': '{t.preset}' is not a {t.model.value} preset (topic "
                    f"{t.input_topic}); available: {sorted(PRESETS[t.model])}"
                )
            if (
                t.model is ModelKind.RGB
                and needs_motion(rgb_preset(t.preset))
                and not self.motion_topic
            ):
                raise NoiseConfigError(
                    f"RGB topic {t.input_topic} uses preset '{t.preset}' (blur/rolling shutter), "
                    "but noise field 'motion_topic' is empty: give the robot's IMU or odometry "
                    "topic, or choose preset 'photometric_only'"
                )


def needs_motion(params: RgbNoiseParams) -> bool:
    """True when the RGB effects depend on the camera motion."""
    return params.blur or params.readout_mean_s > 0.0 or params.readout_std_s > 0.0


_KEYS = {
    "seed",
    "input_topics",
    "output_topics",
    "models",
    "presets",
    "motion_topic",
    "motion_type",
    "camera_hfov_deg",
    "blur_plane_depth_m",
    "imu_rate_hz",
    "depth_uint16_scale_m",
    "use_sim_time",
}


def config_from_parameters(params: Mapping[str, Any]) -> NoiseConfig:
    """Build the config from a flat parameter mapping (ROS parameter names).

    Raises:
        NoiseConfigError: unknown or missing keys, wrong types, unknown models/presets.
    """
    unknown = sorted(set(params) - _KEYS)
    if unknown:
        raise NoiseConfigError(f"unknown noise parameters {unknown}; allowed: {sorted(_KEYS)}")
    lists: dict[str, list[str]] = {}
    for key in ("input_topics", "output_topics", "models", "presets"):
        value = params.get(key)
        if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
            raise NoiseConfigError(f"noise field '{key}' = {value!r}: must be a list of strings")
        lists[key] = list(value)
    lengths = {k: len(v) for k, v in lists.items()}
    if len(set(lengths.values())) != 1:
        raise NoiseConfigError(f"noise topic lists must have equal lengths, got {lengths}")
    valid_models = [m.value for m in ModelKind]
    topics = []
    for inp, out, model, preset in zip(
        lists["input_topics"],
        lists["output_topics"],
        lists["models"],
        lists["presets"],
        strict=True,
    ):
        if model not in valid_models:
            raise NoiseConfigError(
                f"noise field 'models': unknown model '{model}' for topic {inp}; "
                f"allowed: {valid_models}"
            )
        topics.append(TopicNoise(inp, out, ModelKind(model), preset))
    seed = params.get("seed")
    if not isinstance(seed, int) or isinstance(seed, bool):
        raise NoiseConfigError(f"noise field 'seed' = {seed!r}: must be an integer")
    kwargs: dict[str, Any] = {}
    for key, kind in (
        ("motion_topic", str),
        ("motion_type", str),
        ("camera_hfov_deg", float),
        ("blur_plane_depth_m", float),
        ("imu_rate_hz", float),
        ("depth_uint16_scale_m", float),
    ):
        if key in params:
            value = params[key]
            if kind is float and isinstance(value, int) and not isinstance(value, bool):
                value = float(value)
            if not isinstance(value, kind):
                raise NoiseConfigError(
                    f"noise field '{key}' = {value!r}: must be a {kind.__name__}"
                )
            kwargs[key] = value
    return NoiseConfig(seed=seed, topics=tuple(topics), **kwargs)


def load_config(path: Path, seed: int | None = None) -> NoiseConfig:
    """Read a ROS 2 parameters file (`noise_node: ros__parameters:`); `seed` overrides its seed."""
    try:
        doc = yaml.safe_load(Path(path).read_text())
    except (OSError, yaml.YAMLError) as err:
        raise NoiseConfigError(f"cannot read noise parameters file {path}: {err}") from err
    try:
        params = dict(doc[NODE_NAME]["ros__parameters"])
    except (KeyError, TypeError) as err:
        raise NoiseConfigError(
            f"{path}: expected '{NODE_NAME}: ros__parameters: ...' at the top level"
        ) from err
    if seed is not None:
        params["seed"] = seed
    try:
        return config_from_parameters(params)
    except NoiseConfigError as err:
        raise NoiseConfigError(f"{path}: {err}") from err
