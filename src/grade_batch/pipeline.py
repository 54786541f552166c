"""One job's pipeline, run by a worker (a local pool process or a Ray task).

The steps call the other grade tools through the `grade` command (grade_batch imports only
grade_common; see docs/architecture.md), each as its own process in the job's folder with the
job's ROS_DOMAIN_ID and CPU share:

    grade run SCENARIO --out run --set seed=S --set KEY=VALUE ...
    grade noise apply run/bag noisy_bag --params PARAMS --seed S+offset   (pipeline.noise)
    grade replay run --out replay_<name> --light-scale F --hide CLASS      (pipeline.replays)
    COCO / YOLO labels of run and every replay into export/<run|replay_name>/  (pipeline.export)

A job of a slam_table sweep has one step instead, which simulates, segments and tracks its
sequence of GRADE's table (grade_slam.grade_table):

    grade bench slam --grade-table slam_table --preset P --worlds W --kinds K --table-seeds S ...

The job folder is staged (grade_common.atomic): it appears under jobs/<id> only when every step
succeeded; a failed or killed job leaves only its log. While it runs, the worker holds the job's
lock file (locks/<id>.lock, grade_batch.lock), and every step process dies with the worker
(grade_batch.parent_death). Rendering and LiDAR steps are not part of the pipeline (those
features have not landed).
"""

from __future__ import annotations

import math
import os
import shutil
import time
import traceback
from dataclasses import dataclass
from pathlib import Path

from grade_batch.checksum import tree_checksum
from grade_batch.errors import BatchError, BatchOutputError, JobFailedError
from grade_batch.export.sequence import export_sequence
from grade_batch.jobs import Job
from grade_batch.lock import PidLock
from grade_batch.parent_death import run_step
from grade_batch.spec import Pipeline
from grade_common.atomic import StagedOutput
from grade_common.rundir import (
    REPLAY_KEY,
    RUN_YAML,
    SCENARIO_KEY,
    STATUS_KEY,
    RunStatus,
    read_run_yaml,
    write_run_yaml,
)
from grade_common.transport import transport_environment

RUN_DIR = "run"
TABLE_JOB_DIR = "slam_table"
NOISY_BAG = "noisy_bag"
EXPORT_DIR = "export"
LOGS_DIR = "logs"
JOBS_DIR = "jobs"
LOCKS_DIR = "locks"
BATCH_LOCK = "batch.lock"


def replay_dir(name: str) -> str:
    """The folder of a replay variant inside a job."""
    return f"replay_{name}"


def sequence_name(job_id: str, variant: str) -> str:
    """The dataset sequence of a job's run (`<job>`) or replay (`<job>_<replay>`)."""
    return job_id if variant == RUN_DIR else f"{job_id}_{variant.removeprefix('replay_')}"


@dataclass(frozen=True)
class JobPlan:
    """Everything a worker needs, as plain data (it is pickled to the worker)."""

    job: Job
    pipeline: Pipeline
    noise_params: str | None  # absolute path
    batch_dir: str  # absolute path of the batch folder
    grade_exe: str  # the `grade` command
    num_cpus: float
    table_preset: str | None = None  # absolute path of pipeline.slam_table.preset


@dataclass(frozen=True)
class JobResult:
    """What a worker reports back."""

    job_id: str
    ok: bool
    checksum: str | None
    error: str | None
    wall_s: float
    worker_pid: int


def log_path(batch_dir: Path, job_id: str) -> Path:
    """The job's log (kept outside the staged job folder, so a failure keeps it)."""
    return batch_dir / LOGS_DIR / f"{job_id}.log"


def job_dir(batch_dir: Path, job_id: str) -> Path:
    """The job's final folder."""
    return batch_dir / JOBS_DIR / job_id


def job_lock_path(batch_dir: Path, job_id: str) -> Path:
    """The lock file a worker holds while it runs the job."""
    return batch_dir / LOCKS_DIR / f"{job_id}.lock"


def batch_lock_path(batch_dir: Path) -> Path:
    """The lock file the batch process holds while it runs jobs or builds the dataset."""
    return batch_dir / LOCKS_DIR / BATCH_LOCK


def find_grade() -> str:
    """The `grade` command on PATH.

    Raises:
        BatchError: not found (the environment is not set up).
    """
    exe = shutil.which("grade")
    if exe is None:
        raise BatchError("the `grade` command is not on PATH; run `source scripts/env.sh` first")
    return exe


def job_environment(plan: JobPlan) -> dict[str, str]:
    """The environment of the job's step processes."""
    env = dict(os.environ)
    env["ROS_DOMAIN_ID"] = str(plan.job.domain_id)
    # The project's local transport, whatever the calling shell had (docs/transport.md).
    env.update(transport_environment(env))
    # The job's declared CPU share caps the math libraries' thread pools, so parallel jobs do
    # not oversubscribe the cores they were scheduled on.
    threads = str(max(1, math.ceil(plan.num_cpus)))
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        env[var] = threads
    return env


