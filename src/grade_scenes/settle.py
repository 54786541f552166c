"""Physics check of a scene file: load it into the simulator's tabletop world and let it settle.

The objects start exactly in their stable poses; after `duration_s` of MuJoCo physics (the
simulator's own model builder, timestep and contacts) each object's centre must have moved
less than DRIFT_TOLERANCE_M and its up axis must have tilted less than TILT_TOLERANCE_DEG
(SceneReplica's scenes must stay as generated). Drift alone misses marginal poses: a lemon
resting 0.5 mm inside its contact face rolls 10 deg and still moves its centre under 5 mm.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import mujoco
import numpy as np

from grade_common.types import FloatArray
from grade_people.config import PeopleConfig
from grade_sim.config.scenario import (
    EnvironmentConfig,
    EnvironmentKind,
    FlyingObjectsConfig,
    RecordConfig,
    RobotConfig,
    Scenario,
    TabletopEnvironmentConfig,
)
from grade_sim.engine.mujoco.builder import build_model
from grade_sim.scene import build_scene

DRIFT_TOLERANCE_M = 0.005  # objects may move less than this after settling
TILT_TOLERANCE_DEG = 2.0  # ... and tilt less than this


@dataclass(frozen=True)
class SettleResult:
    names: tuple[str, ...]
    displacement_m: tuple[float, ...]  # per object, start -> end of the settling time
    tilt_deg: tuple[float, ...]  # per object: angle between its start and end up axes

    @property
    def max_displacement_m(self) -> float:
        return max(self.displacement_m, default=0.0)

    @property
    def max_tilt_deg(self) -> float:
        return max(self.tilt_deg, default=0.0)

    @property
    def stays(self) -> bool:
        """Whether every object stayed put (drift and tilt under the tolerances)."""
        return (
            self.max_displacement_m < DRIFT_TOLERANCE_M and self.max_tilt_deg < TILT_TOLERANCE_DEG
        )


def tilt_deg(rotation_start: FloatArray, rotation_end: FloatArray) -> FloatArray:
    """Angle (deg) between the world's up axis seen in the object frame at start and at end:
    the tilt of a resting object, blind to a turn about the vertical. Batched over (..., 3, 3)."""
    up_start = rotation_start[..., 2, :]  # row 2 of R_world_object = world z in object axes
    up_end = rotation_end[..., 2, :]
    cos = np.clip(np.sum(up_start * up_end, axis=-1), -1.0, 1.0)
    out: FloatArray = np.degrees(np.arccos(cos))
    return out


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
    start_rot = data.xmat[bodies].reshape(-1, 3, 3).copy()
    for _ in range(round(duration_s / built.model.opt.timestep)):
        mujoco.mj_step(built.model, data)
    moved = np.linalg.norm(data.xpos[bodies] - start, axis=1)
    tilt = tilt_deg(start_rot, data.xmat[bodies].reshape(-1, 3, 3))
    return SettleResult(
        tuple(b.name for b in scene.world.free_bodies),
        tuple(float(m) for m in moved),
        tuple(float(a) for a in tilt),
    )
