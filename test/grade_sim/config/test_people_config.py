"""The people section's crowd fields: defaults keep old scenarios valid; bad values are named."""

from __future__ import annotations

from typing import Any

import pytest

from grade_common.errors import ConfigError
from grade_people.config import CrowdMode
from grade_sim.config.scenario import scenario_from_mapping


def test_defaults_are_a_scripted_checked_crowd() -> None:
    people = scenario_from_mapping({}).people
    assert people.mode is CrowdMode.SCRIPTED
    assert people.placement.check
    assert people.avoidance.avoid_robots


def test_reactive_mode_and_avoidance_values_load() -> None:
    people = scenario_from_mapping(
        {"people": {"mode": "reactive", "avoidance": {"rate_hz": 20, "max_neighbors": 4}}}
    ).people
    assert people.mode is CrowdMode.REACTIVE
    assert people.avoidance.rate_hz == 20.0
    assert people.avoidance.max_neighbors == 4


@pytest.mark.parametrize(
    ("people", "match"),
    [
        ({"mode": "wander"}, r"people\.mode.*wander.*reactive"),
        ({"avoidance": {"rate_hz": 0.5}}, r"people\.avoidance\.rate_hz.*0\.5.*1\.0.*60\.0"),
        ({"avoidance": {"clearance_m": -0.1}}, r"people\.avoidance\.clearance_m.*-0\.1"),
        ({"avoidance": {"speed": 1}}, r"people\.avoidance.*speed"),
        ({"placement": {"retries": 50}}, r"people\.placement\.retries.*50.*20"),
        ({"pause_s": [5.0, 1.0]}, r"people\.pause_s.*min > max"),
    ],
)
def test_bad_values_name_field_value_and_range(people: dict[str, Any], match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        scenario_from_mapping({"people": people})
