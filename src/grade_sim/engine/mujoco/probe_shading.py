"""Moving things shaded by the baked light probes at their position (RGB only).

The baked static world is drawn emissive; people, animals, robots and flying objects keep the
live lights, which have no shadows and no bounce. After `mjv_updateScene`, the colour of each of
their scene geoms (and skins) is scaled by the probe gain at its centre
(`bake.probes.ProbeGrid.gain_at`), so a person in a shadowed corner comes out dark and one under
a lamp lit. Only `rgba[:3]` of the scene's copies changes: the segmentation pass draws id
colours and ignores it, and the next `mjv_updateScene` starts afresh, so depth, masks, normals
and flow are untouched.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from grade_sim.engine.bake.probes import ProbeGrid
from grade_sim.world.model import World


@dataclass(frozen=True)
class ProbeShading:
    """Which model geoms move (not on the world body), and the probes that shade them."""

    moving_geom: NDArray[np.bool_]  # by geom id
    probes: ProbeGrid
    world: World

    @classmethod
    def of_model(cls, model: Any, probes: ProbeGrid, world: World) -> ProbeShading:
        moving = np.asarray(model.geom_bodyid) != 0
        return cls(moving, probes, world)

    def apply(self, mj: Any, vscene: Any) -> None:
        """Scale the colour of every moving geom and skin in `vscene` by its probe gain."""
        geom_type, skin_type = int(mj.mjtObj.mjOBJ_GEOM), int(mj.mjtObj.mjOBJ_SKIN)
        picked = []
        for i in range(vscene.ngeom):
            g = vscene.geoms[i]
            kind = g.objtype
            if kind == skin_type or (kind == geom_type and self.moving_geom[g.objid]):
                picked.append(g)
        if not picked:
            return
        centres = np.array([g.pos for g in picked], dtype=np.float64)
        gains = self.probes.gain_at(centres, self.world).astype(np.float32)
        for g, gain in zip(picked, gains, strict=True):
            g.rgba[:3] = g.rgba[:3] * gain
