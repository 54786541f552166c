"""`grade batch` end to end: 4 short jobs on the local pool and on a local Ray cluster give the
same checksums; a killed batch resumes with only the missing jobs; the dataset's COCO masks and
YOLO boxes match the run's instance masks and 2D tight boxes."""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest
import yaml

from grade_batch.batch import BatchOutcome, run_batch
from grade_batch.dataset import build_dataset
from grade_batch.jobs import expand
from grade_batch.manifest import JobStatus, read_manifest
from grade_batch.pipeline import find_grade
from grade_batch.runners import LocalPool, RayRunner, start_local_ray
from grade_batch.spec import SweepFile, load_sweep

pytestmark = pytest.mark.slow

SHORT = {
    "duration_s": 0.5,
    "bootstrap_s": 0.2,
    "people.count": 3,
    "flying_objects.count": 2,
    "robots.0.cameras.0.width": 96,
    "robots.0.cameras.0.height": 72,
    "robots.0.cameras.0.rate_hz": 10.0,
}


def tiny_sweep(folder: Path, repo_root: Path, *, full: bool) -> Path:
    """4 jobs (2 people counts x 2 seeds) of run + export; `full`: 2 jobs (seeds) with noise, a
    replay and the eval as well."""
    pipeline: dict[str, Any] = {"export": {}}
    group: dict[str, Any] = {
        "name": "indoor",
        "scenario": str(repo_root / "config/indoor_uav.yaml"),
        "seeds": [1, 2],
        "set": SHORT,
    }
    if full:
        pipeline["noise"] = {"params": str(repo_root / "config/noise.yaml")}
        pipeline["replays"] = [{"name": "dark", "light_scale": 0.3}]
        pipeline["eval"] = {}
    else:
        group["product"] = {"people.count": [3, 5]}
    data = {
        "name": "tiny_full" if full else "tiny",
        "groups": [group],
        "pipeline": pipeline,
        "splits": {"train": 0.5, "val": 0.25, "test": 0.25},
    }
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "sweep.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


Batch = tuple[SweepFile, Path, BatchOutcome]


def _batch(root: Path, repo_root: Path, *, full: bool) -> Batch:
    spec = load_sweep(tiny_sweep(root, repo_root, full=full))
    outcome = run_batch(spec, root / "batch", LocalPool(2), quiet=True)
    assert outcome.complete, outcome.manifest.to_json()
    build_dataset(spec, root / "batch", expand(spec), outcome.manifest, find_grade())
    return spec, root / "batch", outcome


@pytest.fixture(scope="module")
def local_batch(tmp_path_factory: pytest.TempPathFactory, repo_root: Path) -> Batch:
    """The 4-job run + export sweep on the local pool (2 workers)."""
    return _batch(tmp_path_factory.mktemp("local"), repo_root, full=False)


@pytest.fixture(scope="module")
def full_batch(tmp_path_factory: pytest.TempPathFactory, repo_root: Path) -> Batch:
    """The 2-job sweep with every pipeline step."""
    return _batch(tmp_path_factory.mktemp("full"), repo_root, full=True)


def _checksums(batch: Path) -> dict[str, str | None]:
    manifest = read_manifest(batch)
    assert manifest is not None
    return {k: e.checksum for k, e in manifest.jobs.items()}


def test_local_batch_completes_every_job(local_batch: Batch) -> None:
    _, batch, outcome = local_batch
    assert outcome.failed == ()
    assert len(outcome.ran) == 4
    for job_id, entry in outcome.manifest.jobs.items():
        assert entry.status is JobStatus.COMPLETE
        assert entry.attempts == 1
        assert (batch / "jobs" / job_id / "run/run.yaml").is_file()
        assert "== done, checksum" in Path(entry.log).read_text()
    assert not list((batch / "jobs").glob(".*partial*"))
    assert len(set(_checksums(batch).values())) == 4  # different settings, different data
    splits = yaml.safe_load((batch / "dataset/splits.yaml").read_text())
    assert sorted(splits.values()) == ["test", "train", "train", "val"]
    card = (batch / "dataset/README.md").read_text()
    assert "## How to regenerate" in card
    assert "indoor_00_s1" in card


