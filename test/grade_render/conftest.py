"""A small recorded run (80x60 camera, two people, a flying object) shared by the render tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from grade_sim.config.scenario import Scenario, scenario_from_mapping
from grade_sim.sim.run import run_scenario


def small_scenario(width: int = 80, height: int = 60, body: str = "parts") -> Scenario:
    # Rigid-part people: the path tracer does not draw skinned people yet.
    return scenario_from_mapping(
        {
            "seed": 7,
            "duration_s": 0.25,
            "bootstrap_s": 0.1,
            "environment": {"procedural": {"rooms_x": 2, "rooms_y": 1}},
            "people": {"count": 2, "body": body},
            "flying_objects": {"count": 1},
            "lights": {"count": 1},
            "robots": [
                {
                    "name": "uav1",
                    "cameras": [
                        {
                            "name": "camera",
                            "width": width,
                            "height": height,
                            "mount": {"xyz": [0.2, 0.0, 0.0]},
                        }
                    ],
                }
            ],
        }
    )


@pytest.fixture(scope="session")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("render_src") / "run"
    result = run_scenario(small_scenario(), out)
    assert result.stats.status == "complete"
    return result.path
