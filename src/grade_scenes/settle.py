"""Physics check of a scene file: load it into the simulator's tabletop world and let it settle.

The objects start exactly in their stable poses; after `duration_s` of MuJoCo physics (the
simulator's own model builder, timestep and contacts) each object's centre must have moved
less than the tolerance (SceneReplica's scenes must stay as generated).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import mujoco
import numpy as np

from grade_sim.config.scenario import (
    EnvironmentConfig,
    EnvironmentKind,
    FlyingObjectsConfig,
    PeopleConfig,
    RecordConfig,
    RobotConfig,
    Scenario,
    TabletopEnvironmentConfig,
)
from grade_sim.engine.mujoco.builder import build_model
from grade_sim.scene import build_scene


@dataclass(frozen=True)
class SettleResult:
    names: tuple[str, ...]
    displacement_m: tuple[float, ...]  # per object, start -> end of the settling time

    @property
    def max_displacement_m(self) -> float:
        return max(self.displacement_m, default=0.0)


def tabletop_scenario(scene_file: str | Path, duration_s: float = 2.0) -> Scenario:
    """A scenario with the tabletop scene and one camera robot above the robot base."""
    robot = RobotConfig(name="camera_rig", start_xyz=(0.0, 0.0, 1.45))
    return Scenario(
        duration_s=duration_s,
        bootstrap_s=0.0,
        environment=EnvironmentConfig(
            type=EnvironmentKind.TABLETOP,
            tabletop=TabletopEnvironmentConfig(scene=str(Path(scene_file).resolve())),
        ),
        people=PeopleConfig(count=0),
        flying_objects=FlyingObjectsConfig(count=0),
        robots=(robot,),
        record=RecordConfig(bag=False, ground_truth=False, experiment_record=False),
    )


def settle(scene_file: str | Path, duration_s: float = 2.0) -> SettleResult:
    """Step the scene's physics for duration_s and measure how far each object moved."""
    scene = build_scene(tabletop_scenario(scene_file, duration_s))
    built = build_model(scene)
    data = mujoco.MjData(built.model)
    mujoco.mj_forward(built.model, data)
    bodies = [built.model.body(b.name).id for b in scene.world.free_bodies]
    start = data.xpos[bodies].copy()
    for _ in range(round(duration_s / built.model.opt.timestep)):
        mujoco.mj_step(built.model, data)
    moved = np.linalg.norm(data.xpos[bodies] - start, axis=1)
    return SettleResult(
        tuple(b.name for b in scene.world.free_bodies), tuple(float(m) for m in moved)
    )
