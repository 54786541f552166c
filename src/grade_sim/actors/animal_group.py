"""Animals as an actor group: twelve rigid parts each (PART_NAMES), on planned walks and runs.

Their coats are neutral materials: plain coat and points colours, zebra stripes as cube
textures (the engine looks a cube texture up by the direction from the geom's centre): faces
striped by columns give the barrel (x forward) upright bands on its flanks; faces striped by
rows ring the neck, head and legs (capsules along their local z), as a zebra's are. Stripe
widths are drawn from the generator of the animal's stripe pattern, so every zebra differs and
the same seed gives the same coat.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np
from numpy.typing import NDArray

from grade_common.types import FloatArray
from grade_people.crowd import RobotObstacle
from grade_people.people import PersonSpec, PersonTimeline
from grade_sim.actors.animal_placement import (
    AnimalDiscs,
    animal_discs,
    animal_trace,
    people_animal_collisions,
)
from grade_sim.actors.animals import (
    ANIMAL_STATE_KEYS,
    PART_NAMES,
    AnimalSpec,
    AnimalTimeline,
    animal_part_poses,
)
from grade_sim.actors.geometry import (
    ActorGeometry,
    ActorMaterial,
    Box3D,
    CubeTexture,
    InstanceInfo,
    RigidPart,
    ShadowCaster,
    heading_rotation,
    significant,
)
from grade_sim.actors.group import PlannedGroup
from grade_sim.actors.placement import Collision

TEXTURE_PX = 128
BARREL_STRIPES = 7  # dark bands across a cube face
LIMB_STRIPES = 4  # dark rings across a cube face
COAT_SPECULAR = 0.05
# An animal's contact shadow: a disc this wide under a body this tall.
SHADOW_RADIUS_M = 0.55
SHADOW_HEIGHT_M = 1.0


def _stripe_rows(n_px: int, n_stripes: int, seed: int) -> NDArray[np.bool_]:
    """(n_px,) booleans: True on the dark stripes, widths varying a little band to band."""
    rng = np.random.default_rng(seed)
    edges = np.cumsum(rng.uniform(0.7, 1.3, 2 * n_stripes))
    edges = edges / edges[-1] * n_px
    band = np.searchsorted(edges, np.arange(n_px) + 0.5)
    dark: NDArray[np.bool_] = (band % 2) == 1
    return dark


def coat_materials(animal: AnimalSpec) -> tuple[tuple[ActorMaterial, ...], tuple[str, ...]]:
    """The materials of `animal` (in the order the engine adds them) and the one each part
    wears (PART_NAMES order)."""
    base = f"animal_{animal.instance_id}"
    plain = ActorMaterial(f"{base}_coat", COAT_SPECULAR, rgba=(*animal.coat_rgb, 1.0))
    dark = ActorMaterial(f"{base}_points", COAT_SPECULAR, rgba=(*animal.points_rgb, 1.0))
    if not animal.anatomy.striped:
        plain_names = tuple(
            dark.name if use_points else plain.name
            for use_points in animal.part_uses_points_color()
        )
        return (plain, dark), plain_names
    # A cube texture is six square faces stacked vertically: the barrel's faces are striped
    # by columns (upright bands on the flanks), the limbs' by rows (rings).
    striped = {}
    for part_kind, count, by_rows in (
        ("barrel", BARREL_STRIPES, False),
        ("limb", LIMB_STRIPES, True),
    ):
        rows = _stripe_rows(TEXTURE_PX, count, animal.instance_id * 2 + int(by_rows))
        face = np.broadcast_to(
            rows[:, None] if by_rows else rows[None, :], (TEXTURE_PX, TEXTURE_PX)
        )
        texture = CubeTexture(
            f"{base}_{part_kind}_tex",
            np.concatenate([face] * 6, axis=0),
            animal.coat_rgb,
            animal.points_rgb,
        )
        striped[part_kind] = ActorMaterial(f"{base}_{part_kind}", COAT_SPECULAR, texture=texture)
    names = []
    for part, use_points in zip(PART_NAMES, animal.part_uses_points_color(), strict=True):
        if part == "body":
            names.append(striped["barrel"].name)
        elif use_points:
            names.append(dark.name)
        else:
            names.append(striped["limb"].name)
    return (plain, dark, striped["barrel"], striped["limb"]), tuple(names)


@dataclass(frozen=True, kw_only=True)
class Animals(PlannedGroup[AnimalSpec, AnimalTimeline]):
    """The animals of a scene with their planned timelines; people step around them."""

    dt_s: float = 1.0
    clearance_m: float = 0.0  # people's scripted paths keep this far from the animals' parts

    kind = "animal"

    def body_names(self) -> tuple[str, ...]:
        return tuple(f"{a.name}/{part}" for a in self.specs for part in PART_NAMES)

    def body_labels(self) -> tuple[str, ...]:
        return tuple(f"{a.kind.value} {a.name}" for a in self.specs for _ in PART_NAMES)

    def instances(self) -> tuple[InstanceInfo, ...]:
        return tuple(InstanceInfo(a.instance_id, a.name, a.kind.value) for a in self.specs)

    def geometry(self) -> tuple[ActorGeometry, ...]:
        out: list[ActorGeometry] = []
        for animal in self.specs:
            materials, worn = coat_materials(animal)
            out += materials
            for part_name, (shape, size3), material in zip(
                PART_NAMES, animal.part_shapes(), worn, strict=True
            ):
                out.append(
                    RigidPart(
                        f"{animal.name}/{part_name}",
                        animal.instance_id,
                        shape,
                        tuple(significant(size3, 6)),
                        None,
                        material,
                    )
                )
        return tuple(out)

    def poses(self, step: int) -> tuple[FloatArray, FloatArray]:
        k = min(step, self.n_steps - 1)
        pos, quat = animal_part_poses(self.specs, self.timelines, k)
        return pos.reshape(-1, 3), quat.reshape(-1, 4)

    def boxes(self, step: int, positions: FloatArray) -> list[Box3D]:
        """The tight box about the barrel, padded by its half width, down to the ground."""
        k = min(step, self.n_steps - 1)
        boxes = []
        n_parts = len(PART_NAMES)
        for i, (animal, atl) in enumerate(zip(self.specs, self.timelines, strict=True)):
            pts = positions[i * n_parts : (i + 1) * n_parts]
            rot = heading_rotation(atl.heading_rad[k])
            local = (pts - pts[0]) @ rot  # about the barrel's centre, in the heading frame
            pad = animal.anatomy.body_half[1] * animal.scale  # the barrel's half width
            lo = local.min(axis=0) - pad
            hi = local.max(axis=0) + pad
            lo[2] = -pts[0, 2]  # hooves on the ground
            boxes.append(Box3D(animal.instance_id, pts[0] + rot @ ((lo + hi) / 2), hi - lo, rot))
        return boxes

    def shadow_casters(self) -> tuple[ShadowCaster, ...]:
        return tuple(
            ShadowCaster(f"{a.name}/{PART_NAMES[0]}", a.name, SHADOW_RADIUS_M, SHADOW_HEIGHT_M)
            for a in self.specs
        )

    @cached_property
    def discs(self) -> AnimalDiscs:
        """The animals as people avoid them (discs over their footprints at every step)."""
        return animal_discs(self.specs, self.timelines, self.n_steps, self.dt_s)

    def obstacles(self, step: int) -> list[RobotObstacle]:
        # Animals' timelines are known in advance: they are discs that never yield.
        return self.discs(step) if self.specs else []

    def collisions_with(
        self, people: Sequence[PersonSpec], timelines: Sequence[PersonTimeline]
    ) -> list[Collision]:
        """First contacts of people's traces with the animals' parts (grown by clearance_m)."""
        if not self.specs:
            return []
        traces = [
            animal_trace(a, t, self.n_steps, self.clearance_m)
            for a, t in zip(self.specs, self.timelines, strict=True)
        ]
        return people_animal_collisions(traces, people, timelines)

    def record(self, n_steps: int) -> dict[str, np.ndarray]:
        return {
            f"animal/{a.name}/{key}": getattr(tl, key)[:n_steps]
            for a, tl in zip(self.specs, self.timelines, strict=True)
            for key in ANIMAL_STATE_KEYS
        }
