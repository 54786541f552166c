"""Export one run directory (a sequence) into COCO and YOLO files inside a job's folder.

    OUT/coco.json                          COCO of the sequence (file names relative to `root`)
    OUT/yolo/images/<robot>_<camera>_<t>.png   the RGB frame (a hard link, a copy across devices)
    OUT/yolo/labels/<robot>_<camera>_<t>.txt   its YOLO labels (`images` -> `labels`, as YOLO
                                               tools find them)
The job folder is staged as a whole (grade_batch.pipeline), so nothing here is visible under its
final name before the job is complete.
"""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from grade_batch.export.coco import coco_document
from grade_batch.export.labels import FrameLabels, camera_frames, run_cameras
from grade_batch.export.yolo import label_text
from grade_batch.spec import ExportSettings

COCO_JSON = "coco.json"
YOLO_DIR = "yolo"


@dataclass(frozen=True)
class SequenceExport:
    """Counts of one exported sequence."""

    frames: int
    instances: int


def link_file(src: Path, dst: Path) -> None:
    """`dst` as a hard link of `src` (no data copied), or a copy where links cannot be made."""
    try:
        os.link(src, dst)
    except OSError:
        shutil.copyfile(src, dst)


def export_sequence(
    run_dir: Path, out_dir: Path, sequence: str, settings: ExportSettings, root: Path
) -> SequenceExport:
    """Write the COCO and/or YOLO labels of every camera of a run into `out_dir` (new)."""
    frames: list[FrameLabels] = []
    for robot, camera in run_cameras(run_dir):
        frames.extend(camera_frames(run_dir, robot, camera, settings))
    out_dir.mkdir(parents=True)
    if settings.coco:
        doc = coco_document(frames, settings.categories, sequence, root)
        (out_dir / COCO_JSON).write_text(json.dumps(doc, separators=(",", ":")))
    if settings.yolo:
        images, labels = out_dir / YOLO_DIR / "images", out_dir / YOLO_DIR / "labels"
        images.mkdir(parents=True)
        labels.mkdir(parents=True)
        for frame in frames:
            name = f"{frame.robot}_{frame.camera}_{frame.stamp}"
            link_file(frame.rgb, images / f"{name}{frame.rgb.suffix}")
            (labels / f"{name}.txt").write_text(label_text(frame, settings.yolo_task))
    return SequenceExport(len(frames), sum(len(f.instances) for f in frames))
