"""A small recorded run (160x120 camera, two skinned people, a flying object, a gazelle, a UAV)
and its USD export, shared by the grade_usd tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from grade_sim.config.scenario import Scenario
from grade_sim.sim.run import run_scenario
from grade_usd.export import UsdExportResult, export_usd
from scenario_kit import small_scenario


@pytest.fixture(scope="session")
def usd_scenario() -> Scenario:
    return small_scenario(
        160,
        120,
        duration_s=0.25,
        people={"count": 2, "body": "skinned"},
        animals={"count": 1, "kinds": ["gazelle"]},
    )


@pytest.fixture(scope="session")
def usd_run(tmp_path_factory: pytest.TempPathFactory, usd_scenario: Scenario) -> Path:
    out = tmp_path_factory.mktemp("usd_src") / "run"
    result = run_scenario(usd_scenario, out)
    assert result.stats.status == "complete"
    return result.path


@pytest.fixture(scope="session")
def exported(usd_run: Path, tmp_path_factory: pytest.TempPathFactory) -> UsdExportResult:
    return export_usd(usd_run, tmp_path_factory.mktemp("usd_out") / "run.usd")
