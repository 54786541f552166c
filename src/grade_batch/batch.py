"""`grade batch` as a library: expand the sweep, resume from the manifest, run the missing jobs,
then build the dataset once every job is complete.

    DIR/manifest.json     the sweep digest and every job's state (grade_batch.manifest)
    DIR/jobs/<id>/        a complete job: run/, noisy_bag/, replay_<name>/, export/
    DIR/logs/<id>.log     every attempt's commands and output
    DIR/dataset/          splits, COCO, YOLO, eval tables, README.md (grade_batch.dataset)
    DIR/table/            a slam_table sweep's merged table, instead (grade_batch.slam_table)
    DIR/locks/            batch.lock (this batch process), <id>.lock (the worker running <id>)

A rerun with the same sweep skips complete jobs and runs pending and failed ones. A job folder
that a killed batch's worker finished but never reported is adopted (its checksum recomputed);
staging folders of dead processes are removed. A batch folder or job that a live process holds
(its lock file names it) is refused; a lock of a dead process is taken over (grade_batch.lock).
"""

from __future__ import annotations

import shutil
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from tqdm import tqdm

from grade_batch.checksum import tree_checksum
from grade_batch.errors import LockHeldError
from grade_batch.jobs import Job, expand
from grade_batch.lock import PidLock, live_holder, pid_alive
from grade_batch.manifest import JobStatus, Manifest, open_manifest
from grade_batch.pipeline import (
    JOBS_DIR,
    JobPlan,
    JobResult,
    batch_lock_path,
    find_grade,
    job_dir,
    job_lock_path,
    log_path,
)
from grade_batch.runners import Runner
from grade_batch.spec import SweepFile
from grade_common.atomic import PARTIAL_MARK
from grade_common.output_guard import write_marker


@dataclass(frozen=True)
class BatchOutcome:
    """What one `grade batch` invocation did."""

    manifest: Manifest
    ran: tuple[str, ...]  # job ids run by this invocation
    skipped: tuple[str, ...]  # complete before it started
    failed: tuple[str, ...]
    wall_s: float

    @property
    def complete(self) -> bool:
        return all(e.status is JobStatus.COMPLETE for e in self.manifest.jobs.values())


def _remove_dead_staging(jobs_root: Path, job_id: str) -> None:
    """Remove `.<id>.partial-<pid>[-n]` folders whose process is gone (ours, by name)."""
    prefix = f".{job_id}{PARTIAL_MARK}-"
    for path in jobs_root.glob(f"{prefix}*"):
        pid_text = path.name[len(prefix) :].split("-")[0]
        if pid_text.isdigit() and not pid_alive(int(pid_text)):
            shutil.rmtree(path, ignore_errors=True)


def _reconcile(manifest: Manifest, jobs: list[Job], batch_dir: Path) -> None:
    """Make the manifest agree with the job folders on disk."""
    for job in jobs:
        entry = manifest.jobs[job.job_id]
        final = job_dir(batch_dir, job.job_id)
        _remove_dead_staging(batch_dir / JOBS_DIR, job.job_id)
        if entry.status is JobStatus.COMPLETE and not final.is_dir():
            entry.status, entry.checksum = JobStatus.PENDING, None
        elif entry.status is not JobStatus.COMPLETE and final.is_dir():
            # Only a finished pipeline commits the folder: it is complete, just unreported.
            entry.status, entry.checksum, entry.error = (
                JobStatus.COMPLETE,
                tree_checksum(final),
                None,
            )


def refuse_held_jobs(batch_dir: Path, jobs: list[Job]) -> None:
    """Refuse to go on while a live process runs one of the jobs (a worker that outlived a
    killed batch, or another batch's worker); dead holders' locks are left to be taken over.

    Raises:
        LockHeldError: names each held job, its holder and the lock file.
    """
    held = []
    for job in jobs:
        path = job_lock_path(batch_dir, job.job_id)
        holder = live_holder(path)
        if holder is not None:
            held.append(f"job {job.job_id} is held by {holder.describe()} (lock {path})")
    if held:
        raise LockHeldError(
            f"{batch_dir}: " + "; ".join(held) + "; wait for it to finish or stop it, then rerun"
        )


