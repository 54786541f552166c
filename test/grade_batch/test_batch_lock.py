"""Lock files of the batch folder and its jobs: a live holder is refused (named by its PID), a
dead one or a recycled PID is taken over, and `run_batch` refuses a folder another process holds
before it changes anything."""

from __future__ import annotations

import json
import os
import socket
import subprocess
from collections.abc import Iterator
from dataclasses import asdict
from pathlib import Path

import pytest
import yaml

from grade_batch.batch import run_batch
from grade_batch.errors import BatchError, LockHeldError
from grade_batch.jobs import expand
from grade_batch.lock import (
    Holder,
    PidLock,
    live_holder,
    pid_alive,
    process_start_ticks,
    read_holder,
)
from grade_batch.manifest import MANIFEST_JSON, open_manifest
from grade_batch.pipeline import batch_lock_path, job_lock_path
from grade_batch.runners import LocalPool
from grade_batch.spec import load_sweep


@pytest.fixture
def other_process() -> Iterator[subprocess.Popen[bytes]]:
    """A live process that is not this one."""
    proc = subprocess.Popen(["sleep", "600"])
    try:
        yield proc
    finally:
        proc.kill()
        proc.wait()


def write_lock(path: Path, holder: Holder) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(asdict(holder)))


def holder_of(pid: int) -> Holder:
    return Holder(pid, process_start_ticks(pid), socket.gethostname())


def test_a_lock_names_this_process_until_released(tmp_path: Path) -> None:
    path = tmp_path / "locks/a.lock"
    with PidLock(path, "job a"):
        assert read_holder(path) == Holder.this_process()
        assert live_holder(path) == Holder.this_process()
        assert [p.name for p in path.parent.iterdir()] == ["a.lock"]  # no private copy left
    assert not path.exists()
    assert live_holder(path) is None


def test_a_live_holder_is_refused_and_a_dead_one_taken_over(
    tmp_path: Path, other_process: subprocess.Popen[bytes]
) -> None:
    path = tmp_path / "a.lock"
    write_lock(path, holder_of(other_process.pid))
    with pytest.raises(LockHeldError, match=rf"job a is held by pid {other_process.pid} on "):
        PidLock(path, "job a").acquire()
    assert read_holder(path) == holder_of(other_process.pid)  # left as it was
    other_process.kill()
    other_process.wait()
    assert not pid_alive(other_process.pid)
    with PidLock(path, "job a"):
        assert read_holder(path) == Holder.this_process()


def test_a_recycled_pid_is_not_the_holder(tmp_path: Path) -> None:
    """The PID runs, but a process started at another time wrote the lock: it is dead."""
    path = tmp_path / "a.lock"
    me = Holder.this_process()
    assert me.start_ticks is not None
    write_lock(path, Holder(me.pid, me.start_ticks - 1, me.host))
    assert live_holder(path) is None
    with PidLock(path, "job a"):
        assert read_holder(path) == me


def test_a_holder_on_another_host_counts_as_alive(tmp_path: Path) -> None:
    path = tmp_path / "a.lock"
    write_lock(path, Holder(999_999_999, None, "not-" + socket.gethostname()))
    with pytest.raises(LockHeldError, match=r"999999999 on not-.*another host.*remove the lock"):
        PidLock(path, "job a").acquire()


def test_a_foreign_file_is_reported(tmp_path: Path) -> None:
    path = tmp_path / "a.lock"
    path.write_text("hello")
    with pytest.raises(BatchError, match=r"a.lock: not a grade lock file \('hello'\)"):
        PidLock(path, "job a").acquire()


def _sweep(tmp_path: Path, repo_root: Path) -> Path:
    path = tmp_path / "sweep.yaml"
    group = {"name": "g", "scenario": str(repo_root / "config/indoor_uav.yaml"), "seeds": [1, 2]}
    path.write_text(yaml.safe_dump({"name": "locked", "groups": [group], "pipeline": {}}))
    return path


@pytest.mark.parametrize("which", ["batch", "job"])
def test_a_held_batch_folder_is_refused_before_anything_runs(
    tmp_path: Path, repo_root: Path, other_process: subprocess.Popen[bytes], which: str
) -> None:
    """Another live batch (or its worker) is running the folder's jobs: nothing is touched."""
    spec = load_sweep(_sweep(tmp_path, repo_root))
    batch = tmp_path / "batch"
    open_manifest(batch, spec.sweep.name, spec.digest(), expand(spec)).save(batch)
    before = (batch / MANIFEST_JSON).read_bytes()
    lock = batch_lock_path(batch) if which == "batch" else job_lock_path(batch, "g_s2")
    write_lock(lock, holder_of(other_process.pid))
    what = f"batch folder {batch}" if which == "batch" else "job g_s2"
    with pytest.raises(LockHeldError, match=f"{what} is held by pid {other_process.pid}"):
        run_batch(spec, batch, LocalPool(1), quiet=True)
    assert (batch / MANIFEST_JSON).read_bytes() == before
    assert read_holder(lock) == holder_of(other_process.pid)
    assert sorted(p.name for p in (batch / "locks").iterdir()) == [lock.name]  # ours released
    assert os.listdir(batch / "jobs") == []
