"""What a MakeHuman person looks like: skin, face, hair and clothes painted into the UV layout.

Core module (numpy/OpenCV). Every texel of MakeHuman's UV layout is traced back to the point of
a reference body (the average shape, in grade's rest pose: standing, arms hanging) it covers,
once per process. A look (`Outfit`, drawn by `random_outfit`) is then painted texel by texel
from where that point lies: shoes under the ankles, trousers/shorts/skirts/dresses between the
waist and a hem height, shirts/jackets down to a sleeve length on the arms, hair on the scalp
above a hairline that depends on the style, eyes (sclera, iris, pupil) on the eyeballs, brows
above the eyes and lips around the mouth. Joint heights place every boundary, so one painting
fits every body shape. Garments take a weave from the procedural texture library
(grade_common.textures, kind fabric) and optional stripes or checks.
"""

from __future__ import annotations

import enum
import functools
from dataclasses import dataclass

import cv2
import numpy as np
from numpy.typing import NDArray

from grade_common.textures import TextureKind, TextureSpec, generate
from grade_common.types import FloatArray
from grade_people.makehuman.body import PART_EYE, MakeHumanBody, makehuman_body
from grade_people.makehuman.shape import REFERENCE_SHAPE, MakeHumanShape
from grade_people.skeleton import JOINT_INDEX

TEXTURE_PX = 1024
Rgb3 = tuple[float, float, float]


class Top(enum.IntEnum):
    TSHIRT = 0
    LONG_SLEEVE = 1
    JACKET = 2
    TANK = 3


class Bottom(enum.IntEnum):
    TROUSERS = 0
    SHORTS = 1
    SKIRT = 2
    DRESS = 3  # one piece with the top's colour, from the neckline to the hem


class Hair(enum.IntEnum):
    BALD = 0  # a fringe of hair around the back and the sides
    BUZZ = 1
    SHORT = 2
    MEDIUM = 3  # covers the ears and the nape
    LONG = 4  # down the back of the neck to the shoulder blades


class Pattern(enum.IntEnum):
    PLAIN = 0
    STRIPES = 1
    CHECKS = 2


@dataclass(frozen=True)
class Outfit:
    """Seeded look of one MakeHuman person (colours RGB in 0..1)."""

    skin: Rgb3
    hair: Hair
    hair_rgb: Rgb3
    iris_rgb: Rgb3
    lips_rgb: Rgb3
    top: Top
    top_rgb: Rgb3
    top_pattern: Pattern
    bottom: Bottom
    bottom_rgb: Rgb3
    hem: float  # skirt/dress hem: 0 at the knee .. 1 at mid-thigh
    shoes_rgb: Rgb3
    seed: int  # weave and pattern variant


# Skin reflectance from very light to very dark (sRGB, after the Fitzpatrick-scale swatches
# commonly used for rendering; interpolated).
SKIN_TONES: tuple[Rgb3, ...] = (
    (0.96, 0.84, 0.76),
    (0.92, 0.76, 0.64),
    (0.84, 0.66, 0.52),
    (0.73, 0.54, 0.40),
    (0.58, 0.40, 0.28),
    (0.42, 0.28, 0.19),
    (0.28, 0.18, 0.12),
)
HAIR_COLOURS: tuple[Rgb3, ...] = (
    (0.05, 0.04, 0.035),  # black
    (0.16, 0.10, 0.06),  # dark brown
    (0.32, 0.21, 0.12),  # brown
    (0.55, 0.40, 0.24),  # light brown
    (0.80, 0.66, 0.42),  # blond
    (0.52, 0.22, 0.10),  # auburn
)
_GREY_HAIR: Rgb3 = (0.68, 0.67, 0.65)
IRIS_COLOURS: tuple[Rgb3, ...] = (
    (0.25, 0.15, 0.08),
    (0.12, 0.07, 0.04),
    (0.30, 0.42, 0.55),
    (0.35, 0.40, 0.25),
)


def _pick(rng: np.random.Generator, table: tuple[Rgb3, ...], p: list[float] | None = None) -> Rgb3:
    w = None if p is None else np.asarray(p) / np.sum(p)
    return table[int(rng.choice(len(table), p=w))]


def _jitter(rgb: Rgb3, rng: np.random.Generator, amount: float) -> Rgb3:
    out = np.clip(np.asarray(rgb) * (1.0 + rng.uniform(-amount, amount, 3)), 0.0, 1.0)
    return (float(out[0]), float(out[1]), float(out[2]))


