"""grade_sim.scenarios.small_scenario: the benchmark scene of `grade bench replay`."""

from __future__ import annotations

from grade_sim.scenarios import small_scenario


def test_small_scenario_sets_what_the_benches_vary() -> None:
    scenario = small_scenario(
        duration_s=3.0, bootstrap_s=0.5, people=4, flying_objects=2, width=320, height=240
    )
    assert scenario.seed == 7
    assert (scenario.duration_s, scenario.bootstrap_s) == (3.0, 0.5)
    assert scenario.people.count == 4
    assert scenario.flying_objects.count == 2
    assert [r.name for r in scenario.robots] == ["uav1"]
    (camera,) = scenario.robots[0].cameras
    assert (camera.name, camera.width, camera.height) == ("camera", 320, 240)
    procedural = scenario.environment.procedural
    assert (procedural.rooms_x, procedural.rooms_y) == (2, 1)
