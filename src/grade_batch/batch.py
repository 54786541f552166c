"""`grade batch` as a library: expand the sweep, resume from the manifest, run the missing jobs,
then build the dataset once every job is complete.

    DIR/manifest.json     the sweep digest and every job's state (grade_batch.manifest)
    DIR/jobs/<id>/        a complete job: run/, noisy_bag/, replay_<name>/, export/
    DIR/logs/<id>.log     every attempt's commands and output
    DIR/dataset/          splits, COCO, YOLO, eval tables, README.md (grade_batch.dataset)

A rerun with the same sweep skips complete jobs and runs pending and failed ones. A job folder
that a killed batch's worker finished but never reported is adopted (its checksum recomputed);
staging folders of dead processes are removed.
"""

from __future__ import annotations

import os
import shutil
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from tqdm import tqdm

from grade_batch.checksum import tree_checksum
from grade_batch.jobs import Job, expand
from grade_batch.manifest import JobStatus, Manifest, open_manifest
from grade_batch.pipeline import (
    JOBS_DIR,
    JobPlan,
    JobResult,
    find_grade,
    job_dir,
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


def _pid_alive(pid: int) -> bool:
    """True while the process runs; a killed worker not yet reaped (a zombie) counts as gone."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return True  # no /proc: trust kill(0)
    return state not in ("Z", "X")


def _remove_dead_staging(jobs_root: Path, job_id: str) -> None:
    """Remove `.<id>.partial-<pid>[-n]` folders whose process is gone (ours, by name)."""
    prefix = f".{job_id}{PARTIAL_MARK}-"
    for path in jobs_root.glob(f"{prefix}*"):
        pid_text = path.name[len(prefix) :].split("-")[0]
        if pid_text.isdigit() and not _pid_alive(int(pid_text)):
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
    """
    start = time.monotonic()
    jobs = expand(spec)
    batch_dir = batch_dir.resolve()
    manifest = open_manifest(batch_dir, spec.sweep.name, spec.digest(), jobs)
    batch_dir.mkdir(parents=True, exist_ok=True)
    # A batch folder is grade's own output: its manifest and dataset are replaced in place.
    write_marker(batch_dir)
    (batch_dir / JOBS_DIR).mkdir(exist_ok=True)
    _reconcile(manifest, jobs, batch_dir)
    by_id = {j.job_id: j for j in jobs}
    skipped = tuple(j.job_id for j in jobs if manifest.jobs[j.job_id].status is JobStatus.COMPLETE)
    todo = [j for j in jobs if manifest.jobs[j.job_id].status is not JobStatus.COMPLETE]
    grade = find_grade() if todo else ""
    noise = spec.sweep.pipeline.noise
    plans = [
        JobPlan(
            job=j,
            pipeline=spec.sweep.pipeline,
            noise_params=str(spec.path_of(noise.params)) if noise is not None else None,
            batch_dir=str(batch_dir),
            grade_exe=grade,
            num_cpus=spec.sweep.resources.num_cpus,
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
