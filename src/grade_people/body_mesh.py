"""One smooth skinned mesh per person: lofted tubes over the skeleton with blended bone weights.

Core module (numpy and scipy; the skinning pass is compiled by numba: skin_kernel). The mesh is
built in the skeleton's rest pose (skeleton.rest_positions): torso, head, arms, legs and shoes
are closed tubes of elliptic rings along the bones; rings near a joint are weighted to both bones
so the surface bends smoothly (linear blend skinning, as MuJoCo's <skin> does). Each vertex
belongs to a clothing region (hair, skin, shirt, trousers, shoes); its texture coordinate picks
that region's column of the person's texture (clothing).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import scipy.sparse
from numpy.typing import NDArray

from grade_common.types import FloatArray
from grade_people.makehuman.body import makehuman_body
from grade_people.makehuman.look import Outfit, outfit_texture
from grade_people.skeleton import JOINT_INDEX, N_JOINTS, BodyParams, rest_positions
from grade_people.skin_kernel import blend_skin

RING_SEGMENTS = 14


class Region(enum.IntEnum):
    """Clothing regions, in texture-column order: neighbours blend at their seams."""

    HAIR = 0
    SKIN = 1
    SHIRT = 2
    TROUSERS = 3
    SHOES = 4


N_REGIONS = len(Region)


@dataclass(frozen=True)
class SkinMesh:
    """A skinned mesh in the rest pose: vertices, triangles, texture coordinates, bone weights."""

    vertices: FloatArray  # (V, 3) rest-pose positions
    faces: NDArray[np.int32]  # (F, 3), counter-clockwise seen from outside
    texcoord: FloatArray  # (V, 2)
    region: NDArray[np.int8]  # (V,) Region of each vertex
    weights: FloatArray  # (V, J) bone weights, rows sum to 1

    @cached_property
    def sparse_weights(self) -> scipy.sparse.csr_array:
        """`weights` as a sparse matrix: a vertex has a few bones, and a dense product over
        all joints of a 15k-vertex MakeHuman mesh costs 10x more (skin_vertices every frame)."""
        return scipy.sparse.csr_array(self.weights)


@dataclass(frozen=True)
class Clothing:
    """Seeded look of one person."""

    colors: dict[Region, tuple[float, float, float]]  # RGB in 0..1
    long_sleeves: bool
    stripes: bool  # horizontal shirt stripes
    # MakeHuman people: the look painted into the MakeHuman UV layout (colors: its main colours).
    outfit: Outfit | None = None


class _Builder:
    def __init__(self) -> None:
        self.verts: list[FloatArray] = []
        self.weights: list[FloatArray] = []
        self.regions: list[NDArray[np.int8]] = []
        self.faces: list[NDArray[np.int32]] = []
        self.count = 0

    def tube(
        self,
        centres: FloatArray,
        radii: FloatArray,
        weights: FloatArray,
        regions: NDArray[np.int8],
        forward: FloatArray,
    ) -> None:
        """A closed tube through ring `centres` (R, 3) with elliptic `radii` (R, 2).

        radii[:, 0] lies along `forward` projected off the tube axis, radii[:, 1] across it.
        """
        n_rings, m = len(centres), RING_SEGMENTS
        axis = np.gradient(centres, axis=0)
        axis /= np.linalg.norm(axis, axis=1, keepdims=True)
        e1 = forward - (axis @ forward)[:, None] * axis
        e1 /= np.linalg.norm(e1, axis=1, keepdims=True)
        e2 = np.cross(axis, e1)
        a = 2 * np.pi * np.arange(m) / m
        ring = (
            centres[:, None, :]
            + (radii[:, 0, None, None] * np.cos(a)[None, :, None]) * e1[:, None, :]
            + (radii[:, 1, None, None] * np.sin(a)[None, :, None]) * e2[:, None, :]
        ).reshape(-1, 3)
        caps = centres[[0, -1]]
        base = self.count
        self.verts += [ring, caps]
        self.weights += [np.repeat(weights, m, axis=0), weights[[0, -1]]]
        self.regions += [np.repeat(regions, m), regions[[0, -1]]]
        tri = []
        for r in range(n_rings - 1):
            for i in range(m):
                p, q = r * m + i, r * m + (i + 1) % m
                tri += [(p, q, q + m), (p, q + m, p + m)]
        first, last = n_rings * m, n_rings * m + 1
        for i in range(m):
            tri.append((first, (i + 1) % m, i))
            j = (n_rings - 1) * m
            tri.append((last, j + i, j + (i + 1) % m))
        faces = np.asarray(tri, dtype=np.int32) + base
        # Orientation depends on e1 x e2 against the axis; make every tube's normals point out.
        self.faces.append(faces if np.dot(np.cross(e1[0], e2[0]), axis[0]) > 0 else faces[:, ::-1])
        self.count += len(ring) + 2

    def mesh(self) -> tuple[FloatArray, NDArray[np.int32], NDArray[np.int8], FloatArray]:
        w = np.concatenate(self.weights)
        return (
            np.concatenate(self.verts),
            np.concatenate(self.faces).astype(np.int32),
            np.concatenate(self.regions).astype(np.int8),
            w / w.sum(axis=1, keepdims=True),
        )


def _chain_weights(
    along: FloatArray, joints_along: list[float], bones: list[str], blend: list[float]
) -> FloatArray:
    """(R, J) weights of rings at arc length `along` of a chain of `bones`.

    Bone k spans joints_along[k] .. joints_along[k + 1]; around each inner joint the weight
    passes from one bone to the next over +-blend[k].
    """
    w = np.zeros((len(along), N_JOINTS))
    share = np.ones((len(along), len(bones)))
    for k in range(1, len(bones)):
        t = np.clip((along - joints_along[k] + blend[k - 1]) / (2 * blend[k - 1]), 0.0, 1.0)
        s = t * t * (3 - 2 * t)
        share[:, k:] *= s[:, None]
        share[:, k - 1] *= 1 - s
    for k, bone in enumerate(bones):
        w[:, JOINT_INDEX[bone]] += share[:, k]
    return w


def _limb(
    b: _Builder,
    points: list[FloatArray],
    bones: list[str],
    radii: list[tuple[float, float]],
    regions: list[Region],
    rings_per_segment: int,
    forward: FloatArray,
    blend_m: float,
) -> None:
    """A tube along `points` (len(bones) + 1 of them) with radii/regions given at each point."""
    pts = np.asarray(points)
    seg = np.linalg.norm(np.diff(pts, axis=0), axis=1)
    knots = np.concatenate([[0.0], np.cumsum(seg)])
    along = np.concatenate(
        [
            np.linspace(knots[i], knots[i + 1], rings_per_segment, endpoint=False)
            for i in range(len(seg))
        ]
        + [knots[-1:]]
    )
    centres = np.stack([np.interp(along, knots, pts[:, d]) for d in range(3)], axis=1)
    rad = np.asarray(radii, dtype=np.float64)
    r = np.stack([np.interp(along, knots, rad[:, d]) for d in range(2)], axis=1)
    # A ring takes the region of the nearest given point, so seams fall between them.
    reg_idx = np.clip(np.searchsorted((knots[1:] + knots[:-1]) / 2, along), 0, len(regions) - 1)
    reg = np.asarray([regions[i] for i in reg_idx], dtype=np.int8)
    w = _chain_weights(along, list(knots[: len(bones)]), bones, [blend_m] * len(bones))
    b.tube(centres, r, w, reg, forward)


def body_mesh(body: BodyParams, clothing: Clothing) -> SkinMesh:
    """The person's skin in the rest pose (see module docstring; MakeHuman bodies: their
    shaped mesh, grade_people.makehuman)."""
    if body.shape is not None:
        mh = makehuman_body(body.shape)
        region = np.full(len(mh.vertices), Region.SKIN, dtype=np.int8)
        return SkinMesh(mh.vertices, mh.faces, mh.texcoord, region, mh.weights)
    p = rest_positions(body)
    s, g = body.scale, body.girth

    def at(name: str, dx: float = 0.0, dy: float = 0.0, dz: float = 0.0) -> FloatArray:
        out: FloatArray = p[JOINT_INDEX[name]] + np.array([dx, dy, dz]) * s
        return out

    fwd, up = np.array([1.0, 0.0, 0.0]), np.array([0.0, 0.0, 1.0])
    b = _Builder()
    shirt, skin, trousers = Region.SHIRT, Region.SKIN, Region.TROUSERS
    # Torso: hips -> waist -> chest -> shoulder line -> neck, elliptic (wider than deep).
    hips = 0.16 * g * body.hip_ratio
    chest_w = 0.16 * g * body.shoulder_ratio
    shoulder_w = (p[JOINT_INDEX["shoulder_l"], 1] + 0.02 * s) * (0.9 + 0.1 * g)
    _limb(
        b,
        [
            at("pelvis", dz=-0.1),
            at("spine", dz=0.02),
            at("chest"),
            at("clavicle_l", dy=-0.03, dz=-0.01),
            at("neck", dz=0.01),
            at("head", dz=0.03),
        ],
        ["pelvis", "spine", "chest", "chest", "neck"],
        [
            (0.11 * g, hips),
            (0.1 * g, 0.135 * g),
            (0.115 * g, chest_w),
            (0.09 * g, shoulder_w),
            (0.055, 0.055),
            (0.05, 0.05),
        ],
        [trousers, shirt, shirt, shirt, skin, skin],
        4,
        fwd,
        0.06 * s,
    )
    # Head: an egg around the skull, hair over the top and back.
    centre = at("head", dx=0.01, dz=0.055)
    lat = np.linspace(-np.pi / 2 + 0.25, np.pi / 2, 9)
    ring_c = centre + np.outer(np.sin(lat) * 0.11 * s, up)
    ring_r = np.stack([np.cos(lat) * 0.1 * s, np.cos(lat) * 0.083 * s], axis=1) + 1e-4
    head_w = np.zeros((len(lat), N_JOINTS))
    head_w[:, JOINT_INDEX["head"]] = 1.0
    head_reg = np.where(lat > 0.35, Region.HAIR, Region.SKIN).astype(np.int8)
    b.tube(ring_c, ring_r, head_w, head_reg, fwd)
    sleeve = shirt if clothing.long_sleeves else skin
    for side, sign in (("l", 1.0), ("r", -1.0)):
        # Arm: from inside the shoulder to the hand's tip.
        _limb(
            b,
            [
                at(f"shoulder_{side}", dy=-sign * 0.03, dz=0.02),
                at(f"elbow_{side}"),
                at(f"wrist_{side}"),
                at(f"wrist_{side}", dx=0.005, dz=-0.1),
            ],
            [f"shoulder_{side}", f"elbow_{side}", f"wrist_{side}"],
            [(0.058 * g, 0.055 * g), (0.042 * g, 0.042 * g), (0.03 * g, 0.034 * g), (0.015, 0.04)],
            [shirt, sleeve, skin, skin],
            5,
            fwd,
            0.04 * s,
        )
        # Leg: from inside the pelvis to the ankle.
        _limb(
            b,
            [
                at(f"hip_{side}", dz=0.08),
                at(f"knee_{side}"),
                at(f"ankle_{side}", dz=0.03),
                at(f"ankle_{side}", dz=-0.02),
            ],
            [f"hip_{side}", f"knee_{side}", f"ankle_{side}"],
            [(0.095 * g, 0.09 * g), (0.058 * g, 0.058 * g), (0.042 * g, 0.042 * g), (0.045, 0.045)],
            [trousers, trousers, trousers, Region.SHOES],
            6,
            fwd,
            0.06 * s,
        )
        # Shoe: heel -> ball -> toe tip, flat under the sole.
        _limb(
            b,
            [
                at(f"ankle_{side}", dx=-0.07, dz=-0.045),
                at(f"toe_{side}", dx=-0.03, dz=-0.003),
                at(f"toe_{side}", dx=0.07, dz=-0.005),
            ],
            [f"ankle_{side}", f"toe_{side}"],
            [(0.04, 0.045), (0.03, 0.05), (0.02, 0.035)],
            [Region.SHOES, Region.SHOES, Region.SHOES],
            4,
            up,
            0.04 * s,
        )
    verts, faces, region, weights = b.mesh()
    u = (region.astype(np.float64) + 0.5) / N_REGIONS
    v = np.clip(verts[:, 2] / (1.05 * body.height_m), 0.0, 1.0)
    return SkinMesh(verts, faces, np.stack([u, v], axis=1), region, weights)


def random_clothing(rng: np.random.Generator) -> Clothing:
    """Colours and cut drawn from `rng`: plausible skin tones and hair, varied clothes."""
    tone = float(rng.uniform(0.0, 1.0))
    skin = np.array([0.95, 0.76, 0.62]) * (1 - tone) + np.array([0.36, 0.23, 0.16]) * tone
    hair = np.array([0.08, 0.06, 0.04]) + rng.uniform(0.0, 1.0) * np.array([0.5, 0.38, 0.22])
    colors = {
        Region.HAIR: tuple(float(c) for c in hair),
        Region.SKIN: tuple(float(c) for c in skin),
        Region.SHIRT: tuple(float(c) for c in rng.uniform(0.08, 0.95, 3)),
        Region.TROUSERS: tuple(float(c) for c in rng.uniform(0.05, 0.55, 3)),
        Region.SHOES: tuple(float(c) for c in rng.uniform(0.03, 0.35, 3)),
    }
    return Clothing(colors, bool(rng.random() < 0.5), bool(rng.random() < 0.3))  # type: ignore[arg-type]


TEXTURE_COLUMN_PX = 8
TEXTURE_HEIGHT_PX = 64


def clothing_texture(clothing: Clothing) -> NDArray[np.uint8]:
    """(H, W, 3) RGB texture: one column band per Region (left to right), v = height on body
    (MakeHuman people: their outfit in the MakeHuman UV layout)."""
    if clothing.outfit is not None:
        return outfit_texture(clothing.outfit)
    tex = np.zeros((TEXTURE_HEIGHT_PX, N_REGIONS * TEXTURE_COLUMN_PX, 3))
    for region in Region:
        cols = slice(region * TEXTURE_COLUMN_PX, (region + 1) * TEXTURE_COLUMN_PX)
        tex[:, cols] = clothing.colors[region]
    if clothing.stripes:
        rows = (np.arange(TEXTURE_HEIGHT_PX) // 2) % 2 == 1
        shirt = slice(Region.SHIRT * TEXTURE_COLUMN_PX, (Region.SHIRT + 1) * TEXTURE_COLUMN_PX)
        tex[rows, shirt] = 0.55 * np.asarray(clothing.colors[Region.SHIRT]) + 0.4
    out: NDArray[np.uint8] = np.clip(np.round(tex * 255), 0, 255).astype(np.uint8)
    return out


def skin_vertices(mesh: SkinMesh, rest: FloatArray, pos: FloatArray, rot: FloatArray) -> FloatArray:
    """Linear blend skinning of `mesh` (what MuJoCo's <skin> draws): (V, 3) world vertices.

    Args:
        rest: (J, 3) rest joint positions (the bind pose); pos (J, 3), rot (J, 3, 3) posed joints.
    """
    # sum_j w_vj (p_j + R_j (v - r_j)) = sum_j w_vj (p_j - R_j r_j) + (sum_j w_vj R_j) v: a
    # pass over each vertex's few bones (skin_kernel) instead of a (V, J, 3) temporary.
    w = mesh.sparse_weights
    shift = pos - np.einsum("jab,jb->ja", rot, rest)  # (J, 3)
    return blend_skin(w.indptr, w.indices, w.data, rot, shift, mesh.vertices)
