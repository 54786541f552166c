"""The MuJoCo model builder records the instance of every geom it adds."""

from __future__ import annotations

from collections.abc import Callable

import mujoco
import numpy as np

from grade_sim.engine.mujoco.builder import build_model
from grade_sim.scene import Scene

TARGET_ID, ROBOT_ID = 1, 2


def test_each_geom_belongs_to_its_instance(box_scene: Callable[..., Scene]) -> None:
    built = build_model(box_scene())
    model = built.model
    assert built.geom_instance_ids.shape == (model.ngeom,)
    box = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_GEOM, "i1:target")
    assert built.geom_instance_ids[box] == TARGET_ID
    robot_body = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, "uav1/base_link")
    robot_geoms = model.geom_bodyid == robot_body
    assert robot_geoms.sum() == 5  # body box and four rotors
    assert np.all(built.geom_instance_ids[robot_geoms] == ROBOT_ID)
    assert set(built.geom_instance_ids.tolist()) == {TARGET_ID, ROBOT_ID}
