"""Contact shadows: soft dark patches on the ground under people and animals (RGB only).

The baked light covers the static world; moving things get no shadow from it. A few flat,
see-through octagons of growing size under each actor (their alpha adds up towards the centre)
darken the ground where a foot or a hoof meets it. They are added to the MuJoCo scene after
`mjv_updateScene` and removed before the segmentation pass, so masks, depth, normals and flow
never see them (the engine takes depth from the exact pass whenever they are drawn).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from grade_common.types import FloatArray
from grade_sim.actors.animals import PART_NAMES as ANIMAL_PART_NAMES
from grade_sim.scene import Scene

PERSON_RADIUS_M = 0.35
ANIMAL_RADIUS_M = 0.6
# Rings from the outside in: radius share and alpha of each (the centre gets their sum).
RINGS: tuple[tuple[float, float], ...] = ((1.0, 0.16),)
LIFT_M = 0.004  # above the ground, so the disc wins the depth test against the floor
THICKNESS_M = 0.0005
# Each ring is two squares turned 45 deg apart (an octagon): MuJoCo tessellates cylinders and
# ellipsoids finely, and 60 of them cost ~10 ms a frame; boxes cost nothing measurable.
_SQUARE_SHARE = 0.85
_TURNS = tuple(
    np.array([[np.cos(a), -np.sin(a), 0.0], [np.sin(a), np.cos(a), 0.0], [0.0, 0.0, 1.0]]).ravel()
    for a in (0.0, np.pi / 4)
)


@dataclass(frozen=True)
class ContactShadows:
    """The bodies whose xy a shadow follows, its radius, and the ground height function."""

    body_ids: NDArray[np.int64]
    radius_m: FloatArray
    scene: Scene

    @classmethod
    def of_scene(cls, scene: Scene, model: Any) -> ContactShadows:
        import mujoco

        names = [f"{p.name}/{p.body_names()[0]}" for p in scene.people]
        radii = [PERSON_RADIUS_M * p.scale for p in scene.people]
        names += [f"{a.name}/{ANIMAL_PART_NAMES[0]}" for a in scene.animals]
        radii += [ANIMAL_RADIUS_M] * len(scene.animals)
        ids = [mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, n) for n in names]
        return cls(np.asarray(ids, np.int64), np.asarray(radii, np.float64), scene)

    def add_to(self, mj: Any, vscene: Any, data: Any) -> None:
        """Append the discs to `vscene` (as many as fit in its geom buffer)."""
        xy = np.asarray(data.xpos)[self.body_ids, :2]
        ground = self.scene.world.terrain_height(xy[:, 0], xy[:, 1])
        for (x, y), z, r in zip(xy, np.atleast_1d(ground), self.radius_m, strict=True):
            for (share, alpha), turn in itertools.product(RINGS, _TURNS):
                if vscene.ngeom >= vscene.maxgeom:
                    return
                geom = vscene.geoms[vscene.ngeom]
                half = r * share * _SQUARE_SHARE
                mj.mjv_initGeom(
                    geom,
                    mj.mjtGeom.mjGEOM_BOX,
                    np.array([half, half, THICKNESS_M]),
                    np.array([x, y, float(z) + LIFT_M]),
                    turn,
                    np.array([0.0, 0.0, 0.0, alpha], np.float32),
                )
                geom.category = mj.mjtCatBit.mjCAT_DECOR
                geom.emission = 0.0
                geom.specular = 0.0
                vscene.ngeom += 1
