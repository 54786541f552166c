"""A small recorded run (80x60 camera, two people, a flying object) shared by the render tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from grade_sim.sim.run import run_scenario
from scenario_kit import small_scenario


@pytest.fixture(scope="session")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("render_src") / "run"
    # Skinned people (the default body): the path tracer draws their skins.
    people = {"count": 2, "body": "skinned"}
    result = run_scenario(small_scenario(80, 60, duration_s=0.25, people=people), out)
    assert result.stats.status == "complete"
    return result.path
