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
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any, ClassVar

from grade_common.schema import PARAMETER, Checked, Wording, bounds, from_mapping, text
from grade_common.textfile import read_yaml
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


# Parameter phrasing naming the field as the parameters file does: `noise field 'seed' = 'x' is
# invalid: must be an integer`.
WORDING = replace(
    PARAMETER, error=NoiseConfigError, root="noise parameters", name="noise field '{path}'"
)
_POSITIVE = bounds(0.0, exclusive_min=True)


@dataclass(frozen=True)
class TopicNoise:
    """One noised stream: input topic, output topic, model and preset name."""

    input_topic: str
    output_topic: str
    model: ModelKind
    preset: str


@dataclass(frozen=True)
class NoiseConfig(Checked):
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

    WORDING: ClassVar[Wording] = WORDING

    seed: int = field(metadata=bounds(0, 2**63 - 1))
    topics: tuple[TopicNoise, ...]
    motion_topic: str = field(default="", metadata=text(allow_empty=True))
    motion_type: str = field(default="imu", metadata=text("imu|odometry"))
    camera_hfov_deg: float = field(
        default=88.95, metadata=bounds(0.0, 180.0, exclusive_min=True, exclusive_max=True)
    )
    blur_plane_depth_m: float = field(default=2.0, metadata=_POSITIVE)
    imu_rate_hz: float = field(default=240.0, metadata=_POSITIVE)
    depth_uint16_scale_m: float = field(default=0.001, metadata=_POSITIVE)

    def validate(self, path: str) -> None:
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


@dataclass(frozen=True)
class _TopicLists:
    """The topics as a ROS 2 parameters file gives them: parallel lists (it has no list of
    mappings), one entry per noised stream."""

    input_topics: tuple[str, ...]
    output_topics: tuple[str, ...]
    models: tuple[str, ...]
    presets: tuple[str, ...]

    def validate(self, path: str) -> None:
        lengths = {f.name: len(getattr(self, f.name)) for f in fields(self)}
        if len(set(lengths.values())) != 1:
            raise NoiseConfigError(f"noise topic lists must have equal lengths, got {lengths}")
        valid_models = [m.value for m in ModelKind]
        for topic, model in zip(self.input_topics, self.models, strict=True):
            if model not in valid_models:
                raise NoiseConfigError(
                    f"noise field 'models': unknown model '{model}' for topic {topic}; "
                    f"allowed: {valid_models}"
                )

    def topics(self) -> list[dict[str, str]]:
        """One `TopicNoise` mapping per entry."""
        return [
            {"input_topic": i, "output_topic": o, "model": m, "preset": p}
            for i, o, m, p in zip(
                self.input_topics, self.output_topics, self.models, self.presets, strict=True
            )
        ]


_TOPIC_LISTS = tuple(f.name for f in fields(_TopicLists))
# The node's clock parameter travels in the same file; the pipeline does not use it.
_NODE_ONLY = ("use_sim_time",)


def config_from_parameters(params: Mapping[str, Any]) -> NoiseConfig:
    """Build the config from a flat parameter mapping (ROS parameter names).

    Raises:
        NoiseConfigError: unknown or missing keys, wrong types, unknown models/presets.
    """
    known = {f.name for f in fields(NoiseConfig) if f.name != "topics"}
    known |= {*_TOPIC_LISTS, *_NODE_ONLY}
    unknown = sorted(set(params) - known)
    if unknown:
        raise NoiseConfigError(f"unknown noise parameters {unknown}; allowed: {sorted(known)}")
    lists = from_mapping(
        _TopicLists, {k: v for k, v in params.items() if k in _TOPIC_LISTS}, wording=WORDING
    )
    rest = {k: v for k, v in params.items() if k not in _TOPIC_LISTS and k not in _NODE_ONLY}
    return from_mapping(NoiseConfig, {**rest, "topics": lists.topics()})


def load_config(path: Path, seed: int | None = None) -> NoiseConfig:
    """Read a ROS 2 parameters file (`noise_node: ros__parameters:`); `seed` overrides its seed."""
    doc = read_yaml(path, "noise parameters file", error=NoiseConfigError)
    try:
        params = dict(doc[NODE_NAME]["ros__parameters"])
    except (KeyError, TypeError, ValueError) as err:
        raise NoiseConfigError(
            f"{path}: expected '{NODE_NAME}: ros__parameters: ...' at the top level"
        ) from err
    if seed is not None:
        params["seed"] = seed
    try:
        return config_from_parameters(params)
    except NoiseConfigError as err:
        raise NoiseConfigError(f"{path}: {err}") from err
