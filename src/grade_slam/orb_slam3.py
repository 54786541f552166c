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
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

from grade_common.types import FloatArray
from grade_slam.config import SlamConfig
from grade_slam.errors import SlamError
from grade_slam.frames import RgbdFrame
from grade_slam.interfaces import TrackingStats, Trajectory

# ORB-SLAM3 works with a stereo baseline even for RGB-D (a virtual one: bf = baseline * fx);
# ThDepth counts in baselines. Any positive value gives the same depth threshold in metres.
_BASELINE_M = 0.08


def settings_yaml(camera_matrix: FloatArray, width: int, height: int, config: SlamConfig) -> str:
    """ORB-SLAM3's settings (the classic `Camera.*` format) for an undistorted pinhole RGB-D
    camera whose depth is float metres (DepthMapFactor 1) and colour is RGB (Camera.RGB 1)."""
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
    lines = ["%YAML:1.0", ""]
    for key, value in values.items():
        text = f"{value:.9g}" if isinstance(value, float) else str(value)
        if isinstance(value, float) and "." not in text and "e" not in text:
            text += ".0"  # OpenCV's FileStorage reads 1 as an int, and ORB-SLAM3 asks for a float
        lines.append(f"{key}: {text}")
    return "\n".join(lines) + "\n"


class OrbSlam3Tracker:
    """ORB-SLAM3 RGB-D over one stream of frames (stamps must increase)."""

    def __init__(self, module: ModuleType, config: SlamConfig, vocabulary: Path) -> None:
        self._pos = module
        self._config = config
        self._vocabulary = vocabulary
        self._slam: Any = None
        self._settings_dir = tempfile.TemporaryDirectory(prefix="grade_orbslam3_")
        self._size: tuple[int, int] | None = None
        self._last_stamp_ns = -1
        self._anchor = np.eye(4)  # map of ORB-SLAM3's current map in the estimate's origin
        self._lost = False  # ORB-SLAM3 said LOST: its next valid pose is in a new map
        self._last_pose: FloatArray | None = None
        self.stats = TrackingStats()
        self.trajectory = Trajectory()

    def _start(self, frame: RgbdFrame) -> None:
        height, width = frame.depth_m.shape
        settings = Path(self._settings_dir.name) / "orb_slam3_rgbd.yaml"
        settings.write_text(settings_yaml(frame.camera_matrix, width, height, self._config))
        try:
            self._slam = self._pos.Slam(
                vocab_file=str(self._vocabulary),
                settings_file=str(settings),
                sensor=self._pos.Sensor.RGBD,
                use_viewer=False,
            )
        except (RuntimeError, OSError, ValueError) as err:
            raise SlamError(
                f"ORB-SLAM3 did not start with vocabulary {self._vocabulary} and settings "
                f"{settings}: {err}"
            ) from err
        self._size = (height, width)

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
        result = self._slam.track_rgbd(
            np.ascontiguousarray(frame.rgb),
            np.ascontiguousarray(frame.depth_m, dtype=np.float32),
            frame.stamp_ns * 1e-9,
        )
        state = result.state
        if state == self._pos.TrackingState.LOST:
            self._lost = True
        if not result.pose_valid or result.pose_wc is None:
            self.stats.failures += 1
            return None
        pose_map = np.asarray(result.pose_wc, dtype=np.float64)
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

    def close(self) -> None:
        """Stop ORB-SLAM3's threads (mapping, loop closing); idempotent."""
        if self._slam is not None:
            self._slam.shutdown()
            self._slam = None
        self._settings_dir.cleanup()
