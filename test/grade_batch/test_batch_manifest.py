"""The manifest, resuming from disk, and the location-independent job checksum."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from rosbags.rosbag2 import StoragePlugin, Writer

from grade_batch.batch import _reconcile
from grade_batch.checksum import tree_checksum
from grade_batch.errors import BatchOutputError
from grade_batch.jobs import Job
from grade_batch.manifest import JobStatus, open_manifest, read_manifest
from grade_common import ros_distro


def _jobs(n: int) -> list[Job]:
    return [Job(i, f"g_s{i}", "g", "/x/scenario.yaml", i, (), 1 + i) for i in range(n)]


def _bag(path: Path, text: str) -> None:
    store = ros_distro.typestore()
    msg_type = "std_msgs/msg/String"
    with Writer(path, version=9, storage_plugin=StoragePlugin.MCAP) as writer:
        conn = writer.add_connection("/chatter", msg_type, typestore=store)
        message = store.types[msg_type](data=text)
        writer.write(conn, 5, store.serialize_cdr(message, msg_type))


def _job_folder(root: Path, text: str = "hello") -> Path:
    (root / "run/gt").mkdir(parents=True)
    (root / "run/gt/trajectory.txt").write_text("0 0 0 0 0 0 0 1\n")
    (root / "run/summary.json").write_text('{"wall_time_s": 1.0}')
    _bag(root / "run/bag", text)
    return root


def test_checksum_ignores_location_and_wall_clock(tmp_path: Path) -> None:
    a = _job_folder(tmp_path / "a")
    b = tmp_path / "elsewhere/b"
    shutil.copytree(a, b)
    (b / "run/summary.json").write_text('{"wall_time_s": 9.0}')
    assert tree_checksum(a) == tree_checksum(b)
    (b / "run/gt/trajectory.txt").write_text("0 0 0 1 0 0 0 1\n")
    assert tree_checksum(a) != tree_checksum(b)


def test_bags_count_by_their_messages(tmp_path: Path) -> None:
    a = _job_folder(tmp_path / "a")
    b = _job_folder(tmp_path / "b")  # written at another time: other container bytes
    c = _job_folder(tmp_path / "c", text="other")
    assert tree_checksum(a) == tree_checksum(b)
    assert tree_checksum(a) != tree_checksum(c)


def test_manifest_round_trip_and_killed_entries(tmp_path: Path) -> None:
    manifest = open_manifest(tmp_path / "b", "sweep", "d1", _jobs(2))
    manifest.jobs["g_s0"].status = JobStatus.RUNNING
    manifest.jobs["g_s1"].status = JobStatus.COMPLETE
    manifest.jobs["g_s1"].checksum = "abc"
    (tmp_path / "b").mkdir()
    manifest.save(tmp_path / "b")
    again = open_manifest(tmp_path / "b", "sweep", "d1", _jobs(2))
    assert again.jobs["g_s0"].status is JobStatus.PENDING  # a killed batch's running job
    assert again.jobs["g_s1"].checksum == "abc"
    assert again.counts() == {"pending": 1, "running": 0, "complete": 1, "failed": 0}


def test_another_sweep_or_folder_is_refused(tmp_path: Path) -> None:
    (tmp_path / "b").mkdir()
    open_manifest(tmp_path / "b", "sweep", "d1", _jobs(1)).save(tmp_path / "b")
    with pytest.raises(BatchOutputError, match="holds the batch of another sweep"):
        open_manifest(tmp_path / "b", "sweep", "d2", _jobs(1))
    (tmp_path / "other").mkdir()
    (tmp_path / "other/file.txt").write_text("x")
    with pytest.raises(BatchOutputError, match="is not a grade batch folder"):
        open_manifest(tmp_path / "other", "sweep", "d1", _jobs(1))


def test_resume_adopts_finished_folders_and_removes_dead_staging(tmp_path: Path) -> None:
    batch = tmp_path / "b"
    jobs = _jobs(3)
    manifest = open_manifest(batch, "sweep", "d1", jobs)
    # g_s0: finished by a worker of a killed batch, never recorded
    done = _job_folder(batch / "jobs/g_s0")
    # g_s1: recorded complete, but its folder was deleted since
    manifest.jobs["g_s1"].status = JobStatus.COMPLETE
    # g_s2: a staging folder of a dead process, and one of a live process (this one)
    dead = batch / "jobs/.g_s2.partial-999999999"
    live = batch / f"jobs/.g_s2.partial-{os.getpid()}"
    dead.mkdir(parents=True)
    live.mkdir()
    _reconcile(manifest, jobs, batch)
    assert manifest.jobs["g_s0"].status is JobStatus.COMPLETE
    assert manifest.jobs["g_s0"].checksum == tree_checksum(done)
    assert manifest.jobs["g_s1"].status is JobStatus.PENDING
    assert not dead.exists()
    assert live.exists()
    assert read_manifest(batch) is None  # nothing saved yet
