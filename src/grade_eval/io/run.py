"""Run directories (docs/conventions.md): ground-truth trajectories and camera frames."""

from __future__ import annotations

import fnmatch
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np
import yaml

from grade_common import tum
from grade_common.rundir import INSTANCES_YAML, RunLayout
from grade_common.tum import CameraInfo, ImageKind
from grade_eval.core.gtmap import DepthFrame
from grade_eval.core.sync import matching_time_indices
from grade_eval.core.trajectory import PoseTrajectory
from grade_eval.errors import FormatError
from grade_eval.io.tum import read_tum


def _gt(run_dir: Path) -> Path:
    gt = RunLayout(run_dir).gt
    if not gt.is_dir():
        raise FormatError(f"{run_dir}: not a run directory (no gt/ folder)")
    return gt


def list_robots(run_dir: str | Path) -> list[str]:
    """Robots with a gt/<robot>/trajectory.txt."""
    _gt(Path(run_dir))
    return RunLayout(Path(run_dir)).robots()


def list_cameras(run_dir: str | Path, robot: str) -> list[str]:
    """Cameras of a robot with a groundtruth.txt."""
    _gt(Path(run_dir))
    return RunLayout(Path(run_dir)).cameras(robot)


def _only(names: list[str], what: str, where: Path) -> str:
    if len(names) != 1:
        raise FormatError(f"{where}: found {what}s {names}; name the one to use")
    return names[0]


def read_robot_trajectory(run_dir: str | Path, robot: str | None = None) -> PoseTrajectory:
    """gt/<robot>/trajectory.txt (base_link in world); robot may be omitted if there is one."""
    run = Path(run_dir)
    name = robot or _only(list_robots(run), "robot", _gt(run))
    path = RunLayout(run).trajectory(name)
    if not path.is_file():
        raise FormatError(f"{path}: missing; robots in the run: {list_robots(run)}")
    return read_tum(path, f"gt:{name}")


def read_camera_info(path: Path) -> CameraInfo:
    """camera_info.yaml with width, height, K (row-major 9 numbers), optional depth_scale."""
    return tum.read_camera_info(path, error=FormatError)


def read_list(path: Path) -> list[tuple[float, str]]:
    """A TUM RGB-D list file: '# comments' and 'stamp filename' lines."""
    return [(float(stamp), name) for stamp, name in tum.read_list(path, error=FormatError)]


def read_instances(run_dir: str | Path) -> dict[int, tuple[str, str]]:
    """gt/instances.yaml: instance id -> (name, class)."""
    path = _gt(Path(run_dir)) / INSTANCES_YAML
    try:
        data = yaml.safe_load(path.read_text()) or {}
        return {int(k): (str(v["name"]), str(v["class"])) for k, v in data.items()}
    except (OSError, yaml.YAMLError, KeyError, TypeError, ValueError, AttributeError) as err:
        raise FormatError(
            f"{path}: needs 'id: {{name: ..., class: ...}}' entries: {err!r}"
        ) from err


def dynamic_instance_ids(run_dir: str | Path, dynamic_classes: tuple[str, ...]) -> frozenset[int]:
    """Ids whose class matches one of dynamic_classes (case-insensitive shell patterns such as
    `flying_*`)."""
    patterns = [c.strip().lower() for c in dynamic_classes if c.strip()]
    return frozenset(
        i
        for i, (_, cls) in read_instances(run_dir).items()
        if any(fnmatch.fnmatchcase(cls.lower(), p) for p in patterns)
    )


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
    def open(
        cls, run_dir: str | Path, robot: str | None = None, camera: str | None = None
    ) -> CameraStream:
        """Open gt/<robot>/<camera>/ (names may be omitted when unique)."""
        run = Path(run_dir)
        rob = robot or _only(list_robots(run), "robot", _gt(run))
        cam = camera or _only(list_cameras(run, rob), "camera", _gt(run) / rob)
        d = RunLayout(run).camera_dir(rob, cam)
        if not d.is_dir():
            raise FormatError(f"{d}: missing; cameras of {rob}: {list_cameras(run, rob)}")
        lists = {
            n: (read_list(d / tum.list_file(n)) if (d / tum.list_file(n)).is_file() else [])
            for n in tum.IMAGE_KINDS
        }
        if not lists[ImageKind.DEPTH]:
            listing = d / tum.list_file(ImageKind.DEPTH)
            raise FormatError(f"{listing}: missing or empty; no depth frames")
        return cls(
            d,
            read_camera_info(d / tum.CAMERA_INFO_YAML),
            read_tum(d / tum.GROUNDTRUTH_TXT, f"gt:{rob}/{cam}"),
            lists[ImageKind.DEPTH],
            lists[ImageKind.RGB],
            lists[ImageKind.INSTANCE],
        )

    def frames(
        self, with_rgb: bool = True, with_instances: bool = False, max_pose_diff_s: float = 1e-3
    ) -> Iterator[DepthFrame]:
        """Depth frames with the pose at (within max_pose_diff_s) their stamp."""
        stamps = np.array([t for t, _ in self.depth])
        ids_f, ids_p = matching_time_indices(stamps, self.trajectory.stamps_s, max_pose_diff_s)
        pose_of = dict(zip(ids_f.tolist(), ids_p.tolist(), strict=True))
        rgb_by = {round(t, 6): f for t, f in self.rgb}
        inst_by = {round(t, 6): f for t, f in self.instance}
        poses = self.trajectory.poses_se3
        for i, (stamp, name) in enumerate(self.depth):
            if i not in pose_of:
                raise FormatError(
                    f"{self.directory / tum.GROUNDTRUTH_TXT}: no pose within "
                    f"{max_pose_diff_s} s of depth frame {stamp:.6f}"
                )
            depth_raw = _imread(self.directory / name, cv2.IMREAD_UNCHANGED)
            if depth_raw.dtype != np.uint16 or depth_raw.ndim != 2:
                raise FormatError(
                    f"{self.directory / name}: depth must be 1-channel uint16, got "
                    f"{depth_raw.dtype} {depth_raw.shape}"
                )
            rgb = None
            if with_rgb and round(stamp, 6) in rgb_by:
                bgr = _imread(self.directory / rgb_by[round(stamp, 6)], cv2.IMREAD_COLOR)
                rgb = bgr[:, :, ::-1].copy()
            inst = None
            if with_instances:
                if round(stamp, 6) not in inst_by:
                    listing = self.directory / tum.list_file(ImageKind.INSTANCE)
                    raise FormatError(f"{listing}: no instance mask for depth frame {stamp:.6f}")
                inst = _imread(self.directory / inst_by[round(stamp, 6)], cv2.IMREAD_UNCHANGED)
            yield DepthFrame(
                stamp,
                depth_raw.astype(np.float64) / self.info.depth_scale,
                self.info.camera_matrix,
                poses[pose_of[i]],
                rgb,
                inst,
            )
