"""GRADE's dynamic-SLAM sequence set as presets (config/slam_grade_table.yaml).

GRADE (Bonetto et al.) benchmarks dynamic SLAM on indoor sequences that are static (no people,
no flying objects) or have people with N (no), F (few) or L (a lot of) flying objects, each with
and without stabilised flight (H: no roll or pitch). A preset file names the worlds (the
procedural rooms of the base scenario it changes), the kinds, the seeds and the sequence
length; `sequence_scenario` turns one (world, kind, seed) into a scenario mapping that the
simulator validates (`grade_sim.config.scenario.scenario_from_mapping`).

Each sequence's camera records RGB, depth and the semantic class image (the oracle's and the
segmenter score's ground truth), its robot carries a VLP-16 (the LiDAR backends), and its bag
holds the IMU (the RGB-D-inertial backend).

The H kinds fly level (`robots[].motion.stabilised: true`, the simulator's default); the kinds
without H fly unstabilised (`stabilised: false`): the UAV rolls and pitches as a multirotor does
to follow its path's accelerations (`grade_sim.robots.path_follower`).
"""

from __future__ import annotations

import copy
import enum
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, ClassVar

from grade_common.schema import KEY_PATH, Checked, Wording, bounds, from_mapping, named_items, text
from grade_common.textfile import read_yaml
from grade_slam.errors import SlamConfigError

WORDING = replace(KEY_PATH, error=SlamConfigError, root="preset")
PRESET_FILE = "config/slam_grade_table.yaml"
# the camera and LiDAR every sequence records
CAMERA = "camera"
LIDAR = "lidar"
LIDAR_SENSOR: dict[str, Any] = {"name": LIDAR, "preset": "vlp16", "mount": {"xyz": [0, 0, 0.15]}}
CAMERA_STREAMS = ("rgb", "depth", "semantic")


class Flying(enum.StrEnum):
    """GRADE's flying-object levels."""

    NONE = "N"  # no flying objects
    FEW = "F"  # the preset's few_flying objects
    LOT = "L"  # the preset's lot_flying objects


@dataclass(frozen=True)
class SequenceKind:
    """One of GRADE's 8 kinds: people or not, the flying objects, stabilised flight or not."""

    people: bool
    flying: Flying
    stabilised: bool

    @property
    def name(self) -> str:
        """GRADE's name: `static` or `people_<N|F|L>`, with `_H` when stabilised."""
        base = f"people_{self.flying.value}" if self.people else "static"
        return f"{base}_H" if self.stabilised else base


KINDS: dict[str, SequenceKind] = {
    kind.name: kind
    for stabilised in (True, False)
    for kind in (
        SequenceKind(False, Flying.NONE, stabilised),
        SequenceKind(True, Flying.NONE, stabilised),
        SequenceKind(True, Flying.FEW, stabilised),
        SequenceKind(True, Flying.LOT, stabilised),
    )
}


@dataclass(frozen=True)
class World(Checked):
    """A world of the table: a name and how its procedural rooms differ from the base
    scenario's (None keeps the base's value; the simulator checks the combination)."""

    WORDING: ClassVar[Wording] = WORDING
    name: str = field(metadata=text(r"[a-z][a-z0-9_]*"))
    rooms_x: int | None = field(default=None, metadata=bounds(1, 6))
    rooms_y: int | None = field(default=None, metadata=bounds(1, 6))
    room_size_m: tuple[float, float] | None = field(default=None, metadata=bounds(2.5, 30.0))
    wall_height_m: float | None = field(default=None, metadata=bounds(2.0, 10.0))
    furniture_per_room: tuple[int, int] | None = field(default=None, metadata=bounds(0, 12))
    # people in this world's sequences with people (None: crowd.count); a larger world needs
    # more for the same share of the frame
    people: int | None = field(default=None, metadata=bounds(1, 64))

    def procedural(self) -> dict[str, Any]:
        """The keys of `environment.procedural` this world sets."""
        keys = ("rooms_x", "rooms_y", "room_size_m", "wall_height_m", "furniture_per_room")
        values = {k: getattr(self, k) for k in keys}
        return {
            k: list(v) if isinstance(v, tuple) else v for k, v in values.items() if v is not None
        }


@dataclass(frozen=True)
class Crowd(Checked):
    """The people of the sequences with people: dense enough that people cover 10-30 % of the
    frame on average (GRADE's and TUM's walking sequences)."""

    WORDING: ClassVar[Wording] = WORDING
    count: int = field(default=24, metadata=bounds(1, 64))
    speed_mps: tuple[float, float] = field(default=(0.8, 1.4), metadata=bounds(0.1, 3.0))
    # of the choices after each stop, how often the next is a walk (more walking, more motion)
    walk_fraction: float = field(default=0.9, metadata=bounds(0.0, 1.0))
    # of the walks, how many end beside the UAV's path ahead of it, so that people cross and
    # face the camera as in TUM's walking sequences (people.toward_robots)
    toward_robots: float = field(default=0.0, metadata=bounds(0.0, 1.0))
    pause_s: tuple[float, float] = field(default=(0.5, 2.0), metadata=bounds(0.0, 600.0))


