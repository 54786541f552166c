"""Ground truth per camera in the TUM RGB-D layout, plus instance masks and boxes.

Image files are encoded (grade_common.png_file: numpy row filters, ISA-L deflate; both release
the GIL) and written by one background thread, so PNG compression overlaps rendering on a 2-core
machine. Only frames from the experiment start on are written; the bag keeps the bootstrap too.

The opt-in ground-truth images (docs/ground_truth.md) go beside them: semantic/ (uint16 class
ids, gt/classes.yaml), normals/ and flow/ (16-bit PNG encodings of grade_common.gt_png), each
with its list file, created at the first such frame.

Crash safety: a frame's index lines (rgb.txt, depth.txt, instance.txt), its groundtruth.txt pose
and its box lines are appended by the same thread right after the frame's PNGs are in place, and
flushed, so after a kill -9 every listed PNG exists and at most the frame being written is
missing from the lists. trajectory.txt is flushed line by line.
"""

from __future__ import annotations

import json
import os
import queue
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

import numpy as np
import yaml
from numpy.typing import NDArray

from grade_common.atomic import PARTIAL_MARK, StagedOutput
from grade_common.gt_png import flow_to_png_u16, normals_to_png_u16
from grade_common.png_file import RowFilter, encode_png
from grade_common.rotations import quat_to_matrix
from grade_common.rundir import CLASSES_YAML, INSTANCES_YAML
from grade_common.tum import (
    BOXES_2D_JSONL,
    BOXES_3D_JSONL,
    CAMERA_INFO_YAML,
    DEPTH_SCALE,
    GROUNDTRUTH_TXT,
    IMAGE_KINDS,
    OBJECT_POSES_JSONL,
    TRAJECTORY_TXT,
    CameraInfo,
    ImageKind,
    list_file,
    list_header,
    list_line,
    pose_header,
    tum_pose_line,
    tum_stamp,
)
from grade_sim.config.scenario import CameraModel, Stream
from grade_sim.engine.protocol import CameraFrame, RobotState
from grade_sim.engine.semantic import ClassTable
from grade_sim.io import depth_png
from grade_sim.optics.lens import Lens, lens_of
from grade_sim.scene import Scene
from grade_sim.sensors.boxes import (
    Box3D,
    free_body_box,
    loose_box_2d,
    static_boxes,
    tight_boxes_2d,
)
from grade_sim.sensors.camera import vertical_fov_deg
from grade_sim.sensors.messages import TopicSpec
from grade_sim.sensors.observer import CameraSample
from grade_sim.sensors.schedule import RateSchedule

QUEUE_FRAMES = 16

# PNG row filter per image folder (the compression level is record.png_compression; encoding in
# grade_common.png_file). Lossless whatever they are: only the CPU time and the file size change.
# SUB suits RGB's smooth rows, UP the flat patches of depth, ids, normals and flow
# (docs/recording.md).
PNG_ROW_FILTER: dict[str, RowFilter] = {
    ImageKind.RGB.value: RowFilter.SUB,
    ImageKind.DEPTH.value: RowFilter.UP,
    ImageKind.INSTANCE.value: RowFilter.UP,
    Stream.SEMANTIC.value: RowFilter.UP,
    Stream.NORMALS.value: RowFilter.UP,
    Stream.FLOW.value: RowFilter.UP,
}


def _normals_png(frame: CameraFrame) -> NDArray[np.uint16] | None:
    return None if frame.normals_cam is None else normals_to_png_u16(frame.normals_cam)


def _flow_png(frame: CameraFrame) -> NDArray[np.uint16] | None:
    return None if frame.flow_px is None else flow_to_png_u16(frame.flow_px)


# The opt-in image kinds (grade_common.gt_png.EXTRA_IMAGE_KINDS): folder/list name -> the frame's
# image as written, channels in R, G, B order.
EXTRA_IMAGES: dict[str, Callable[[CameraFrame], NDArray[np.uint16] | None]] = {
    Stream.SEMANTIC.value: lambda f: f.semantic,
    Stream.NORMALS.value: _normals_png,
    Stream.FLOW.value: _flow_png,
}


