"""Fidelity of a replay against its original run: robot pose deviation, SSIM and depth error.

Definitions (GRADE's, done exactly):
- robot deviation per physics step: |p_replay - p_record| and the rotation angle between the two
  base orientations, both from the recorded joint positions through the robot's joint chain;
  summarised as mean, std and max over the steps both runs have;
- SSIM (Wang et al. 2004): 11x11 Gaussian window with sigma 1.5, K1 = 0.01, K2 = 0.03, dynamic
  range 255, population (co)variances, mean of the map over the 'valid' region (no padding); a
  colour image is the mean over its channels. No downsampling of large images (the MATLAB
  reference script's optional step), so the value is the plain definition at full resolution;
- depth MAE: mean |d_replay - d_original| over pixels valid (non-zero) in both depth images, from
  the ground-truth PNGs (metres x 5000, so quantised to 0.2 mm).

Images are compared only for cameras present in both runs with identical intrinsics and size,
frame by frame on the shared stamps. Core module: numpy, OpenCV and YAML only.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

import cv2
import numpy as np
from numpy.typing import NDArray

from grade_common import tum
from grade_common.rotations import quat_mul
from grade_common.rundir import RunLayout
from grade_common.tum import DEPTH_SCALE
from grade_common.types import FloatArray
from grade_replay.errors import ReplayError
from grade_sim.io.record import ExperimentRecord
from grade_sim.robots.model import JointKind, RobotModel, robot_model

SSIM_WINDOW = 11
SSIM_SIGMA = 1.5
SSIM_K1 = 0.01
SSIM_K2 = 0.03
FIDELITY_FILE = "fidelity.json"


class FidelityError(ReplayError):
    """Two runs cannot be compared (missing or unreadable ground-truth files, shape mismatch)."""


# -- statistics ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Stats:
    """Summary of a sample: count, mean, population std, min, max (NaN when empty)."""

    n: int
    mean: float
    std: float
    min: float
    max: float

    @staticmethod
    def of(values: FloatArray | list[float]) -> Stats:
        arr = np.asarray(values, dtype=np.float64)
        if arr.size == 0:
            return Stats(0, math.nan, math.nan, math.nan, math.nan)
        return Stats(
            int(arr.size), float(arr.mean()), float(arr.std()), float(arr.min()), float(arr.max())
        )

    def to_mapping(self) -> dict[str, Any]:
        return {
            k: (None if isinstance(v, float) and math.isnan(v) else v)
            for k, v in asdict(self).items()
        }


def _fields_mapping(result: Any) -> dict[str, Any]:
    """A result dataclass's fields by name, in order, for fidelity.json: `Stats` as their
    mapping, a tuple of records (the frames) as a list of their fields."""
    out: dict[str, Any] = {}
    for f in fields(result):
        value = getattr(result, f.name)
        if isinstance(value, Stats):
            value = value.to_mapping()
        elif isinstance(value, tuple):
            value = [asdict(item) for item in value]
        out[f.name] = value
    return out


# -- robot poses ---------------------------------------------------------------------------------
def _rotate(q: FloatArray, v: FloatArray) -> FloatArray:
    """Rotate vectors v (n, 3) by unit quaternions q (n, 4)."""
    u = q[:, 1:]
    w = q[:, :1]
    t = 2.0 * np.cross(u, v)
    out: FloatArray = v + w * t + np.cross(u, t)
    return out


def base_poses(model: RobotModel, joint_positions: FloatArray) -> tuple[FloatArray, FloatArray]:
    """World pose of base_link for each row of joint positions (chain order).

    The chain is the simulator's: each joint body sits at its parent's origin, a slide moves
    along its axis in the parent frame, a hinge turns about it; the camera joint (omni) is after
    the base and is skipped.

    Returns:
        positions (n, 3) and quaternions wxyz (n, 4).
    """
    q = np.atleast_2d(np.asarray(joint_positions, dtype=np.float64))
    n = q.shape[0]
    pos = np.zeros((n, 3))
    quat = np.zeros((n, 4))
    quat[:, 0] = 1.0
    for k, joint in enumerate(model.joints):
        if joint.name == model.camera_joint:
            continue
        axis = np.broadcast_to(np.asarray(joint.axis, dtype=np.float64), (n, 3))
        if joint.kind is JointKind.SLIDE:
            pos = pos + _rotate(quat, axis) * q[:, k : k + 1]
        else:
            half = q[:, k : k + 1] / 2.0
            step = np.concatenate([np.cos(half), np.sin(half) * axis], axis=1)
            quat = quat_mul(quat, step)
    return pos, quat


def pose_deviation(
    positions_a: FloatArray, quats_a: FloatArray, positions_b: FloatArray, quats_b: FloatArray
) -> tuple[FloatArray, FloatArray]:
    """Per-row position distance (m) and rotation angle (rad, in [0, pi]) between two poses.

    The angle uses the chord form 4 atan2(|qa - qb|, |qa + qb|) of unit quaternions (on the same
    hemisphere): accurate for tiny angles, and exactly zero for identical inputs.
    """
    dpos: FloatArray = np.linalg.norm(positions_b - positions_a, axis=1)
    qa = quats_a / np.linalg.norm(quats_a, axis=1, keepdims=True)
    qb = quats_b / np.linalg.norm(quats_b, axis=1, keepdims=True)
    qb = np.where(np.sum(qa * qb, axis=1, keepdims=True) < 0, -qb, qb)
    angle: FloatArray = 4.0 * np.arctan2(
        np.linalg.norm(qa - qb, axis=1), np.linalg.norm(qa + qb, axis=1)
    )
    return dpos, angle


@dataclass(frozen=True)
class RobotFidelity:
    robot: str
    steps_compared: int
    position_m: Stats
    orientation_rad: Stats
    final_position_m: float
    final_orientation_rad: float
    joint_positions_identical: bool

    def to_mapping(self) -> dict[str, Any]:
        return _fields_mapping(self)


def robot_fidelity(original: ExperimentRecord, replayed: ExperimentRecord) -> list[RobotFidelity]:
    """Per-step base pose deviation of every robot of the original run, over the shared steps."""
    out = []
    n = min(original.n_steps, replayed.n_steps)
    for rc in original.scenario.robots:
        name = rc.name
        if name not in replayed.joint_positions:
            raise FidelityError(f"robot {name!r} of the original run is not in the replay record")
        model = robot_model(rc)
        qa = original.joint_positions[name][:n]
        qb = replayed.joint_positions[name][:n]
        pa, ra = base_poses(model, qa)
        pb, rb = base_poses(model, qb)
        dpos, dang = pose_deviation(pa, ra, pb, rb)
        out.append(
            RobotFidelity(
                name,
                n,
                Stats.of(dpos),
                Stats.of(dang),
                float(dpos[-1]) if n else math.nan,
                float(dang[-1]) if n else math.nan,
                bool(np.array_equal(qa, qb)),
            )
        )
    return out


# -- images --------------------------------------------------------------------------------------
def _gaussian_valid(image: FloatArray, kernel: FloatArray) -> FloatArray:
    """Gaussian-weighted local mean over the 'valid' region (the window fully inside)."""
    pad = SSIM_WINDOW // 2
    full = cv2.sepFilter2D(image, cv2.CV_64F, kernel, kernel, borderType=cv2.BORDER_REFLECT)
    out: FloatArray = np.asarray(full, dtype=np.float64)[pad:-pad, pad:-pad]
    return out


def ssim(image_a: NDArray[Any], image_b: NDArray[Any], data_range: float = 255.0) -> float:
    """Mean SSIM of two images of equal shape (grey (h, w) or colour (h, w, c)).

    Raises:
        FidelityError: different shapes, or an image smaller than the 11x11 window.
    """
    if image_a.shape != image_b.shape:
        raise FidelityError(f"ssim: image shapes differ: {image_a.shape} vs {image_b.shape}")
    if image_a.shape[0] < SSIM_WINDOW or image_a.shape[1] < SSIM_WINDOW:
        raise FidelityError(
            f"ssim: image {image_a.shape[:2]} is smaller than the "
            f"{SSIM_WINDOW}x{SSIM_WINDOW} window"
        )
    a = image_a.astype(np.float64)
    b = image_b.astype(np.float64)
    if a.ndim == 2:
        a = a[:, :, None]
        b = b[:, :, None]
    kernel: FloatArray = np.asarray(
        cv2.getGaussianKernel(SSIM_WINDOW, SSIM_SIGMA, cv2.CV_64F), dtype=np.float64
    )
    c1 = (SSIM_K1 * data_range) ** 2
    c2 = (SSIM_K2 * data_range) ** 2
    means = []
    for ch in range(a.shape[2]):
        x = np.ascontiguousarray(a[:, :, ch])
        y = np.ascontiguousarray(b[:, :, ch])
        mu_x = _gaussian_valid(x, kernel)
        mu_y = _gaussian_valid(y, kernel)
        var_x = _gaussian_valid(x * x, kernel) - mu_x * mu_x
        var_y = _gaussian_valid(y * y, kernel) - mu_y * mu_y
        cov = _gaussian_valid(x * y, kernel) - mu_x * mu_y
        num = (2.0 * mu_x * mu_y + c1) * (2.0 * cov + c2)
        den = (mu_x * mu_x + mu_y * mu_y + c1) * (var_x + var_y + c2)
        means.append(float(np.mean(num / den)))
    return float(np.mean(means))


def depth_mae(depth_a_m: FloatArray, depth_b_m: FloatArray) -> tuple[float, int]:
    """Mean absolute difference (m) over pixels valid (> 0, finite) in both; (NaN, 0) if none."""
    if depth_a_m.shape != depth_b_m.shape:
        raise FidelityError(f"depth shapes differ: {depth_a_m.shape} vs {depth_b_m.shape}")
    valid = (depth_a_m > 0) & (depth_b_m > 0) & np.isfinite(depth_a_m) & np.isfinite(depth_b_m)
    n = int(valid.sum())
    if n == 0:
        return math.nan, 0
    return float(np.mean(np.abs(depth_a_m[valid] - depth_b_m[valid]))), n


def _read_list(path: Path) -> dict[str, str]:
    """TUM list file: stamp -> relative file name (empty when the file is missing)."""
    if not path.is_file():
        return {}
    return dict(tum.read_list(path, error=FidelityError))


def _read_poses(path: Path) -> dict[str, tuple[FloatArray, FloatArray]]:
    """TUM trajectory: stamp -> (position, quaternion wxyz) (empty when the file is missing)."""
    if not path.is_file():
        return {}
    table = tum.read_poses(path, increasing=False, allow_empty=True, error=FidelityError)
    return {
        stamp: (table.positions_xyz[i], table.quats_wxyz[i]) for i, stamp in enumerate(table.stamps)
    }


def _imread(path: Path, flags: int) -> NDArray[Any]:
    image = cv2.imread(str(path), flags)
    if image is None:
        raise FidelityError(f"cannot read image {str(path)!r} (missing or corrupt)")
    return image


def _intrinsics(cam_dir: Path) -> tuple[int, int, list[float]] | None:
    """Image size and K of a camera folder, or None when it has no camera_info.yaml."""
    path = cam_dir / tum.CAMERA_INFO_YAML
    if not path.is_file():
        return None
    info = tum.read_camera_info(path, error=FidelityError)
    return info.width, info.height, info.camera_matrix.reshape(-1).tolist()


@dataclass(frozen=True)
class FrameFidelity:
    stamp: str
    rgb_identical: bool | None
    ssim: float | None
    depth_mae_m: float | None
    depth_valid_px: int
    instance_identical: bool | None


@dataclass(frozen=True)
class CameraFidelity:
    robot: str
    camera: str
    compared: bool
    reason: str  # why not compared, or ""
    frames_compared: int
    frames_only_original: int
    frames_only_replay: int
    rgb_identical_frames: int
    ssim: Stats
    depth_mae_m: Stats
    pose_position_m: Stats
    pose_orientation_rad: Stats
    frames: tuple[FrameFidelity, ...]

    def to_mapping(self) -> dict[str, Any]:
        return _fields_mapping(self)


_EMPTY = Stats(0, math.nan, math.nan, math.nan, math.nan)


def camera_fidelity(
    original_cam: Path, replay_cam: Path, robot: str, camera: str
) -> CameraFidelity:
    """Compare one camera's ground truth of two runs frame by frame (shared stamps)."""

    def skipped(reason: str) -> CameraFidelity:
        return CameraFidelity(
            robot, camera, False, reason, 0, 0, 0, 0, _EMPTY, _EMPTY, _EMPTY, _EMPTY, ()
        )

    ia, ib = _intrinsics(original_cam), _intrinsics(replay_cam)
    if ia is None:
        return skipped("not in the original run")
    if ib is None:
        return skipped("not in the replay")
    if ia != ib:
        return skipped("intrinsics or size changed")
    rgb_a, rgb_b, dep_a, dep_b, ins_a, ins_b = (
        _read_list(cam / tum.list_file(kind))
        for kind in tum.IMAGE_KINDS
        for cam in (original_cam, replay_cam)
    )
    pose_a = _read_poses(original_cam / tum.GROUNDTRUTH_TXT)
    pose_b = _read_poses(replay_cam / tum.GROUNDTRUTH_TXT)
    stamps_a = set(rgb_a) | set(dep_a) | set(ins_a)
    stamps_b = set(rgb_b) | set(dep_b) | set(ins_b)
    shared = sorted(stamps_a & stamps_b, key=float)
    frames = []
    for t in shared:
        rgb_same: bool | None = None
        s: float | None = None
        if t in rgb_a and t in rgb_b:
            pa, pb = original_cam / rgb_a[t], replay_cam / rgb_b[t]
            rgb_same = pa.read_bytes() == pb.read_bytes()
            # Equal files decode to equal images, whose SSIM is 1 by definition (and exactly).
            s = (
                1.0
                if rgb_same
                else ssim(_imread(pa, cv2.IMREAD_COLOR), _imread(pb, cv2.IMREAD_COLOR))
            )
        mae: float | None = None
        n_valid = 0
        if t in dep_a and t in dep_b:
            da = _imread(original_cam / dep_a[t], cv2.IMREAD_UNCHANGED).astype(np.float64)
            db = _imread(replay_cam / dep_b[t], cv2.IMREAD_UNCHANGED).astype(np.float64)
            m, n_valid = depth_mae(da / DEPTH_SCALE, db / DEPTH_SCALE)
            mae = None if math.isnan(m) else m
        inst_same: bool | None = None
        if t in ins_a and t in ins_b:
            inst_same = np.array_equal(
                _imread(original_cam / ins_a[t], cv2.IMREAD_UNCHANGED),
                _imread(replay_cam / ins_b[t], cv2.IMREAD_UNCHANGED),
            )
        frames.append(FrameFidelity(t, rgb_same, s, mae, n_valid, inst_same))
    pose_stamps = [t for t in shared if t in pose_a and t in pose_b]
    if pose_stamps:
        dpos, dang = pose_deviation(
            np.array([pose_a[t][0] for t in pose_stamps]),
            np.array([pose_a[t][1] for t in pose_stamps]),
            np.array([pose_b[t][0] for t in pose_stamps]),
            np.array([pose_b[t][1] for t in pose_stamps]),
        )
    else:
        dpos = dang = np.zeros(0)
    return CameraFidelity(
        robot,
        camera,
        True,
        "",
        len(shared),
        len(stamps_a - stamps_b),
        len(stamps_b - stamps_a),
        sum(1 for f in frames if f.rgb_identical),
        Stats.of([f.ssim for f in frames if f.ssim is not None]),
        Stats.of([f.depth_mae_m for f in frames if f.depth_mae_m is not None]),
        Stats.of(dpos),
        Stats.of(dang),
        tuple(frames),
    )


