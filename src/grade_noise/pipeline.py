"""Stateful noise pipeline over topics: one generator and one model state per stream.

Both the online node and the offline tool feed it the same decoded samples in stamp order, so the
same seed and the same input sequence give the same output.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from grade_common.types import FloatArray
from grade_noise.config import ModelKind, NoiseConfig, TopicNoise, needs_motion
from grade_noise.depth import depth_noise, depth_preset
from grade_noise.errors import NoiseConfigError, NoiseInputError
from grade_noise.images import (
    DEPTH_ENCODINGS,
    RGB_ENCODINGS,
    depth_to_metres,
    metres_to_depth,
)
from grade_noise.imu import ImuNoiseState, imu_noise, imu_preset, initial_imu_state
from grade_noise.odometry import (
    OdometrySample,
    OdometryState,
    odometry_noise,
    odometry_preset,
)
from grade_noise.rgb import (
    CameraMotion,
    RgbNoiseParams,
    RgbSequenceState,
    blur_and_shutter,
    initial_rgb_state,
    intrinsics_from_hfov,
    rgb_noise,
    rgb_preset,
)

# Body (x forward, y left, z up) -> optical (x right, y down, z forward) for a camera looking
# along the body x axis.
ROTATION_OPTICAL_BODY = np.array([[0.0, -1.0, 0.0], [0.0, 0.0, -1.0], [1.0, 0.0, 0.0]])


# A camera twist older (or newer) than this is not used for blur: the motion stream has a gap.
MAX_MOTION_AGE_NS = 500_000_000


def stream_rng(seed: int, topic: str) -> np.random.Generator:
    """Generator of one stream: independent of the other topics and of their order."""
    return np.random.default_rng([seed, zlib.crc32(topic.encode())])


@dataclass
class _Stream:
    spec: TopicNoise
    rng: np.random.Generator
    imu_state: ImuNoiseState | None = None
    last_stamp_ns: int | None = None
    rgb_state: RgbSequenceState | None = None
    odom_state: OdometryState = field(default_factory=OdometryState)


class NoisePipeline:
    """Applies the configured noise per input topic."""

    def __init__(self, config: NoiseConfig) -> None:
        self.config = config
        self._streams: dict[str, _Stream] = {}
        for spec in config.topics:
            rng = stream_rng(config.seed, spec.input_topic)
            stream = _Stream(spec, rng)
            if spec.model is ModelKind.IMU:
                stream.imu_state = initial_imu_state(imu_preset(spec.preset), rng)
            elif spec.model is ModelKind.RGB:
                stream.rgb_state = initial_rgb_state(rgb_preset(spec.preset), rng)
            self._streams[spec.input_topic] = stream
        self._motion: CameraMotion | None = None
        self._motion_stamp_ns: int | None = None

    def spec(self, topic: str) -> TopicNoise:
        """The configuration of an input topic (NoiseConfigError if it is not configured)."""
        return self._stream(topic).spec

    def _stream(self, topic: str) -> _Stream:
        try:
            return self._streams[topic]
        except KeyError:
            raise NoiseConfigError(
                f"topic {topic} is not configured; configured: {sorted(self._streams)}"
            ) from None

    def _check(
        self,
        topic: str,
        model: ModelKind,
        encoding: str | None = None,
        encodings: Sequence[str] = (),
    ) -> _Stream:
        """The topic's stream, checked to be of `model`; an image's `encoding` in `encodings`."""
        stream = self._stream(topic)
        if stream.spec.model is not model:
            raise NoiseConfigError(
                f"topic {topic} is configured as '{stream.spec.model.value}', not {model.value}"
            )
        if encoding is not None and encoding not in encodings:
            label = "RGB" if model is ModelKind.RGB else model.value
            raise NoiseInputError(
                f"{label} topic {topic}: unsupported encoding '{encoding}'; allowed "
                f"{list(encodings)}"
            )
        return stream

    def update_motion(
        self, stamp_ns: int, angular_body_rad_s: FloatArray, linear_body_m_s: FloatArray | None
    ) -> None:
        """Record the robot's latest twist in the body frame (from IMU: no linear velocity)."""
        omega = np.asarray(angular_body_rad_s, dtype=np.float64)
        vel = np.zeros(3) if linear_body_m_s is None else np.asarray(linear_body_m_s, np.float64)
        if not (np.all(np.isfinite(omega)) and np.all(np.isfinite(vel))):
            raise NoiseInputError(
                f"motion topic {self.config.motion_topic} sample contains NaN or infinite values"
            )
        self._motion = CameraMotion(ROTATION_OPTICAL_BODY @ omega, ROTATION_OPTICAL_BODY @ vel)
        self._motion_stamp_ns = stamp_ns

    def update_camera_motion(
        self, stamp_ns: int, omega_optical_rad_s: FloatArray, velocity_optical_m_s: FloatArray
    ) -> None:
        """Record the camera twist given directly in the optical frame (e.g. from camera poses)."""
        omega = np.asarray(omega_optical_rad_s, dtype=np.float64)
        vel = np.asarray(velocity_optical_m_s, dtype=np.float64)
        if not (np.all(np.isfinite(omega)) and np.all(np.isfinite(vel))):
            raise NoiseInputError("camera motion sample contains NaN or infinite values")
        self._motion = CameraMotion(omega, vel)
        self._motion_stamp_ns = stamp_ns

    def imu(
        self, topic: str, stamp_ns: int, gyro_rad_s: FloatArray, accel_m_s2: FloatArray
    ) -> tuple[FloatArray, FloatArray]:
        """Noisy angular velocity and linear acceleration of one IMU message."""
        stream = self._check(topic, ModelKind.IMU)
        if stream.last_stamp_ns is None:
            dt_s = 1.0 / self.config.imu_rate_hz
        elif stamp_ns <= stream.last_stamp_ns:
            raise NoiseInputError(
                f"IMU topic {topic}: stamp {stamp_ns} ns is not after the previous "
                f"{stream.last_stamp_ns} ns"
            )
        else:
            dt_s = (stamp_ns - stream.last_stamp_ns) * 1e-9
        assert stream.imu_state is not None
        g, a, stream.imu_state = imu_noise(
            np.asarray(gyro_rad_s),
            np.asarray(accel_m_s2),
            dt_s,
            stream.imu_state,
            stream.rng,
            imu_preset(stream.spec.preset),
        )
        stream.last_stamp_ns = stamp_ns
        return g, a

    def rgb(
        self,
        topic: str,
        stamp_ns: int,
        image: NDArray[np.generic],
        encoding: str,
        k: FloatArray | None = None,
    ) -> NDArray[np.uint8]:
        """Noisy 8-bit colour image (rgb8 or bgr8); k defaults to the configured field of view."""
        stream = self._check(topic, ModelKind.RGB, encoding, RGB_ENCODINGS)
        params = rgb_preset(stream.spec.preset)
        motion = self._motion_for(topic, stamp_ns, params)
        img = np.asarray(image, dtype=np.uint8)
        h, w = img.shape[:2]
        kk = intrinsics_from_hfov(w, h, self.config.camera_hfov_deg) if k is None else k
        assert stream.rgb_state is not None
        return rgb_noise(
            img, kk, motion, stream.rgb_state, stream.rng, params, self.config.blur_plane_depth_m
        )

    def rgb_geometry(
        self, topic: str, stamp_ns: int, image: NDArray[np.uint8], k: FloatArray | None = None
    ) -> NDArray[np.uint8]:
        """The motion blur and rolling shutter that `rgb` gives topic's frame at stamp_ns, alone
        (no photometric noise, no randomness), on any 8-bit image of that frame: A-GRADE's
        blurred masks (grade_noise.masks). Call it after the motion update of that frame."""
        stream = self._streams.get(topic)
        if stream is None or stream.spec.model is not ModelKind.RGB:
            raise NoiseInputError(f"topic {topic} has no RGB noise model")
        params = rgb_preset(stream.spec.preset)
        motion = self._motion_for(topic, stamp_ns, params)
        h, w = image.shape[:2]
        kk = intrinsics_from_hfov(w, h, self.config.camera_hfov_deg) if k is None else k
        assert stream.rgb_state is not None
        exposure_s = stream.rgb_state.exposure_s if params.blur else 0.0
        return blur_and_shutter(
            image,
            kk,
            motion,
            exposure_s,
            stream.rgb_state.readout_s,
            self.config.blur_plane_depth_m,
            params.max_step_px,
        )

    def _motion_for(self, topic: str, stamp_ns: int, params: RgbNoiseParams) -> CameraMotion:
        """The camera motion blurring topic's frame at stamp_ns (zero when the preset has no
        motion effects)."""
        if not needs_motion(params):
            return CameraMotion.zero()
        if self._motion is None:
            raise NoiseInputError(
                f"RGB topic {topic} at {stamp_ns} ns needs the camera motion for blur, but no "
                f"sample arrived yet on motion topic '{self.config.motion_topic}'"
            )
        age_ns = abs(stamp_ns - (self._motion_stamp_ns or 0))
        if age_ns > MAX_MOTION_AGE_NS:
            raise NoiseInputError(
                f"RGB topic {topic} at {stamp_ns} ns: the latest sample on motion topic "
                f"'{self.config.motion_topic}' is {age_ns * 1e-9:.3f} s away (> "
                f"{MAX_MOTION_AGE_NS * 1e-9} s); the IMU/odometry stream stopped or lags"
            )
        return self._motion

    def depth(
        self,
        topic: str,
        image: NDArray[np.generic],
        encoding: str,
        focal_px: float | None = None,
        uint16_scale_m: float | None = None,
    ) -> NDArray[np.generic]:
        """Noisy depth image in its own encoding (invalid: NaN in 32FC1, 0 in 16UC1)."""
        stream = self._check(topic, ModelKind.DEPTH, encoding, DEPTH_ENCODINGS)
        scale = self.config.depth_uint16_scale_m if uint16_scale_m is None else uint16_scale_m
        w = image.shape[1]
        f = (
            float(intrinsics_from_hfov(w, image.shape[0], self.config.camera_hfov_deg)[0, 0])
            if focal_px is None
            else focal_px
        )
        z = depth_to_metres(np.asarray(image), encoding, scale)
        noisy = depth_noise(z, f, stream.rng, depth_preset(stream.spec.preset))
        return metres_to_depth(noisy, encoding, scale)

    def odometry(self, topic: str, sample: OdometrySample) -> OdometrySample:
        """Drifted pose and noisy twist of one odometry message."""
        stream = self._check(topic, ModelKind.ODOMETRY)
        out, stream.odom_state = odometry_noise(
            sample, stream.odom_state, stream.rng, odometry_preset(stream.spec.preset)
        )
        return out
