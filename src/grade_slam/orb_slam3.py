"""ORB-SLAM3 RGB-D (the `pyorbslam3` bindings) as a whole tracking pipeline.

Built only by `grade_slam.backends` once `pyorbslam3` has imported (the module object is
passed in). ORB-SLAM3 needs the intrinsics at start-up, the node learns them from camera_info
with the first frame: the system is created on the first frame, from a settings file generated
from that frame's camera matrix and size (`settings_yaml`).

Poses: ORB-SLAM3's camera-in-world (`pose_wc`), whose world is its first keyframe's camera,
the same origin as the frame-to-frame tracker. When ORB-SLAM3 loses track for good (LOST) it
starts a new map at the identity; the tracker then re-anchors the new map at the last pose it
gave, as the frame-to-frame tracker restarts, so the trajectory does not jump to the origin.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

from grade_common.rotations import quat_to_matrix
from grade_common.types import FloatArray
from grade_noise.errors import NoiseConfigError
from grade_noise.imu import imu_preset
from grade_slam.config import SlamConfig
from grade_slam.errors import SlamConfigError, SlamError, SlamInputError
from grade_slam.frames import ImuSamples, RgbdFrame
from grade_slam.interfaces import TrackingStats, Trajectory

# ORB-SLAM3 works with a stereo baseline even for RGB-D (a virtual one: bf = baseline * fx);
# ThDepth counts in baselines. Any positive value gives the same depth threshold in metres.
_BASELINE_M = 0.08
# A pose change this far (metres + radians) from the constant-velocity prediction between two
# frames is ORB-SLAM3 moving its map (a flight at 1 m/s changes speed by millimetres a frame).
_JUMP = 0.05


@dataclass(frozen=True)
class ImuSettings:
    """What ORB-SLAM3's IMU_RGBD mode needs beyond the camera: the camera-IMU extrinsic and the
    IMU's continuous-time noise (the RotorS / Kalibr parameters ORB-SLAM3 also uses)."""

    pose_imu_optical: FloatArray  # Tbc: the optical frame in the IMU (body) frame, 4x4
    rate_hz: float
    gyro_noise_density: float  # rad/s/sqrt(Hz)
    accel_noise_density: float  # m/s^2/sqrt(Hz)
    gyro_random_walk: float  # rad/s^2/sqrt(Hz)
    accel_random_walk: float  # m/s^3/sqrt(Hz)
    fast_init: bool


def imu_settings(pose_imu_optical: FloatArray, config: SlamConfig) -> ImuSettings:
    """The IMU settings from the noise preset `config.imu_noise_preset` (grade_noise).

    Raises:
        SlamConfigError: an unknown preset (lists the valid ones), or one with a zero noise term
            (ORB-SLAM3 weights each IMU residual by the inverse of its noise).
    """
    try:
        noise = imu_preset(config.imu_noise_preset)
    except NoiseConfigError as err:
        raise SlamConfigError(f"imu_noise_preset = {config.imu_noise_preset!r}: {err}") from err
    terms = {
        "gyro noise density": noise.gyro.noise_density,
        "accel noise density": noise.accel.noise_density,
        "gyro random walk": noise.gyro.random_walk,
        "accel random walk": noise.accel.random_walk,
    }
    zero = [name for name, value in terms.items() if value <= 0.0]
    if zero:
        raise SlamConfigError(
            f"imu_noise_preset = {config.imu_noise_preset!r} is invalid for ORB-SLAM3: its "
            f"{', '.join(zero)} is 0, and ORB-SLAM3 weights IMU residuals by 1/noise^2; use "
            "a preset with noise (drone, consumer)"
        )
    pose = np.asarray(pose_imu_optical, dtype=np.float64)
    rotation = pose[:3, :3]
    if pose.shape != (4, 4) or not np.allclose(rotation @ rotation.T, np.eye(3), atol=1e-6):
        raise SlamConfigError(f"pose_imu_optical must be a rigid 4x4 transform, got {pose}")
    return ImuSettings(
        pose_imu_optical=pose,
        rate_hz=config.imu_rate_hz,
        gyro_noise_density=noise.gyro.noise_density,
        accel_noise_density=noise.accel.noise_density,
        gyro_random_walk=noise.gyro.random_walk,
        accel_random_walk=noise.accel.random_walk,
        fast_init=config.imu_fast_init,
    )


