"""One complete run: a run directory with bag, ground truth, experiment record and summary."""

from __future__ import annotations

import contextlib
import json
import resource
import shutil
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import Any

import yaml

from grade_common.rundir import (
    BAG_DIR,
    GT_DIR,
    PLACEMENT_YAML,
    RECORD_NPZ,
    SIMULATOR_KEY,
    SUMMARY_JSON,
    RunStatus,
    write_run_yaml,
)
from grade_common.signals import stop_flag
from grade_sim.actors.animal_placement import merge_reports
from grade_sim.actors.people_group import People
from grade_sim.actors.placement import check_recorded_trace
from grade_sim.config.scenario import Scenario, scenario_to_mapping
from grade_sim.engine.protocol import EngineBackend
from grade_sim.engine.registry import create_backend, engine_log_in
from grade_sim.errors import SimulationUnstableError
from grade_sim.io.bag_writer import BagWriter
from grade_sim.io.ground_truth import GroundTruthWriter
from grade_sim.io.keypoint_writer import KeypointWriter
from grade_sim.io.lidar_ground_truth import LidarGroundTruthWriter
from grade_sim.io.record import ExperimentRecorder
from grade_sim.io.run_dir import RunDirectory
from grade_sim.scene import Scene, build_scene
from grade_sim.sensors.observer import SimObserver
from grade_sim.sensors.streams.suite import SensorStreams
from grade_sim.sim.orchestrator import CommandSource, ReplayDriver, Simulator
from grade_sim.sim.step_output import RunStats
from grade_sim.world.light_units import lighting_record


