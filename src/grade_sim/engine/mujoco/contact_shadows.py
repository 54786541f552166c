"""Contact shadows: soft dark patches on the ground under people and animals (RGB only),
cast away from the light that lights each of them most.

The baked light covers the static world; moving things get no shadow from it. Under each actor a
few flat, see-through octagons are drawn (their alpha adds up towards the middle): a round one
where the feet meet the ground, and longer ones stretched away from the actor's dominant light
(the light whose unshadowed spot formula is strongest at the actor), as long as the shadow of a
person of that height would be under it, and darker the larger that light's share of all the
light there. An octagon is two boxes turned 45 deg apart; stretching it into an ellipse is a
scale in its drawing matrix (the boxes are black and unlit, so their normals do not matter).
They are added to the MuJoCo scene after `mjv_updateScene` and removed before the segmentation
pass, so masks, depth, normals and flow never see them (the engine takes depth from the exact
pass whenever they are drawn).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from grade_common.types import FloatArray
from grade_sim.actors.animals import PART_NAMES as ANIMAL_PART_NAMES
from grade_sim.scene import Scene
from grade_sim.world.model import Light

PERSON_RADIUS_M = 0.3
PERSON_HEIGHT_M = 1.75
ANIMAL_RADIUS_M = 0.55
ANIMAL_HEIGHT_M = 1.0
# The round patch at the feet: (radius share, alpha) per layer, outside in.
CONTACT_LAYERS: tuple[tuple[float, float], ...] = ((0.75, 0.13),)
# The cast patch: (share of the shadow's length, alpha at full share of the light) per layer.
# One layer each: every see-through box costs fill on the CPU rasteriser (measured: two layers
# each, 160 boxes for 20 people, cost about 2.5 times one layer each).
CAST_LAYERS: tuple[tuple[float, float], ...] = ((1.0, 0.14),)
MAX_SHADOW_M = 1.6  # the longest cast patch (a low light far away)
LIFT_M = 0.004  # above the ground, so the patch wins the depth test against the floor
THICKNESS_M = 0.0005
_SQUARE_SHARE = 0.85  # a square's half side per octagon radius
_TURN_45 = np.array(
    [
        [math.cos(math.pi / 4), -math.sin(math.pi / 4), 0.0],
        [math.sin(math.pi / 4), math.cos(math.pi / 4), 0.0],
        [0.0, 0.0, 1.0],
    ]
)


@dataclass(frozen=True)
class LightArrays:
    """The scene's lights as arrays, for the spot formula at many points at once."""

    position: FloatArray  # (n, 3)
    aim: FloatArray  # (n, 3) unit
    brightness: FloatArray  # (n,) mean diffuse
    cos_cutoff: FloatArray
    exponent: FloatArray
    attenuation: FloatArray  # (n, 3)
    directional: NDArray[np.bool_]

    @classmethod
    def of(cls, lights: tuple[Light, ...]) -> LightArrays:
        aim = np.array([li.direction_xyz for li in lights], dtype=np.float64).reshape(-1, 3)
        aim /= np.maximum(np.linalg.norm(aim, axis=1, keepdims=True), 1e-12)
        return cls(
            np.array([li.position_xyz for li in lights], dtype=np.float64).reshape(-1, 3),
            aim,
            np.array([np.mean(li.diffuse_rgb) for li in lights], dtype=np.float64),
            np.cos(np.radians([li.cutoff_deg for li in lights])),
            np.array([li.exponent for li in lights], dtype=np.float64),
            np.array([li.attenuation for li in lights], dtype=np.float64).reshape(-1, 3),
            np.array([li.directional for li in lights], dtype=bool),
        )

    def towards(self, points: FloatArray) -> tuple[FloatArray, FloatArray]:
        """(p, n) light reaching points (spot formula on an upward surface, no shadows) and
        (p, n, 3) unit vectors from the points to each light."""
        to = self.position[None, :, :] - points[:, None, :]
        dist = np.linalg.norm(to, axis=2)
        unit = to / np.maximum(dist, 1e-9)[..., None]
        unit = np.where(self.directional[None, :, None], -self.aim[None, :, :], unit)
        cos_spot = np.einsum("pnk,nk->pn", -unit, self.aim)
        spot = np.where(
            cos_spot >= self.cos_cutoff[None, :],
            np.maximum(cos_spot, 0.0) ** self.exponent[None, :],
            0.0,
        )
        k0, k1, k2 = (self.attenuation[None, :, i] for i in range(3))
        atten = 1.0 / np.maximum(k0 + k1 * dist + k2 * dist * dist, 1e-9)
        atten = np.where(self.directional[None, :], 1.0, atten)
        spot = np.where(self.directional[None, :], 1.0, spot)
        weight = self.brightness[None, :] * np.maximum(unit[..., 2], 0.0) * spot * atten
        return weight, unit