def test_every_pipeline_step(full_batch: Batch) -> None:
    _, batch, outcome = full_batch
    for job_id in outcome.manifest.jobs:
        job = batch / "jobs" / job_id
        for part in ("run/run.yaml", "noisy_bag/metadata.yaml", "replay_dark/run.yaml"):
            assert (job / part).is_file(), part
        replay = yaml.safe_load((job / "replay_dark/run.yaml").read_text())["replay"]
        assert replay["source"] == "../run"
        assert (job / "export/replay_dark/coco.json").is_file()
    rows = (batch / "dataset/eval/trajectories.csv").read_text().splitlines()
    assert len(rows) == 3
    assert rows[0].startswith("sequence,method,ate_rmse_m")
    assert {r.split(",")[0] for r in rows[1:]} == {"indoor_s1", "indoor_s2"}
    groups = (batch / "dataset/eval/groups.csv").read_text().splitlines()
    assert groups[0].startswith("group,sequences")
    assert groups[1].startswith("indoor,2")
    assert "## Evaluation" in (batch / "dataset/README.md").read_text()


def test_a_rerun_skips_complete_jobs(local_batch: Batch) -> None:
    spec, batch, _ = local_batch
    again = run_batch(spec, batch, LocalPool(1), quiet=True)
    assert again.ran == ()
    assert len(again.skipped) == 4


def test_coco_masks_match_instance_masks(local_batch: Batch) -> None:
    from pycocotools import mask as mask_utils
    from pycocotools.coco import COCO

    _, batch, _ = local_batch
    checked = 0
    for split in ("train", "val", "test"):
        coco = COCO(str(batch / f"dataset/coco/{split}.json"))
        for ann in coco.loadAnns(coco.getAnnIds()):
            image = coco.loadImgs(ann["image_id"])[0]
            rgb = batch / image["file_name"]
            assert rgb.is_file()
            ids = cv2.imread(str(rgb.parent.parent / "instance" / rgb.name), cv2.IMREAD_UNCHANGED)
            truth = np.asfortranarray((ids == ann["instance_id"]).astype(np.uint8))
            iou = mask_utils.iou([ann["segmentation"]], [mask_utils.encode(truth)], [0])
            assert float(iou[0][0]) == 1.0
            assert np.array_equal(coco.annToMask(ann), truth)
            checked += 1
    assert checked > 10


def test_yolo_boxes_match_tight_boxes(local_batch: Batch) -> None:
    _, batch, _ = local_batch
    splits = yaml.safe_load((batch / "dataset/splits.yaml").read_text())
    data = yaml.safe_load((batch / "dataset/yolo/data.yaml").read_text())
    assert data["names"] == {0: "person", 1: "flying_object"}
    images = sorted((batch / "dataset/yolo").glob("images/*/*.png"))
    assert images
    assert len(images) == len(list((batch / "jobs").glob("*/export/run/yolo/images/*.png")))
    checked = 0
    for image in images:
        split = image.parent.name
        label = image.parents[2] / "labels" / split / f"{image.stem}.txt"
        # <sequence>_<robot>_<camera>_<t>: the sequence is a job of this split
        job_id, name = image.stem.rsplit("_", 3)[0], image.name
        assert splits[job_id] == split
        source = batch / "jobs" / job_id / "export/run/yolo/images" / name[len(job_id) + 1 :]
        assert image.samefile(source) or image.read_bytes() == source.read_bytes()
        image = source
        variant = image.parents[2].name  # export/<variant>/yolo/images/<name>
        job = image.parents[4]
        robot, camera, stamp = image.stem.split("_")  # <robot>_<camera>_<t>.png
        folder = job / variant / "gt" / robot / camera
        boxes = {
            float(json.loads(line)["t"]): json.loads(line)["boxes"]
            for line in (folder / "boxes2d.jsonl").read_text().splitlines()
        }[float(stamp)]
        classes = yaml.safe_load((job / variant / "gt/instances.yaml").read_text())
        expected = sorted(
            (
                0 if classes[b["id"]]["class"] == "person" else 1,
                (b["x_min"] + b["x_max"] + 1) / 2 / 96,
                (b["y_min"] + b["y_max"] + 1) / 2 / 72,
                (b["x_max"] - b["x_min"] + 1) / 96,
                (b["y_max"] - b["y_min"] + 1) / 72,
            )
            for b in boxes
            # boxes2d.jsonl also boxes furniture; the export keeps its two categories
            if classes[b["id"]]["class"] == "person"
            or classes[b["id"]]["class"].startswith("flying_")
        )
        got = sorted(
            (int(v[0]), *map(float, v[1:]))
            for v in (line.split() for line in label.read_text().splitlines())
        )
        assert len(got) == len(expected)
        for g, e in zip(got, expected, strict=True):
            assert g[0] == e[0]
            assert g[1:] == pytest.approx(e[1:], abs=1e-6)
        checked += len(got)
    assert checked > 10