def random_outfit(shape: MakeHumanShape, rng: np.random.Generator) -> Outfit:
    """A look drawn from `rng`, matched to the shape (sex, age, ancestry) where people differ."""
    african, asian, caucasian = shape.ancestry
    # Skin tone index 0 (lightest) .. 6 (darkest): ancestry-weighted centre, wide spread.
    centre = 5.0 * african + 2.0 * asian + 1.2 * caucasian
    tone = float(np.clip(rng.normal(centre, 0.9), 0.0, len(SKIN_TONES) - 1.0))
    lo = int(np.floor(tone))
    hi = min(lo + 1, len(SKIN_TONES) - 1)
    t = tone - lo
    skin_arr = (1 - t) * np.asarray(SKIN_TONES[lo]) + t * np.asarray(SKIN_TONES[hi])
    skin = (float(skin_arr[0]), float(skin_arr[1]), float(skin_arr[2]))
    male = shape.male > 0.5
    dark_hair = african + asian
    hair_p = np.array([0.3 + 2 * dark_hair, 0.35, 0.2, 0.12, 0.1 * caucasian, 0.05 * caucasian])
    hair_rgb = _pick(rng, HAIR_COLOURS, list(hair_p / hair_p.sum()))
    grey = float(np.clip((shape.age_years - 40.0) / 35.0, 0.0, 1.0)) * float(rng.uniform(0.4, 1.0))
    hair_rgb = tuple(
        float((1 - grey) * c + grey * g) for c, g in zip(hair_rgb, _GREY_HAIR, strict=True)
    )  # type: ignore[assignment]
    if male:
        styles = [0.12 if shape.age_years > 40 else 0.02, 0.25, 0.45, 0.15, 0.03]
    else:
        styles = [0.0, 0.03, 0.17, 0.35, 0.45]
    hair = Hair(int(rng.choice(len(Hair), p=np.asarray(styles) / sum(styles))))
    iris = _pick(rng, IRIS_COLOURS, [0.35, 0.35 + 0.2 * dark_hair, 0.15, 0.15])
    lips_arr = np.asarray(skin) * np.array([0.92, 0.68, 0.66]) + np.array([0.06, 0.0, 0.0])
    lips = (float(lips_arr[0]), float(lips_arr[1]), float(lips_arr[2]))
    top = Top(int(rng.choice(len(Top), p=[0.38, 0.27, 0.25, 0.10])))
    bottom_p = [0.62, 0.14, 0.12, 0.12] if not male else [0.82, 0.18, 0.0, 0.0]
    bottom = Bottom(int(rng.choice(len(Bottom), p=bottom_p)))
    garment = rng.uniform(0.05, 0.92, 3)
    if rng.random() < 0.4:  # greys, navies and blacks are common
        garment = np.full(3, rng.uniform(0.06, 0.75)) * np.array([1.0, 1.0, rng.uniform(1.0, 1.25)])
    trousers = rng.uniform(0.04, 0.5, 3)
    if bottom is Bottom.TROUSERS and rng.random() < 0.45:  # jeans
        trousers = np.array([0.16, 0.22, 0.36]) * rng.uniform(0.6, 1.4)
    return Outfit(
        skin=skin,
        hair=hair,
        hair_rgb=hair_rgb,
        iris_rgb=iris,
        lips_rgb=lips,
        top=top,
        top_rgb=tuple(float(c) for c in np.clip(garment, 0, 1)),  # type: ignore[arg-type]
        top_pattern=Pattern(int(rng.choice(len(Pattern), p=[0.7, 0.18, 0.12]))),
        bottom=bottom,
        bottom_rgb=tuple(float(c) for c in np.clip(trousers, 0, 1)),  # type: ignore[arg-type]
        hem=float(rng.uniform(0.0, 1.0)),
        shoes_rgb=tuple(
            float(c) for c in rng.uniform(0.02, 0.4, 3) * (1.0 if rng.random() < 0.7 else 2.2)
        ),  # type: ignore[arg-type]
        seed=int(rng.integers(0, 2**31 - 1)),
    )


@dataclass(frozen=True)
class _Texels:
    """Texels of the layout covered by the mesh and the reference-body point of each."""

    rows: NDArray[np.int64]
    cols: NDArray[np.int64]
    xyz: FloatArray  # (T, 3) rest-pose point
    eye: NDArray[np.bool_]  # (T,) texel of an eyeball
    arm: FloatArray  # (T,) weight of the arm bones (clavicle excluded) at the texel
    uv: FloatArray  # (T, 2)
    body: MakeHumanBody


