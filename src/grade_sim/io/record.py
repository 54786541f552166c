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
from grade_people.config import CrowdMode
from grade_people.people import PersonTimeline
from grade_sim.actors.animals import ANIMAL_STATE_KEYS
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
    # Person name -> recorded timeline (what a reactive run's replay poses people from).
    people: dict[str, PersonTimeline] = field(default_factory=dict)

    @property
    def n_steps(self) -> int:
        return len(self.stamps_ns)


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
        for p, tl in zip(self.scene.people, self.scene.person_timelines, strict=True):
            arrays[f"person/{p.name}/position_xy"] = tl.position_xy[:n]
            arrays[f"person/{p.name}/heading_rad"] = tl.heading_rad[:n]
            arrays[f"person/{p.name}/phase_rad"] = tl.phase_rad[:n]
            arrays[f"person/{p.name}/amplitude"] = tl.amplitude[:n]
            arrays[f"person/{p.name}/motion"] = tl.motion[:n]
            arrays[f"person/{p.name}/seat_height_m"] = tl.seat_height_m[:n]
        for o, otl in zip(self.scene.objects, self.scene.object_timelines, strict=True):
            arrays[f"object/{o.name}/position_xyz"] = otl.position_xyz[:n]
            arrays[f"object/{o.name}/quat_wxyz"] = otl.quat_wxyz[:n]
        for a, atl in zip(self.scene.animals, self.scene.animal_timelines, strict=True):
            for key in ANIMAL_STATE_KEYS:
                arrays[f"animal/{a.name}/{key}"] = getattr(atl, key)[:n]
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
            _recorded_people(files),
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


def _recorded_people(files: dict[str, np.ndarray]) -> dict[str, PersonTimeline]:
    names = sorted({k.split("/")[1] for k in files if k.startswith("person/")})
    out = {}
    for name in names:
        key = f"person/{name}"
        n = len(files[f"{key}/position_xy"])
        motion = files.get(f"{key}/motion", np.zeros(n, dtype=np.int8))  # older records lack it
        # Records from before sitting: nobody sat.
        seat = files.get(f"{key}/seat_height_m", np.full(n, np.nan))
        out[name] = PersonTimeline(
            files[f"{key}/position_xy"],
            files[f"{key}/heading_rad"],
            files[f"{key}/phase_rad"],
            files[f"{key}/amplitude"],
            motion,
            seat,
        )
    return out


def _padded(a: np.ndarray, n: int) -> np.ndarray:
    """The first n rows of a, the last row repeated past its end (an interrupted run)."""
    if len(a) >= n:
        return a[:n]
    return np.concatenate([a, np.repeat(a[-1:], n - len(a), axis=0)])


def scene_from_record(scene: Scene, record: ExperimentRecord) -> Scene:
    """The recorded run's scene: `scene` is build_scene(record.scenario).

    Scripted people regenerate exactly from the seed; reactive people moved with the live run,
    so their timelines come from the record (and nothing steps them again).

    Raises:
        RecordError: a reactive record lacks a person of the scene.
    """
    if scene.scenario.people.mode is not CrowdMode.REACTIVE:
        return scene
    timelines = []
    for person in scene.people:
        got = record.people.get(person.name)
        if got is None or len(got.position_xy) == 0:
            raise RecordError(
                f"the record of a reactive run lacks the poses of {person.name!r}; "
                "it cannot be replayed"
            )
        n = scene.n_steps
        timelines.append(
            PersonTimeline(
                _padded(got.position_xy, n),
                _padded(got.heading_rad, n),
                _padded(got.phase_rad, n),
                _padded(got.amplitude, n),
                _padded(got.motion, n),
                _padded(got.seat_height_m, n),
            )
        )
    return replace(scene, person_timelines=tuple(timelines), crowd=None)
