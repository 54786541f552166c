"""The dataset of a complete batch: splits by sequence, merged COCO, YOLO lists, eval tables and
the dataset card, staged as one folder `DIR/dataset/`.

    dataset/splits.yaml              job id -> train | val | test (replays follow their job)
    dataset/coco/<split>.json        COCO, image file names relative to the batch folder
    dataset/yolo/data.yaml, images|labels/<split>/   YOLO (hard links to the jobs' exports)
    dataset/eval/trajectories.csv    `grade eval batch` of each sequence (pipeline.eval)
    dataset/eval/groups.csv          its mean per group
    dataset/README.md                the dataset card (grade_batch.card)
"""

from __future__ import annotations

import csv
import json
import subprocess
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from grade_batch.batch import batch_lock
from grade_batch.card import dataset_card
from grade_batch.errors import JobFailedError
from grade_batch.export.coco import categories_table, merge
from grade_batch.export.sequence import COCO_JSON, YOLO_DIR, link_file
from grade_batch.jobs import Job
from grade_batch.manifest import Manifest
from grade_batch.pipeline import (
    EXPORT_DIR,
    JOBS_DIR,
    NOISY_BAG,
    RUN_DIR,
    replay_dir,
    sequence_name,
)
from grade_batch.spec import SweepFile
from grade_batch.splits import SPLITS, SplitStats, assign_splits
from grade_common.atomic import StagedOutput

DATASET_DIR = "dataset"


def _variants(spec: SweepFile) -> list[str]:
    return [RUN_DIR] + [replay_dir(v.name) for v in spec.sweep.pipeline.replays]


def _write_coco(
    root: Path, batch_dir: Path, spec: SweepFile, split_of: dict[str, str]
) -> dict[str, SplitStats]:
    export = spec.sweep.pipeline.export
    assert export is not None
    categories = categories_table(export.categories)
    names = [c["name"] for c in categories]
    stats: dict[str, SplitStats] = {}
    (root / "coco").mkdir()
    for split in SPLITS:
        docs = []
        for job_id in (j for j, s in split_of.items() if s == split):
            for variant in _variants(spec):
                path = batch_dir / JOBS_DIR / job_id / EXPORT_DIR / variant / COCO_JSON
                docs.append((f"{JOBS_DIR}/{job_id}/", json.loads(path.read_text())))
        info = {"description": f"{spec.sweep.name} {split}", "split": split}
        merged = merge(docs, info, categories)
        per_cat: dict[str, int] = defaultdict(int)
        for ann in merged["annotations"]:
            per_cat[names[ann["category_id"] - 1]] += 1
        stats[split] = SplitStats(
            sum(1 for s in split_of.values() if s == split) * len(_variants(spec)),
            len(merged["images"]),
            {n: per_cat[n] for n in names},
        )
        (root / "coco" / f"{split}.json").write_text(json.dumps(merged, separators=(",", ":")))
    return stats


def _write_yolo(root: Path, batch_dir: Path, spec: SweepFile, split_of: dict[str, str]) -> None:
    """The standard YOLO layout, images/<split>/ beside labels/<split>/, of hard links to the
    jobs' exports (no image is copied), named `<sequence>_<robot>_<camera>_<t>`."""
    export = spec.sweep.pipeline.export
    assert export is not None
    folder = root / "yolo"
    for split in SPLITS:
        (folder / "images" / split).mkdir(parents=True)
        (folder / "labels" / split).mkdir(parents=True)
        for job_id in (j for j, s in split_of.items() if s == split):
            for variant in _variants(spec):
                source = batch_dir / JOBS_DIR / job_id / EXPORT_DIR / variant / YOLO_DIR
                sequence = sequence_name(job_id, variant)
                for kind in ("images", "labels"):
                    for path in sorted((source / kind).iterdir()):
                        link_file(path, folder / kind / split / f"{sequence}_{path.name}")
    data = {
        "train": "images/train",
        "val": "images/val",
        "test": "images/test",
        "nc": len(export.categories),
        "names": {i: c.name for i, c in enumerate(export.categories)},
        "task": export.yolo_task.value,
    }
    (folder / "data.yaml").write_text(yaml.safe_dump(data, sort_keys=False))


