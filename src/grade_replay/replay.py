"""Exact replay of a recorded run with changed surroundings, into a new run directory.

The world, people and objects are regenerated from the recorded scenario's seed (bit-exact), the
robots are driven from the experiment record at every physics step (teleport: the recorded joint
state is set; velocity: the recorded velocity commands go through the physics), and the changes
of `grade_replay.changes` are applied without touching that draw. The new run directory has the
layout of docs/conventions.md plus fidelity.json; the original run is only read.
"""

from __future__ import annotations

import enum
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from grade_common.atomic import StagedOutput
from grade_common.errors import GradeError, OutputExistsError
from grade_common.rundir import (
    NOISE_SEED_KEY,
    RECORD_NPZ,
    REPLAY_KEY,
    RUN_YAML,
    SCENARIO_KEY,
    read_run_yaml,
)
from grade_common.types import FloatArray
from grade_replay.changes import (
    ReplayChanges,
    apply_to_scenario,
    apply_to_scene,
    hidden_instance_ids,
)
from grade_replay.errors import ReplayConfigError, ReplayError
from grade_replay.fidelity import FidelityReport, compare_runs
from grade_sim.engine.protocol import EngineBackend
from grade_sim.engine.registry import create_backend
from grade_sim.io.record import ExperimentRecord, load_record, scene_from_record
from grade_sim.robots.model import robot_model
from grade_sim.scene import Scene, build_scene
from grade_sim.sim.run import RunResult, SimulatorSpec, run_scenario


class RunDirError(ReplayError):
    """The run directory to replay is missing, incomplete or inconsistent (names the file)."""


class ReplayOutputExistsError(ReplayError, OutputExistsError):
    """The replay's output directory exists already; a replay never overwrites."""


class ReplayMode(enum.Enum):
    TELEPORT = "teleport"  # recorded joint positions + velocities set every step (exact)
    VELOCITY = "velocity"  # recorded velocity commands through the physics (deviation reported)


@dataclass(frozen=True)
class ReplayConfig:
    """One replay: source run, new output directory, mode and changes."""

    run_dir: Path
    out: Path
    mode: ReplayMode = ReplayMode.TELEPORT
    changes: ReplayChanges = field(default_factory=ReplayChanges)


@dataclass(frozen=True)
class LoadedRun:
    path: Path
    record: ExperimentRecord
    run_yaml: dict[str, Any]


class RecordDriver:
    """ReplayDriver over an experiment record; asks the loop to stop at the record's last step.

    A record shorter than the scenario (an interrupted run) ends the replay at the same step.
    """

    def __init__(
        self, record: ExperimentRecord, teleport: bool, stop_event: threading.Event
    ) -> None:
        self.teleport = teleport
        self._record = record
        self._last = record.n_steps - 1
        self._stop_event = stop_event

    def joint_state(
        self, robot: str, step: int
    ) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
        if step >= self._last:
            self._stop_event.set()
        k = min(step, self._last)
        rec = self._record
        return (
            rec.joint_positions[robot][k],
            rec.joint_velocities[robot][k],
            rec.joint_accelerations[robot][k],
            rec.joint_commands[robot][k],
        )


@dataclass(frozen=True)
class ReplayResult:
    path: Path
    run: RunResult
    fidelity: FidelityReport
    recorded_steps: int

    @property
    def complete(self) -> bool:
        """Every recorded step was replayed."""
        return self.run.stats.steps >= self.recorded_steps


