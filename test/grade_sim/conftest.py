"""Shared builders for grade_sim core tests: small scenarios and hand-made scenes."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from grade_common.occupancy import OccupancyGrid
from grade_sim.config.scenario import Scenario, scenario_from_mapping
from grade_sim.engine.mujoco.engine import MujocoEngine
from grade_sim.robots.model import robot_model
from grade_sim.scene import InstanceInfo, RobotSetup, Scene
from grade_sim.world.model import Material, StaticBox, World
from scenario_kit import small_mapping


@pytest.fixture(scope="session")
def small_data() -> Callable[..., dict[str, Any]]:
    """Factory: small_data(**top_level_overrides) -> plain data of a small scenario."""
    return small_mapping


@pytest.fixture(scope="session")
def small_scenario() -> Callable[..., Scenario]:
    """Factory: small_scenario(seed=3, people={...}) -> a validated small Scenario."""

    def make(**overrides: Any) -> Scenario:
        return scenario_from_mapping(small_mapping(**overrides))

    return make


TARGET_ID = 1
ROBOT_ID = 2


def _box_scene(
    box_center_xyz: tuple[float, float, float] = (3.0, 0.5, 1.2),
    box_half_xyz: tuple[float, float, float] = (0.2, 0.2, 0.2),
    robot: dict[str, Any] | None = None,
    start_xyz: tuple[float, float, float] = (0.0, 0.0, 1.0),
    start_yaw: float = 0.0,
    duration_s: float = 1.0,
    rates: dict[str, float] | None = None,
) -> Scene:
    """A hand-made scene: one red box in empty space and one robot (no people, no objects)."""
    robot_data: dict[str, Any] = {
        "name": "uav1",
        "motion": {"mode": "commands"},
        "cameras": [{"name": "camera", "width": 160, "height": 120}],
    }
    robot_data.update(robot or {})
    scenario = scenario_from_mapping(
        {
            "duration_s": duration_s,
            "bootstrap_s": 0.0,
            "people": {"count": 0},
            "flying_objects": {"count": 0},
            "robots": [robot_data],
            "rates": rates or {},
        }
    )
    box = StaticBox(
        "target",
        "furniture",
        TARGET_ID,
        box_center_xyz,
        box_half_xyz,
        0.0,
        Material((0.9, 0.1, 0.1, 1.0)),
    )
    grid = OccupancyGrid((-5.0, -5.0), 0.1, np.zeros((100, 100), dtype=bool))
    world = World((box,), (), (), grid, (-5.0, -5.0, 0.0), (5.0, 5.0, 3.0))
    rc = scenario.robots[0]
    setup = RobotSetup(robot_model(rc), ROBOT_ID, np.array(start_xyz), start_yaw, None)
    instances = {
        TARGET_ID: InstanceInfo(TARGET_ID, "target", "furniture"),
        ROBOT_ID: InstanceInfo(ROBOT_ID, rc.name, f"robot_{rc.type.value}"),
    }
    n_steps = round(duration_s * scenario.rates.physics_hz) + 1
    return Scene(
        scenario=scenario, world=world, n_steps=n_steps, robots=(setup,), instances=instances
    )


@pytest.fixture(scope="session")
def box_scene() -> Callable[..., Scene]:
    """Factory for a hand-made scene: a red box (instance 1) and one robot (instance 2)."""
    return _box_scene


def _read_bag(path: Path) -> dict[str, list[tuple[int, str, bytes]]]:
    """Every message of a rosbag2 directory: topic -> [(bag stamp ns, msgtype, raw CDR)]."""
    from rosbags.highlevel import AnyReader

    out: dict[str, list[tuple[int, str, bytes]]] = {}
    with AnyReader([path]) as reader:
        for conn, stamp_ns, raw in reader.messages():
            out.setdefault(conn.topic, []).append((stamp_ns, conn.msgtype, bytes(raw)))
    return out


@pytest.fixture(scope="session")
def read_bag() -> Callable[[Path], dict[str, list[tuple[int, str, bytes]]]]:
    """Reads a bag with rosbags' AnyReader (the standard reader) into plain lists."""
    return _read_bag


def _turning_views(scene: Scene, *engines: MujocoEngine, views: int = 6) -> Iterator[int]:
    """Poses every engine alike for each of `views` steps spread over the run: the actors as at
    that step, the first robot at its start, turning on the spot by 60 degrees a view; yields
    the view's index after posing."""
    setup = scene.robots[0]
    names = [j.name for j in setup.model.joints]
    for turn, step in enumerate(range(0, scene.n_steps, max(1, scene.n_steps // views))):
        pos, quat = scene.actor_body_poses(step)
        q = np.zeros(len(names))
        q[[names.index(a) for a in "xyz"]] = setup.start_xyz
        q[names.index("yaw")] = setup.start_yaw + turn * np.pi / 3
        for engine in engines:
            engine.set_robot_kinematics(setup.model.name, q, np.zeros_like(q), np.zeros_like(q))
            engine.set_actor_poses(pos, quat)
            engine.update_kinematic_sensors()
        yield turn


@pytest.fixture(scope="session")
def turning_views() -> Callable[..., Iterator[int]]:
    """turning_views(scene, *engines): the engines posed alike, view after view (the robot at
    its start turning on the spot, the actors moving on)."""
    return _turning_views


@pytest.fixture
def engine_of() -> Iterator[Callable[[Scene], MujocoEngine]]:
    """Makes MuJoCo engines of scenes and closes them after the test."""
    engines: list[MujocoEngine] = []

    def make(scene: Scene) -> MujocoEngine:
        engines.append(MujocoEngine(scene))
        return engines[-1]

    yield make
    for e in engines:
        e.close()
