"""`noise_node`: republish configured sensor topics with noise, same stamps and frame ids.

Parameters (see config/noise.yaml and grade_noise.config): seed, input_topics, output_topics,
models, presets, motion_topic, motion_type, camera_hfov_deg, blur_plane_depth_m, imu_rate_hz,
depth_uint16_scale_m. Errors in one message (NaN, unsupported encoding, no motion sample yet) are
logged with the topic and the message is dropped; configuration errors stop the node at start.
"""

from __future__ import annotations

import array
import json
import sys
from collections.abc import Callable
from typing import Any

import numpy as np
from nav_msgs.msg import Odometry
from rcl_interfaces.msg import ParameterDescriptor
from rclpy.exceptions import ParameterUninitializedException
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.qos import QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import Image, Imu

from grade_common.images import array_to_data, image_to_array
from grade_common.node import spin as grade_spin
from grade_noise.config import MESSAGE_TYPES, ModelKind, NoiseConfig, config_from_parameters
from grade_noise.errors import NoiseError, NoiseInputError
from grade_noise.images import DEPTH_ENCODINGS, RGB_ENCODINGS
from grade_noise.odometry import OdometrySample
from grade_noise.pipeline import NoisePipeline

_MSG_CLASSES: dict[ModelKind, Any] = {
    ModelKind.IMU: Imu,
    ModelKind.RGB: Image,
    ModelKind.DEPTH: Image,
    ModelKind.ODOMETRY: Odometry,
}

_PARAMS: dict[str, tuple[Any, str]] = {
    "seed": (42, "seed of every noise stream"),
    "input_topics": (Parameter.Type.STRING_ARRAY, "topics to add noise to"),
    "output_topics": (Parameter.Type.STRING_ARRAY, "noisy topic per input topic"),
    "models": (Parameter.Type.STRING_ARRAY, "imu | rgb | depth | odometry, per input topic"),
    "presets": (Parameter.Type.STRING_ARRAY, "noise preset per input topic"),
    "motion_topic": ("", "IMU or odometry topic driving RGB blur and rolling shutter"),
    "motion_type": ("imu", "type of motion_topic: imu | odometry"),
    "camera_hfov_deg": (88.95, "camera horizontal field of view for K"),
    "blur_plane_depth_m": (2.0, "scene plane depth for translational blur"),
    "imu_rate_hz": (240.0, "nominal IMU rate (first sample period)"),
    "depth_uint16_scale_m": (0.001, "metres per unit of 16UC1 depth"),
}


# Inputs: best effort matches reliable and best-effort publishers alike; the queue rides out a
# slow RGB frame instead of dropping what arrives meanwhile (the sensor-data preset keeps 5):
# one second of 30 Hz images, two seconds of 240 Hz IMU. Outputs: reliable reaches reliable
# and best-effort subscribers.
INPUT_QOS = QoSProfile(depth=30, reliability=ReliabilityPolicy.BEST_EFFORT)
FAST_INPUT_QOS = QoSProfile(depth=500, reliability=ReliabilityPolicy.BEST_EFFORT)
OUTPUT_QOS = QoSProfile(depth=30, reliability=ReliabilityPolicy.RELIABLE)
_IMAGE_MODELS = (ModelKind.RGB, ModelKind.DEPTH)
# Printed at shutdown with the number of noisy messages published per output topic.
PUBLISHED_COUNTS_PREFIX = "published counts: "


def _vec(v: Any) -> np.ndarray:
    return np.array([v.x, v.y, v.z], dtype=np.float64)


def _stamp_ns(msg: Any) -> int:
    return int(msg.header.stamp.sec) * 1_000_000_000 + int(msg.header.stamp.nanosec)