@dataclass
class _FrameJob:
    """One camera frame: its PNGs (path, pixels, kind), then the text lines that list it
    (written in this order)."""

    images: list[tuple[Path, np.ndarray, str]] = field(default_factory=list)
    lines: list[tuple[TextIO, str]] = field(default_factory=list)


class _CameraFiles:
    def __init__(
        self,
        root: Path,
        width: int,
        height: int,
        k: np.ndarray,
        frame_id: str,
        hfov: float,
        vfov: float,
        lens: Lens,
    ) -> None:
        self.root = root
        self.lens = lens
        for kind in IMAGE_KINDS:
            (root / kind).mkdir(parents=True, exist_ok=True)
        info = CameraInfo(
            width,
            height,
            k,
            DEPTH_SCALE,
            frame_id,
            hfov,
            vfov,
            distortion_model=lens.distortion_model,
            distortion=tuple(float(v) for v in lens.d),
            depth_kind=lens.depth_kind.value,
        )
        (root / CAMERA_INFO_YAML).write_text(info.to_yaml())
        # These files stay open for the whole run (one line per frame) and close in close().
        self.lists = {kind: open(root / list_file(kind), "w") for kind in IMAGE_KINDS}
        for kind, f in self.lists.items():
            f.write(list_header(kind))
        self.groundtruth = open(root / GROUNDTRUTH_TXT, "w")
        self.groundtruth.write(pose_header("optical frame in world"))
        self.boxes2d = open(root / BOXES_2D_JSONL, "w")
        self.boxes3d = open(root / BOXES_3D_JSONL, "w")
        self.object_poses: Any = None  # opened at the first frame with loose objects
        self.extra_lists: dict[str, TextIO] = {}  # opened at the first frame of each kind
        for f in (*self.lists.values(), self.groundtruth):
            f.flush()  # the headers are on disk before the first frame

    def close(self) -> None:
        for f in (*self.lists.values(), self.groundtruth, self.boxes2d, self.boxes3d):
            f.close()
        if self.object_poses is not None:
            self.object_poses.close()
        for listing in self.extra_lists.values():
            listing.close()

    def extra_list(self, kind: str) -> TextIO:
        """The list file of an opt-in image kind (and its folder), made on first use."""
        if kind not in self.extra_lists:
            (self.root / kind).mkdir(parents=True, exist_ok=True)
            listing = open(self.root / list_file(kind), "w")
            listing.write(list_header(kind))
            self.extra_lists[kind] = listing
        return self.extra_lists[kind]


