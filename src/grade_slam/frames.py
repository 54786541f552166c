"""One RGB-D frame as every backend receives it (arrays, not messages)."""

from __future__ import annotations

import bisect
from dataclasses import dataclass, replace
from fnmatch import fnmatchcase

import cv2
import numpy as np
from numpy.typing import NDArray

from grade_common.types import FloatArray
from grade_slam.errors import SlamInputError


@dataclass(frozen=True)
class ImuSamples:
    """The IMU samples an inertial backend integrates up to one frame, in the IMU's own frame.

    stamps_ns: (N,) increasing, in (previous frame's stamp, this frame's stamp];
    angular_velocity_rps: (N, 3) gyroscope, rad/s; specific_force_mps2: (N, 3) accelerometer
    (gravity included, +9.81 m/s^2 up at rest), m/s^2; pose_imu_optical: 4x4, the camera's
    optical frame in the IMU frame (REP 103 frames, from the robot model's mounts).
    """

    stamps_ns: NDArray[np.int64]
    angular_velocity_rps: FloatArray
    specific_force_mps2: FloatArray
    pose_imu_optical: FloatArray

    def __post_init__(self) -> None:
        n = self.stamps_ns.shape[0] if self.stamps_ns.ndim == 1 else -1
        if n < 0 or self.angular_velocity_rps.shape != (n, 3):
            raise SlamInputError(
                f"IMU samples: stamps {self.stamps_ns.shape} and angular velocities "
                f"{self.angular_velocity_rps.shape} must be (N,) and (N, 3)"
            )
        if self.specific_force_mps2.shape != (n, 3):
            raise SlamInputError(
                f"IMU samples: specific forces {self.specific_force_mps2.shape} must be ({n}, 3)"
            )
        if n > 1 and bool(np.any(np.diff(self.stamps_ns) <= 0)):
            raise SlamInputError("IMU samples: stamps must increase strictly")
        if np.asarray(self.pose_imu_optical).shape != (4, 4):
            raise SlamInputError(
                f"IMU samples: pose_imu_optical must be 4x4, got "
                f"{np.asarray(self.pose_imu_optical).shape}"
            )

    def as_orb_slam3_rows(self) -> FloatArray:
        """(N, 7) rows [t_s, gx, gy, gz, ax, ay, az], the layout pyorbslam3 takes."""
        rows = np.empty((self.stamps_ns.shape[0], 7), dtype=np.float64)
        rows[:, 0] = self.stamps_ns * 1e-9
        rows[:, 1:4] = self.angular_velocity_rps
        rows[:, 4:7] = self.specific_force_mps2
        return rows


class ImuBuffer:
    """IMU samples as they arrive, handed out frame by frame (`take_until`)."""

    def __init__(self, limit: int = 2400) -> None:
        self._limit = limit  # 10 s at 240 Hz: older samples no frame can still need
        self._stamps_ns: list[int] = []
        self._gyro: list[tuple[float, float, float]] = []
        self._accel: list[tuple[float, float, float]] = []
        self.received = 0

    def add(
        self,
        stamp_ns: int,
        angular_velocity_rps: tuple[float, float, float],
        specific_force_mps2: tuple[float, float, float],
    ) -> None:
        """Append a sample; a repeated or late one (not after the newest) is ignored."""
        self.received += 1
        if self._stamps_ns and stamp_ns <= self._stamps_ns[-1]:
            return
        self._stamps_ns.append(stamp_ns)
        self._gyro.append(angular_velocity_rps)
        self._accel.append(specific_force_mps2)
        if len(self._stamps_ns) > self._limit:
            del self._stamps_ns[0], self._gyro[0], self._accel[0]

    def covers(self, stamp_ns: int) -> bool:
        """Whether a sample at or after `stamp_ns` has arrived (the frame's samples are all in)."""
        return bool(self._stamps_ns) and self._stamps_ns[-1] >= stamp_ns

    def take_until(self, stamp_ns: int, pose_imu_optical: FloatArray) -> ImuSamples:
        """The samples up to `stamp_ns` (removed from the buffer): those since the last call."""
        n = bisect.bisect_right(self._stamps_ns, stamp_ns)
        samples = ImuSamples(
            np.array(self._stamps_ns[:n], dtype=np.int64),
            np.array(self._gyro[:n], dtype=np.float64).reshape(n, 3),
            np.array(self._accel[:n], dtype=np.float64).reshape(n, 3),
            np.asarray(pose_imu_optical, dtype=np.float64),
        )
        del self._stamps_ns[:n], self._gyro[:n], self._accel[:n]
        return samples


