"""Baked lighting in the MuJoCo renderer: RGB changes, nothing else does."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from numpy.typing import NDArray

from grade_common.occupancy import OccupancyGrid
from grade_common.rotations import quat_to_matrix
from grade_common.types import FloatArray
from grade_sim.actors.people_group import SHADOW_HEIGHT_M as PERSON_HEIGHT_M
from grade_sim.actors.people_group import SHADOW_RADIUS_M as PERSON_RADIUS_M
from grade_sim.actors.people_group import People
from grade_sim.config.scenario import Stream, scenario_from_mapping
from grade_sim.engine.bake.probes import ProbeGrid
from grade_sim.engine.mujoco.contact_shadows import (
    GROUND_FADE_M,
    MAX_SHADOW_M,
    ContactShadows,
    LightArrays,
)
from grade_sim.engine.mujoco.engine import MujocoEngine
from grade_sim.engine.pixels import backproject
from grade_sim.robots.model import robot_model
from grade_sim.scene import InstanceInfo, RobotSetup, Scene, build_scene
from grade_sim.world.model import Ambience, Light, Material, StaticBox, World
from scenario_kit import small_scenario

ALL_STREAMS = frozenset(
    {Stream.RGB, Stream.DEPTH, Stream.INSTANCE, Stream.SEMANTIC, Stream.NORMALS, Stream.FLOW}
)
COARSE_BAKE = {"texel_m": 0.3, "light_samples": 2, "hemisphere_samples": 4}


def _scene(baked: bool, supersample: float) -> Scene:
    # Contact shadows on: they are drawn in the RGB pass only and must not reach depth or masks.
    bake = {"enabled": baked, "contact_shadows": True, **COARSE_BAKE}
    return build_scene(
        small_scenario(
            people={"count": 2},
            lights={"count": 2, "bake": bake},
            render={"supersample": supersample},
        )
    )


@pytest.mark.slow
@pytest.mark.parametrize("supersample", [1.0, 1.5])  # without it, RGB and depth share a pass
def test_the_bake_changes_rgb_only(
    engine_of: Callable[[Scene], MujocoEngine],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    supersample: float,
) -> None:
    monkeypatch.setenv("GRADE_BAKE_CACHE", str(tmp_path))
    plain, baked = _scene(False, supersample), _scene(True, supersample)
    engines = [engine_of(plain), engine_of(baked)]
    assert list(tmp_path.glob("*.npz"))  # the bake ran (and is cached)
    robot = plain.robots[0].model.name
    camera = plain.robots[0].model.config.cameras[0].name
    rgb_differs = False
    for step in (0, plain.n_steps // 2, plain.n_steps - 1):  # people move: flow is non-zero
        frames = []
        for scene, engine in zip((plain, baked), engines, strict=True):
            pos, quat = scene.actor_body_poses(step)
            engine.set_actor_poses(pos, quat)
            engine.update_kinematic_sensors()
            frames.append(engine.render(robot, camera, ALL_STREAMS))
        a, b = frames
        for name in ("depth_m", "instance", "semantic", "normals_cam", "flow_px"):
            x, y = getattr(a, name), getattr(b, name)
            assert x is not None, name
            assert y is not None, name
            assert x.tobytes() == y.tobytes(), f"{name} differs at step {step}"
        assert a.rgb is not None
        assert b.rgb is not None
        rgb_differs |= not np.array_equal(a.rgb, b.rgb)
    assert rgb_differs


FLOOR_ID, CUBE_ID, ROBOT_ID = 1, 2, 9
GREY = Material((0.6, 0.6, 0.6, 1.0))


def _shadow_scene(shadows: bool, baked: bool) -> Scene:
    """A floor, a cube and one spot light above it; a robot camera looking at the cube's shadow."""
    scenario = scenario_from_mapping(
        {
            "duration_s": 1.0,
            "bootstrap_s": 0.0,
            "people": {"count": 0},
            "flying_objects": {"count": 0},
            "lights": {"shadows": shadows, "bake": {"enabled": baked, "texel_m": 0.05}},
            "render": {"supersample": 1},
            "robots": [
                {
                    "name": "uav1",
                    "motion": {"mode": "commands"},
                    "cameras": [{"name": "camera", "width": 160, "height": 120}],
                }
            ],
        }
    )
    boxes = (
        StaticBox("floor", "floor", FLOOR_ID, (2.0, 0.0, -0.05), (3.0, 3.0, 0.05), 0.0, GREY),
        StaticBox("cube", "furniture", CUBE_ID, (2.5, 0.4, 0.25), (0.25,) * 3, 0.0, GREY),
    )
    light = Light(
        position_xyz=(2.5, -0.3, 2.0),
        diffuse_rgb=(0.9, 0.9, 0.9),
        cutoff_deg=80.0,
        exponent=1.0,
        attenuation=(1.0, 0.0, 0.02),
    )
    grid = OccupancyGrid((-1.0, -3.0), 0.1, np.zeros((60, 60), dtype=bool))
    world = World(
        boxes,
        (),
        (light,),
        grid,
        (-1.0, -3.0, -0.1),
        (5.0, 3.0, 3.0),
        ambience=Ambience((0.1, 0.1, 0.1), (0.0, 0.0, 0.0)),
    )
    rc = scenario.robots[0]
    setup = RobotSetup(robot_model(rc), ROBOT_ID, np.array([0.0, 0.0, 1.5]), 0.0, None)
    instances = {
        FLOOR_ID: InstanceInfo(FLOOR_ID, "floor", "floor"),
        CUBE_ID: InstanceInfo(CUBE_ID, "cube", "furniture"),
        ROBOT_ID: InstanceInfo(ROBOT_ID, rc.name, "robot_uav"),
    }
    return Scene(scenario=scenario, world=world, n_steps=241, robots=(setup,), instances=instances)


