"""The merged table of a complete slam_table batch (`pipeline.slam_table`), `DIR/table/`.

Each job ran one sequence of GRADE's table into `DIR/jobs/<id>/slam_table/`; the merge is
`grade bench slam --grade-table DIR/table --merge JOB_TABLES...` with the jobs' preset, backends,
repeats and duration. It copies every job's stored results into DIR/table and writes the
table, summary and plots as one `--grade-table` run of the same sequences does
(grade_slam.grade_table_merge). Its output goes to DIR/logs/slam_table_merge.log.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from grade_batch.batch import batch_lock
from grade_batch.errors import BatchError, JobFailedError
from grade_batch.jobs import Job
from grade_batch.pipeline import LOGS_DIR, TABLE_JOB_DIR, job_dir
from grade_batch.spec import SweepFile

TABLE_DIR = "table"
MERGE_LOG = "slam_table_merge.log"


def merge_command(spec: SweepFile, batch_dir: Path, jobs: list[Job], grade_exe: str) -> list[str]:
    """The `grade bench slam` command that merges the jobs' tables into DIR/table.

    Raises:
        BatchError: the sweep has no pipeline.slam_table.
    """
    step = spec.sweep.pipeline.slam_table
    if step is None:
        raise BatchError(f"sweep {spec.sweep.name}: has no pipeline.slam_table to merge")
    tables = [str(job_dir(batch_dir, job.job_id) / TABLE_JOB_DIR) for job in jobs]
    return [
        *(grade_exe, "bench", "slam", "--grade-table", str(batch_dir / TABLE_DIR)),
        *step.arguments(str(spec.path_of(step.preset))),
        *("--merge", *tables),
    ]


def merge_table(spec: SweepFile, batch_dir: Path, jobs: list[Job], grade_exe: str) -> Path:
    """Merge the complete jobs' tables into `DIR/table/`; its path.

    Raises:
        LockHeldError: another live process holds the batch folder.
        JobFailedError: the merge command failed (its output is in the log it names).
    """
    cmd = merge_command(spec, batch_dir, jobs, grade_exe)
    log = batch_dir / LOGS_DIR / MERGE_LOG
    with batch_lock(batch_dir):
        result = subprocess.run(cmd, cwd=batch_dir, capture_output=True, text=True, check=False)
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text(f"$ {' '.join(cmd)}\n{result.stdout}{result.stderr}")
    if result.returncode != 0:
        tail = (result.stdout + result.stderr).strip().splitlines()[-3:]
        raise JobFailedError(
            f"merging the SLAM table exited with {result.returncode}: {' / '.join(tail)} "
            f"(log {log})"
        )
    return batch_dir / TABLE_DIR
