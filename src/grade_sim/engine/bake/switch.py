"""A scene with the baked lighting turned on or off (everything else unchanged)."""

from __future__ import annotations

import dataclasses

from grade_sim.scene import Scene


def with_bake(scene: Scene, enabled: bool) -> Scene:
    """`scene` whose scenario has lights.bake.enabled = `enabled`.

    The Cycles re-render uses it off: it lights the world itself, and baked textures would
    light it twice.
    """
    sc = scene.scenario
    bake = dataclasses.replace(sc.lights.bake, enabled=enabled)
    scenario = dataclasses.replace(sc, lights=dataclasses.replace(sc.lights, bake=bake))
    return dataclasses.replace(scene, scenario=scenario)
