"""Baked lighting in the MuJoCo renderer: RGB changes, nothing else does."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from grade_sim.config.scenario import Stream
from grade_sim.engine.mujoco.engine import MujocoEngine
from grade_sim.scene import Scene, build_scene
from scenario_kit import small_scenario

ALL_STREAMS = frozenset(
    {Stream.RGB, Stream.DEPTH, Stream.INSTANCE, Stream.SEMANTIC, Stream.NORMALS, Stream.FLOW}
)
COARSE_BAKE = {"texel_m": 0.3, "light_samples": 2, "hemisphere_samples": 4}


def _scene(baked: bool) -> Scene:
    lights = {"count": 2, "bake": {"enabled": baked, **COARSE_BAKE}}
    return build_scene(small_scenario(people={"count": 2}, lights=lights))


@pytest.mark.slow
def test_the_bake_changes_rgb_only(
    engine_of: Callable[[Scene], MujocoEngine], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GRADE_BAKE_CACHE", str(tmp_path))
    plain, baked = _scene(False), _scene(True)
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