def batch_lock(batch_dir: Path) -> PidLock:
    """The lock of the batch folder, held while jobs run or the dataset is built."""
    return PidLock(batch_lock_path(batch_dir), f"batch folder {batch_dir}")


def _report_failure(job: Job, result: JobResult, log: Path) -> None:
    settings = ", ".join(f"{k}={v}" for k, v in job.describe().items())
    print(
        f"job {job.job_id} FAILED: {result.error}\n  settings: {settings}\n  log: {log}",
        file=sys.stderr,
    )


def run_batch(
    spec: SweepFile, batch_dir: Path, runner: Runner, *, quiet: bool = False
) -> BatchOutcome:
    """Run the sweep's missing jobs into `batch_dir` (new, or a batch of the same sweep).

    Raises:
        BatchOutputError: `batch_dir` holds something else.
        BatchConfigError: the sweep does not expand into valid jobs.
        LockHeldError: another live process holds the batch folder or one of its jobs.
    """
    start = time.monotonic()
    jobs = expand(spec)
    batch_dir = batch_dir.resolve()
    manifest = open_manifest(batch_dir, spec.sweep.name, spec.digest(), jobs)
    batch_dir.mkdir(parents=True, exist_ok=True)
    # A batch folder is grade's own output: its manifest and dataset are replaced in place.
    write_marker(batch_dir)
    (batch_dir / JOBS_DIR).mkdir(exist_ok=True)
    with batch_lock(batch_dir):
        refuse_held_jobs(batch_dir, jobs)
        return _run_jobs(spec, batch_dir, runner, manifest, jobs, quiet=quiet, start=start)


def _run_jobs(
    spec: SweepFile,
    batch_dir: Path,
    runner: Runner,
    manifest: Manifest,
    jobs: list[Job],
    *,
    quiet: bool,
    start: float,
) -> BatchOutcome:
    """`run_batch` once this process holds the batch folder."""
    _reconcile(manifest, jobs, batch_dir)
    by_id = {j.job_id: j for j in jobs}
    skipped = tuple(j.job_id for j in jobs if manifest.jobs[j.job_id].status is JobStatus.COMPLETE)
    todo = [j for j in jobs if manifest.jobs[j.job_id].status is not JobStatus.COMPLETE]
    grade = find_grade() if todo else ""
    noise, table = spec.sweep.pipeline.noise, spec.sweep.pipeline.slam_table
    plans = [
        JobPlan(
            job=j,
            pipeline=spec.sweep.pipeline,
            noise_params=str(spec.path_of(noise.params)) if noise is not None else None,
            batch_dir=str(batch_dir),
            grade_exe=grade,
            num_cpus=spec.sweep.resources.num_cpus,
            table_preset=str(spec.path_of(table.preset)) if table is not None else None,
        )
        for j in todo
    ]
    for job in todo:
        entry = manifest.jobs[job.job_id]
        entry.status, entry.log = JobStatus.RUNNING, str(log_path(batch_dir, job.job_id))
    manifest.save(batch_dir)
    if not quiet:
        print(
            f"batch {spec.sweep.name}: {len(jobs)} jobs, {len(skipped)} complete already, "
            f"running {len(todo)} on {runner.name}",
            file=sys.stderr,
        )
    failed: list[str] = []
    bar = tqdm(total=len(jobs), initial=len(skipped), unit="job", disable=quiet, file=sys.stderr)

    def on_result(result: JobResult) -> None:
        entry = manifest.jobs[result.job_id]
        entry.attempts += 1
        entry.wall_s = round(result.wall_s, 3)
        if result.ok:
            entry.status, entry.checksum, entry.error = JobStatus.COMPLETE, result.checksum, None
        else:
            entry.status, entry.checksum, entry.error = JobStatus.FAILED, None, result.error
            failed.append(result.job_id)
            _report_failure(by_id[result.job_id], result, Path(entry.log))
        manifest.save(batch_dir)
        bar.update(1)
        bar.set_postfix(failed=len(failed))

    try:
        runner.run(plans, on_result)
    finally:
        bar.close()
    return BatchOutcome(
        manifest,
        tuple(j.job_id for j in todo),
        skipped,
        tuple(failed),
        time.monotonic() - start,
    )