class NoiseNode(Node):
    """Subscribes to the configured topics and publishes their noisy versions."""

    def __init__(self) -> None:
        super().__init__("noise_node")
        for name, (default, text) in _PARAMS.items():
            self.declare_parameter(name, default, ParameterDescriptor(description=text))
        values: dict[str, Any] = {}
        for name in _PARAMS:
            try:
                value = self.get_parameter(name).value
            except ParameterUninitializedException:
                continue  # a list nobody set: the config reports what is missing
            values[name] = list(value) if isinstance(value, list | tuple) else value
        for key in ("input_topics", "output_topics", "models", "presets"):
            values.setdefault(key, [])
        self.config: NoiseConfig = config_from_parameters(values)
        self.pipeline = NoisePipeline(self.config)
        self._errors_logged: set[str] = set()
        self._subs: list[Any] = []
        self._pubs: dict[str, Any] = {}
        self.published: dict[str, int] = {}
        for spec in self.config.topics:
            cls = _MSG_CLASSES[spec.model]
            self._pubs[spec.input_topic] = self.create_publisher(cls, spec.output_topic, OUTPUT_QOS)
            self.published[spec.output_topic] = 0
            handler = self._handler(spec.input_topic, spec.output_topic, spec.model)
            qos = INPUT_QOS if spec.model in _IMAGE_MODELS else FAST_INPUT_QOS
            self._subs.append(self.create_subscription(cls, spec.input_topic, handler, qos))
        if self.config.motion_topic:
            motion_cls = Imu if self.config.motion_type == "imu" else Odometry
            self._subs.append(
                self.create_subscription(
                    motion_cls, self.config.motion_topic, self._on_motion, FAST_INPUT_QOS
                )
            )
        self._type_timer = self.create_timer(1.0, self._check_topic_types)
        self.get_logger().info(
            f"noise on {len(self.config.topics)} topics, seed {self.config.seed}, motion from "
            f"'{self.config.motion_topic or 'none'}'"
        )

    def _report(self, key: str, text: str) -> None:
        # Log each distinct problem once: a 30 Hz stream of the same error would drown the log.
        if key not in self._errors_logged:
            self._errors_logged.add(key)
            self.get_logger().error(text)

    def _check_topic_types(self) -> None:
        # Publishers only: this node's own subscription always shows the expected type.
        watched = [(s.input_topic, MESSAGE_TYPES[s.model]) for s in self.config.topics]
        if self.config.motion_topic:
            motion_type = (
                "sensor_msgs/msg/Imu"
                if self.config.motion_type == "imu"
                else "nav_msgs/msg/Odometry"
            )
            watched.append((self.config.motion_topic, motion_type))
        for topic, expected in watched:
            types = sorted({i.topic_type for i in self.get_publishers_info_by_topic(topic)})
            if any(t != expected for t in types):
                self._report(
                    f"type:{topic}",
                    f"topic {topic} has type(s) {types}; this node expects {expected} "
                    "there: messages are not received, check the models/motion_type",
                )

    def _on_motion(self, msg: Any) -> None:
        try:
            if isinstance(msg, Imu):
                self.pipeline.update_motion(_stamp_ns(msg), _vec(msg.angular_velocity), None)
            else:
                self.pipeline.update_motion(
                    _stamp_ns(msg), _vec(msg.twist.twist.angular), _vec(msg.twist.twist.linear)
                )
        except NoiseError as err:
            self._report(f"motion:{err}", f"motion topic {self.config.motion_topic}: {err}")

    def destroy_node(self) -> None:
        # The counts let a delivery check compare what arrived with what was published.
        print(PUBLISHED_COUNTS_PREFIX + json.dumps(self.published, sort_keys=True), flush=True)
        super().destroy_node()

    def _handler(self, topic: str, output: str, model: ModelKind) -> Callable[[Any], None]:
        convert = {
            ModelKind.IMU: self._noisy_imu,
            ModelKind.RGB: self._noisy_image,
            ModelKind.DEPTH: self._noisy_image,
            ModelKind.ODOMETRY: self._noisy_odometry,
        }[model]

        def on_message(msg: Any) -> None:
            try:
                out = convert(topic, model, msg)
            except NoiseError as err:
                self._report(
                    f"{topic}:{type(err).__name__}:{err}", f"{topic}: message dropped: {err}"
                )
                return
            self._pubs[topic].publish(out)
            self.published[output] += 1

        return on_message

    def _noisy_imu(self, topic: str, model: ModelKind, msg: Imu) -> Imu:
        gyro, accel = self.pipeline.imu(
            topic, _stamp_ns(msg), _vec(msg.angular_velocity), _vec(msg.linear_acceleration)
        )
        out = Imu()
        out.header = msg.header
        out.orientation = msg.orientation
        out.orientation_covariance = msg.orientation_covariance
        out.angular_velocity_covariance = msg.angular_velocity_covariance
        out.linear_acceleration_covariance = msg.linear_acceleration_covariance
        out.angular_velocity.x, out.angular_velocity.y, out.angular_velocity.z = map(float, gyro)
        (out.linear_acceleration.x, out.linear_acceleration.y, out.linear_acceleration.z) = map(
            float, accel
        )
        return out

    def _noisy_image(self, topic: str, model: ModelKind, msg: Image) -> Image:
        allowed = RGB_ENCODINGS if model is ModelKind.RGB else DEPTH_ENCODINGS
        arr = image_to_array(msg, allowed, error=NoiseInputError)
        if model is ModelKind.RGB:
            noisy: np.ndarray = self.pipeline.rgb(topic, _stamp_ns(msg), arr, msg.encoding)
        else:
            noisy = self.pipeline.depth(topic, arr, msg.encoding)
        data, step = array_to_data(noisy, msg.encoding)
        out = Image()
        out.header = msg.header
        out.height, out.width, out.encoding = msg.height, msg.width, msg.encoding
        out.is_bigendian = 0
        out.step = step
        out.data = array.array("B", data)
        return out

    def _noisy_odometry(self, topic: str, model: ModelKind, msg: Odometry) -> Odometry:
        p, q = msg.pose.pose.position, msg.pose.pose.orientation
        sample = OdometrySample(
            _stamp_ns(msg),
            _vec(p),
            np.array([q.x, q.y, q.z, q.w]),
            _vec(msg.twist.twist.linear),
            _vec(msg.twist.twist.angular),
        )
        noisy = self.pipeline.odometry(topic, sample)
        out = Odometry()
        out.header, out.child_frame_id = msg.header, msg.child_frame_id
        out.pose.covariance, out.twist.covariance = msg.pose.covariance, msg.twist.covariance
        pp, qq = out.pose.pose.position, out.pose.pose.orientation
        pp.x, pp.y, pp.z = map(float, noisy.position)
        qq.x, qq.y, qq.z, qq.w = map(float, noisy.quat_xyzw)
        tl, ta = out.twist.twist.linear, out.twist.twist.angular
        tl.x, tl.y, tl.z = map(float, noisy.linear_m_s)
        ta.x, ta.y, ta.z = map(float, noisy.angular_rad_s)
        return out


main = grade_spin.node_main(
    "noise_node",
    NoiseNode,
    config_errors=(NoiseError,),
    config_error_what="error",
    config_error_code=1,
)


if __name__ == "__main__":
    sys.exit(main())
