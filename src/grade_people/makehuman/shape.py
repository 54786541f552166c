"""A person's MakeHuman shape: seeded phenotype draw and the macro targets it blends.

Core module (numpy only). MakeHuman's macro model: every macro target is named after the
phenotype corners it belongs to (sex, age, muscle, weight; plus height, proportions or
ancestry) and is weighted by the product of those corners' interpolation weights, exactly as
MakeHuman's macro modifiers do. The blended mesh is then converted to grade's axes (x forward,
y left, z up, metres), stood on the floor and scaled to the person's stature.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from grade_common.types import FloatArray
from grade_people.makehuman.assets import AGES, ANCESTRIES, LEVELS

AGE_RANGE_YEARS = (16.0, 80.0)
# Adult stature by sex (m): means and standard deviations of adult populations pooled over
# regions (NCD-RisC 2016: men ~1.71-1.78, women ~1.58-1.65; within-sex SD ~0.07).
STATURE_M = {"female": (1.63, 0.065), "male": (1.76, 0.07)}


@dataclass(frozen=True)
class MakeHumanShape:
    """Seeded phenotype of one person (MakeHuman's macro parameters)."""

    male: float  # 0 female .. 1 male
    age_years: float  # 16 .. 80
    muscle: float  # 0 .. 1, 0.5 average
    weight: float  # 0 .. 1, 0.5 average
    height: float  # 0 .. 1: MakeHuman's height shape (limb/torso proportions of tall people)
    proportions: float  # 0 .. 1, 0.5 neutral, > 0.5 towards "ideal", < 0.5 "uncommon"
    ancestry: tuple[float, float, float]  # african, asian, caucasian weights (sum 1)
    height_m: float  # stature the mesh is scaled to


# The average body: the texture painter's and the decimation's reference.
REFERENCE_SHAPE = MakeHumanShape(0.5, 30.0, 0.5, 0.5, 0.5, 0.5, (1 / 3, 1 / 3, 1 / 3), 1.75)


def random_shape(height_range_m: tuple[float, float], rng: np.random.Generator) -> MakeHumanShape:
    """A phenotype drawn from `rng`: sex, age, build and stature from adult distributions.

    Stature: the sex's normal distribution, redrawn into `height_range_m` (people.height_m).
    """
    male = bool(rng.random() < 0.5)
    mean, sd = STATURE_M["male" if male else "female"]
    lo, hi = height_range_m
    height_m = float(np.clip(rng.normal(mean, sd), lo, hi))
    for _ in range(8):  # redraw a few times before clipping, so the range's ends stay rare
        if lo < height_m < hi:
            break
        height_m = float(np.clip(rng.normal(mean, sd), lo, hi))
    age = float(AGE_RANGE_YEARS[0] + (AGE_RANGE_YEARS[1] - AGE_RANGE_YEARS[0]) * rng.beta(1.4, 2.0))
    # Weight rises a little with age; muscle falls after 40 (population trends, not exact).
    weight = float(np.clip(rng.normal(0.48 + 0.002 * (age - 30.0), 0.16), 0.08, 0.95))
    muscle = float(
        np.clip(
            rng.normal(0.5 + (0.08 if male else -0.04) - 0.002 * max(age - 40.0, 0), 0.13), 0.1, 0.9
        )
    )
    z = (height_m - mean) / sd
    height = float(np.clip(0.5 + 0.18 * z, 0.1, 0.9))
    proportions = float(np.clip(rng.normal(0.6, 0.15), 0.2, 1.0))
    anc = rng.dirichlet([0.35, 0.35, 0.35])
    sex = float(rng.uniform(0.9, 1.0) if male else rng.uniform(0.0, 0.1))
    return MakeHumanShape(
        male=sex,
        age_years=age,
        muscle=muscle,
        weight=weight,
        height=height,
        proportions=proportions,
        ancestry=(float(anc[0]), float(anc[1]), float(anc[2])),
        height_m=height_m,
    )


def _age_weights(age_years: float) -> dict[str, float]:
    """MakeHuman's age axis: 0 -> 1 year, 0.1875 -> 11, 0.5 -> 25, 1 -> 90; targets at
    child (0.1875), young (0.5), old (1)."""
    if age_years < 25.0:
        v = 0.1875 + (max(age_years, 11.0) - 11.0) / 14.0 * (0.5 - 0.1875)
        young = (v - 0.1875) / (0.5 - 0.1875)
        return {"child": 1.0 - young, "young": young, "old": 0.0}
    old = min((age_years - 25.0) / 65.0, 1.0)
    return {"child": 0.0, "young": 1.0 - old, "old": old}


def _level_weights(v: float) -> dict[str, float]:
    """min / average / max weights of a 0..1 slider with the average at 0.5."""
    if v < 0.5:
        w = (0.5 - v) * 2.0
        return {"min": w, "average": 1.0 - w, "max": 0.0}
    w = (v - 0.5) * 2.0
    return {"min": 0.0, "average": 1.0 - w, "max": w}


def target_weights(shape: MakeHumanShape) -> dict[str, float]:
    """Weight of every macro target (assets.target_names) for `shape`; zeros left out."""
    sex = {"female": 1.0 - shape.male, "male": shape.male}
    age = _age_weights(shape.age_years)
    mus, wei = _level_weights(shape.muscle), _level_weights(shape.weight)
    hgt = {"max": max(shape.height - 0.5, 0.0) * 2.0, "min": max(0.5 - shape.height, 0.0) * 2.0}
    prop = {
        "ideal": max(shape.proportions - 0.5, 0.0) * 2.0,
        "uncommon": max(0.5 - shape.proportions, 0.0) * 2.0,
    }
    out: dict[str, float] = {}
    for g, wg in sex.items():
        for a in AGES:
            wa = wg * age[a]
            if wa == 0.0:
                continue
            for r, wr in zip(ANCESTRIES, shape.ancestry, strict=True):
                out[f"{r}-{g}-{a}"] = wa * wr
            for m in LEVELS:
                for w in LEVELS:
                    wb = wa * mus[m] * wei[w]
                    if wb == 0.0:
                        continue
                    base = f"{g}-{a}-{m}muscle-{w}weight"
                    out[f"universal-{base}"] = wb
                    for h, wh in hgt.items():
                        out[f"height/{base}-{h}height"] = wb * wh
                    for p, wp in prop.items():
                        out[f"proportions/{base}-{p}proportions"] = wb * wp
    return {k: v for k, v in out.items() if v > 0.0}


# MakeHuman (x: the body's left, y up, z forward; decimetres) -> grade (x forward, y left, z up;
# metres): a cyclic permutation, so handedness and face orientation are kept.
MH_TO_GRADE = np.array([[0.0, 0.0, 1.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]) * 0.1


def shaped_vertices_mh(
    base: FloatArray,
    targets: Mapping[str, tuple[NDArray[np.int32], NDArray[np.float32]]],
    shape: MakeHumanShape,
) -> FloatArray:
    """(N, 3) base mesh with the shape's targets (name -> vertex indices, offsets) applied,
    in MakeHuman units and axes."""
    v = base.copy()
    for name, w in sorted(target_weights(shape).items()):
        idx, off = targets[name]
        v[idx] += w * off.astype(np.float64)
    return v


def to_grade_axes(v_mh: FloatArray) -> FloatArray:
    """MakeHuman coordinates (decimetres, y up) -> grade's (metres, z up, facing +x)."""
    out: FloatArray = v_mh @ MH_TO_GRADE.T
    return out