def _camera_dirs(gt: Path) -> set[tuple[str, str]]:
    if not gt.is_dir():
        return set()
    return {(p.parent.parent.name, p.parent.name) for p in gt.glob(f"*/*/{tum.CAMERA_INFO_YAML}")}


@dataclass(frozen=True)
class FidelityReport:
    mode: str
    robots: tuple[RobotFidelity, ...]
    cameras: tuple[CameraFidelity, ...]

    @property
    def exact(self) -> bool:
        """Zero robot deviation and every compared frame byte-identical."""
        robots_exact = all(r.joint_positions_identical for r in self.robots)
        frames = [f for c in self.cameras for f in c.frames]
        return robots_exact and all(
            f.rgb_identical is not False
            and f.instance_identical is not False
            and (f.depth_mae_m is None or f.depth_mae_m == 0.0)
            for f in frames
        )

    def to_mapping(self) -> dict[str, Any]:
        return {
            "mode": self.mode,
            "exact": self.exact,
            "robots": [r.to_mapping() for r in self.robots],
            "cameras": [c.to_mapping() for c in self.cameras],
        }

    def write(self, run_dir: Path) -> Path:
        """Write fidelity.json into run_dir (temporary name, then renamed)."""
        path = run_dir / FIDELITY_FILE
        tmp = run_dir / f".{FIDELITY_FILE}.tmp"
        tmp.write_text(json.dumps(self.to_mapping(), indent=2))
        tmp.replace(path)
        return path

    def format_table(self) -> str:
        """Human-readable summary (what `grade replay` prints)."""
        lines = [f"fidelity ({self.mode} replay){' - exact' if self.exact else ''}"]
        lines.append(
            f"  {'robot':<12} {'steps':>6} {'pos mean [m]':>13} {'pos std':>10} "
            f"{'pos max':>10} {'rot mean [rad]':>15} {'rot max':>10}"
        )
        for r in self.robots:
            lines.append(
                f"  {r.robot:<12} {r.steps_compared:>6} {r.position_m.mean:>13.3g} "
                f"{r.position_m.std:>10.3g} {r.position_m.max:>10.3g} "
                f"{r.orientation_rad.mean:>15.3g} {r.orientation_rad.max:>10.3g}"
            )
        lines.append(
            f"  {'camera':<20} {'frames':>6} {'identical':>9} {'SSIM mean':>10} {'SSIM min':>9} "
            f"{'depth MAE [m]':>14} {'MAE max':>9}"
        )
        for c in self.cameras:
            name = f"{c.robot}/{c.camera}"
            if not c.compared:
                lines.append(f"  {name:<20} not compared: {c.reason}")
                continue
            lines.append(
                f"  {name:<20} {c.frames_compared:>6} {c.rgb_identical_frames:>9} "
                f"{c.ssim.mean:>10.6f} {c.ssim.min:>9.6f} "
                f"{c.depth_mae_m.mean:>14.3g} {c.depth_mae_m.max:>9.3g}"
            )
        return "\n".join(lines)


def compare_runs(
    original: ExperimentRecord,
    original_dir: Path,
    replayed: ExperimentRecord,
    replay_dir: Path,
    mode: str,
) -> FidelityReport:
    """The fidelity report of a replay run directory against its original run directory."""
    robots = robot_fidelity(original, replayed)
    run_a, run_b = RunLayout(original_dir), RunLayout(replay_dir)
    cameras = [
        camera_fidelity(run_a.camera_dir(robot, cam), run_b.camera_dir(robot, cam), robot, cam)
        for robot, cam in sorted(_camera_dirs(run_a.gt) | _camera_dirs(run_b.gt))
    ]
    return FidelityReport(mode, tuple(robots), tuple(cameras))