@dataclass(frozen=True)
class _OpencvMatrix:
    matrix: FloatArray


def _opencv_matrix(matrix: FloatArray) -> str:
    rows, cols = matrix.shape
    data = ", ".join(f"{float(v):.9g}" for v in matrix.ravel())
    return f"!!opencv-matrix\n  rows: {rows}\n  cols: {cols}\n  dt: f\n  data: [{data}]"


def settings_yaml(
    camera_matrix: FloatArray,
    width: int,
    height: int,
    config: SlamConfig,
    imu: ImuSettings | None = None,
) -> str:
    """ORB-SLAM3's settings (the classic `Camera.*` format) for an undistorted pinhole RGB-D
    camera whose depth is float metres (DepthMapFactor 1) and colour is RGB (Camera.RGB 1);
    with `imu`, also the IMU block of the IMU_RGBD mode (`Tbc`, `IMU.*`)."""
    k = np.asarray(camera_matrix, dtype=np.float64)
    fx, fy, cx, cy = float(k[0, 0]), float(k[1, 1]), float(k[0, 2]), float(k[1, 2])
    values: dict[str, Any] = {
        "Camera.type": '"PinHole"',
        "Camera.fx": fx,
        "Camera.fy": fy,
        "Camera.cx": cx,
        "Camera.cy": cy,
        "Camera.k1": 0.0,
        "Camera.k2": 0.0,
        "Camera.p1": 0.0,
        "Camera.p2": 0.0,
        "Camera.width": int(width),
        "Camera.height": int(height),
        "Camera.fps": float(config.camera_rate_hz),
        "Camera.bf": _BASELINE_M * fx,
        "Camera.RGB": 1,
        "ThDepth": config.close_depth_m / _BASELINE_M,
        "DepthMapFactor": 1.0,
        "ORBextractor.nFeatures": int(config.orb_features),
        "ORBextractor.scaleFactor": 1.2,
        "ORBextractor.nLevels": 8,
        "ORBextractor.iniThFAST": int(config.orb_fast_threshold),
        "ORBextractor.minThFAST": int(config.orb_min_fast_threshold),
        # Read by ORB-SLAM3's map drawer even without a viewer (it complains when missing).
        "Viewer.KeyFrameSize": 0.05,
        "Viewer.KeyFrameLineWidth": 1.0,
        "Viewer.GraphLineWidth": 0.9,
        "Viewer.PointSize": 2.0,
        "Viewer.CameraSize": 0.08,
        "Viewer.CameraLineWidth": 3.0,
        "Viewer.ViewpointX": 0.0,
        "Viewer.ViewpointY": -0.7,
        "Viewer.ViewpointZ": -1.8,
        "Viewer.ViewpointF": 500.0,
    }
    if imu is not None:
        values.update(
            {
                "Tbc": _OpencvMatrix(imu.pose_imu_optical),
                # ORB-SLAM3 reads the frequency as an integer
                "IMU.Frequency": round(imu.rate_hz),
                "IMU.NoiseGyro": imu.gyro_noise_density,
                "IMU.NoiseAcc": imu.accel_noise_density,
                "IMU.GyroWalk": imu.gyro_random_walk,
                "IMU.AccWalk": imu.accel_random_walk,
                "IMU.fastInit": int(imu.fast_init),
            }
        )
    lines = ["%YAML:1.0", ""]
    for key, value in values.items():
        if isinstance(value, _OpencvMatrix):
            lines.append(f"{key}: {_opencv_matrix(value.matrix)}")
            continue
        text = f"{value:.9g}" if isinstance(value, float) else str(value)
        if isinstance(value, float) and "." not in text and "e" not in text:
            text += ".0"  # OpenCV's FileStorage reads 1 as an int, and ORB-SLAM3 asks for a float
        lines.append(f"{key}: {text}")
    return "\n".join(lines) + "\n"


def _pose_gap(a: FloatArray, b: FloatArray) -> float:
    """How far apart two poses are: metres plus radians (a metre per radian)."""
    cos = np.clip((np.trace(a[:3, :3].T @ b[:3, :3]) - 1.0) / 2.0, -1.0, 1.0)
    return float(np.linalg.norm(a[:3, 3] - b[:3, 3]) + np.arccos(cos))