@dataclass(frozen=True)
class SimulatorSpec:
    """How to build the Simulator of a run; run_scenario adds the run directory's recorders.

    `observers` come after the recorders (ROS publishers, test probes); `stop_event` is the one
    the loop checks, given here so that callers can stop the run or wait on it before it starts.
    One spec makes one run: its `scene` is started (a reactive crowd of its own, which the
    recorders and the loop share) and its `streams` keep that run's state (the cameras' last
    frame, the lidars' pose track).
    """

    scene: Scene
    observers: tuple[SimObserver, ...] = ()
    command_source: CommandSource | None = None
    replay: ReplayDriver | None = None
    backend_factory: Callable[[Scene], EngineBackend] = create_backend
    stop_event: threading.Event = field(default_factory=threading.Event)

    def __post_init__(self) -> None:
        object.__setattr__(self, "scene", self.scene.started())

    @classmethod
    def of(cls, scenario: Scenario) -> SimulatorSpec:
        """A scenario's own scene, no extra observers, no commands."""
        return cls(build_scene(scenario))

    @cached_property
    def streams(self) -> SensorStreams:
        """The run's sensor streams, built once: their topics name the bag's connections and
        the publishers, and the step loop emits from these same objects."""
        return SensorStreams(self.scene)

    def with_observers(self, *observers: SimObserver) -> SimulatorSpec:
        """This spec with more observers after its own (a publisher made from `streams`'
        topics); the streams already built are kept, not built again."""
        spec = replace(self, observers=(*self.observers, *observers))
        if "streams" in self.__dict__:
            spec.__dict__["streams"] = self.streams  # cached_property's own slot
        return spec

    def build(self, recorders: Sequence[SimObserver] = ()) -> Simulator:
        return Simulator(
            self.scene,
            streams=self.streams,
            observers=(*recorders, *self.observers),
            command_source=self.command_source,
            replay=self.replay,
            backend_factory=self.backend_factory,
            stop_event=self.stop_event,
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


def _scenario_files(scenario: Scenario) -> Iterator[str]:
    """The files a scenario reads (URDFs, the environment mesh)."""
    if scenario.environment.mesh.path:
        yield scenario.environment.mesh.path
    for robot in scenario.robots:
        if robot.urdf:
            yield robot.urdf


def run_scenario(
    simulator: SimulatorSpec | Scenario,
    out: Path,
    *,
    overwrite: bool = False,
    progress: Callable[[int, int], None] | None = None,
    before_run: Callable[[], None] | None = None,
    run_info: Mapping[str, Any] | None = None,
    inputs: Iterable[str | Path] = (),
) -> RunResult:
    """Simulate into a new run directory `out` (see docs/conventions.md).

    Args:
        simulator: what to build the Simulator from; a bare Scenario means its own scene and
            no observers beyond the run directory's recorders.
        before_run: called once the directory and the simulator exist, with signals already
            setting the stop event (a node waiting for its subscribers or controllers).
        run_info: extra top-level keys of run.yaml (grade replay's provenance).
        inputs: files the run was made from (the scenario file, a replayed run); the scenario's
            URDFs and mesh are added here. The run directory may not be, hold or sit in one.
    """
    spec = simulator if isinstance(simulator, SimulatorSpec) else SimulatorSpec.of(simulator)
    scenario = spec.scene.scenario
    run_dir = RunDirectory(out, overwrite=overwrite, inputs=[*inputs, *_scenario_files(scenario)])
    root = run_dir.path
    # The cameras' exposure and the lights in physical units (world/light_units.py).
    lighting = lighting_record(spec.scene.world, scenario.render.exposure_ev100)
    extra = {"lighting": lighting, **dict(run_info or {})}
    write_run_yaml(root, RunStatus.RUNNING, scenario_to_mapping(scenario), extra)
    recorders: list[SimObserver] = []
    try:
        streams = spec.streams
        rec = scenario.record
        gt = None
        if rec.bag:
            recorders.append(
                BagWriter(root / BAG_DIR, streams.topics(), compression=rec.bag_compression)
            )
        if rec.ground_truth:
            gt = GroundTruthWriter(
                root / GT_DIR, spec.scene, streams.start_step, rec.png_compression
            )
            recorders.append(gt)
            if spec.scene.group(People).specs:
                recorders.append(KeypointWriter(root / GT_DIR, spec.scene, streams.start_step))
            if any(r.model.config.lidars for r in spec.scene.robots):
                recorders.append(
                    LidarGroundTruthWriter(root / GT_DIR, spec.scene, streams.start_step)
                )
        if rec.experiment_record:
            recorders.append(ExperimentRecorder(root / RECORD_NPZ, spec.scene, streams.start_step))
        sim = spec.build(recorders)
    except BaseException:
        # Nothing was simulated (e.g. the backend cannot run): stop the recorders' threads and
        # leave no partial directory; the error that got us here is the one to report.
        for r in recorders:
            with contextlib.suppress(Exception):
                r.close("failed")
        shutil.rmtree(root, ignore_errors=True)
        raise
    # Signals only ask the loop to stop, from here on: even a Ctrl-C during before_run ends in a
    # closed bag, a summary and a committed directory.
    try:
        with stop_flag(sim.stop_event), engine_log_in(scenario.backend, root):
            if before_run is not None:
                before_run()
            stats = sim.run(progress=progress)
    finally:
        sim.finish()
    summary = summarize(sim, stats, gt.frames_written if gt else 0)
    extra[SIMULATOR_KEY] = sim.run_info()
    if sim.failure is not None:
        summary["error"] = str(sim.failure)
        extra["error"] = str(sim.failure)
    (root / SUMMARY_JSON).write_text(json.dumps(summary, indent=2))
    placement = spec.scene.placement
    people = spec.scene.group(People)
    if people.crowd is not None and scenario.people.placement.check:
        recorded = check_recorded_trace(
            spec.scene.world,
            people.specs,
            people.timelines,
            stats.steps,
            scenario.physics_dt_s,
            spec.scene.actor_collisions,
            people.clips,
        )
        placement = replace(
            merge_reports(spec.scene.placement, recorded), sit_fallbacks=tuple(people.crowd.notes)
        )
    (root / PLACEMENT_YAML).write_text(yaml.safe_dump(placement.to_mapping(), sort_keys=False))
    write_run_yaml(root, RunStatus(stats.status), scenario_to_mapping(scenario), extra)
    path = run_dir.commit()
    if sim.failure is not None:
        # The directory (status `failed`, everything up to the last valid step) stays for a look.
        raise SimulationUnstableError(
            f"{sim.failure}\nthe run stopped; its outputs up to the last valid step are in {path} "
            "(run.yaml status: failed)"
        ) from sim.failure
    return RunResult(path, stats, summary)
