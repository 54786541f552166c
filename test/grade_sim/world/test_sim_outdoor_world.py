"""The outdoor (savanna-like) world generator: seeded, loop corridor free, obstacles apart, one
instance per tree, connected free space; the shipped scenario validates and renders.

(Core test of src/grade_sim/world/outdoor.py; it lives here because test/grade_sim/world/ is
written by another engineer in parallel - move it there when merging.)"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from scipy.ndimage import label

from grade_common.errors import ConfigError
from grade_sim.config.scenario import (
    EnvironmentKind,
    LightsConfig,
    OutdoorConfig,
    Stream,
    load_scenario,
    scenario_from_mapping,
)
from grade_sim.scene import build_scene
from grade_sim.world.model import StaticBox, World
from grade_sim.world.outdoor import (
    SPACING_M,
    distance_to_loop,
    generate_outdoor,
    tour_polygon,
)

REPO = Path(__file__).resolve().parents[3]
CONFIGS = [
    OutdoorConfig(),
    OutdoorConfig(size_m=(20.0, 30.0), trees=10, rocks=5, bushes=5, tour_radius_m=6.0),
    OutdoorConfig(size_m=(60.0, 60.0), trees=120, tour_points=5, tour_clearance_m=3.0),
]


def reach(box: StaticBox) -> float:
    """Radius of a (yawed) box's footprint."""
    return math.hypot(box.half_size_xyz[0], box.half_size_xyz[1])


def world_of(config: OutdoorConfig, seed: int) -> World:
    return generate_outdoor(config, LightsConfig(count=2), np.random.default_rng(seed))


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("config", CONFIGS)
def test_nothing_static_comes_near_the_robot_loop(config: OutdoorConfig, seed: int) -> None:
    world = world_of(config, seed)
    loop = list(world.tour_xy)
    assert loop == tour_polygon(config)
    assert len(loop) == config.tour_points
    for box in world.boxes:
        if box.label == "ground":
            continue
        gap = distance_to_loop(box.center_xyz[:2], loop) - reach(box)
        assert gap >= config.tour_clearance_m - 1e-9, (box.name, gap)
    # ... and the loop's cells are free in the occupancy grid, so people and robots share it.
    for a, b in zip(loop, loop[1:] + loop[:1], strict=True):
        assert world.free_space.segment_is_free(np.array(a), np.array(b))


@pytest.mark.parametrize("config", CONFIGS)
def test_obstacles_are_apart_inside_the_ground_and_free_space_is_connected(
    config: OutdoorConfig,
) -> None:
    world = world_of(config, 3)
    hx, hy = config.size_m[0] / 2, config.size_m[1] / 2
    assert world.bounds_min_xyz[:2] == (-hx, -hy)
    grounded = [
        b
        for b in world.boxes
        if b.label in ("rock", "bush")
        or (b.label == "tree" and b.center_xyz[2] - b.half_size_xyz[2] < 0.5)
    ]
    for i, a in enumerate(grounded):
        assert abs(a.center_xyz[0]) < hx
        assert abs(a.center_xyz[1]) < hy
        for b in grounded[i + 1 :]:
            gap = math.dist(a.center_xyz[:2], b.center_xyz[:2]) - reach(a) - reach(b)
            assert gap >= SPACING_M - 1e-9, (a.name, b.name, gap)
    blocked = world.free_space.blocked
    assert 0.0 < blocked.mean() < 0.3
    # Every obstacle's footprint centre is blocked.
    for box in grounded:
        assert not world.free_space.is_free(np.array(box.center_xyz[:2])), box.name
    regions, _ = label(~blocked)
    sizes = np.bincount(regions.ravel())[1:]
    assert sizes.max() / (~blocked).sum() > 0.98  # pockets between obstacles only


def test_each_tree_is_one_instance_named_by_its_trunk() -> None:
    scenario = scenario_from_mapping(
        {
            "seed": 4,
            "duration_s": 0.5,
            "environment": {"type": "outdoor", "outdoor": {"trees": 8, "rocks": 2, "bushes": 2}},
            "people": {"count": 0},
            "flying_objects": {"count": 0},
        }
    )
    scene = build_scene(scenario)
    trees = [b for b in scene.world.boxes if b.label == "tree"]
    by_id: dict[int, list[str]] = {}
    for box in trees:
        by_id.setdefault(box.instance_id, []).append(box.name)
    assert len(by_id) == 8
    for instance_id, names in by_id.items():
        assert len(names) == 3, names  # two crown boxes and the trunk
        assert scene.instances[instance_id].name == names[-1]
        assert scene.instances[instance_id].label == "tree"
    assert len({b.name for b in scene.world.boxes}) == len(scene.world.boxes)


def test_same_seed_same_world_other_seed_other_world() -> None:
    config = OutdoorConfig(trees=15)
    a, b, c = world_of(config, 5), world_of(config, 5), world_of(config, 6)
    assert a.boxes == b.boxes
    assert a.lights == b.lights
    assert np.array_equal(a.free_space.blocked, b.free_space.blocked)
    assert [x.center_xyz for x in a.boxes] != [x.center_xyz for x in c.boxes]


@pytest.mark.parametrize(
    ("outdoor", "match"),
    [
        (
            {"tour_radius_m": 19.0},
            r"outdoor\.tour_radius_m: 19\.0 does not fit a \[40\.0, 40\.0\] m",
        ),
        (
            {"tree_height_m": [6.0, 3.0]},
            r"outdoor\.tree_height_m: range \[6\.0, 3\.0\] has min > max",
        ),
        ({"size_m": [5.0, 40.0]}, r"outdoor\.size_m\[0\]: value 5\.0 is out of range"),
        ({"forest": 3}, r"forest"),
    ],
)
def test_bad_outdoor_config_is_refused(outdoor: dict[str, object], match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        scenario_from_mapping({"environment": {"type": "outdoor", "outdoor": outdoor}})


def test_shipped_savanna_scenario_places_robots_on_the_loop_and_renders() -> None:
    from grade_sim.sim.orchestrator import Simulator

    scenario = load_scenario(REPO / "config/outdoor_savanna.yaml", {"duration_s": 0.1})
    assert scenario.environment.type is EnvironmentKind.OUTDOOR
    sim = Simulator(build_scene(scenario))
    try:
        loop = list(sim.scene.world.tour_xy)
        for k, robot in enumerate(sim.scene.robots):
            assert tuple(robot.start_xyz[:2]) == pytest.approx(loop[k])
        frame = sim.backend.render(
            "uav1", "camera", frozenset({Stream.RGB, Stream.DEPTH, Stream.INSTANCE})
        )
    finally:
        sim.finish()
    assert frame.rgb is not None
    assert frame.depth_m is not None
    assert frame.instance is not None
    labels = {sim.scene.instances[int(i)].label for i in np.unique(frame.instance) if i}
    assert "ground" in labels
    assert labels & {"tree", "rock", "bush", "person"}, labels
    assert float(frame.depth_m.max()) > 5.0  # an open plain, not a room