@dataclass(frozen=True)
class ContactShadows:
    """The bodies whose xy a shadow follows, their radius and height, the lights and ground."""

    body_ids: NDArray[np.int64]
    radius_m: FloatArray
    height_m: FloatArray
    lights: LightArrays
    ambient: float
    scene: Scene

    @classmethod
    def of_scene(cls, scene: Scene, model: Any) -> ContactShadows:
        import mujoco

        names = [f"{p.name}/{p.body_names()[0]}" for p in scene.people]
        radii = [PERSON_RADIUS_M * p.scale for p in scene.people]
        heights = [PERSON_HEIGHT_M * p.scale for p in scene.people]
        names += [f"{a.name}/{ANIMAL_PART_NAMES[0]}" for a in scene.animals]
        radii += [ANIMAL_RADIUS_M] * len(scene.animals)
        heights += [ANIMAL_HEIGHT_M] * len(scene.animals)
        ids = [mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, n) for n in names]
        ambience = scene.world.ambience
        return cls(
            np.asarray(ids, np.int64),
            np.asarray(radii, np.float64),
            np.asarray(heights, np.float64),
            LightArrays.of(tuple(scene.world.lights)),
            float(np.mean(ambience.ambient_rgb)),
            scene,
        )

    def patches(self, xy: FloatArray) -> list[tuple[FloatArray, FloatArray, float]]:
        """(centre xyz, 3x3 drawing matrix of a unit-radius octagon, alpha) of every patch for
        actors at `xy` ((n, 2)), in drawing order."""
        ground = np.atleast_1d(self.scene.world.terrain_height(xy[:, 0], xy[:, 1]))
        feet = np.column_stack([xy, ground])
        out: list[tuple[FloatArray, FloatArray, float]] = []
        if len(self.lights.position):
            mid = feet + np.column_stack([np.zeros((len(xy), 2)), 0.5 * self.height_m])
            weight, unit = self.lights.towards(mid)
            dominant = np.argmax(weight, axis=1)
        for k, (centre, r, h) in enumerate(zip(feet, self.radius_m, self.height_m, strict=True)):
            lifted = centre + np.array([0.0, 0.0, LIFT_M])
            for share, alpha in CONTACT_LAYERS:
                out.append((lifted, np.diag([r * share, r * share, 1.0]), alpha))
            if not len(self.lights.position):
                continue
            w = weight[k]
            best = int(dominant[k])
            if w[best] <= 0.0:
                continue
            light_share = float(w[best] / (w.sum() + self.ambient))
            to_light = unit[k, best]
            flat = math.hypot(to_light[0], to_light[1])
            if flat < 1e-6:  # straight overhead: the round patch is the shadow
                continue
            away = -to_light[:2] / flat
            length = min(MAX_SHADOW_M, h * flat / max(to_light[2], 0.15))
            rotation = np.array([[away[0], -away[1], 0.0], [away[1], away[0], 0.0], [0, 0, 1.0]])
            for share, alpha in CAST_LAYERS:
                half_long = r + 0.5 * share * length
                shift = 0.5 * share * length
                at = lifted + np.array([away[0] * shift, away[1] * shift, 0.0])
                shape = rotation @ np.diag([half_long, r * (0.8 + 0.2 * share), 1.0])
                out.append((at, shape, alpha * light_share))
        return out

    def add_to(self, mj: Any, vscene: Any, data: Any) -> None:
        """Append the patches to `vscene` (as many as fit in its geom buffer)."""
        xy = np.asarray(data.xpos)[self.body_ids, :2]
        size = np.array([_SQUARE_SHARE, _SQUARE_SHARE, THICKNESS_M])
        for centre, shape, alpha in self.patches(xy):
            if alpha <= 0.0:
                continue
            for turn in (np.eye(3), _TURN_45):
                if vscene.ngeom >= vscene.maxgeom:
                    return
                geom = vscene.geoms[vscene.ngeom]
                mj.mjv_initGeom(
                    geom,
                    mj.mjtGeom.mjGEOM_BOX,
                    size,
                    centre,
                    (shape @ turn).ravel(),
                    np.array([0.0, 0.0, 0.0, alpha], np.float32),
                )
                geom.category = mj.mjtCatBit.mjCAT_DECOR
                geom.emission = 0.0
                geom.specular = 0.0
                vscene.ngeom += 1
