"""The experiment record: enough to rebuild and replay a run exactly.

Holds the scenario snapshot (which regenerates the same world from its seed), and at every
physics step the joint positions and velocities of every robot and the state of every actor.
"""

from __future__ import annotations

import io
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from grade_common.atomic import StagedOutput
from grade_common.errors import GradeError
from grade_people.people import PersonTimeline
from grade_sim.actors.people_group import recorded_timelines
from grade_sim.config.scenario import Scenario, scenario_from_mapping, scenario_to_mapping
from grade_sim.engine.protocol import RobotState
from grade_sim.scene import Scene
from grade_sim.sensors.messages import TopicSpec

RECORD_VERSION = 1


class RecordError(GradeError):
    """An experiment record is missing, truncated or not a grade record."""


@dataclass(frozen=True)
class ExperimentRecord:
    scenario: Scenario
    stamps_ns: np.ndarray  # (n,)
    start_step: int
    joint_names: dict[str, tuple[str, ...]]
    joint_positions: dict[str, np.ndarray]  # robot -> (n, nj)
    joint_velocities: dict[str, np.ndarray]
    # Velocity targets in force at each step (applied before the physics step that led to it).
    joint_commands: dict[str, np.ndarray]
    joint_accelerations: dict[str, np.ndarray]
    status: str
    # Every actor group's arrays, `<kind>/<name>/<array>` (what a reactive run's replay poses
    # people from).
    actors: dict[str, np.ndarray] = field(default_factory=dict)

    @property
    def n_steps(self) -> int:
        return len(self.stamps_ns)

    @property
    def people(self) -> dict[str, PersonTimeline]:
        """Person name -> recorded timeline."""
        return recorded_timelines(self.actors)


def _simulated(scenario: Scenario) -> dict[str, Any]:
    """The scenario as simulated: without `sim` (how the step loop ran, in run.yaml), which
    does not change the outputs, so both pipelines leave the same record."""
    mapping = scenario_to_mapping(scenario)
    mapping.pop("sim", None)
    return mapping


class ExperimentRecorder:
    """SimObserver collecting the per-step record; written as record.npz when closed."""

    def __init__(self, path: Path, scene: Scene, start_step: int) -> None:
        self.path = path
        self.scene = scene
        self.start_step = start_step
        n = scene.n_steps
        self._stamps = np.zeros(n, dtype=np.int64)
        self._q = {r.model.name: np.zeros((n, len(r.model.joints))) for r in scene.robots}
        self._qd = {r.model.name: np.zeros((n, len(r.model.joints))) for r in scene.robots}
        self._cmd = {r.model.name: np.zeros((n, len(r.model.joints))) for r in scene.robots}
        self._qdd = {r.model.name: np.zeros((n, len(r.model.joints))) for r in scene.robots}
        self._steps = 0

    def on_message(self, topic: TopicSpec, stamp_ns: int, cdr: bytes) -> None:
        return None

    def on_camera(self, sample: object) -> None:
        return None

    def wants_messages(self, topics: tuple[TopicSpec, ...]) -> bool:
        return False

    def wants_sample(self, robot: str, sensor: str, step: int, stamp_ns: int) -> bool:
        return False

    def on_step(self, step: int, stamp_ns: int, robot_states: dict[str, RobotState]) -> None:
        self._stamps[step] = stamp_ns
        for name, st in robot_states.items():
            self._q[name][step] = st.joint_positions
            self._qd[name][step] = st.joint_velocities
            self._cmd[name][step] = st.joint_velocity_commands
            self._qdd[name][step] = st.joint_accelerations
        self._steps = step + 1

    def close(self, status: str) -> None:
        n = self._steps
        arrays: dict[str, np.ndarray] = {
            "version": np.array(RECORD_VERSION),
            "status": np.array(status),
            "scenario_yaml": np.array(
                yaml.safe_dump(_simulated(self.scene.scenario), sort_keys=False)
            ),
            "stamps_ns": self._stamps[:n],
            "start_step": np.array(self.start_step),
        }
        for r in self.scene.robots:
            name = r.model.name
            arrays[f"robot/{name}/joint_names"] = np.array(r.model.joint_names)
            arrays[f"robot/{name}/q"] = self._q[name][:n]
            arrays[f"robot/{name}/qd"] = self._qd[name][:n]
            arrays[f"robot/{name}/cmd"] = self._cmd[name][:n]
            arrays[f"robot/{name}/qdd"] = self._qdd[name][:n]
        for group in self.scene.groups:
            arrays.update(group.record(n))
        with StagedOutput(self.path, overwrite=True) as tmp, open(tmp, "wb") as f:
            np.savez(f, **arrays)  # type: ignore[arg-type]


