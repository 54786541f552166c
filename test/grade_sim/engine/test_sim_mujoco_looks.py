"""The MuJoCo look: textured materials, no dominant headlight, supersampled RGB with exact masks
and depth, the outdoor sky, and lights whose randomisation shows in the images."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from grade_common.occupancy import OccupancyGrid
from grade_common.textures import TextureKind
from grade_sim.config.scenario import IMAGE_STREAMS, Stream, scenario_from_mapping
from grade_sim.engine.bake.switch import with_bake
from grade_sim.engine.mujoco.engine import MujocoEngine
from grade_sim.robots.model import robot_model
from grade_sim.scene import InstanceInfo, RobotSetup, Scene, build_scene
from grade_sim.world.lighting import ceiling_lights, indoor_ambience
from grade_sim.world.model import Ambience, Material, Sky, StaticBox, World
from grade_sim.world.procedural import FLOOR_LOOKS, WALL_LOOKS

ROBOT_ID = 9
FLAT_LIGHT = Ambience(ambient_rgb=(0.8, 0.8, 0.8), headlight_rgb=(0.0, 0.0, 0.0))
# Relative spread of mean image brightness over 8 light draws of one world and view; measured
# 0.43 (max-min over mean) and 0.13 (std over mean). The old fixed headlight gave 3-4 %.
MIN_BRIGHTNESS_RANGE = 0.25
MIN_BRIGHTNESS_STD = 0.08


def _scene(
    world: World, supersample: float, width: int = 160, height: int = 120, fxaa: bool = False
) -> Scene:
    scenario = scenario_from_mapping(
        {
            "duration_s": 1.0,
            "bootstrap_s": 0.0,
            "people": {"count": 0},
            "flying_objects": {"count": 0},
            "render": {"supersample": supersample, "texture_size_px": 128, "fxaa": fxaa},
            "robots": [
                {
                    "name": "uav1",
                    "motion": {"mode": "commands"},
                    "cameras": [{"name": "camera", "width": width, "height": height}],
                }
            ],
        }
    )
    rc = scenario.robots[0]
    setup = RobotSetup(robot_model(rc), ROBOT_ID, np.array([0.0, 0.0, 1.0]), 0.0, None)
    instances = {b.instance_id: InstanceInfo(b.instance_id, b.name, b.label) for b in world.boxes}
    instances[ROBOT_ID] = InstanceInfo(ROBOT_ID, rc.name, "robot_uav")
    n_steps = round(scenario.rates.physics_hz) + 1
    return Scene(
        scenario=scenario, world=world, n_steps=n_steps, robots=(setup,), instances=instances
    )


def _world(
    boxes: tuple[StaticBox, ...], ambience: Ambience = FLAT_LIGHT, sky: Sky | None = None
) -> World:
    grid = OccupancyGrid((-5.0, -5.0), 0.1, np.zeros((100, 100), dtype=bool))
    return World(
        boxes, (), (), grid, (-5.0, -5.0, 0.0), (5.0, 5.0, 3.0), ambience=ambience, sky=sky
    )


def _box(iid: int, xyz: tuple[float, float, float], yaw: float, mat: Material) -> StaticBox:
    return StaticBox(f"b{iid}", "furniture", iid, xyz, (0.3, 0.25, 0.35), yaw, mat)


RED = Material((0.9, 0.1, 0.1, 1.0))
GREEN = Material((0.1, 0.8, 0.2, 1.0))
BRICK = Material((0.6, 0.3, 0.2, 1.0), TextureKind.BRICK, (0.7, 0.7, 0.65), 0.5, seed=3)
BOXES = (
    _box(1, (1.8, 0.3, 1.1), 0.5, RED),
    _box(3, (2.4, -0.2, 0.8), -0.4, GREEN),  # partly behind box 1: edges between two ids
    _box(4, (1.7, -0.8, 1.3), 0.9, BRICK),
)


@pytest.fixture
def render() -> Iterator[Any]:
    engines: list[MujocoEngine] = []

    def make(world: World, supersample: float, fxaa: bool = False) -> Any:
        engine = MujocoEngine(_scene(world, supersample, fxaa=fxaa))
        engines.append(engine)
        return engine.render("uav1", "camera", IMAGE_STREAMS)

    yield make
    for e in engines:
        e.close()


@pytest.mark.parametrize("factor", [1.5, 2.0])
def test_supersampling_keeps_masks_and_depth_exact(render: Any, factor: float) -> None:
    plain, smooth = render(_world(BOXES), 1), render(_world(BOXES), factor)
    assert smooth.rgb.shape == plain.rgb.shape == (120, 160, 3)
    ids = set(np.unique(smooth.instance).tolist())
    assert {1, 3, 4} <= ids <= {0, 1, 3, 4, ROBOT_ID}  # only ids that exist: nothing blended
    # The exact pass is the one without antialiasing: identical masks and depth.
    np.testing.assert_array_equal(smooth.instance, plain.instance)
    np.testing.assert_array_equal(smooth.depth_m, plain.depth_m)
    # Depth is valid exactly where there is an object.
    np.testing.assert_array_equal(smooth.depth_m > 0, smooth.instance > 0)


def _mixed_edge_fraction(frame: Any) -> float:
    """Share of pixels on the red box's outline (against the black void) whose red value lies
    strictly between the void's and the box's: antialiased edges blend, aliased ones do not."""
    mask = frame.instance == 1
    void = frame.instance == 0
    edge = mask & (np.roll(void, 1, 0) | np.roll(void, -1, 0) | np.roll(void, 1, 1))
    edge |= void & (np.roll(mask, 1, 0) | np.roll(mask, -1, 0) | np.roll(mask, 1, 1))
    red = frame.rgb[..., 0].astype(float)
    full = float(np.median(red[mask & ~edge]))
    blended = (red > 0.15 * full) & (red < 0.85 * full)
    return float(blended[edge].mean())


def test_supersampled_rgb_edges_are_smooth(render: Any) -> None:
    world = _world((BOXES[0],))
    aliased, smooth = _mixed_edge_fraction(render(world, 1)), _mixed_edge_fraction(render(world, 2))
    assert aliased < 0.02
    assert smooth > 0.25


def test_fxaa_smooths_edges_and_keeps_masks_and_depth_exact(render: Any) -> None:
    world = _world((BOXES[0],))
    plain, fxaa = render(world, 1), render(world, 1, fxaa=True)
    assert _mixed_edge_fraction(plain) < 0.02
    # FXAA blends one side of a step, by the pixel's place along it: measured 0.13 (supersample
    # 1.5 blends both sides, 0.60); on frames of the default scenario its mean SSIM against
    # supersample 1.5 is 0.994 (docs/looks.md).
    assert _mixed_edge_fraction(fxaa) > 0.08
    np.testing.assert_array_equal(fxaa.instance, plain.instance)
    np.testing.assert_array_equal(fxaa.depth_m, plain.depth_m)
    # Only pixels on or beside an outline change: the box's flat faces and the void stay.
    changed = (fxaa.rgb != plain.rgb).any(axis=2)
    box = plain.instance == 1
    inner = box & np.roll(box, 2, 0) & np.roll(box, -2, 0) & np.roll(box, 2, 1)
    inner &= np.roll(box, -2, 1)
    assert not changed[inner].any()


def _texture_contrast(frame: Any, iid: int) -> float:
    """Mean colour step between horizontal neighbours that both show instance iid."""
    inside = (frame.instance[:, 1:] == iid) & (frame.instance[:, :-1] == iid)
    step = np.abs(np.diff(frame.rgb.astype(float), axis=1)).sum(axis=2)
    return float(step[inside].mean())


def test_procedural_material_shows_its_texture(render: Any) -> None:
    frame = render(_world(BOXES), 2)
    assert _texture_contrast(frame, 4) > 20.0  # brick: mortar lines and bricks
    assert _texture_contrast(frame, 1) < 5.0  # plain red: flat faces


def test_outdoor_sky_is_blue_and_has_no_depth_or_id(render: Any) -> None:
    sky = Sky((0.2, 0.4, 0.8), (0.75, 0.82, 0.9), (0.3, 0.3, 0.3), (0.0, 0.6, 0.8), (1, 1, 0.9))
    for supersample in (1, 2):
        frame = render(_world(BOXES, sky=sky), supersample)
        top = frame.rgb[:10].reshape(-1, 3).astype(float).mean(axis=0)
        assert top[2] > 150
        assert top[2] > top[0] + 30
        void = frame.instance == 0
        assert void[:10].all()
        np.testing.assert_array_equal(frame.depth_m[void], 0.0)


def _room_scene(seed: int) -> Scene:
    return build_scene(
        scenario_from_mapping(
            {
                "seed": seed,
                "duration_s": 0.2,
                "bootstrap_s": 0.0,
                "environment": {"procedural": {"rooms_x": 1, "rooms_y": 1}},
                "people": {"count": 0},
                "flying_objects": {"count": 0},
                "lights": {"count": 2, "count_jitter": 1},
                "render": {"supersample": 1, "texture_size_px": 128},
                "robots": [
                    {
                        "name": "uav1",
                        "motion": {"mode": "commands"},
                        "cameras": [{"name": "camera", "width": 96, "height": 72}],
                    }
                ],
            }
        )
    )


def test_procedural_rooms_are_textured_from_the_library() -> None:
    world = _room_scene(3).world
    floor = next(b for b in world.boxes if b.label == "floor")
    walls = [b for b in world.boxes if b.label == "wall"]
    assert floor.material.texture in {look[0] for look in FLOOR_LOOKS}
    assert {w.material.texture for w in walls} & {look[0] for look in WALL_LOOKS}
    assert world.ambience.headlight_rgb == (0.0, 0.0, 0.0)
    # Unbaked: the library's images themselves (baked boxes get their own cube images).
    engine = MujocoEngine(with_bake(_room_scene(3), False))
    try:
        assert engine.model.ntex >= 3
        assert set(engine.model.tex_width.tolist()) == {128}
        assert engine.model.vis.headlight.diffuse.tolist() == [0.0, 0.0, 0.0]
    finally:
        engine.close()


def test_light_randomisation_changes_the_image_brightness() -> None:
    """One room, one view, 8 draws of the lights: the mean brightness must spread widely."""
    base = _room_scene(11)
    lo, hi = base.world.bounds_min_xyz, base.world.bounds_max_xyz
    rooms = [(lo[0], lo[1], hi[0], hi[1])]
    config = base.scenario.lights
    means = []
    for seed in range(8):
        rng = np.random.default_rng(seed)
        world = dataclasses.replace(
            base.world,
            lights=ceiling_lights(config, rng, rooms, base.world.ceiling_height_m),
            ambience=indoor_ambience(config, rng),
        )
        engine = MujocoEngine(dataclasses.replace(base, world=world))
        try:
            means.append(float(engine.render("uav1", "camera", frozenset({Stream.RGB})).rgb.mean()))
        finally:
            engine.close()
    m = np.asarray(means)
    print("mean brightness over 8 light draws:", np.round(m, 1))
    assert (m.max() - m.min()) / m.mean() > MIN_BRIGHTNESS_RANGE
    assert m.std() / m.mean() > MIN_BRIGHTNESS_STD
