"""The dataset of a batch from hand-made job exports (no simulation): every COCO split, the
empty ones too, loads in pycocotools with the sweep's full category table."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from grade_batch.dataset import build_dataset
from grade_batch.export.sequence import export_sequence
from grade_batch.jobs import expand
from grade_batch.manifest import JobStatus, open_manifest
from grade_batch.spec import load_sweep
from grade_batch.splits import SPLITS

pytest.importorskip("pycocotools")


def test_every_coco_split_carries_the_categories(
    tiny_run: Path, tmp_path: Path, repo_root: Path
) -> None:
    from pycocotools.coco import COCO

    sweep = tmp_path / "sweep.yaml"
    sweep.write_text(
        yaml.safe_dump(
            {
                "name": "hand_made",
                "groups": [
                    {
                        "name": "g",
                        "scenario": str(repo_root / "config/indoor_uav.yaml"),
                        "seeds": [1, 2],
                    }
                ],
                "pipeline": {"export": {"yolo": False}},
                # two sequences: one in train, one in val, none in test
                "splits": {"train": 0.5, "val": 0.5, "test": 0.0},
            }
        )
    )
    spec = load_sweep(sweep)
    jobs = expand(spec)
    batch = tmp_path / "batch"
    manifest = open_manifest(batch, spec.sweep.name, spec.digest(), jobs)
    export = spec.sweep.pipeline.export
    assert export is not None
    for job in jobs:
        folder = batch / "jobs" / job.job_id
        shutil.copytree(tiny_run, folder / "run")
        export_sequence(folder / "run", folder / "export/run", job.job_id, export, folder)
        manifest.jobs[job.job_id].status = JobStatus.COMPLETE
    dataset = build_dataset(spec, batch, jobs, manifest, grade_exe="")
    splits = yaml.safe_load((dataset / "splits.yaml").read_text())
    assert sorted(splits.values()) == ["train", "val"]
    names = [c.name for c in export.categories]
    for split in SPLITS:
        coco = COCO(str(dataset / f"coco/{split}.json"))
        assert [c["name"] for c in coco.loadCats(coco.getCatIds())] == names, split
        assert len(coco.getImgIds()) == (0 if split == "test" else 2), split
    assert not (batch / "locks/batch.lock").exists()  # released once the dataset is built