def load_record(path: Path) -> ExperimentRecord:
    """Read record.npz of a run directory.

    Raises:
        RecordError: missing, truncated or inconsistent file (names the file).
    """
    if not path.is_file():
        raise RecordError(f"experiment record {str(path)!r} does not exist")
    try:
        with np.load(path, allow_pickle=False) as data:
            files = {k: data[k] for k in data.files}
    except Exception as err:
        raise RecordError(
            f"experiment record {str(path)!r} is unreadable (truncated or corrupt): {err}"
        ) from err
    try:
        if int(files["version"]) != RECORD_VERSION:
            raise RecordError(
                f"{path}: record version {int(files['version'])} is not supported "
                f"(expected {RECORD_VERSION})"
            )
        mapping = yaml.safe_load(io.StringIO(str(files["scenario_yaml"])))
        scenario = scenario_from_mapping(_with_recorded_people_body(mapping), f"{path}")
        names: dict[str, tuple[str, ...]] = {}
        q: dict[str, np.ndarray] = {}
        qd: dict[str, np.ndarray] = {}
        cmd: dict[str, np.ndarray] = {}
        qdd: dict[str, np.ndarray] = {}
        for robot in scenario.robots:
            key = f"robot/{robot.name}"
            names[robot.name] = tuple(str(v) for v in files[f"{key}/joint_names"])
            q[robot.name] = files[f"{key}/q"]
            qd[robot.name] = files[f"{key}/qd"]
            cmd[robot.name] = files[f"{key}/cmd"]
            qdd[robot.name] = files[f"{key}/qdd"]
        return ExperimentRecord(
            scenario,
            files["stamps_ns"],
            int(files["start_step"]),
            names,
            q,
            qd,
            cmd,
            qdd,
            str(files["status"]),
            {k: v for k, v in files.items() if "/" in k and not k.startswith("robot/")},
        )
    except KeyError as err:
        raise RecordError(
            f"experiment record {str(path)!r} lacks {err}; it is not a complete grade record"
        ) from err


def _with_recorded_people_body(mapping: object) -> object:
    """A record's scenario, its people's body kind made explicit.

    Records written before skinned people existed have no people.body and were run with the
    rigid-part people; replaying them with the new default would change every camera image.
    """
    if isinstance(mapping, dict) and isinstance(mapping.get("people"), dict):
        people = mapping["people"]
        if "body" not in people:
            return {**mapping, "people": {**people, "body": "parts"}}
    return mapping


def scene_from_record(scene: Scene, record: ExperimentRecord) -> Scene:
    """The recorded run's scene: `scene` is build_scene(record.scenario).

    Planned motion regenerates exactly from the seed; actors that moved with the live run
    (reactive people) take their motion from the record (and nothing steps them again).

    Raises:
        RecordError: the record lacks an actor of the scene.
    """
    try:
        groups = tuple(g.replayed(record.actors) for g in scene.groups)
    except KeyError as err:
        raise RecordError(
            f"the record of a reactive run lacks the poses of {err}; it cannot be replayed"
        ) from err
    return replace(scene, groups=groups)