@pytest.mark.slow
def test_baked_shadows_fall_where_the_live_shadow_map_puts_them(
    engine_of: Callable[[Scene], MujocoEngine], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The baked floor is dark where MuJoCo's own shadow map darkens it and lit elsewhere: the
    lightmap lands on the right place of the right face (2D floor texture, cube texture)."""
    monkeypatch.setenv("GRADE_BAKE_CACHE", str(tmp_path))
    streams = frozenset({Stream.RGB, Stream.INSTANCE})
    frames = {}
    for name, shadows, baked in (
        ("live", False, False),
        ("map", True, False),
        ("baked", False, True),
    ):
        engine = engine_of(_shadow_scene(shadows, baked))
        frames[name] = engine.render("uav1", "camera", streams)
    live, shadow_map, baked = (frames[k].rgb.astype(np.float64).mean(axis=2) for k in frames)
    floor = frames["live"].instance == FLOOR_ID
    shadowed = floor & (shadow_map < 0.5 * live)
    lit = floor & (shadow_map > 0.95 * live) & (live > 40)
    assert shadowed.sum() > 50  # the view shows the shadow
    assert lit.sum() > 500
    assert np.median(baked[shadowed] / live[shadowed]) < 0.6
    assert np.median(baked[lit] / live[lit]) > 0.8


def _room_scene(
    bake: dict[str, object], people: int, supersample: float, mount_pitch_rad: float = 0.0
) -> Scene:
    """The small rooms with a cheap bake, no flying objects, a 240x180 camera on a UAV."""
    camera = {
        "name": "camera",
        "width": 240,
        "height": 180,
        "mount": {"xyz": [0.2, 0.0, 0.0], "rpy": [0.0, mount_pitch_rad, 0.0]},
    }
    return build_scene(
        small_scenario(
            240,
            180,
            people={"count": people},
            flying_objects={"count": 0},
            lights={"count": 2, "bake": {"enabled": True, **bake, **COARSE_BAKE}},
            # No FXAA: these tests compare pixels of the shading passes, unblended.
            render={"supersample": supersample, "fxaa": False},
            robots=[{"name": "uav1", "motion": {"mode": "commands"}, "cameras": [camera]}],
        )
    )


def _without_and_with(
    engine_of: Callable[[Scene], MujocoEngine], scene_of: Callable[[bool], Scene]
) -> tuple[Scene, Scene, list[MujocoEngine]]:
    """The scenes without and with a part of the bake, and an engine of each."""
    plain, shaded = scene_of(False), scene_of(True)
    return plain, shaded, [engine_of(plain), engine_of(shaded)]


def _probe_scene(probes: bool) -> Scene:
    return _room_scene({"probes": probes, "contact_shadows": False}, 4, 1.0)


def _look_at(engine: MujocoEngine, scene: Scene, target_xyz: FloatArray, azimuth: float) -> None:
    """The UAV 2 m from target_xyz at azimuth (rad), 1.4 m up, its camera facing it."""
    setup = scene.robots[0]
    names = [j.name for j in setup.model.joints]
    at = np.array([target_xyz[0], target_xyz[1], 1.4]) + 2.0 * np.array(
        [np.cos(azimuth), np.sin(azimuth), 0.0]
    )
    q = np.zeros(len(names))
    for i, name in enumerate(names):
        if name in ("x", "y", "z"):
            q[i] = at["xyz".index(name)]
        elif name == "yaw":
            q[i] = azimuth + np.pi
    engine.set_robot_kinematics(setup.model.name, q, np.zeros(len(q)), np.zeros(len(q)))
    engine.update_kinematic_sensors()


def _darkest_and_brightest_free_spots(scene: Scene, grid: ProbeGrid) -> list[FloatArray]:
    """xy of the darkest and the brightest probe about 1 m up with free floor 0.6 m around."""
    layout = grid.layout
    level = int(np.argmin(np.abs(np.asarray(layout.heights_m) - 1.0)))
    points = layout.points_xyz(scene.world).reshape(*layout.shape, 3)[level].reshape(-1, 3)
    gain = grid.gain_rgb[level].reshape(-1, 3).mean(axis=1)
    roomy = scene.world.free_space.inflated(0.6)
    free = np.array(
        [grid.valid[level].ravel()[k] and roomy.is_free(p[:2]) for k, p in enumerate(points)]
    )
    spots = np.flatnonzero(free)
    order = spots[np.argsort(gain[spots])]
    return [points[order[0], :2], points[order[-1], :2]]


@pytest.mark.slow
def test_light_probes_shade_each_person_by_the_light_where_they_stand(
    engine_of: Callable[[Scene], MujocoEngine], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two people, moved to the darkest and the brightest free place of the probe grid: each
    one's pixels with the probes on, over the same pixels without, come out as the probe gain
    there (the one in the dark darker, the one under a lamp lit); depth and masks unchanged."""
    monkeypatch.setenv("GRADE_BAKE_CACHE", str(tmp_path))
    plain, shaded, engines = _without_and_with(engine_of, _probe_scene)
    shading = engines[1]._probe_shading
    assert engines[0]._probe_shading is None
    assert shading is not None
    streams = frozenset({Stream.RGB, Stream.DEPTH, Stream.INSTANCE})
    pos, quat = plain.actor_body_poses(0)
    pos = pos.copy()
    per_person = len(plain.group(People).specs[0].body_names())
    spots = _darkest_and_brightest_free_spots(shaded, shading.probes)
    for k, spot in enumerate(spots):  # people 0 and 1 moved there, the others far away
        rows = slice(k * per_person, (k + 1) * per_person)
        pos[rows, :2] += spot - pos[k * per_person, :2]
    for k in range(len(spots), len(plain.group(People).specs)):
        pos[k * per_person : (k + 1) * per_person, 2] -= 50.0
    measured, expected = [], []
    for person in plain.group(People).specs[: len(spots)]:
        info = next(i for i, v in plain.instances.items() if v.name == person.name)
        body = engines[0].model.body(f"{person.name}/{person.body_names()[0]}").id
        best = None
        for azimuth in np.linspace(0.0, 2 * np.pi, 8, endpoint=False):
            frames = []
            for scene, engine in zip((plain, shaded), engines, strict=True):
                engine.set_actor_poses(pos, quat)
                _look_at(engine, scene, engine.data.xpos[body], float(azimuth))
                frames.append(engine.render("uav1", "camera", streams))
            mask = frames[0].instance == info
            if best is None or mask.sum() > best[0].sum():
                best = (mask, frames)
        assert best is not None
        mask, (a, b) = best
        assert a.depth_m.tobytes() == b.depth_m.tobytes()
        assert a.instance.tobytes() == b.instance.tobytes()
        assert mask.sum() > 300  # the person is in view
        ratio = b.rgb[mask].astype(np.float64).sum() / a.rgb[mask].astype(np.float64).sum()
        gain = shading.probes.gain_at(engines[1].data.xpos[body][None, :], shaded.world)
        measured.append(ratio)
        expected.append(float(np.mean(gain)))
    assert expected[1] - expected[0] > 0.15  # really a darker and a lit place
    np.testing.assert_allclose(measured, expected, atol=0.05)
    assert measured[0] < measured[1]


def test_contact_shadows_are_soft_darkest_at_the_feet_and_fall_away_from_the_light() -> None:
    scene = _shadow_scene(False, True)  # one spot light at (2.5, -0.3, 2.0), aimed down
    light_xy = np.array(scene.world.lights[0].position_xyz[:2])
    shadows = ContactShadows(
        np.zeros(2, np.int64),
        np.full(2, -1, np.int64),
        np.full(2, PERSON_RADIUS_M),
        np.full(2, PERSON_HEIGHT_M),
        LightArrays.of(scene.world.lights),
        0.1,
        scene,
    )
    beside = light_xy + np.array([1.0, 0.0])
    prints = shadows.footprints(np.array([beside, light_xy]))
    np.testing.assert_allclose(prints.away_xy[0], [1.0, 0.0], atol=1e-9)  # away from the light
    assert prints.cast_darkness[1] == 0.0  # right under it: the round patch only
    # A person 1 m from a light 2 m up casts a shadow about 1.75 * 1 / (2 - 0.875) m long.
    expected_length = min(PERSON_HEIGHT_M * 1.0 / (2.0 - 0.5 * PERSON_HEIGHT_M), MAX_SHADOW_M)
    assert prints.length_m[0] == pytest.approx(expected_length, rel=1e-6)

    one = ContactShadows(
        shadows.body_ids[:1],
        shadows.instance_ids[:1],
        shadows.radius_m[:1],
        shadows.height_m[:1],
        shadows.lights,
        shadows.ambient,
        scene,
    ).footprints(beside[None, :])

    def dark(offsets_xy: list[tuple[float, float]], z: float = 0.0) -> FloatArray:
        points = np.array([[beside[0] + dx, beside[1] + dy, z] for dx, dy in offsets_xy])
        return one.darkness_at(points, np.zeros(len(points)))

    at_feet = float(dark([(0.0, 0.0)])[0])
    ring = dark([(np.cos(a), np.sin(a)) for a in np.linspace(0, 2 * np.pi, 16, endpoint=False)])
    assert at_feet > 0.5
    assert (ring < 0.6 * at_feet).all()  # darker at the feet than 1 m away, every way
    toward, away = dark([(-1.0, 0.0), (1.0, 0.0)])
    assert toward == 0.0  # nothing on the light's side 1 m out
    assert away > 0.15  # the cast shadow there
    assert dark([(expected_length + 0.6, 0.0)])[0] == 0.0  # it ends past the shadow's tip
    # Soft: across the shadow, 1 cm apart, no step larger than a tenth of its depth (a hard
    # edge would be one step of all of it).
    across = dark([(0.8, y) for y in np.linspace(-0.6, 0.6, 121)])
    assert across.max() > 0.1
    assert np.abs(np.diff(across)).max() < 0.1 * across.max()
    assert across[0] == 0.0
    # Only on the ground: nothing on a body or anything else above it.
    assert dark([(0.0, 0.0), (0.5, 0.0)], z=GROUND_FADE_M).max() == 0.0
    assert dark([(0.0, 0.0)], z=0.5)[0] == 0.0


def _contact_scene(contact: bool) -> Scene:
    # The camera tilted down at the floor.
    return _room_scene({"probes": False, "contact_shadows": contact}, 2, 1.5, 0.5)


def _long_shadow_spot(
    scene: Scene, shadows: ContactShadows
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """(feet xy, unit away from the light, camera xy) of a free spot where one person's cast
    shadow is long and dark, with a clear line of sight 2.4 m from it, across the shadow."""
    roomy = scene.world.free_space.inflated(1.2)
    lo, hi = np.asarray(scene.world.bounds_min_xyz[:2]), np.asarray(scene.world.bounds_max_xyz[:2])
    best: tuple[float, FloatArray, FloatArray, FloatArray] | None = None
    one = shadows.subset(np.arange(len(shadows.body_ids)) == 0)
    for x in np.arange(lo[0], hi[0], 0.25):
        for y in np.arange(lo[1], hi[1], 0.25):
            xy = np.array([x, y])
            if not roomy.is_free(xy):
                continue
            prints = one.footprints(xy[None, :])
            if prints.cast_darkness[0] < 0.2:
                continue
            away = prints.away_xy[0]
            for sign in (1.0, -1.0):
                cam = xy + sign * 2.4 * np.array([-away[1], away[0]])
                score = float(prints.cast_darkness[0] * min(prints.length_m[0], 1.6))
                if scene.world.free_space.segment_is_free(xy, cam) and (
                    best is None or score > best[0]
                ):
                    best = (score, xy, away, cam)
    assert best is not None, "no spot with a long shadow in view"
    return best[1], best[2], best[3]


@pytest.mark.slow
def test_contact_shadows_darken_the_floor_only_and_fall_away_from_the_light(
    engine_of: Callable[[Scene], MujocoEngine], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One person where its shadow is long, seen from the side: with the contact shadows the
    floor at the feet is darker than without, 1 m away from the light darker than 1 m towards
    it, and nothing else changes (the person's pixels above the ground, depth, masks)."""
    monkeypatch.setenv("GRADE_BAKE_CACHE", str(tmp_path))
    plain, shaded, engines = _without_and_with(engine_of, _contact_scene)
    shadows = engines[1]._contact
    assert engines[0]._contact is None
    assert shadows is not None
    feet, away, cam_xy = _long_shadow_spot(shaded, shadows)
    pos, quat = plain.actor_body_poses(0)
    pos = pos.copy()
    per_person = len(plain.group(People).specs[0].body_names())
    pos[:per_person, :2] += feet - pos[0, :2]
    pos[per_person:, 0] += 100.0  # the other person far away
    setup = plain.robots[0]
    names = [j.name for j in setup.model.joints]
    q = np.zeros(len(names))
    look = feet - cam_xy
    for i, name in enumerate(names):
        q[i] = {"x": cam_xy[0], "y": cam_xy[1], "z": 1.6}.get(name, 0.0)
        if name == "yaw":
            q[i] = np.arctan2(look[1], look[0])
    streams = frozenset({Stream.RGB, Stream.DEPTH, Stream.INSTANCE, Stream.NORMALS})
    frames = []
    for engine in engines:
        engine.set_actor_poses(pos, quat)
        engine.set_robot_kinematics(setup.model.name, q, np.zeros_like(q), np.zeros_like(q))
        engine.update_kinematic_sensors()
        frames.append(engine.render("uav1", "camera", streams))
    a, b = frames
    for name in ("depth_m", "instance", "normals_cam"):
        assert getattr(a, name).tobytes() == getattr(b, name).tobytes(), name
    # Every pixel's point in the world.
    engine = engines[0]
    slot = engine._cameras[("uav1", "camera")]
    cam_pos, cam_quat = engine.camera_pose("uav1", "camera")
    points = backproject(a.depth_m, engine._intrinsics(slot)) @ quat_to_matrix(cam_quat).T
    points += cam_pos
    person = next(
        i for i, v in plain.instances.items() if v.name == plain.group(People).specs[0].name
    )
    body = (a.instance == person) & (points[..., 2] > GROUND_FADE_M)
    assert body.sum() > 300  # the person is in view
    assert np.array_equal(a.rgb[body], b.rgb[body])  # no darkening on the person
    floors = [i for i, v in plain.instances.items() if v.label == "floor"]
    floor = np.isin(a.instance, floors) & (a.rgb.sum(axis=2) > 30)
    offset = points[..., :2] - feet
    u = offset @ away
    v = offset @ np.array([-away[1], away[0]])
    ratio = b.rgb.sum(axis=2) / np.maximum(a.rgb.sum(axis=2), 1)

    def mean_ratio(where: NDArray[np.bool_]) -> float:
        picked = floor & where
        assert picked.sum() > 20
        return float(ratio[picked].mean())

    at_feet = mean_ratio(np.hypot(u, v) < 0.35)
    toward = mean_ratio((np.abs(u + 1.0) < 0.15) & (np.abs(v) < 0.25))
    away_side = mean_ratio((np.abs(u - 1.0) < 0.15) & (np.abs(v) < 0.15))
    ring = mean_ratio(np.abs(np.hypot(u, v) - 1.0) < 0.1)  # 1 m from the feet, every way
    assert at_feet < 0.85
    assert at_feet < ring - 0.05  # darker at the feet than 1 m away
    assert toward > 0.98  # no shadow on the light's side
    assert away_side < toward - 0.08  # the cast shadow, away from the light


def test_contact_shadows_find_the_ground_on_terrain_as_the_terrain_does() -> None:
    """The kernel's compiled ground height is Terrain.height_at (the drawn triangles), so the
    shadows lie on hills as on flat floors."""
    from grade_sim.engine.mujoco.contact_shadows import _ground_z
    from grade_sim.world.terrain import Terrain

    rng = np.random.default_rng(5)
    terrain = Terrain((-3.0, -2.0), 0.5, rng.uniform(-1.0, 2.0, (13, 11)))
    xy = rng.uniform(-4.0, 4.0, (200, 2))  # some outside: both clamp to the edge
    heights = np.ascontiguousarray(terrain.heights_m)
    origin = np.asarray(terrain.origin_xy)
    ours = [_ground_z(x, y, heights, origin, terrain.spacing_m) for x, y in xy]
    np.testing.assert_allclose(ours, terrain.height_at(xy[:, 0], xy[:, 1]), rtol=0, atol=1e-12)


def test_cast_shadows_fade_where_the_probes_see_the_light_blocked() -> None:
    """An actor whose probes hold a quarter of the live light (a canopy, a wall between it and
    the lamp) casts a quarter of the shadow; the round patch at the feet stays."""
    from grade_sim.engine.bake.probes import ProbeGrid, ProbeLayout

    scene = _shadow_scene(False, True)
    layout = ProbeLayout((-1.0, -3.0), 0.5, 13, 13, (0.25, 1.0, 1.75))
    live = np.ones((*layout.shape, 3), np.float32)
    shade = ProbeGrid(layout, 0.25 * live, live, np.ones(layout.shape, bool))
    lights = LightArrays.of(scene.world.lights)
    args = (np.zeros(1, np.int64), np.full(1, -1, np.int64), np.full(1, PERSON_RADIUS_M))
    xy = np.array([[3.5, -0.3]])  # 1 m beside the spot light
    open_air = ContactShadows(*args, np.full(1, PERSON_HEIGHT_M), lights, 0.1, scene)
    shaded = dataclasses.replace(open_air, probes=shade)
    a, b = open_air.footprints(xy), shaded.footprints(xy)
    assert a.cast_darkness[0] > 0.2
    assert b.cast_darkness[0] == pytest.approx(0.25 * a.cast_darkness[0])
    assert b.contact_darkness[0] == a.contact_darkness[0]


@pytest.mark.slow
@pytest.mark.parametrize("distance_m", [2.4, 1.2])
def test_the_half_resolution_darkness_matches_the_exact_one(
    engine_of: Callable[[Scene], MujocoEngine],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    distance_m: float,
) -> None:
    """The pass takes its darkness on a half-resolution grid on the ground: on a grey image,
    every floor pixel comes out within one level of the exact darkness at its own point (the
    reference formula, `Footprints.darkness_at`), and over all pixels nearly every one
    (points of the 2-6 cm fading band just past a shadow's edge may lose a little)."""
    monkeypatch.setenv("GRADE_BAKE_CACHE", str(tmp_path))
    scene = _contact_scene(True)
    engine = engine_of(scene)
    shadows = engine._contact
    assert shadows is not None
    feet, away, cam_xy = _long_shadow_spot(scene, shadows)
    cam_xy = feet + (cam_xy - feet) * distance_m / 2.4
    pos, quat = scene.actor_body_poses(0)
    pos = pos.copy()
    per_person = len(scene.group(People).specs[0].body_names())
    pos[:per_person, :2] += feet - pos[0, :2]
    pos[per_person:, :2] += feet + 0.8 * away - pos[per_person, :2]  # the other one in its shadow
    setup = scene.robots[0]
    q = np.zeros(len(setup.model.joints))
    look = feet + 0.5 * away - cam_xy
    for i, joint in enumerate(setup.model.joints):
        q[i] = {"x": cam_xy[0], "y": cam_xy[1], "z": 1.6}.get(joint.name, 0.0)
        if joint.name == "yaw":
            q[i] = np.arctan2(look[1], look[0])
    engine.set_actor_poses(pos, quat)
    engine.set_robot_kinematics(setup.model.name, q, np.zeros_like(q), np.zeros_like(q))
    engine.update_kinematic_sensors()
    frame = engine.render("uav1", "camera", frozenset({Stream.DEPTH}))
    assert frame.depth_m is not None
    slot = engine._cameras[("uav1", "camera")]
    k = engine._intrinsics(slot)
    cam_pos, cam_quat = engine.camera_pose("uav1", "camera")
    r = quat_to_matrix(cam_quat)
    grey = np.full((*frame.depth_m.shape, 3), 200, np.uint8)
    shadows.darken(grey, frame.depth_m, k, cam_pos, r, engine._render_data)

    points = (backproject(frame.depth_m, k) @ r.T + cam_pos).reshape(-1, 3)
    prints = shadows.footprints(np.asarray(engine._render_data.xpos)[shadows.body_ids, :2])
    ground = scene.world.terrain_height(points[:, 0], points[:, 1])
    exact = prints.darkness_at(points, ground) * (frame.depth_m.ravel() > 0)
    want = np.floor(200 * (1.0 - exact) + 0.5).reshape(frame.depth_m.shape)
    diff = np.abs(grey[..., 0].astype(np.float64) - want)
    assert np.array_equal(grey[..., 0], grey[..., 2])
    on_ground = (np.abs(points[:, 2] - ground) <= 1e-3).reshape(diff.shape)
    shaded = want < 200
    assert (shaded & on_ground).sum() > 500  # the shadows are in view, on the floor
    assert diff[on_ground].max() <= 1
    assert (diff[shaded] > 1).mean() < 0.01
    assert diff.mean() < 0.05
