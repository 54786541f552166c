"""One complete run: a run directory with bag, ground truth, experiment record and summary."""

from __future__ import annotations

import json
import resource
import shutil
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from grade_common.rundir import (
    BAG_DIR,
    GT_DIR,
    RECORD_NPZ,
    SUMMARY_JSON,
    RunStatus,
    write_run_yaml,
)
from grade_common.signals import stop_flag
from grade_sim.config.scenario import Scenario, scenario_to_mapping
from grade_sim.io.bag_writer import BagWriter
from grade_sim.io.ground_truth import GroundTruthWriter
from grade_sim.io.record import ExperimentRecorder
from grade_sim.io.run_dir import RunDirectory
from grade_sim.scene import Scene
from grade_sim.sim.orchestrator import (
    CommandSource,
    ReplayDriver,
    RunStats,
    SimObserver,
    Simulator,
)


@dataclass(frozen=True)
class RunResult:
    path: Path
    stats: RunStats
    summary: dict[str, Any]


def peak_memory_mb() -> float:
    """Peak resident memory of this process (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def _rate_hz(stats: RunStats, topic: str) -> float:
    """Messages per second of simulated time between a topic's first and last message."""
    count = stats.message_counts[topic]
    span_ns = stats.last_stamp_ns.get(topic, 0) - stats.first_stamp_ns.get(topic, 0)
    return round((count - 1) * 1e9 / span_ns, 3) if count > 1 and span_ns > 0 else 0.0


def summarize(sim: Simulator, stats: RunStats, frames_written: int) -> dict[str, Any]:
    topics = {
        name: {"count": count, "rate_hz": _rate_hz(stats, name)}
        for name, count in sorted(stats.message_counts.items())
    }
    return {
        "status": stats.status,
        "steps": stats.steps,
        "sim_time_s": round(stats.sim_time_s, 6),
        "wall_time_s": round(stats.wall_time_s, 3),
        "real_time_factor": round(stats.real_time_factor, 3),
        "camera_frames_rendered": stats.camera_frames,
        "ground_truth_frames_written": frames_written,
        "stage_s": {k: round(v, 3) for k, v in sorted(stats.stage_s.items())},
        "peak_memory_mb": round(peak_memory_mb(), 1),
        "topics": topics,
        "backend": sim.scenario.backend,
        "seed": sim.scenario.seed,
    }


def run_scenario(
    scenario: Scenario,
    out: Path,
    *,
    overwrite: bool = False,
    observers: Sequence[SimObserver] = (),
    command_source: CommandSource | None = None,
    progress: Callable[[int, int], None] | None = None,
    simulator_hook: Callable[[Simulator], None] | None = None,
    scene: Scene | None = None,
    replay: ReplayDriver | None = None,
    run_info: Mapping[str, Any] | None = None,
) -> RunResult:
    """Simulate a scenario into a new run directory `out` (see docs/conventions.md).

    `scene` (default: drawn from the scenario), `replay` (drive robots from a record) and
    `run_info` (extra top-level keys of run.yaml) serve grade replay.
    """
    run_dir = RunDirectory(out, overwrite=overwrite)
    root = run_dir.path
    extra = dict(run_info or {})
    write_run_yaml(root, RunStatus.RUNNING, scenario_to_mapping(scenario), extra)
    try:
        sim = Simulator(scenario, command_source=command_source, scene=scene, replay=replay)
    except BaseException:
        # Nothing was simulated (e.g. the backend cannot run): leave no partial directory.
        shutil.rmtree(root, ignore_errors=True)
        raise
    own: list[SimObserver] = []
    rec = scenario.record
    if rec.bag:
        own.append(BagWriter(root / BAG_DIR, sim.topics()))
    gt = None
    if rec.ground_truth:
        gt = GroundTruthWriter(root / GT_DIR, sim.scene, sim.start_step, rec.png_compression)
        own.append(gt)
    if rec.experiment_record:
        own.append(ExperimentRecorder(root / RECORD_NPZ, sim.scene, sim.start_step))
    sim.observers = own + list(observers)
    # Signals only ask the loop to stop, from here on: even a Ctrl-C during the hook (e.g. a
    # node waiting for subscribers) ends in a closed bag, a summary and a committed directory.
    try:
        with stop_flag(sim.stop_event):
            if simulator_hook is not None:
                simulator_hook(sim)
            stats = sim.run(progress=progress)
    finally:
        sim.finish()
    summary = summarize(sim, stats, gt.frames_written if gt else 0)
    (root / SUMMARY_JSON).write_text(json.dumps(summary, indent=2))
    write_run_yaml(root, RunStatus(stats.status), scenario_to_mapping(scenario), extra)
    path = run_dir.commit()
    return RunResult(path, stats, summary)