def mean_rigid(transforms: FloatArray) -> FloatArray:
    """The mean of (N, 4, 4) rigid transforms: the rotation nearest to the mean of the rotation
    matrices (chordal mean), the mean translation."""
    u, _, vt = np.linalg.svd(transforms[:, :3, :3].mean(axis=0))
    d = np.diag([1.0, 1.0, np.sign(np.linalg.det(u @ vt))])
    mean = np.eye(4)
    mean[:3, :3] = u @ d @ vt
    mean[:3, 3] = transforms[:, :3, 3].mean(axis=0)
    return mean


class OrbSlam3Tracker:
    """ORB-SLAM3 RGB-D, or RGB-D-inertial (`inertial`), over one stream of frames (stamps must
    increase; inertial: every frame carries the IMU samples since the previous one)."""

    def __init__(
        self, module: ModuleType, config: SlamConfig, vocabulary: Path, *, inertial: bool = False
    ) -> None:
        self._pos = module
        self._config = config
        self._vocabulary = vocabulary
        self._inertial = inertial
        self._slam: Any = None
        self._settings_dir = tempfile.TemporaryDirectory(prefix="grade_orbslam3_")
        self._size: tuple[int, int] | None = None
        self._last_stamp_ns = -1
        self._anchor = np.eye(4)  # map of ORB-SLAM3's current map in the estimate's origin
        self._lost = False  # ORB-SLAM3 said LOST: its next valid pose is in a new map
        self._last_pose: FloatArray | None = None
        self._moved_map = False  # the inertial map's frame moved: re-anchor (`_reanchor`)
        self._candidate: FloatArray | None = None  # the anchor of the moved map, not yet used
        # ORB-SLAM3's last two raw poses (`_jumped`)
        self._raw: tuple[FloatArray, FloatArray | None] | None = None
        self.stats = TrackingStats()
        self.trajectory = Trajectory()

    def _start(self, frame: RgbdFrame) -> None:
        height, width = frame.depth_m.shape
        imu = None
        if self._inertial:
            imu = imu_settings(self._imu_of(frame).pose_imu_optical, self._config)
        settings = Path(self._settings_dir.name) / "orb_slam3_rgbd.yaml"
        settings.write_text(settings_yaml(frame.camera_matrix, width, height, self._config, imu))
        sensor = self._pos.Sensor.IMU_RGBD if self._inertial else self._pos.Sensor.RGBD
        try:
            self._slam = self._pos.Slam(
                vocab_file=str(self._vocabulary),
                settings_file=str(settings),
                sensor=sensor,
                use_viewer=False,
            )
        except (RuntimeError, OSError, ValueError) as err:
            raise SlamError(
                f"ORB-SLAM3 did not start with vocabulary {self._vocabulary} and settings "
                f"{settings}: {err}"
            ) from err
        self._size = (height, width)

    @staticmethod
    def _imu_of(frame: RgbdFrame) -> ImuSamples:
        if frame.imu is None:
            raise SlamInputError(
                f"frame {frame.stamp_ns}: the RGB-D-inertial backend needs the IMU samples "
                "since the previous frame (slam_node subscribes /<robot>/<imu>)"
            )
        return frame.imu

    @property
    def imu_initialised(self) -> bool:
        """Whether ORB-SLAM3 has initialised its inertial state (gravity, biases) yet."""
        return self._slam is not None and self._inertial and bool(self._slam.imu_initialized())

    def process(self, frame: RgbdFrame) -> FloatArray | None:
        """Track one frame; its pose (4x4), or None while ORB-SLAM3 has no valid pose."""
        self.stats.frames += 1
        if frame.stamp_ns <= self._last_stamp_ns:
            return None  # a repeated or late frame
        self._last_stamp_ns = frame.stamp_ns
        if self._slam is None:
            self._start(frame)
        if frame.depth_m.shape != self._size:
            raise SlamError(
                f"frame {frame.stamp_ns}: size {frame.depth_m.shape} differs from the first "
                f"frame's {self._size}; ORB-SLAM3's settings are fixed at start-up"
            )
        imu_rows = self._imu_of(frame).as_orb_slam3_rows() if self._inertial else None
        result = self._slam.track_rgbd(
            np.ascontiguousarray(frame.rgb),
            np.ascontiguousarray(frame.depth_m, dtype=np.float32),
            frame.stamp_ns * 1e-9,
            imu_rows,
        )
        if self._inertial and self.stats.inertial_since_ns is None and self.imu_initialised:
            self.stats.inertial_since_ns = frame.stamp_ns
            self._moved_map = True  # the map was turned to gravity (and refined)
        if self._inertial and self._slam.map_changed():
            self._moved_map = True  # a loop closure
        state = result.state
        if state == self._pos.TrackingState.LOST:
            self._lost = True
        if not result.pose_valid or result.pose_wc is None:
            self.stats.failures += 1
            return None
        pose_map = np.asarray(result.pose_wc, dtype=np.float64)
        if self._inertial and self._jumped(pose_map):
            # ORB-SLAM3's visual-inertial bundle adjustments (VIBA 1 and 2, seconds after the
            # initialisation) move the whole map in its mapping thread, unreported
            self._moved_map = True
        if self._moved_map and not self._lost:
            self._candidate = self._reanchor()
            self._moved_map = False
        # The tracking thread may give a frame or two in the old frame after the keyframes
        # moved: the candidate counts from the first frame it keeps on the path.
        if (
            self._candidate is not None
            and self._last_pose is not None
            and _pose_gap(self._candidate @ pose_map, self._last_pose)
            <= _pose_gap(self._anchor @ pose_map, self._last_pose)
        ):
            self._anchor = self._candidate
            self._candidate = None
        if self._lost:
            # A new map (its origin the identity): carry on from the last pose given.
            if self._last_pose is not None:
                self._anchor = self._last_pose @ np.linalg.inv(pose_map)
                self.stats.restarts += 1
            self._lost = False
        pose = self._anchor @ pose_map
        self._last_pose = pose
        self.stats.tracked += 1
        self.trajectory.stamps_ns.append(frame.stamp_ns)
        self.trajectory.poses.append(pose)
        return pose

    def _jumped(self, pose_map: FloatArray) -> bool:
        """Whether ORB-SLAM3's pose left the constant-velocity path by more than _JUMP."""
        previous, self._raw = self._raw, (pose_map, self._raw[0] if self._raw else None)
        if previous is None:
            return False
        last, before = previous
        if before is None:
            return False
        predicted: FloatArray = last @ (np.linalg.inv(before) @ last)
        return _pose_gap(pose_map, predicted) > _JUMP

    def _reanchor(self) -> FloatArray:
        """The anchor after ORB-SLAM3 moved its whole map: the inertial initialisation turns
        the map so that z is up (its world was the first camera), and each visual-inertial
        bundle adjustment may turn it again. The keyframes' poses in the moved map, against
        the poses this tracker gave for the same frames, give the move (their mean)."""
        path = Path(self._settings_dir.name) / "keyframes.txt"
        self._slam.save_keyframe_trajectory_tum(str(path))
        given = dict(zip(self.trajectory.stamps_ns, self.trajectory.poses, strict=True))
        moves = []
        for row in np.loadtxt(path, ndmin=2):
            stamp_ns = round(row[0] * 1e9)
            # ORB-SLAM3 writes stamps with microseconds: the nearest given frame within 1 ms
            near = min(given, key=lambda s: abs(s - stamp_ns), default=None)
            if near is None or abs(near - stamp_ns) > 1_000_000:
                continue
            pose_map = np.eye(4)
            pose_map[:3, :3] = quat_to_matrix(np.array([row[7], row[4], row[5], row[6]]))
            pose_map[:3, 3] = row[1:4]
            moves.append(given[near] @ np.linalg.inv(pose_map))
        path.unlink(missing_ok=True)
        if not moves:
            return self._anchor
        stack = np.array(moves)
        # keyframes made from frames given after the move (wrongly anchored) disagree: drop them
        median = np.median(stack[:, :3, 3], axis=0)
        agree = np.linalg.norm(stack[:, :3, 3] - median, axis=1) <= _JUMP
        return mean_rigid(stack[agree])

    def close(self) -> None:
        """Stop ORB-SLAM3's threads (mapping, loop closing); idempotent."""
        if self._slam is not None:
            self._slam.shutdown()
            self._slam = None
        self._settings_dir.cleanup()