def _table_command(plan: JobPlan) -> list[str]:
    """The job's sequence of GRADE's table, its world and kind from the job's group."""
    step, sequence = plan.pipeline.slam_table, plan.job.table_sequence
    if step is None or sequence is None or plan.table_preset is None:
        raise BatchError(f"job {plan.job.job_id}: not a job of a slam_table sweep")
    world, kind = sequence
    return [
        *(plan.grade_exe, "bench", "slam", "--grade-table", TABLE_JOB_DIR),
        *step.arguments(plan.table_preset),
        *("--worlds", world, "--kinds", kind, "--table-seeds", str(plan.job.seed)),
    ]


def job_commands(plan: JobPlan) -> list[tuple[str, list[str]]]:
    """The job's step processes, in order: (step name, command line)."""
    job, pipeline, grade = plan.job, plan.pipeline, plan.grade_exe
    if pipeline.slam_table is not None:
        return [("slam table", _table_command(plan))]
    steps: list[tuple[str, list[str]]] = []
    run = [grade, "run", job.scenario, "--out", RUN_DIR, "--quiet"]
    for item in job.run_overrides():
        run += ["--set", item]
    steps.append(("run", run))
    if pipeline.noise is not None and plan.noise_params is not None:
        seed = job.seed + pipeline.noise.seed_offset
        noise = [grade, "noise", "apply", f"{RUN_DIR}/bag", NOISY_BAG]
        steps.append(("noise", [*noise, "--params", plan.noise_params, "--seed", str(seed)]))
    for variant in pipeline.replays:
        cmd = [grade, "replay", RUN_DIR, "--out", replay_dir(variant.name), "--quiet"]
        cmd += ["--light-scale", repr(variant.light_scale)]
        for cls in variant.hide:
            cmd += ["--hide", cls]
        steps.append((f"replay {variant.name}", cmd))
    return steps


def _relative_replay_source(replay: Path) -> None:
    """Point a replay's `replay.source` at `../run`: `grade replay` records the absolute path it
    read, which here is inside the staging folder and would dangle once the job is moved into
    place (and would make the checksum depend on where the batch ran)."""
    data = read_run_yaml(replay / RUN_YAML, error=JobFailedError)
    extra = {k: v for k, v in data.items() if k not in (STATUS_KEY, SCENARIO_KEY)}
    extra[REPLAY_KEY] = {**extra[REPLAY_KEY], "source": f"../{RUN_DIR}"}
    write_run_yaml(replay, RunStatus(data[STATUS_KEY]), data[SCENARIO_KEY], extra)


def _run_steps(plan: JobPlan, stage: Path, log: Path) -> None:
    env = job_environment(plan)
    for name, cmd in job_commands(plan):
        with log.open("a") as out:
            out.write(f"$ {' '.join(cmd)}\n")
            out.flush()
            code = run_step(cmd, cwd=stage, env=env, log=out)
        if code != 0:
            raise JobFailedError(f"step '{name}' exited with {code}; see {log}")
    for replay in plan.pipeline.replays:
        _relative_replay_source(stage / replay_dir(replay.name))
    export = plan.pipeline.export
    if export is not None:
        variants = [RUN_DIR] + [replay_dir(v.name) for v in plan.pipeline.replays]
        for variant in variants:
            counts = export_sequence(
                stage / variant,
                stage / EXPORT_DIR / variant,
                sequence_name(plan.job.job_id, variant),
                export,
                stage,
            )
            with log.open("a") as out:
                out.write(f"export {variant}: {counts.frames} frames, {counts.instances} labels\n")


def execute_job(plan: JobPlan) -> JobResult:
    """Run one job's pipeline into its staged folder; commit it when every step succeeded.

    Never raises for a failed job: the failure (step, message, log) comes back in the result.
    """
    start = time.monotonic()
    batch = Path(plan.batch_dir)
    log = log_path(batch, plan.job.job_id)
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("a") as out:
        out.write(f"== job {plan.job.job_id} (pid {os.getpid()}): {plan.job.describe()}\n")
    try:
        with PidLock(job_lock_path(batch, plan.job.job_id), f"job {plan.job.job_id}"):
            staged = StagedOutput(job_dir(batch, plan.job.job_id), exists_error=BatchOutputError)
            try:
                staged.path.mkdir()
                _run_steps(plan, staged.path, log)
                checksum = tree_checksum(staged.path)
                staged.commit()
            except BaseException:
                staged.discard()
                raise
    except Exception as err:  # reported with the job's settings by the batch, never lost
        with log.open("a") as out:
            out.write(traceback.format_exc())
        message = str(err) if isinstance(err, BatchError) else f"{type(err).__name__}: {err}"
        return JobResult(
            plan.job.job_id, False, None, message, time.monotonic() - start, os.getpid()
        )
    with log.open("a") as out:
        out.write(f"== done, checksum {checksum}\n")
    return JobResult(plan.job.job_id, True, checksum, None, time.monotonic() - start, os.getpid())