def test_ray_gives_the_same_checksums(local_batch: Batch, tmp_path: Path) -> None:
    if importlib.util.find_spec("ray") is None:  # not importorskip: ray must be imported later
        pytest.skip("ray is not installed")
    spec, batch, _ = local_batch
    ray = start_local_ray(2)  # this test's own cluster, every server on 127.0.0.1
    try:
        assert ray.util.get_node_ip_address() == "127.0.0.1"
        outcome = run_batch(
            spec, tmp_path / "ray", RayRunner("auto", spec.sweep.resources), quiet=True
        )
    finally:
        ray.shutdown()
    assert outcome.complete
    assert len(outcome.ran) == 4
    assert _checksums(tmp_path / "ray") == _checksums(batch)


def test_a_killed_batch_resumes_with_the_missing_jobs(local_batch: Batch, tmp_path: Path) -> None:
    spec, batch, _ = local_batch
    sweep_file = tiny_sweep(tmp_path, Path(spec.sweep.groups[0].scenario).parents[1], full=False)
    out = tmp_path / "killed"
    proc = subprocess.Popen(
        [find_grade(), "batch", str(sweep_file), "--out", str(out), "--quiet", "--no-dataset"],
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 240
        done: set[str] = set()
        while not done and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.5)
            manifest = read_manifest(out)
            if manifest is not None:
                done = {k for k, e in manifest.jobs.items() if e.status is JobStatus.COMPLETE}
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    assert done, "no job completed before the deadline"
    assert len(done) < 4, "the batch must be killed mid-way"
    manifest = read_manifest(out)
    assert manifest is not None
    done = {k for k, e in manifest.jobs.items() if e.status is JobStatus.COMPLETE}
    # No folder is there as complete that the manifest does not know as complete ...
    finals = {p.name for p in (out / "jobs").iterdir() if not p.name.startswith(".")}
    assert finals == done
    resumed = run_batch(load_sweep(sweep_file), out, LocalPool(2), quiet=True)
    assert set(resumed.skipped) == done
    assert set(resumed.ran) == set(manifest.jobs) - done
    assert resumed.complete
    assert not list((out / "jobs").glob(".*partial*"))  # the killed job's staging is gone
    assert _checksums(out) == _checksums(batch)


def test_a_failing_job_is_reported_with_its_settings(
    tmp_path: Path, repo_root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tiny_sweep(tmp_path, repo_root, full=False)
    data = yaml.safe_load(path.read_text())
    data["groups"][0]["seeds"] = [1]
    data["groups"][0]["product"] = {"people.count": [3, 999]}  # 999 is out of range
    path.write_text(yaml.safe_dump(data))
    outcome = run_batch(load_sweep(path), tmp_path / "b", LocalPool(2), quiet=True)
    assert outcome.failed == ("indoor_01_s1",)
    assert not (tmp_path / "b/jobs/indoor_01_s1").exists()
    err = capsys.readouterr().err
    assert "job indoor_01_s1 FAILED: step 'run' exited with" in err
    assert "'people.count': 999" in err
    assert (
        "people.count: value 999 is out of range"
        in (tmp_path / "b/logs/indoor_01_s1.log").read_text()
    )
    entry = outcome.manifest.jobs["indoor_01_s1"]
    assert entry.status is JobStatus.FAILED
    assert entry.attempts == 1
    again = run_batch(load_sweep(path), tmp_path / "b", LocalPool(1), quiet=True)
    assert again.ran == ("indoor_01_s1",)
    assert again.manifest.jobs["indoor_01_s1"].attempts == 2
