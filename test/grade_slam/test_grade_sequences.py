"""GRADE's sequence set as presets: the shipped preset builds valid scenarios, bad presets are
refused with the key, the value and what is allowed."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from grade_common.share import shipped_file
from grade_sim.config.scenario import scenario_from_mapping
from grade_slam.errors import SlamConfigError
from grade_slam.grade_sequences import (
    KINDS,
    PRESET_FILE,
    load_preset,
    sequence_name,
    sequence_scenario,
    sequences,
)


def test_the_eight_kinds_are_grades() -> None:
    plain = ["static", "people_N", "people_F", "people_L"]
    assert sorted(KINDS) == sorted([*plain, *(f"{k}_H" for k in plain)])


def test_shipped_preset_builds_a_valid_scenario_per_sequence() -> None:
    preset = load_preset(shipped_file(PRESET_FILE))
    assert preset.duration_s == 60.0
    assert preset.world_names == ["rooms", "hall"]
    assert len(preset.seeds) >= 3
    base = yaml.safe_load(Path(preset.scenario).read_text())
    seen = sequences(preset)
    assert len(seen) == 2 * len(preset.kinds) * len(preset.seeds)
    for world, kind, seed in seen:
        scenario = scenario_from_mapping(sequence_scenario(preset, base, world, kind, seed))
        spec = KINDS[kind]
        assert scenario.seed == seed
        assert scenario.duration_s == 60.0
        people = 32 if world == "hall" else preset.crowd.count
        assert scenario.people.count == (people if spec.people else 0)
        assert scenario.people.toward_robots == preset.crowd.toward_robots
        flying = scenario.flying_objects.count
        assert flying == {"N": 0, "F": preset.few_flying, "L": preset.lot_flying}[spec.flying]
        robot = scenario.robots[0]
        assert [s.value for s in robot.cameras[0].streams] == ["rgb", "depth", "semantic"]
        assert (robot.cameras[0].width, robot.cameras[0].height) == (640, 480)
        assert [lidar.name for lidar in robot.lidars] == ["lidar"]
        assert scenario.record.bag  # the inertial backend reads the IMU from it
        rooms = scenario.environment.procedural
        assert (rooms.rooms_x, rooms.rooms_y) == ((2, 2) if world == "rooms" else (3, 1))
    assert sequence_name("rooms", "people_L_H", 2) == "rooms_people_L_H_s2"


def test_shorter_sequences_and_other_seeds_by_override() -> None:
    preset = load_preset(shipped_file(PRESET_FILE), {"duration_s": 4.0, "seeds": [7]})
    assert preset.duration_s == 4.0
    assert preset.seeds == (7,)


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"kinds": ["people_X_H"]}, r"preset.kinds: 'people_X_H' is not allowed; use any of"),
        ({"kinds": []}, r"preset.kinds: empty"),
        ({"seeds": []}, r"preset.seeds: empty"),
        ({"duration_s": 0.5}, r"duration_s: value 0.5 is out of range; allowed \[1.0, 3600.0\]"),
        ({"few_flying": 20}, r"few_flying: 20 must be below lot_flying \(16\)"),
        ({"crowd": {"count": 0}}, r"crowd.count: value 0 is out of range; allowed \[1, 64\]"),
        (
            {"crowd": {"toward_robots": 1.5}},
            r"crowd.toward_robots: value 1.5 is out of range; allowed \[0.0, 1.0\]",
        ),
        (
            {"worlds": [{"name": "hall", "rooms_x": 9}]},
            r"worlds.hall.rooms_x: value 9 is out of range",
        ),
        ({"colour": "red"}, r"unknown key\(s\) \['colour'\]"),
        ({"scenario": "no_such.yaml"}, r"scenario: .*no_such.yaml' does not exist"),
    ],
)
def test_bad_presets_are_refused(overrides: dict[str, object], message: str) -> None:
    with pytest.raises(SlamConfigError, match=message):
        load_preset(shipped_file(PRESET_FILE), overrides)


def test_unknown_world_lists_the_presets(tmp_path: Path) -> None:
    preset = load_preset(shipped_file(PRESET_FILE))
    with pytest.raises(SlamConfigError, match=r"world 'cave' is not in the preset; allowed"):
        preset.world("cave")


def test_unreadable_preset_names_the_file(tmp_path: Path) -> None:
    bad = tmp_path / "p.yaml"
    bad.write_text("- a list\n")
    with pytest.raises(SlamConfigError, match=r"p.yaml: a preset is a mapping"):
        load_preset(bad)
