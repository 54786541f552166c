"""People sitting on chairs in a reactive run (stepped live, recorded): the record keeps the
seats' heights, the trace touches nothing but the sitters' own chairs, and the replay of the
run reproduces it exactly."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import yaml

from grade_people.config import PersonMotion
from grade_people.people import MOTION_CODES, sit_weights
from grade_sim.config.scenario import Scenario, scenario_from_mapping
from grade_sim.io.record import load_record
from grade_sim.scene import build_scene
from grade_sim.sim.run import SimulatorSpec, run_scenario
from replay_kit import replay_exactly

pytestmark = pytest.mark.slow  # a 10 s rendered run and its replay


def _scenario() -> Scenario:
    # Seed 4 gives this room two chairs; every stop is a sit.
    return scenario_from_mapping(
        {
            "seed": 4,
            "duration_s": 10.0,
            "bootstrap_s": 0.1,
            "environment": {
                "procedural": {
                    "rooms_x": 1,
                    "rooms_y": 1,
                    "room_size_m": [5.0, 6.0],
                    "furniture_per_room": [4, 6],
                }
            },
            "people": {
                "count": 2,
                "mode": "reactive",
                "motions": ["walk", "sit"],
                "walk_fraction": 0.0,
            },
            "flying_objects": {"count": 0},
            "lights": {"count": 1},
            "robots": [
                {
                    "name": "rover",
                    "motion": {"mode": "commands"},
                    "cameras": [{"name": "camera", "width": 96, "height": 72, "rate_hz": 10.0}],
                }
            ],
        }
    )


@pytest.fixture(scope="module")
def sitting_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    scene = build_scene(_scenario())
    assert len(scene.world.seats) == 2
    result = run_scenario(SimulatorSpec(scene), tmp_path_factory.mktemp("sitting") / "run")
    assert result.stats.status == "complete"
    return result.path


def test_the_record_keeps_who_sat_on_which_seat(sitting_run: Path) -> None:
    record = load_record(sitting_run / "record.npz")
    dt = record.scenario.physics_dt_s
    heights = {s.height_m for s in build_scene(record.scenario).world.seats}
    sat = 0
    for tl in record.people.values():
        seated = sit_weights(tl.motion, dt) > 0.99
        if seated.any():
            sat += 1
            assert np.all(tl.motion[seated] == MOTION_CODES[PersonMotion.SIT])
            assert set(tl.seat_height_m[seated].tolist()) <= heights
    assert sat == 2
    placement = yaml.safe_load((sitting_run / "placement.yaml").read_text())
    assert placement["checked"] is True
    assert placement["collisions_seen"] == []
    assert placement["sit_fallbacks"] == []  # two chairs, two people


def test_replay_of_a_run_with_sitters_is_exact(sitting_run: Path, tmp_path: Path) -> None:
    with np.load(sitting_run / "record.npz") as record:
        assert len([k for k in record.files if k.endswith("/seat_height_m")]) == 2
    replay_exactly(sitting_run, tmp_path / "replay", ("person/",))