@functools.lru_cache(maxsize=1)
def _texels() -> _Texels:
    body = makehuman_body(REFERENCE_SHAPE)
    n = TEXTURE_PX
    tri_uv = body.texcoord[body.faces]  # (F, 3, 2)
    px = np.stack([tri_uv[..., 0] * n - 0.5, (1.0 - tri_uv[..., 1]) * n - 0.5], axis=-1)
    ids = np.zeros((n, n), np.int32)
    for f, pts in enumerate(np.round(px * 16).astype(np.int32)):
        cv2.fillConvexPoly(ids, pts, f + 1, lineType=cv2.LINE_8, shift=4)
    rows, cols = np.nonzero(ids)
    face = ids[rows, cols] - 1
    # Barycentric coordinates of each texel centre in its triangle (uv space).
    a, b, c = px[face, 0], px[face, 1], px[face, 2]
    p = np.stack([cols, rows], axis=1).astype(np.float64)
    v0, v1, v2 = b - a, c - a, p - a
    den = v0[:, 0] * v1[:, 1] - v1[:, 0] * v0[:, 1]
    den = np.where(np.abs(den) < 1e-12, 1e-12, den)
    l1 = (v2[:, 0] * v1[:, 1] - v1[:, 0] * v2[:, 1]) / den
    l2 = (v0[:, 0] * v2[:, 1] - v2[:, 0] * v0[:, 1]) / den
    bary = np.clip(np.stack([1 - l1 - l2, l1, l2], axis=1), 0.0, 1.0)
    bary /= bary.sum(axis=1, keepdims=True)
    corners = body.faces[face]  # (T, 3)
    xyz = np.einsum("tk,tkd->td", bary, body.vertices[corners])
    arm_j = [JOINT_INDEX[f"{j}_{s}"] for j in ("shoulder", "elbow", "wrist") for s in ("l", "r")]
    arm = np.einsum("tk,tk->t", bary, body.weights[corners][:, :, arm_j].sum(axis=2))
    eye = body.part[corners[:, 0]] == PART_EYE
    uv = np.stack([cols / n, 1.0 - rows / n], axis=1)
    return _Texels(rows, cols, xyz, eye, arm, uv, body)


def _fabric(rgb: Rgb3, seed: int, pattern: Pattern, uv: FloatArray) -> FloatArray:
    """(T, 3) garment colour at texels `uv`: a weave, and stripes or checks."""
    c1 = np.asarray(rgb)
    c2 = np.clip(c1 * 0.75 + 0.03, 0.0, 1.0)
    weave = (
        generate(
            TextureSpec(TextureKind.FABRIC, tuple(c1), tuple(c2), seed=seed % 8, size_px=256)  # type: ignore[arg-type]
        ).astype(np.float64)
        / 255.0
    )
    n = weave.shape[0]
    # Two weave repeats across the texture: threads about 3 mm on the body.
    i = (uv[:, 1] * 2 * n).astype(np.int64) % n
    j = (uv[:, 0] * 2 * n).astype(np.int64) % n
    out: FloatArray = weave[i, j]
    if pattern is Pattern.STRIPES:
        band = (np.floor(uv[:, 1] * 90) % 2 == 0)[:, None]
        out = np.where(band, out, np.clip(out * 0.45 + 0.5, 0, 1))
    elif pattern is Pattern.CHECKS:
        a = np.floor(uv[:, 1] * 60) % 2
        b = np.floor(uv[:, 0] * 60) % 2
        out = out * (1.0 - 0.3 * a - 0.3 * b)[:, None]
    return out


def _noise(rows: NDArray[np.int64], cols: NDArray[np.int64], seed: int, cells: int) -> FloatArray:
    """Smooth value noise in -1..1 over the texture (skin blotches, hair strands)."""
    rng = np.random.default_rng(seed)
    grid = rng.uniform(-1.0, 1.0, (cells + 1, cells + 1)).astype(np.float32)
    big = cv2.resize(grid, (TEXTURE_PX, TEXTURE_PX), interpolation=cv2.INTER_CUBIC)
    out: FloatArray = big[rows, cols].astype(np.float64)
    return out


