"""The outdoor (savanna-like) world generator: seeded, loop corridor free, obstacles apart, one
instance per tree (trunk and crown meshes), terrain under everything, connected free space;
the shipped scenario validates and renders.

(Core test of src/grade_sim/world/outdoor.py; it lives here because test/grade_sim/world/ is
written by another engineer in parallel - move it there when merging.)"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from scipy.ndimage import label

from grade_common.errors import ConfigError
from grade_sim.config.scenario import (
    IMAGE_STREAMS,
    EnvironmentKind,
    LightsConfig,
    OutdoorConfig,
    load_scenario,
    scenario_from_mapping,
)
from grade_sim.scene import build_scene
from grade_sim.world.model import StaticMesh, World
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


OBSTACLES = ("tree", "rock", "bush")


def objects(world: World, labels: tuple[str, ...] = OBSTACLES) -> dict[int, list[StaticMesh]]:
    """The meshes of each instance with one of `labels` inside the walk area (not on the hills)."""
    out: dict[int, list[StaticMesh]] = {}
    for mesh in world.meshes:
        if mesh.label in labels and not mesh.name.startswith("hill_"):
            out.setdefault(mesh.instance_id, []).append(mesh)
    return out


def footprint(meshes: list[StaticMesh], below_m: float) -> tuple[np.ndarray, float]:
    """Centre and radius of the vertices lower than below_m (a trunk, a rock, a bush)."""
    v = np.concatenate([m.vertices_xyz for m in meshes])
    low = v[v[:, 2] < below_m][:, :2]
    centre = (low.min(axis=0) + low.max(axis=0)) / 2
    return centre, float(np.linalg.norm(low - centre, axis=1).max())


def world_of(config: OutdoorConfig, seed: int) -> World:
    return generate_outdoor(config, LightsConfig(count=2), np.random.default_rng(seed))


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("config", CONFIGS)
def test_nothing_static_comes_near_the_robot_loop(config: OutdoorConfig, seed: int) -> None:
    world = world_of(config, seed)
    loop = list(world.tour_xy)
    assert loop == tour_polygon(config)
    assert len(loop) == config.tour_points
    for meshes in objects(world).values():
        for mesh in meshes:  # every vertex of trunks, crowns, rocks and bushes
            gaps = [
                distance_to_loop((float(x), float(y)), loop) for x, y in mesh.vertices_xyz[::3, :2]
            ]
            assert min(gaps) >= config.tour_clearance_m - 1e-9, (mesh.name, min(gaps))
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
    grounded = [footprint(m, 0.5) for m in objects(world).values()]
    for i, (ca, ra) in enumerate(grounded):
        assert abs(ca[0]) < hx
        assert abs(ca[1]) < hy
        for cb, rb in grounded[i + 1 :]:
            gap = float(np.linalg.norm(ca - cb)) - ra - rb
            assert gap >= SPACING_M - 0.3, gap  # lumps reach a little past the drawn radius
    blocked = world.free_space.blocked
    assert 0.0 < blocked.mean() < 0.3
    # Every obstacle's footprint centre is blocked; grass never blocks.
    for centre, _ in grounded:
        assert not world.free_space.is_free(centre)
    assert all(not m.collides for m in world.meshes if m.label in ("grass", "ground"))
    regions, _ = label(~blocked)
    sizes = np.bincount(regions.ravel())[1:]
    assert sizes.max() / (~blocked).sum() > 0.98  # pockets between obstacles only


def test_terrain_is_flat_where_things_walk_and_hilly_around() -> None:
    config = OutdoorConfig()
    world = world_of(config, 2)
    assert world.terrain is not None
    ground = [m for m in world.meshes if m.label == "ground"]
    assert len(ground) == 1
    assert ground[0].texcoords_uv is not None
    z = ground[0].vertices_xyz[:, 2]
    assert z.max() > 1.0  # hills beyond the walk area
    hx, hy = config.size_m[0] / 2, config.size_m[1] / 2
    inside = (np.abs(ground[0].vertices_xyz[:, 0]) <= hx) & (
        np.abs(ground[0].vertices_xyz[:, 1]) <= hy
    )
    np.testing.assert_array_equal(z[inside], 0.0)
    # The collision box is just under the drawn ground and shares its instance.
    (box,) = world.boxes
    assert box.instance_id == ground[0].instance_id
    assert box.center_xyz[2] + box.half_size_xyz[2] < 0.0
    # The world's height query is the terrain's: 0 on the walk area, the hills beyond.
    assert float(world.terrain_height(3.0, -4.0)) == 0.0
    far = np.array([hx + 20.0, 0.0])
    assert float(world.terrain_height(*far)) == float(world.terrain.height_at(*far))
    # Things on the hills stand on the terrain: their lowest vertex is at or below it.
    for mesh in world.meshes:
        if mesh.name.startswith("hill_") and mesh.name.endswith("trunk"):
            v = mesh.vertices_xyz
            low = v[np.argmin(v[:, 2])]
            assert low[2] <= float(world.terrain.height_at(low[0], low[1])) + 1e-9


def test_each_tree_is_one_instance_of_trunk_and_crowns() -> None:
    scenario = scenario_from_mapping(
        {
            "seed": 4,
            "duration_s": 0.5,
            "environment": {
                "type": "outdoor",
                "outdoor": {"trees": 8, "rocks": 2, "bushes": 2, "terrain_border_m": 0.0},
            },
            "people": {"count": 0},
            "flying_objects": {"count": 0},
        }
    )
    scene = build_scene(scenario)
    trees = objects(scene.world, ("tree",))
    assert len(trees) == 8
    for instance_id, meshes in trees.items():
        names = [m.name for m in meshes]
        piece = names[0].partition("/")[0]
        assert f"{piece}/trunk" in names
        assert 2 <= sum("/crown_" in n for n in names) <= 3
        assert scene.instances[instance_id].name == piece
        assert scene.instances[instance_id].label == "tree"
    assert len({m.name for m in scene.world.meshes}) == len(scene.world.meshes)


def test_same_seed_same_world_other_seed_other_world() -> None:
    config = OutdoorConfig(trees=15)
    a, b, c = world_of(config, 5), world_of(config, 5), world_of(config, 6)
    assert a.boxes == b.boxes
    assert a.lights == b.lights
    assert np.array_equal(a.free_space.blocked, b.free_space.blocked)
    assert [m.name for m in a.meshes] == [m.name for m in b.meshes]
    for ma, mb in zip(a.meshes, b.meshes, strict=True):
        np.testing.assert_array_equal(ma.vertices_xyz, mb.vertices_xyz)
        assert ma.material == mb.material
    assert not np.array_equal(a.meshes[1].vertices_xyz, c.meshes[1].vertices_xyz)


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
        frame = sim.backend.render("uav1", "camera", IMAGE_STREAMS)
    finally:
        sim.finish()
    assert frame.rgb is not None
    assert frame.depth_m is not None
    assert frame.instance is not None
    labels = {sim.scene.instances[int(i)].label for i in np.unique(frame.instance) if i}
    assert "ground" in labels
    assert labels & {"tree", "rock", "bush", "person"}, labels
    assert float(frame.depth_m.max()) > 5.0  # an open plain, not a room