def _write_eval(
    root: Path, batch_dir: Path, spec: SweepFile, jobs: list[Job], grade_exe: str
) -> list[dict[str, Any]]:
    """`grade eval batch` over every job's noisy odometry; returns the per-group means."""
    settings = spec.sweep.pipeline.eval
    assert settings is not None
    folder = root / "eval"
    folder.mkdir()
    entries = [
        {
            "sequence": sequence_name(job.job_id, RUN_DIR),
            "method": "odom_noisy",
            "reference": f"{JOBS_DIR}/{job.job_id}/{RUN_DIR}",
            "robot": settings.robot,
            "estimate": f"{JOBS_DIR}/{job.job_id}/{NOISY_BAG}",
            "estimate_topic": settings.estimate_topic,
        }
        for job in jobs
    ]
    eval_spec = folder / "eval_batch.yaml"
    eval_spec.write_text(yaml.safe_dump(entries, sort_keys=False))
    table = folder / "trajectories.csv"
    cmd = [grade_exe, "eval", "batch", str(eval_spec), "--out", str(table)]
    cmd += ["--align", settings.align]
    result = subprocess.run(cmd, cwd=batch_dir, capture_output=True, text=True, check=False)
    (folder / "eval.log").write_text(f"$ {' '.join(cmd)}\n{result.stdout}{result.stderr}")
    if result.returncode != 0:
        raise JobFailedError(f"grade eval batch exited with {result.returncode}: {result.stderr}")
    group_of = {job.job_id: job.group for job in jobs}
    rows = list(csv.DictReader(table.open()))
    by_group: dict[str, list[dict[str, str]]] = defaultdict(list)
    for row in rows:
        by_group[group_of[row["sequence"]]].append(row)
    numeric = [c for c in (rows[0] if rows else {}) if c not in ("sequence", "method")]
    means: list[dict[str, Any]] = []
    for group, members in by_group.items():
        mean: dict[str, Any] = {"group": group, "sequences": len(members)}
        for column in numeric:
            values = [float(r[column]) for r in members if r[column] not in ("", "nan")]
            mean[f"mean_{column}"] = float(np.mean(values)) if values else float("nan")
        means.append(mean)
    with (folder / "groups.csv").open("w", newline="") as out:
        writer = csv.DictWriter(out, fieldnames=list(means[0]) if means else ["group"])
        writer.writeheader()
        writer.writerows(means)
    return means


def build_dataset(
    spec: SweepFile, batch_dir: Path, jobs: list[Job], manifest: Manifest, grade_exe: str
) -> Path:
    """Write `DIR/dataset/` (replacing an older one only once the new one is complete).

    Raises:
        LockHeldError: another live process holds the batch folder.
    """
    split_of = assign_splits([j.job_id for j in jobs], spec)
    with batch_lock(batch_dir), StagedOutput(batch_dir / DATASET_DIR, overwrite=True) as root:
        root.mkdir()
        (root / "splits.yaml").write_text(yaml.safe_dump(split_of, sort_keys=True))
        stats: dict[str, SplitStats] = {}
        if spec.sweep.pipeline.export is not None:
            if spec.sweep.pipeline.export.coco:  # the counts come from the COCO files
                stats = _write_coco(root, batch_dir, spec, split_of)
            if spec.sweep.pipeline.export.yolo:
                _write_yolo(root, batch_dir, spec, split_of)
        means = []
        if spec.sweep.pipeline.eval is not None:
            means = _write_eval(root, batch_dir, spec, jobs, grade_exe)
        card = dataset_card(spec, jobs, manifest, split_of, stats, means)
        (root / "README.md").write_text(card)
    return batch_dir / DATASET_DIR