@dataclass(frozen=True)
class RgbdFrame:
    """A registered colour + depth pair: same size, same optical frame, same stamp.

    rgb: (H, W, 3) uint8; depth_m: (H, W) float32 metres to the image plane, 0 = no return;
    camera_matrix: 3x3 intrinsics K; dynamic_mask: (H, W) bool, True on people and flying
    objects (from the simulator's semantic image), None when the run has no semantic stream;
    imu: the IMU samples since the previous frame, for inertial backends (None otherwise).
    """

    stamp_ns: int
    rgb: NDArray[np.uint8]
    depth_m: NDArray[np.float32]
    camera_matrix: FloatArray
    dynamic_mask: NDArray[np.bool_] | None = None
    imu: ImuSamples | None = None

    def __post_init__(self) -> None:
        if self.rgb.ndim != 3 or self.rgb.shape[2] != 3 or self.rgb.dtype != np.uint8:
            raise SlamInputError(
                f"frame {self.stamp_ns}: rgb must be (H, W, 3) uint8, got "
                f"{self.rgb.shape} {self.rgb.dtype}"
            )
        if self.depth_m.shape != self.rgb.shape[:2]:
            raise SlamInputError(
                f"frame {self.stamp_ns}: depth {self.depth_m.shape} and rgb "
                f"{self.rgb.shape[:2]} differ in size; the backend needs registered images"
            )
        if self.dynamic_mask is not None and self.dynamic_mask.shape != self.depth_m.shape:
            raise SlamInputError(
                f"frame {self.stamp_ns}: dynamic mask {self.dynamic_mask.shape} and depth "
                f"{self.depth_m.shape} differ in size"
            )
        k = np.asarray(self.camera_matrix)
        if k.shape != (3, 3) or not np.all(np.isfinite(k)) or k[0, 0] <= 0 or k[1, 1] <= 0:
            raise SlamInputError(
                f"frame {self.stamp_ns}: camera matrix must be 3x3 with positive focal lengths, "
                f"got {k.tolist()}"
            )


# Semantic classes that move (grade_sim.engine.semantic.BASE_CLASSES: ids are stable across
# scenes): people and the flying objects.
DYNAMIC_CLASSES = ("person", "flying_*")
_MASK_GREY = np.uint8(128)


def dynamic_class_ids(class_names: tuple[str, ...]) -> frozenset[int]:
    """Ids (index in `class_names`) of the classes matching DYNAMIC_CLASSES."""
    return frozenset(
        i
        for i, name in enumerate(class_names)
        if any(fnmatchcase(name, p) for p in DYNAMIC_CLASSES)
    )


def dynamic_mask_of(
    class_image: NDArray[np.uint16], dynamic_ids: frozenset[int]
) -> NDArray[np.bool_]:
    """True where the semantic class image shows a moving class."""
    lut = np.zeros(max(max(dynamic_ids, default=0), int(class_image.max(initial=0))) + 1, bool)
    lut[list(dynamic_ids)] = True
    return lut[class_image]


def mask_dynamic(frame: RgbdFrame, dilate_px: int) -> RgbdFrame:
    """The frame without its moving objects: an oracle DynaSLAM. Masked pixels (grown by
    `dilate_px`, so a feature's patch does not reach into a person) get no depth and one flat
    grey, so no backend finds geometry or corners on them; a frame without a mask is refused.

    Raises:
        SlamInputError: the frame has no dynamic mask (no semantic stream).
    """
    if frame.dynamic_mask is None:
        raise SlamInputError(
            f"frame {frame.stamp_ns}: mask_dynamic needs the semantic class image; add "
            "`semantic` to the camera's streams"
        )
    mask = frame.dynamic_mask
    if dilate_px > 0 and mask.any():
        kernel = np.ones((2 * dilate_px + 1, 2 * dilate_px + 1), np.uint8)
        mask = cv2.dilate(mask.astype(np.uint8), kernel).astype(bool)
    rgb = frame.rgb.copy()
    rgb[mask] = _MASK_GREY
    depth_m = frame.depth_m.copy()
    depth_m[mask] = 0.0
    return replace(frame, rgb=rgb, depth_m=depth_m, dynamic_mask=mask)
