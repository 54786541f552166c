"""A `grade batch` killed outright (SIGKILL of its PID only, as the OOM killer does) takes its
pool worker and the worker's step process with it, and the same command then completes; where
the kernel's parent-death signal is not available, the worker's parent-alive thread does it."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import yaml

from grade_batch.lock import pid_alive
from grade_batch.manifest import JobStatus, read_manifest
from grade_batch.pipeline import find_grade

TINY = {
    "duration_s": 0.3,
    "bootstrap_s": 0.1,
    "people.count": 1,
    "flying_objects.count": 0,
    "robots.0.cameras.0.width": 48,
    "robots.0.cameras.0.height": 36,
    "robots.0.cameras.0.rate_hz": 10.0,
}


def _group_members(pgid: int) -> list[int]:
    """The live (not zombie) processes of process group `pgid`."""
    members = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue  # ended while listing
        if int(fields[2]) == pgid and fields[0] not in ("Z", "X"):
            members.append(int(stat.parent.name))
    return members


@contextmanager
def own_group(cmd: list[str]) -> Iterator[subprocess.Popen[bytes]]:
    """`cmd` as the leader of a new process group, so the test can find every process it
    started; whatever of the group still runs at the end is killed (if the guards failed)."""
    proc = subprocess.Popen(
        cmd, start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        yield proc
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def kill_only_the_leader(proc: subprocess.Popen[bytes], wait_s: float) -> list[int]:
    """SIGKILL the group's leader alone; the group's processes still running after `wait_s`
    (returned as soon as none is left)."""
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    deadline = time.monotonic() + wait_s
    while _group_members(proc.pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    return _group_members(proc.pid)


def _complete(out: Path) -> set[str]:
    manifest = read_manifest(out) if (out / "manifest.json").is_file() else None
    if manifest is None:
        return set()
    return {k for k, e in manifest.jobs.items() if e.status is JobStatus.COMPLETE}


@pytest.mark.slow
def test_a_killed_batch_leaves_no_orphan_and_the_rerun_completes(
    tmp_path: Path, repo_root: Path
) -> None:
    sweep = tmp_path / "sweep.yaml"
    group = {
        "name": "indoor",
        "scenario": str(repo_root / "config/indoor_uav.yaml"),
        "seeds": [1, 2],
        "set": TINY,
    }
    sweep.write_text(yaml.safe_dump({"name": "killed", "groups": [group], "pipeline": {}}))
    out = tmp_path / "batch"
    cmd = [find_grade(), "batch", str(sweep), "--out", str(out), "--workers", "1", "--quiet"]
    with own_group(cmd) as proc:
        deadline = time.monotonic() + 300
        while not _complete(out) and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.2)
        assert _complete(out) == {"indoor_s1"}, "the first job must complete, the second run"
        started = set(_group_members(proc.pid)) - {proc.pid}
        assert started, "the pool worker must be running"
        survivors = kill_only_the_leader(proc, wait_s=60)
    assert survivors == [], f"processes of the killed batch still run: {survivors}"
    assert not any(pid_alive(pid) for pid in started)
    rerun = subprocess.run(cmd, capture_output=True, text=True, check=False, timeout=600)
    assert rerun.returncode == 0, rerun.stderr
    assert "ran 1, skipped 1 complete, 2/2 complete, 0 failed" in rerun.stdout
    assert _complete(out) == {"indoor_s1", "indoor_s2"}
    assert sorted(p.name for p in (out / "jobs").iterdir()) == ["indoor_s1", "indoor_s2"]
    assert list((out / "locks").iterdir()) == []  # every lock released


# A worker without the kernel's help (as on a system without prctl): only the parent-alive
# thread can notice that its parent died while a step runs.
WORKER = """
import os, sys
import grade_batch.parent_death as pd
pd._libc = None
pd.die_with_parent(os.getppid(), poll_s=0.1)
pd.run_step(["sleep", "600"], cwd=".", env=dict(os.environ), log=sys.stdout)
"""
PARENT = f"""
import subprocess, sys, time
subprocess.Popen([sys.executable, "-c", {WORKER!r}])
time.sleep(600)
"""


def test_the_parent_alive_thread_ends_an_orphaned_worker_and_its_step() -> None:
    with own_group([sys.executable, "-c", PARENT]) as parent:
        deadline = time.monotonic() + 60
        while len(_group_members(parent.pid)) < 3 and time.monotonic() < deadline:
            time.sleep(0.1)
        started = set(_group_members(parent.pid)) - {parent.pid}
        assert len(started) == 2, "the worker and its step must be running"
        survivors = kill_only_the_leader(parent, wait_s=30)
    assert survivors == []