def outfit_texture(outfit: Outfit) -> NDArray[np.uint8]:
    """(TEXTURE_PX, TEXTURE_PX, 3) RGB texture in MakeHuman's UV layout (row 0 = v 1)."""
    t = _texels()
    j = t.body.joints
    z = t.xyz[:, 2]
    x, y = t.xyz[:, 0], t.xyz[:, 1]
    jz = {
        name: j[JOINT_INDEX[name], 2]
        for name in (
            "pelvis",
            "spine",
            "neck",
            "head",
            "knee_l",
            "ankle_l",
            "hip_l",
            "elbow_l",
            "wrist_l",
            "shoulder_l",
            "clavicle_l",
        )
    }
    head = j[JOINT_INDEX["head"]]
    face = t.body.face_points + head
    eye_z = face[1, 2]
    col = np.tile(np.asarray(outfit.skin), (len(z), 1))
    col *= 1.0 + 0.035 * _noise(t.rows, t.cols, outfit.seed, 48)[:, None]
    body = ~t.eye
    arm = t.arm > 0.5
    torso = body & ~arm
    # Lips: an ellipse around the mouth on the face's front.
    mouth_z = face[0, 2] - 0.032
    lips = (
        body & (((y / 0.026) ** 2 + ((z - mouth_z) / 0.009) ** 2) < 1.0) & (x > face[0, 0] - 0.03)
    )
    col[lips] = outfit.lips_rgb
    # Brows: arcs over the eyes.
    hair = np.asarray(outfit.hair_rgb)
    brow_rgb = hair * 0.55 if outfit.hair is not Hair.BALD else hair * 0.5
    for e in (face[1], face[2]):
        dy = y - e[1]
        arc = e[2] + 0.017 + 0.004 * (1 - (dy / 0.024) ** 2)
        brow = body & (np.abs(dy) < 0.024) & (np.abs(z - arc) < 0.0038) & (x > e[0] - 0.03)
        col[brow] = brow_rgb
        # Lash line: a dark rim just above the eye opening.
        lash = (
            body & (np.abs(dy) < 0.016) & (np.abs(z - (e[2] + 0.0075)) < 0.0018) & (x > e[0] - 0.02)
        )
        col[lash] = col[lash] * 0.35
    # Hair on the scalp: above a hairline that falls from the forehead to the nape.
    ear_x = face[3, 0]
    front = np.clip((x - ear_x) / 0.08, 0.0, 1.0)  # 0 behind the ears .. 1 at the brow
    hairline = {
        Hair.BALD: None,
        Hair.BUZZ: eye_z + 0.05,
        Hair.SHORT: eye_z + 0.045,
        Hair.MEDIUM: eye_z + 0.04,
        Hair.LONG: eye_z + 0.04,
    }[outfit.hair]
    strands = 0.85 + 0.15 * _noise(t.rows, t.cols, outfit.seed + 1, 160)
    if hairline is not None:
        nape = {Hair.BUZZ: face[3, 2] - 0.03, Hair.SHORT: face[3, 2] - 0.045}.get(
            outfit.hair, jz["neck"]
        )
        line = front * hairline + (1 - front) * nape
        scalp = body & (z > line) & (z > jz["neck"] - 0.02)
        if outfit.hair in (Hair.MEDIUM, Hair.LONG):  # over the ears down to the jaw at the sides
            side = (x < ear_x + 0.02) & (z > face[0, 2] - 0.04)
            scalp |= body & side & (z > jz["neck"])
        if outfit.hair is Hair.LONG:  # down the back to the shoulder blades
            # A tapering fall of hair over the upper back, rounded at its ends.
            fall = jz["clavicle_l"] - 0.13 + 0.9 * np.abs(y) ** 1.5 * 10.0
            scalp |= (
                torso & (x < j[JOINT_INDEX["neck"], 0] - 0.035) & (z > fall) & (np.abs(y) < 0.09)
            )
        scalp &= ~((x > face[1, 0] - 0.03) & (z < hairline))  # never over the face
        mix = 0.6 if outfit.hair is Hair.BUZZ else 1.0
        col[scalp] = (1 - mix) * col[scalp] + mix * hair * strands[scalp, None]
    else:  # a fringe at the back and sides, bare on top
        fringe = body & (z > face[3, 2] - 0.04) & (z < face[3, 2] + 0.05) & (x < ear_x + 0.01)
        col[fringe] = hair * strands[fringe, None]
    # Clothes (on the body only; the head, hands and feet below the shoes stay skin).
    waist = jz["spine"] + 0.02
    knee = jz["knee_l"]
    hip = jz["hip_l"]
    legs = body & ~arm & (z < waist) & (z > jz["ankle_l"] + 0.02)
    hem_z = knee - 0.05 + outfit.hem * (hip - knee) * 0.55
    bottom_rgb = outfit.top_rgb if outfit.bottom is Bottom.DRESS else outfit.bottom_rgb
    bottom_fab = _fabric(
        bottom_rgb,
        outfit.seed + 2,
        Pattern.PLAIN if outfit.bottom is not Bottom.DRESS else outfit.top_pattern,
        t.uv,
    )
    if outfit.bottom is Bottom.TROUSERS:
        cover = legs
    elif outfit.bottom is Bottom.SHORTS:
        cover = legs & (z > knee + 0.07)
    else:
        cover = legs & (z > hem_z)
    col[cover] = bottom_fab[cover]
    # The neck opening: skin inside a collar around the neck's axis, deeper at the front (V or
    # scoop); everything else of the torso below the neck is covered.
    neck = j[JOINT_INDEX["neck"]]
    collar_r = np.hypot(x - neck[0] - 0.01, y)
    collar_z = (
        jz["clavicle_l"]
        + 0.01
        - np.where(x > neck[0], 0.05 * np.clip(1 - np.abs(y) / 0.08, 0, 1), 0.0)
    )
    opening = (collar_r < np.where(x > neck[0], 0.085, 0.06)) & (z > collar_z)
    neck_cut = np.where(opening, -np.inf, jz["neck"] - 0.01)
    top_body = (
        torso & (z < neck_cut) & (z > (waist - 0.09 if outfit.top is Top.JACKET else waist - 0.03))
    )
    if outfit.top is Top.TANK:
        top_body &= ~((np.abs(y) > 0.12) & (z > jz["clavicle_l"] - 0.12))
    sleeve_end = {
        Top.TSHIRT: jz["shoulder_l"] - 0.13,
        Top.LONG_SLEEVE: jz["wrist_l"] + 0.015,
        Top.JACKET: jz["wrist_l"] + 0.01,
        Top.TANK: np.inf,
    }[outfit.top]
    top_arm = body & arm & (z > sleeve_end) & (z < jz["shoulder_l"] + 0.1)
    top_fab = _fabric(outfit.top_rgb, outfit.seed + 3, outfit.top_pattern, t.uv)
    cover = top_body | top_arm
    if outfit.bottom is Bottom.DRESS:
        cover |= torso & (z > waist - 0.1) & (z < neck_cut)  # the dress's bodice
    col[cover] = top_fab[cover]
    if outfit.top is Top.JACKET:  # open front: the shirt underneath shows
        inner = top_body & (x > 0.0) & (np.abs(y) < 0.045) & (z > waist - 0.02)
        shirt = np.clip(1.0 - np.asarray(outfit.top_rgb) * 0.7, 0.1, 0.95)
        col[inner] = shirt
    # Shoes: everything below the ankle, with a darker sole.
    shoe = body & (z < jz["ankle_l"] + 0.025)
    col[shoe] = np.asarray(outfit.shoes_rgb) * (0.9 + 0.1 * strands[shoe, None])
    col[shoe & (z < 0.012)] = np.asarray(outfit.shoes_rgb) * 0.35
    # Eyes: sclera, iris and pupil around the front of each eyeball.
    eyes = t.eye
    if eyes.any():
        ex = t.xyz[eyes]
        centres = np.where(ex[:, 1:2] > 0, face[1], face[2])
        d = np.linalg.norm((ex - centres)[:, 1:], axis=1)
        ecol = np.tile([0.92, 0.9, 0.86], (len(ex), 1))
        front_side = ex[:, 0] > centres[:, 0] - 0.006
        ecol[front_side & (d < 0.0062)] = outfit.iris_rgb
        ecol[front_side & (d < 0.0026)] = (0.02, 0.02, 0.02)
        col[eyes] = ecol
    img = np.zeros((TEXTURE_PX, TEXTURE_PX, 3))
    img[t.rows, t.cols] = col
    # Bleed the islands outwards so filtering at the seams never picks up the empty background.
    mask: NDArray[np.uint8] = np.zeros((TEXTURE_PX, TEXTURE_PX), np.uint8)
    mask[t.rows, t.cols] = 255
    img8: NDArray[np.uint8] = np.clip(np.round(img * 255), 0, 255).astype(np.uint8)
    for _ in range(4):
        grown = cv2.dilate(img8, np.ones((3, 3), np.uint8))
        img8 = np.where(mask[..., None] > 0, img8, grown).astype(np.uint8)
        mask = np.asarray(cv2.dilate(mask, np.ones((3, 3), np.uint8)), dtype=np.uint8)
    return img8