class GroundTruthWriter:
    """SimObserver writing `gt/` of a run directory."""

    def __init__(
        self, gt_root: Path, scene: Scene, start_step: int, png_compression: int = 1
    ) -> None:
        self.root = gt_root
        self.scene = scene
        self.start_step = start_step
        self._png_level = png_compression
        depth_png.warm_up()  # compiled in the set-up, not at the first frame
        gt_root.mkdir(parents=True, exist_ok=True)
        (gt_root / INSTANCES_YAML).write_text(
            yaml.safe_dump(
                {
                    int(i): {"name": info.name, "class": info.label}
                    for i, info in sorted(scene.instances.items())
                }
            )
        )
        classes = ClassTable.of_labels(info.label for info in scene.instances.values())
        (gt_root / CLASSES_YAML).write_text(yaml.safe_dump(classes.to_mapping(), sort_keys=False))
        self._static_boxes = static_boxes(scene.world)
        self._free_bodies = {b.name: b for b in scene.world.free_bodies}
        # Boxes for actors, static objects and loose objects (not for walls and floors).
        self._boxed_ids = (
            {info.instance_id for group in scene.groups for info in group.instances()}
            | {b.instance_id for b in self._static_boxes}
            | {b.instance_id for b in scene.world.free_bodies}
        )
        self._cameras: dict[tuple[str, str], _CameraFiles] = {}
        from grade_sim.sensors.camera import intrinsics

        for r in scene.robots:
            for cam in r.model.config.cameras:
                self._cameras[(r.model.name, cam.name)] = _CameraFiles(
                    gt_root / r.model.name / cam.name,
                    cam.width,
                    cam.height,
                    intrinsics(cam),
                    f"{r.model.name}/{cam.name}_optical_frame",
                    cam.hfov_deg,
                    vertical_fov_deg(cam),
                    lens_of(cam),
                )
        for r in scene.robots:  # a robot without cameras (a lidar-only robot) has no folder yet
            (gt_root / r.model.name).mkdir(parents=True, exist_ok=True)
        self._traj = {
            r.model.name: open(gt_root / r.model.name / TRAJECTORY_TXT, "w") for r in scene.robots
        }
        for f in self._traj.values():
            f.write(pose_header("base_link in world"))
            f.flush()
        self._traj_sched = RateSchedule(
            scene.scenario.rates.odom_hz, scene.scenario.rates.physics_hz
        )
        self._queue: queue.Queue[_FrameJob | None] = queue.Queue(maxsize=QUEUE_FRAMES)
        self._error: BaseException | None = None
        self._checked_folders: set[Path] = set()  # by _write_png, on the writer's thread
        self._thread = threading.Thread(target=self._write_loop, name="gt-writer", daemon=True)
        self._thread.start()
        self.frames_written = 0

    def _write_loop(self) -> None:
        while True:
            job = self._queue.get()
            if job is None:
                return
            if self._error is not None:
                continue
            try:
                for path, array, kind in job.images:
                    png = encode_png(array, PNG_ROW_FILTER[kind], self._png_level)
                    self._write_png(path, png)
                for f, line in job.lines:
                    f.write(line)
                for f in {id(f): f for f, _ in job.lines}.values():
                    f.flush()
            except BaseException as err:  # reported in close(); never lose it silently
                self._error = err

    def _write_png(self, path: Path, png: bytes) -> None:
        """Write at a temporary name beside `path` and move it into place.

        The first image of a folder, and any image replacing a file, goes through
        StagedOutput's checks (the folder is creatable, what is replaced is grade's); a new
        file in a folder checked already skips them (~0.5 ms of stat, realpath and a probe
        directory per file: 0.05 CPU s per simulated s on the writer's thread).
        """
        folder = path.parent
        if folder not in self._checked_folders or path.exists():
            with StagedOutput(path, overwrite=True) as tmp:
                tmp.write_bytes(png)
            self._checked_folders.add(folder)
            return
        tmp = path.with_name(f".{path.stem}{PARTIAL_MARK}-{os.getpid()}{path.suffix}")
        try:
            tmp.write_bytes(png)
            os.replace(tmp, path)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise

    def on_message(self, topic: TopicSpec, stamp_ns: int, cdr: bytes) -> None:
        return None

    def on_step(self, step: int, stamp_ns: int, robot_states: dict[str, RobotState]) -> None:
        if step < self.start_step or not self._traj_sched.due(step):
            return
        for name, st in robot_states.items():
            self._traj[name].write(
                tum_pose_line(stamp_ns, st.position_world_base, st.quat_world_base)
            )
            self._traj[name].flush()

    def wants_messages(self, topics: tuple[TopicSpec, ...]) -> bool:
        return False

    def wants_sample(self, robot: str, sensor: str, step: int, stamp_ns: int) -> bool:
        return step >= self.start_step and (robot, sensor) in self._cameras

    def on_camera(self, sample: CameraSample) -> None:
        if sample.step < self.start_step:
            return
        files = self._cameras[(sample.robot, sample.camera)]
        t = tum_stamp(sample.stamp_ns)
        frame = sample.frame
        job = _FrameJob()
        if frame.rgb is not None:
            job.images.append(
                (
                    files.root / "rgb" / f"{t}.png",
                    frame.rgb,
                    ImageKind.RGB.value,
                )
            )
            job.lines.append((files.lists[ImageKind.RGB], list_line(t, ImageKind.RGB)))
        if frame.depth_m is not None:
            depth = depth_png.depth_to_png_u16(frame.depth_m)
            job.images.append((files.root / "depth" / f"{t}.png", depth, ImageKind.DEPTH.value))
            job.lines.append((files.lists[ImageKind.DEPTH], list_line(t, ImageKind.DEPTH)))
        if frame.instance is not None:
            mask = files.root / "instance" / f"{t}.png"
            job.images.append((mask, frame.instance, ImageKind.INSTANCE.value))
            job.lines.append((files.lists[ImageKind.INSTANCE], list_line(t, ImageKind.INSTANCE)))
            job.lines += self._box_lines(files, sample, t, frame.instance)
        self._extra_images(job, files, frame, t)
        job.lines.append(
            (
                files.groundtruth,
                tum_pose_line(
                    sample.stamp_ns, sample.position_world_optical, sample.quat_world_optical
                ),
            )
        )
        if sample.object_poses:
            job.lines.append(self._object_pose_line(files, sample, t))
        self._queue.put(job)
        self.frames_written += 1

    @staticmethod
    def _extra_images(job: _FrameJob, files: _CameraFiles, frame: CameraFrame, t: str) -> None:
        for kind, encode in EXTRA_IMAGES.items():
            image = encode(frame)
            if image is None:
                continue
            job.images.append((files.root / kind / f"{t}.png", image, kind))
            job.lines.append((files.extra_list(kind), list_line(t, kind)))

    @staticmethod
    def _object_pose_line(files: _CameraFiles, sample: CameraSample, t: str) -> tuple[TextIO, str]:
        """Each loose object's pose in the world and in the camera's optical frame (the pose a
        6D pose estimator is scored against, e.g. with ADD/ADD-S), as one JSON line."""
        if files.object_poses is None:
            files.object_poses = open(files.root / OBJECT_POSES_JSONL, "w")
        r_wo = quat_to_matrix(sample.quat_world_optical)
        objects = {}
        for name, position, quat in sample.object_poses:
            t_ob = np.eye(4)
            t_ob[:3, :3] = r_wo.T @ quat_to_matrix(quat)
            t_ob[:3, 3] = r_wo.T @ (np.asarray(position) - sample.position_world_optical)
            objects[name] = {
                "position_world": [round(float(v), 9) for v in position],
                "quat_world_wxyz": [round(float(v), 9) for v in quat],
                "transform_optical_object": [[round(float(v), 9) for v in row] for row in t_ob],
            }
        return files.object_poses, json.dumps({"t": float(t), "objects": objects}) + "\n"

    def _box_lines(
        self, files: _CameraFiles, sample: CameraSample, t: str, instance: np.ndarray
    ) -> list[tuple[TextIO, str]]:
        tight = tight_boxes_2d(instance, self._boxed_ids)
        r_wo = quat_to_matrix(sample.quat_world_optical)
        h, w = instance.shape
        loose_objects: list[Box3D] = [
            free_body_box(self._free_bodies[name], pos, quat)
            for name, pos, quat in sample.object_poses
            if name in self._free_bodies
        ]
        by_id = {b.instance_id: b for b in (*self._static_boxes, *loose_objects, *sample.boxes)}
        boxes2d: list[dict[str, Any]] = []
        boxes3d: list[dict[str, Any]] = []
        for iid, (x0, y0, x1, y1) in sorted(tight.items()):
            entry: dict[str, Any] = {"id": iid, "x_min": x0, "y_min": y0, "x_max": x1, "y_max": y1}
            box = by_id.get(iid)
            if box is not None:
                distorted = files.lens.model is not CameraModel.PINHOLE
                project = files.lens.project if distorted else None
                loose = loose_box_2d(
                    box, sample.k, sample.position_world_optical, r_wo, w, h, project
                )
                if loose is not None:
                    entry["loose"] = list(loose)
                boxes3d.append(
                    {
                        "id": iid,
                        "center": [round(float(v), 6) for v in box.center_xyz],
                        "size": [round(float(v), 6) for v in box.size_xyz],
                        "transform_world_box": [
                            [round(float(v), 9) for v in row] for row in box.transform_world_box()
                        ],
                    }
                )
            boxes2d.append(entry)
        return [
            (files.boxes2d, json.dumps({"t": float(t), "boxes": boxes2d}) + "\n"),
            (files.boxes3d, json.dumps({"t": float(t), "boxes": boxes3d}) + "\n"),
        ]

    def close(self, status: str) -> None:
        self._queue.put(None)
        self._thread.join()
        for files in self._cameras.values():
            files.close()
        for f in self._traj.values():
            f.close()
        if self._error is not None:
            raise OSError(f"ground truth writing failed: {self._error}") from self._error
