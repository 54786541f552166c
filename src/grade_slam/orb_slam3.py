"""ORB-SLAM3 RGB-D (the `pyorbslam3` bindings) as a whole tracking pipeline.

Built only by `grade_slam.backends` once `pyorbslam3` has imported (the module object is
passed in). ORB-SLAM3 needs the intrinsics at start-up, the node learns them from camera_info
with the first frame: the system is created on the first frame, from a settings file generated
from that frame's camera matrix and size (`settings_yaml`).

Poses: ORB-SLAM3's camera-in-world (`pose_wc`), anchored on the current map's first keyframe
(`OrbSlam3Tracker`), so the estimate's origin is the first tracked camera, as for the
frame-to-frame tracker, and a new map (after LOST or a reset) carries on from the last pose
given instead of jumping to the origin. The trajectory left after `close` is ORB-SLAM3's own
final one for the current map's frames (what its authors evaluate).
"""

from __future__ import annotations

import bisect
import contextlib
import os
import sys
import tempfile
from collections.abc import Iterator
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
# Two anchors further apart than this (metres + radians, at the current pose) mean ORB-SLAM3
# moved its map between the frame's tracking and the read of its keyframes (`_output_anchor`).
_JUMP = 0.05
# ORB-SLAM3 writes stamps with microseconds: a frame matches a row within 1 ms.
_STAMP_TOLERANCE_NS = 1_000_000


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


@contextlib.contextmanager
def _stdout_to_devnull() -> Iterator[None]:
    """Standard output (file descriptor 1, where ORB-SLAM3's C++ writes) goes to /dev/null for
    the block: the per-frame keyframe read would otherwise print a line a frame into the node's
    log. Python's buffered output is flushed first so none of it is lost."""
    sys.stdout.flush()
    saved = os.dup(1)
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, 1)
        yield
    finally:
        os.dup2(saved, 1)
        os.close(saved)
        os.close(devnull)


def read_orb_tum(path: Path) -> tuple[list[int], list[FloatArray]]:
    """A TUM file ORB-SLAM3 wrote (stamp in seconds, microsecond digits; x y z qx qy qz qw):
    stamps in ns and 4x4 poses, in file order; nothing for an empty or missing file."""
    if not path.is_file() or path.stat().st_size == 0:
        return [], []
    stamps, poses = [], []
    for row in np.loadtxt(path, ndmin=2):
        pose = np.eye(4)
        pose[:3, :3] = quat_to_matrix(np.array([row[7], row[4], row[5], row[6]]))
        pose[:3, 3] = row[1:4]
        stamps.append(round(row[0] * 1e9))
        poses.append(pose)
    return stamps, poses


def nearest_index(
    stamps_ns: list[int], stamp_ns: int, tolerance_ns: int = _STAMP_TOLERANCE_NS
) -> int | None:
    """The index of the stamp in increasing `stamps_ns` nearest to `stamp_ns`, if within
    `tolerance_ns` (ORB-SLAM3 writes stamps to the microsecond)."""
    i = bisect.bisect_left(stamps_ns, stamp_ns)
    best = min(
        (j for j in (i - 1, i) if 0 <= j < len(stamps_ns)),
        key=lambda j: abs(stamps_ns[j] - stamp_ns),
        default=None,
    )
    if best is None or abs(stamps_ns[best] - stamp_ns) > tolerance_ns:
        return None
    return best


