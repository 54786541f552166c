"""Run directories (docs/conventions.md): ground-truth trajectories and camera frames."""

from __future__ import annotations

import fnmatch
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np
import yaml

from grade_common.types import FloatArray
from grade_eval.core.gtmap import DepthFrame
from grade_eval.core.sync import matching_time_indices
from grade_eval.core.trajectory import PoseTrajectory
from grade_eval.errors import FormatError
from grade_eval.io.tum import read_tum

DEPTH_SCALE = 5000.0  # depth png: metres x 5000


def _gt(run_dir: Path) -> Path:
    gt = run_dir / "gt"
    if not gt.is_dir():
        raise FormatError(f"{run_dir}: not a run directory (no gt/ folder)")
    return gt


def list_robots(run_dir: str | Path) -> list[str]:
    """Robots with a gt/<robot>/trajectory.txt."""
    gt = _gt(Path(run_dir))
    return sorted(p.parent.name for p in gt.glob("*/trajectory.txt"))


def list_cameras(run_dir: str | Path, robot: str) -> list[str]:
    """Cameras of a robot with a groundtruth.txt."""
    base = _gt(Path(run_dir)) / robot
    return sorted(p.parent.name for p in base.glob("*/groundtruth.txt"))


def _only(names: list[str], what: str, where: Path) -> str:
    if len(names) != 1:
        raise FormatError(f"{where}: found {what}s {names}; name the one to use")
    return names[0]


def read_robot_trajectory(run_dir: str | Path, robot: str | None = None) -> PoseTrajectory:
    """gt/<robot>/trajectory.txt (base_link in world); robot may be omitted if there is one."""
    run = Path(run_dir)
    name = robot or _only(list_robots(run), "robot", run / "gt")
    path = _gt(run) / name / "trajectory.txt"
    if not path.is_file():
        raise FormatError(f"{path}: missing; robots in the run: {list_robots(run)}")
    return read_tum(path, f"gt:{name}")


@dataclass(frozen=True)
class CameraInfo:
    """Image size and 3x3 intrinsics."""

    width: int
    height: int
    camera_matrix: FloatArray
    depth_scale: float = DEPTH_SCALE


def read_camera_info(path: Path) -> CameraInfo:
    """camera_info.yaml with width, height, K (row-major 9 numbers), optional depth_scale."""
    try:
        data = yaml.safe_load(path.read_text())
        k = np.asarray(data["K"] if "K" in data else data["k"], dtype=np.float64).reshape(3, 3)
        info = CameraInfo(int(data["width"]), int(data["height"]), k,
                          float(data.get("depth_scale", DEPTH_SCALE)))
    except (OSError, yaml.YAMLError, KeyError, TypeError, ValueError) as err:
        raise FormatError(f"{path}: camera info needs width, height and K (9 numbers): "
                          f"{err!r}") from err
    if not (info.depth_scale > 0):
        raise FormatError(f"{path}: depth_scale = {info.depth_scale}: must be > 0")
    if not (k[0, 0] > 0 and k[1, 1] > 0):
        raise FormatError(f"{path}: K has non-positive focal lengths fx={k[0, 0]}, fy={k[1, 1]}")
    return info


