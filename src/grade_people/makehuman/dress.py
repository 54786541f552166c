"""A MakeHuman person (people.body: makehuman): seeded shape and look on a PersonSpec."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from grade_people.body_mesh import Clothing, Region
from grade_people.makehuman.body import makehuman_body
from grade_people.makehuman.look import Top, random_outfit
from grade_people.makehuman.shape import MakeHumanShape, random_shape
from grade_people.people import PersonSpec
from grade_people.skeleton import BodyParams


def makehuman_params(shape: MakeHumanShape) -> BodyParams:
    """The skeleton parameters of a MakeHuman body: its stature, and its rest offsets and face
    points measured on its mesh (the proportion fields are unused and neutral)."""
    body = makehuman_body(shape)
    return BodyParams(
        height_m=shape.height_m,
        build=float(np.clip(0.5 * shape.weight + 0.5 * shape.muscle, 0.0, 1.0)),
        leg_ratio=1.0,
        shoulder_ratio=1.0,
        hip_ratio=1.0,
        shape=shape,
        rest_offsets_m=tuple(float(v) for v in body.rest_offsets().ravel()),
        face_m=tuple(float(v) for v in body.face_points.ravel()),
    )


def dress_makehuman(
    spec: PersonSpec, height_range_m: tuple[float, float], rng: np.random.Generator
) -> PersonSpec:
    """`spec` with a seeded MakeHuman shape (its stature replaces spec.height_m) and outfit."""
    shape = random_shape(height_range_m, rng)
    outfit = random_outfit(shape, rng)
    body = makehuman_params(shape)
    colors = {
        Region.HAIR: outfit.hair_rgb,
        Region.SKIN: outfit.skin,
        Region.SHIRT: outfit.top_rgb,
        Region.TROUSERS: outfit.bottom_rgb,
        Region.SHOES: outfit.shoes_rgb,
    }
    clothing = Clothing(colors, outfit.top is not Top.TSHIRT, False, outfit)
    return replace(spec, height_m=shape.height_m, body=body, clothing=clothing)