class OrbSlam3Tracker:
    """ORB-SLAM3 RGB-D, or RGB-D-inertial (`inertial`), over one stream of frames (stamps must
    increase; inertial: every frame carries the IMU samples since the previous one).

    Anchoring: ORB-SLAM3's poses are in its current map's world, which ORB-SLAM3 moves (the
    inertial initialisation turns it to gravity, visual-inertial bundle adjustments and loop
    closures move it again) and replaces (a new map after LOST, or after its mapping thread
    resets the active map: "Not enough motion for initializing", which an inertial flight that
    slows down before its second visual-inertial bundle adjustment triggers), all in its own
    threads and unreported by the binding. So each frame reads the current map's first keyframe
    (`save_keyframe_trajectory_tum`, first row): the estimate is that keyframe's pose as given
    when its frame was tracked, times the camera in that keyframe. A first keyframe this
    tracker gave no pose for yet is a new map: it starts at the last pose given.
    """

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
        self._anchor = np.eye(4)  # ORB-SLAM3's current map in the estimate's origin
        self._map_first_ns: int | None = None  # stamp of the current map's first keyframe
        self.stats = TrackingStats()
        self.trajectory = Trajectory()
        # the poses given live, before `close` replaces the current map's by ORB-SLAM3's final
        self.online_trajectory = self.trajectory

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
        if not result.pose_valid or result.pose_wc is None:
            self.stats.failures += 1
            return None
        pose_map = np.asarray(result.pose_wc, dtype=np.float64)
        anchor = self._output_anchor(frame.stamp_ns, pose_map)
        if anchor is None:
            self.stats.failures += 1
            return None
        pose = anchor @ pose_map
        self.stats.tracked += 1
        self.trajectory.stamps_ns.append(frame.stamp_ns)
        self.trajectory.poses.append(pose)
        return pose

    def _first_keyframe(self) -> tuple[int, FloatArray] | None:
        """The current map's first keyframe now: its stamp and pose in the map (None: none)."""
        path = Path(self._settings_dir.name) / "keyframes.txt"
        with _stdout_to_devnull():  # ORB-SLAM3 prints "Saving keyframe trajectory ..." each call
            self._slam.save_keyframe_trajectory_tum(str(path))
        stamps, poses = read_orb_tum(path)
        path.unlink(missing_ok=True)
        return (stamps[0], poses[0]) if stamps else None

    def _output_anchor(self, stamp_ns: int, pose_map: FloatArray) -> FloatArray | None:
        """The anchor for the frame at `stamp_ns` that ORB-SLAM3 placed at `pose_map` (see the
        class doc), or None for a placeholder pose; updates the stored anchor from the current
        map's first keyframe."""
        last = self.trajectory.poses[-1] if self.trajectory.poses else None
        first = self._first_keyframe()
        if (
            first is not None
            and abs(first[0] - stamp_ns) > _STAMP_TOLERANCE_NS
            and np.array_equal(pose_map, np.eye(4))
        ):
            # Exactly the identity away from its map's first keyframe: ORB-SLAM3 returned from
            # tracking early (it requested a reset of its active map) and reports OK with the
            # default pose; the reset happens with the next frame.
            return None
        given = None if first is None else nearest_index(self.trajectory.stamps_ns, first[0])
        if first is None or given is None:
            # a new map (the first one, or one after LOST or a reset): its first keyframe is
            # this frame or one not given; carry on from the last pose given
            if first is not None and first[0] != self._map_first_ns:
                if last is not None:
                    self.stats.restarts += 1
                self._map_first_ns = first[0]
                self._anchor = np.eye(4) if last is None else last @ np.linalg.inv(pose_map)
            return self._anchor
        if first[0] != self._map_first_ns:
            # a new map whose first keyframe is a frame given earlier (ORB-SLAM3 made it from a
            # frame tracked before the keyframe was inserted)
            if last is not None and self._map_first_ns is not None:
                self.stats.restarts += 1
            self._map_first_ns = first[0]
        fresh = self.trajectory.poses[given] @ np.linalg.inv(first[1])
        previous, self._anchor = self._anchor, fresh
        if last is None or _pose_gap(fresh @ pose_map, previous @ pose_map) <= _JUMP:
            return fresh
        # The map moved between this frame's tracking and the keyframe read (or the read
        # caught it mid-move): this frame is in whichever world keeps the path continuous;
        # the next frame is tracked in the moved map and reads it again.
        return min((fresh, previous), key=lambda a: _pose_gap(a @ pose_map, last))

    def _final_trajectory(self) -> None:
        """After shutdown: the current map's frames get ORB-SLAM3's own final poses (each frame
        stored against its reference keyframe, so every later map move and bundle adjustment
        reaches it), in the same anchoring; frames of earlier maps keep their live poses."""
        first = self._first_keyframe()
        if first is None:
            # No keyframe: ORB-SLAM3 never initialised a map (too few features: at 320 x 240
            # it never does in our rooms). Its SaveTrajectoryTUM takes the first keyframe of
            # the map without looking and would read past an empty vector (SIGSEGV).
            height, width = self._size or (0, 0)
            self.trajectory.note = (
                f"ORB-SLAM3 made no map from {self.stats.frames} frames of {width} x {height}, "
                "so no final trajectory (RGB-D initialisation needs more than 500 ORB features "
                "in a frame: our rooms give that at 640 x 480, not at 320 x 240)"
            )
            return
        path = Path(self._settings_dir.name) / "frames.txt"
        with _stdout_to_devnull():  # "Saving camera trajectory to <our temporary file>"
            self._slam.save_trajectory_tum(str(path))
        stamps, poses = read_orb_tum(path)  # the camera in the current map's first keyframe
        path.unlink(missing_ok=True)
        given = nearest_index(self.online_trajectory.stamps_ns, first[0])
        if given is None or not stamps:
            self.trajectory.note = (
                "ORB-SLAM3's final trajectory holds none of the frames given: the poses given live"
            )
            return
        base = self.online_trajectory.poses[given]
        final = Trajectory(
            stamps_ns=list(self.online_trajectory.stamps_ns),
            poses=list(self.online_trajectory.poses),
            note="ORB-SLAM3's final trajectory after shutdown for its current map's frames "
            "(earlier maps' frames: the poses given live)",
        )
        for stamp_ns, pose_kf in zip(stamps, poses, strict=True):
            i = nearest_index(final.stamps_ns, stamp_ns)
            if i is not None and i >= given:
                final.poses[i] = base @ pose_kf
        self.trajectory = final

    def close(self) -> None:
        """Stop ORB-SLAM3's threads (mapping, loop closing) and take its final trajectory of the
        current map (`_final_trajectory`); idempotent."""
        if self._slam is not None:
            self._slam.shutdown()
            self._final_trajectory()
            self._slam = None
        self._settings_dir.cleanup()