def read_list(path: Path) -> list[tuple[float, str]]:
    """A TUM RGB-D list file: '# comments' and 'stamp filename' lines."""
    try:
        lines = path.read_text().splitlines()
    except OSError as err:
        raise FormatError(f"{path}: cannot read: {err}") from err
    out: list[tuple[float, str]] = []
    for number, raw in enumerate(lines, start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        parts = line.split()
        if len(parts) != 2:
            raise FormatError(f"{path}:{number}: expected 'timestamp filename', got {line!r}")
        try:
            out.append((float(parts[0]), parts[1]))
        except ValueError as err:
            raise FormatError(f"{path}:{number}: bad timestamp {parts[0]!r}") from err
    return out


def read_instances(run_dir: str | Path) -> dict[int, tuple[str, str]]:
    """gt/instances.yaml: instance id -> (name, class)."""
    path = _gt(Path(run_dir)) / "instances.yaml"
    try:
        data = yaml.safe_load(path.read_text()) or {}
        return {int(k): (str(v["name"]), str(v["class"])) for k, v in data.items()}
    except (OSError, yaml.YAMLError, KeyError, TypeError, ValueError, AttributeError) as err:
        raise FormatError(f"{path}: needs 'id: {{name: ..., class: ...}}' entries: {err!r}"
                          ) from err


def dynamic_instance_ids(run_dir: str | Path, dynamic_classes: tuple[str, ...]) -> frozenset[int]:
    """Ids whose class matches one of dynamic_classes (case-insensitive shell patterns such as
    `flying_*`)."""
    patterns = [c.strip().lower() for c in dynamic_classes if c.strip()]
    return frozenset(i for i, (_, cls) in read_instances(run_dir).items()
                     if any(fnmatch.fnmatchcase(cls.lower(), p) for p in patterns))


def _imread(path: Path, flags: int) -> np.ndarray:
    image = cv2.imread(str(path), flags)
    if image is None:
        raise FormatError(f"{path}: missing or unreadable image")
    return np.asarray(image)


@dataclass(frozen=True)
class CameraStream:
    """One camera of a run: intrinsics, its optical-frame trajectory and frame lists."""

    directory: Path
    info: CameraInfo
    trajectory: PoseTrajectory
    depth: list[tuple[float, str]]
    rgb: list[tuple[float, str]]
    instance: list[tuple[float, str]]

    @classmethod
    def open(cls, run_dir: str | Path, robot: str | None = None,
             camera: str | None = None) -> CameraStream:
        """Open gt/<robot>/<camera>/ (names may be omitted when unique)."""
        run = Path(run_dir)
        rob = robot or _only(list_robots(run), "robot", run / "gt")
        cam = camera or _only(list_cameras(run, rob), "camera", run / "gt" / rob)
        d = _gt(run) / rob / cam
        if not d.is_dir():
            raise FormatError(f"{d}: missing; cameras of {rob}: {list_cameras(run, rob)}")
        lists = {n: (read_list(d / f"{n}.txt") if (d / f"{n}.txt").is_file() else [])
                 for n in ("depth", "rgb", "instance")}
        if not lists["depth"]:
            raise FormatError(f"{d / 'depth.txt'}: missing or empty; no depth frames")
        return cls(d, read_camera_info(d / "camera_info.yaml"),
                   read_tum(d / "groundtruth.txt", f"gt:{rob}/{cam}"),
                   lists["depth"], lists["rgb"], lists["instance"])

    def frames(self, with_rgb: bool = True, with_instances: bool = False,
               max_pose_diff_s: float = 1e-3) -> Iterator[DepthFrame]:
        """Depth frames with the pose at (within max_pose_diff_s) their stamp."""
        stamps = np.array([t for t, _ in self.depth])
        ids_f, ids_p = matching_time_indices(stamps, self.trajectory.stamps_s, max_pose_diff_s)
        pose_of = dict(zip(ids_f.tolist(), ids_p.tolist(), strict=True))
        rgb_by = {round(t, 6): f for t, f in self.rgb}
        inst_by = {round(t, 6): f for t, f in self.instance}
        poses = self.trajectory.poses_se3
        for i, (stamp, name) in enumerate(self.depth):
            if i not in pose_of:
                raise FormatError(f"{self.directory / 'groundtruth.txt'}: no pose within "
                                  f"{max_pose_diff_s} s of depth frame {stamp:.6f}")
            depth_raw = _imread(self.directory / name, cv2.IMREAD_UNCHANGED)
            if depth_raw.dtype != np.uint16 or depth_raw.ndim != 2:
                raise FormatError(f"{self.directory / name}: depth must be 1-channel uint16, got "
                                  f"{depth_raw.dtype} {depth_raw.shape}")
            rgb = None
            if with_rgb and round(stamp, 6) in rgb_by:
                bgr = _imread(self.directory / rgb_by[round(stamp, 6)], cv2.IMREAD_COLOR)
                rgb = bgr[:, :, ::-1].copy()
            inst = None
            if with_instances:
                if round(stamp, 6) not in inst_by:
                    raise FormatError(f"{self.directory / 'instance.txt'}: no instance mask for "
                                      f"depth frame {stamp:.6f}")
                inst = _imread(self.directory / inst_by[round(stamp, 6)], cv2.IMREAD_UNCHANGED)
            yield DepthFrame(stamp, depth_raw.astype(np.float64) / self.info.depth_scale,
                             self.info.camera_matrix, poses[pose_of[i]], rgb, inst)