@dataclass(frozen=True)
class GradePreset(Checked):
    """A GRADE table: worlds x kinds x seeds, each sequence `duration_s` long."""

    WORDING: ClassVar[Wording] = WORDING
    scenario: str = "indoor_uav.yaml"  # the base, relative to the preset file
    worlds: tuple[World, ...] = field(default=(), metadata=named_items("name"))
    kinds: tuple[str, ...] = tuple(KINDS)
    seeds: tuple[int, ...] = field(default=(1, 2, 3), metadata=bounds(0, 2**31 - 1))
    duration_s: float = field(default=60.0, metadata=bounds(1.0, 3600.0))
    width: int = field(default=640, metadata=bounds(64, 4096))
    height: int = field(default=480, metadata=bounds(48, 4096))
    rate_hz: float = field(default=30.0, metadata=bounds(1.0, 120.0))
    crowd: Crowd = field(default_factory=Crowd)
    # GRADE's F and L: flying objects in the whole flat
    few_flying: int = field(default=4, metadata=bounds(1, 64))
    lot_flying: int = field(default=16, metadata=bounds(1, 64))

    def validate(self, path: str) -> None:
        if not self.worlds:
            raise SlamConfigError("preset.worlds: empty; list at least one world")
        if not self.seeds:
            raise SlamConfigError("preset.seeds: empty; list at least one seed")
        if not self.kinds:
            raise SlamConfigError(f"preset.kinds: empty; allowed any of {list(KINDS)}")
        for kind in self.kinds:
            if kind not in KINDS:
                raise SlamConfigError(
                    f"preset.kinds: {kind!r} is not allowed; use any of {list(KINDS)}"
                )
        if self.few_flying >= self.lot_flying:
            raise SlamConfigError(
                f"preset.few_flying: {self.few_flying} must be below lot_flying ({self.lot_flying})"
            )

    def world(self, name: str) -> World:
        """The world called `name`.

        Raises:
            SlamConfigError: no such world (lists the preset's).
        """
        for world in self.worlds:
            if world.name == name:
                return world
        raise SlamConfigError(f"world {name!r} is not in the preset; allowed {self.world_names}")

    @property
    def world_names(self) -> list[str]:
        """The worlds' names, in the preset's order."""
        return [w.name for w in self.worlds]


def load_preset(path: str | Path, overrides: dict[str, Any] | None = None) -> GradePreset:
    """Read and validate a preset file; `overrides` replace its top-level keys.

    Raises:
        SlamConfigError: unreadable file, unknown key or bad value (names the key and value).
    """
    file = Path(path)
    data = read_yaml(file, "the GRADE-table preset", error=SlamConfigError)
    if not isinstance(data, dict):
        raise SlamConfigError(f"{file}: a preset is a mapping of keys, got {type(data).__name__}")
    data.update(overrides or {})
    try:
        preset = from_mapping(GradePreset, data)
    except SlamConfigError as err:
        raise SlamConfigError(f"{file}: {err}") from err
    base = file.parent / preset.scenario
    if not base.is_file():
        raise SlamConfigError(f"{file}: scenario: {str(base)!r} does not exist")
    return replace(preset, scenario=str(base.resolve()))


def sequence_name(world: str, kind: str, seed: int) -> str:
    """The sequence's folder and table name."""
    return f"{world}_{kind}_s{seed}"


def sequence_scenario(
    preset: GradePreset, base: dict[str, Any], world: str, kind: str, seed: int
) -> dict[str, Any]:
    """The scenario mapping of one sequence: `base` (the preset's scenario, as read) with the
    world's environment, the kind's people and flying objects, the seed, the camera, the LiDAR.

    Raises:
        SlamConfigError: unknown world or kind.
    """
    if kind not in KINDS:
        raise SlamConfigError(f"kind {kind!r} is not allowed; use any of {list(KINDS)}")
    spec = KINDS[kind]
    data = copy.deepcopy(base)
    world_spec = preset.world(world)
    rooms = world_spec.procedural()
    if rooms:
        environment = data.setdefault("environment", {})
        environment["procedural"] = {**environment.get("procedural", {}), **rooms}
    data.update(seed=seed, duration_s=preset.duration_s, realtime=False)
    crowd = preset.crowd
    data["people"] = {
        **data.get("people", {}),
        "count": (crowd.count if world_spec.people is None else world_spec.people)
        if spec.people
        else 0,
        "speed_mps": list(crowd.speed_mps),
        "walk_fraction": crowd.walk_fraction,
        "toward_robots": crowd.toward_robots,
        "pause_s": list(crowd.pause_s),
    }
    flying = {Flying.NONE: 0, Flying.FEW: preset.few_flying, Flying.LOT: preset.lot_flying}
    data["flying_objects"] = {**data.get("flying_objects", {}), "count": flying[spec.flying]}
    robot = data["robots"][0]
    robot["motion"] = {**robot.get("motion", {}), "stabilised": spec.stabilised}
    robot["cameras"] = [
        {
            **robot["cameras"][0],
            "name": CAMERA,
            "width": preset.width,
            "height": preset.height,
            "rate_hz": preset.rate_hz,
            "streams": list(CAMERA_STREAMS),
        }
    ]
    robot["lidars"] = [copy.deepcopy(LIDAR_SENSOR)]
    # the bag carries the IMU the inertial backend reads; record.npz is for replays only
    data["record"] = {"bag": True, "ground_truth": True, "experiment_record": False}
    return data


def sequences(preset: GradePreset) -> list[tuple[str, str, int]]:
    """Every (world, kind, seed) of the preset, worlds outermost, in the preset's order."""
    return [(w.name, k, s) for w in preset.worlds for k in preset.kinds for s in preset.seeds]