def load_run(run_dir: Path) -> LoadedRun:
    """Read and check a run directory for replay.

    Raises:
        RunDirError: the directory, run.yaml or record.npz is missing, unreadable, truncated or
            inconsistent (the message names the file).
    """
    root = Path(run_dir)
    if not root.is_dir():
        raise RunDirError(f"run directory {str(root)!r} does not exist")
    run_file = root / RUN_YAML
    if not run_file.is_file():
        raise RunDirError(
            f"{str(run_file)!r} is missing; {str(root)!r} is not a complete run directory "
            "(made by grade run, sim_node or grade replay)"
        )
    run_yaml = read_run_yaml(run_file, error=RunDirError)
    if not isinstance(run_yaml.get(SCENARIO_KEY), dict):
        raise RunDirError(f"{str(run_file)!r} has no 'scenario' mapping; not a grade run.yaml")
    try:
        record = load_record(root / RECORD_NPZ)
    except GradeError as err:
        raise RunDirError(str(err)) from err
    rec_path = root / RECORD_NPZ
    if record.n_steps == 0:
        raise RunDirError(f"{str(rec_path)!r} holds no steps; nothing to replay")
    for rc in record.scenario.robots:
        expected = robot_model(rc).joint_names
        got = record.joint_names.get(rc.name)
        if got != expected:
            raise RunDirError(
                f"{str(rec_path)!r}: robot {rc.name!r} has joints {got}, expected {expected}"
            )
        for key, arrays in (
            ("q", record.joint_positions),
            ("qd", record.joint_velocities),
            ("cmd", record.joint_commands),
        ):
            arr = arrays[rc.name]
            if arr.shape != (record.n_steps, len(expected)) or not np.all(np.isfinite(arr)):
                raise RunDirError(
                    f"{str(rec_path)!r}: robot/{rc.name}/{key} has shape {arr.shape} or "
                    f"non-finite values; expected ({record.n_steps}, {len(expected)}) finite"
                )
    return LoadedRun(root, record, run_yaml)


def _check_output(out: Path, source: Path) -> Path:
    final = Path(out).resolve()
    if final.exists():
        raise ReplayOutputExistsError(
            f"output directory {str(final)!r} exists already; a replay writes a new directory "
            "and never overwrites, choose another --out"
        )
    src = source.resolve()
    if final == src or src in final.parents:
        raise ReplayConfigError(
            f"--out {str(final)!r} is inside the original run {str(src)!r}; the original is never "
            "touched, write the replay elsewhere"
        )
    return final


def replay_run(
    config: ReplayConfig, progress: Callable[[int, int], None] | None = None
) -> ReplayResult:
    """Replay `config.run_dir` into the new directory `config.out` and report its fidelity.

    Everything is checked before anything is written; the run is built in a hidden staging
    directory next to `out` and moved into place only when complete (fidelity.json included).

    Raises:
        RunDirError: the source run cannot be replayed (names the file).
        ReplayOutputExistsError: `out` exists.
        ReplayConfigError: a change is invalid (names the field/value and what is allowed).
    """
    loaded = load_run(config.run_dir)
    final = _check_output(config.out, loaded.path)
    record = loaded.record
    changes = config.changes
    scenario = apply_to_scenario(record.scenario, changes)
    drawn = scene_from_record(build_scene(record.scenario), record)
    if record.n_steps > drawn.n_steps:
        raise RunDirError(
            f"{str(loaded.path / RECORD_NPZ)!r} has {record.n_steps} steps but its scenario "
            f"only {drawn.n_steps}; the record does not belong to this scenario"
        )
    scene = apply_to_scene(drawn, scenario, changes)
    hidden = hidden_instance_ids(scene, changes)
    stop = threading.Event()
    driver = RecordDriver(record, teleport=config.mode is ReplayMode.TELEPORT, stop_event=stop)

    def backend_factory(scene: Scene) -> EngineBackend:
        backend = create_backend(scene)
        if hidden:
            backend.set_hidden_instances(hidden)
        return backend

    run_info: dict[str, Any] = {
        REPLAY_KEY: {
            "source": str(loaded.path.resolve()),
            "mode": config.mode.value,
            "recorded_steps": record.n_steps,
            "recorded_status": record.status,
            "changes": changes.to_mapping(),
            "hidden_instance_ids": sorted(hidden),
        }
    }
    if changes.noise_seed is not None:
        # Read by the noise stage (grade noise --seed); the world seed stays the recorded one.
        run_info[NOISE_SEED_KEY] = changes.noise_seed
    # run_scenario stages and commits the run inside this staging folder; the replay only takes
    # the final name once its fidelity report is written too.
    staged = StagedOutput(
        final, nested=True, exists_error=ReplayOutputExistsError, inputs=[loaded.path]
    )
    try:
        spec = SimulatorSpec(scene, replay=driver, backend_factory=backend_factory, stop_event=stop)
        result = run_scenario(spec, staged.path, progress=progress, run_info=run_info)
        # The recorded scenario had experiment_record on (it made record.npz), so has this one.
        replayed = load_record(result.path / RECORD_NPZ)
        report = compare_runs(record, loaded.path, replayed, result.path, config.mode.value)
        report.write(result.path)
        staged.commit()
    finally:
        staged.discard()
    run = RunResult(final, result.stats, result.summary)
    return ReplayResult(final, run, report, record.n_steps)
