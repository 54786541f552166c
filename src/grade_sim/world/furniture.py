"""Multi-part indoor furniture: tables with legs, chairs, shelves, sofas, beds, cabinets, desks.

A design is drawn from a seeded generator in the piece's own frame: x is the depth axis with the
front (where a person sits or opens doors) towards +x, y the width, z up from the floor, the
origin at the centre of the footprint. `place` turns it by quarter turns into world boxes that
share one instance id and carry the piece's class as label, so segmentation, boxes and the
occupancy grid treat the piece as one object while cameras and robots see (and hit) its parts.
Quarter turns keep every part an axis-aligned box, which top views and the grid draw exactly.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from grade_common.textures import TextureKind
from grade_people.seat import Seat
from grade_sim.world.model import Material, StaticBox, StaticShape

Vec3 = tuple[float, float, float]

# Pieces that stand with their back against a wall; the others stand anywhere.
AGAINST_WALL = ("desk", "shelf", "cabinet", "sofa", "bed")
FREE_STANDING = ("table", "chair")
KINDS = AGAINST_WALL + FREE_STANDING
# Pieces a person sits on (their design has a part named `seat`); worlds keep their front free.
SEATS = ("chair",)

WOOD_RGB = ((0.55, 0.38, 0.22), (0.72, 0.56, 0.38), (0.35, 0.22, 0.13), (0.80, 0.70, 0.55))
FABRIC_RGB = ((0.35, 0.40, 0.55), (0.55, 0.30, 0.25), (0.45, 0.45, 0.42), (0.25, 0.38, 0.30))
PAINT_RGB = ((0.90, 0.90, 0.88), (0.20, 0.22, 0.25), (0.60, 0.70, 0.75))
METAL_RGB = (0.25, 0.25, 0.27)


@dataclass(frozen=True)
class Part:
    """One solid of a design, as its extent in the piece frame (metres)."""

    name: str
    lo: Vec3  # the corner of least x, y, z
    hi: Vec3  # the opposite corner
    material: Material
    shape: StaticShape = StaticShape.BOX  # CYLINDER: upright, its radius half the x extent


@dataclass(frozen=True)
class Design:
    """A kind of furniture: its parts in the piece frame (x depth, y width, z up from the floor)."""

    kind: str
    size_xyz: Vec3  # footprint depth (x), width (y) and height
    parts: tuple[Part, ...]


def _material(
    rng: np.random.Generator,
    palette: tuple[tuple[float, float, float], ...] | tuple[float, float, float],
    kind: TextureKind,
    repeat_m: float,
) -> Material:
    base = np.asarray(palette, dtype=np.float64)
    if base.ndim == 2:
        base = base[int(rng.integers(len(base)))]
    c = np.clip(base + rng.uniform(-0.05, 0.05, 3), 0.0, 1.0)
    c2 = np.clip(c * rng.uniform(0.6, 0.85), 0.0, 1.0)
    return Material(
        rgba=(float(c[0]), float(c[1]), float(c[2]), 1.0),
        texture=kind,
        rgb2=(float(c2[0]), float(c2[1]), float(c2[2])),
        texrepeat_m=repeat_m,
    )


def _slots_y(dy: float, margin: float, two_from: float) -> list[tuple[float, float]]:
    """(y0, width) of equal slots across a footprint's width dy inside a margin on each side:
    one slot (a door, a pillow), or two side by side once dy reaches two_from."""
    n = 1 if dy < two_from else 2
    width = (dy - 2 * margin) / n
    return [(-dy / 2 + margin + k * width, width) for k in range(n)]


def _legs(
    name: str,
    dx: float,
    dy: float,
    height: float,
    thick: float,
    inset: float,
    mat: Material,
    round_legs: bool,
) -> list[Part]:
    """Four legs under a rectangle of dx x dy, each `thick` across, `inset` from its edges."""
    parts = []
    for k, (sx, sy) in enumerate(((1, 1), (1, -1), (-1, 1), (-1, -1))):
        cx = sx * (dx / 2 - inset - thick / 2)
        cy = sy * (dy / 2 - inset - thick / 2)
        parts.append(
            Part(
                f"{name}_{k}",
                (cx - thick / 2, cy - thick / 2, 0.0),
                (cx + thick / 2, cy + thick / 2, height),
                mat,
                StaticShape.CYLINDER if round_legs else StaticShape.BOX,
            )
        )
    return parts


def _table(rng: np.random.Generator) -> Design:
    dx, dy = float(rng.uniform(0.75, 1.0)), float(rng.uniform(1.0, 1.8))
    h = float(rng.uniform(0.72, 0.78))
    top_t = float(rng.uniform(0.03, 0.05))
    wood = _material(rng, WOOD_RGB, TextureKind.WOOD, 0.8)
    round_legs = bool(rng.random() < 0.5)
    legs = wood if rng.random() < 0.6 else _material(rng, METAL_RGB, TextureKind.NONE, 1.0)
    parts = _legs("leg", dx, dy, h - top_t, 0.06 if round_legs else 0.055, 0.05, legs, round_legs)
    apron = (dx / 2 - 0.08, dy / 2 - 0.08)
    parts.append(Part("apron", (-apron[0], -apron[1], h - top_t - 0.08), (*apron, h - top_t), wood))
    parts.append(Part("top", (-dx / 2, -dy / 2, h - top_t), (dx / 2, dy / 2, h), wood))
    return Design("table", (dx, dy, h), tuple(parts))


def _desk(rng: np.random.Generator) -> Design:
    dx, dy = float(rng.uniform(0.6, 0.75)), float(rng.uniform(1.2, 1.6))
    h, top_t, side_t = 0.75, 0.03, 0.025
    body = _material(rng, WOOD_RGB + PAINT_RGB, TextureKind.WOOD, 0.8)
    fronts = _material(rng, PAINT_RGB, TextureKind.PAINTED, 1.0)
    drawer_w = float(rng.uniform(0.35, 0.45))
    parts = [
        Part("side_l", (-dx / 2, dy / 2 - side_t, 0.0), (dx / 2, dy / 2, h - top_t), body),
        Part("modesty", (-dx / 2, -dy / 2, 0.3), (-dx / 2 + side_t, dy / 2, h - top_t), body),
        Part(
            "drawers",
            (-dx / 2, -dy / 2, 0.0),
            (dx / 2 - 0.02, -dy / 2 + drawer_w, h - top_t),
            body,
        ),
    ]
    n_drawers = int(rng.integers(2, 4))
    step = (h - top_t - 0.04) / n_drawers
    for k in range(n_drawers):
        z0 = 0.04 + k * step
        parts.append(
            Part(
                f"drawer_{k}",
                (dx / 2 - 0.02, -dy / 2 + 0.01, z0 + 0.005),
                (dx / 2, -dy / 2 + drawer_w - 0.01, z0 + step - 0.005),
                fronts,
            )
        )
    parts.append(Part("top", (-dx / 2, -dy / 2, h - top_t), (dx / 2, dy / 2, h), body))
    return Design("desk", (dx, dy, h), tuple(parts))


def _chair(rng: np.random.Generator) -> Design:
    dx, dy = float(rng.uniform(0.42, 0.5)), float(rng.uniform(0.42, 0.5))
    seat_h, h = float(rng.uniform(0.43, 0.48)), float(rng.uniform(0.82, 0.95))
    wood = _material(rng, WOOD_RGB, TextureKind.WOOD, 0.6)
    seat = _material(rng, FABRIC_RGB, TextureKind.FABRIC, 0.3) if rng.random() < 0.5 else wood
    parts = _legs("leg", dx, dy, seat_h - 0.04, 0.035, 0.0, wood, False)
    parts += [
        Part("seat", (-dx / 2, -dy / 2, seat_h - 0.04), (dx / 2, dy / 2, seat_h), seat),
        Part("post_l", (-dx / 2, dy / 2 - 0.035, seat_h), (-dx / 2 + 0.035, dy / 2, h), wood),
        Part("post_r", (-dx / 2, -dy / 2, seat_h), (-dx / 2 + 0.035, -dy / 2 + 0.035, h), wood),
        Part(
            "back", (-dx / 2, -dy / 2 + 0.035, h - 0.22), (-dx / 2 + 0.025, dy / 2 - 0.035, h), wood
        ),
    ]
    return Design("chair", (dx, dy, h), tuple(parts))


def _shelf(rng: np.random.Generator) -> Design:
    dx, dy = float(rng.uniform(0.3, 0.4)), float(rng.uniform(0.8, 1.2))
    h, t = float(rng.uniform(1.6, 2.0)), 0.022
    wood = _material(rng, WOOD_RGB + PAINT_RGB, TextureKind.WOOD, 0.8)
    parts = [
        Part("side_l", (-dx / 2, dy / 2 - t, 0.0), (dx / 2, dy / 2, h), wood),
        Part("side_r", (-dx / 2, -dy / 2, 0.0), (dx / 2, -dy / 2 + t, h), wood),
        Part("back", (-dx / 2, -dy / 2 + t, 0.0), (-dx / 2 + 0.008, dy / 2 - t, h), wood),
        Part("plinth", (-dx / 2, -dy / 2 + t, 0.0), (dx / 2, dy / 2 - t, 0.08), wood),
        Part("top", (-dx / 2, -dy / 2 + t, h - t), (dx / 2, dy / 2 - t, h), wood),
    ]
    n_boards = int(rng.integers(3, 6))
    levels = np.linspace(0.08, h - t, n_boards + 1)
    for k, z in enumerate(levels[:-1]):
        if k > 0:
            parts.append(
                Part(f"board_{k}", (-dx / 2, -dy / 2 + t, z - t), (dx / 2, dy / 2 - t, z), wood)
            )
        # A run of books (one box each, in a few colours) on part of the board.
        y = -dy / 2 + t + float(rng.uniform(0.0, 0.15))
        room_h = float(levels[k + 1] - z - t)
        for b in range(int(rng.integers(0, 9))):
            w = float(rng.uniform(0.02, 0.06))
            if y + w > dy / 2 - t or room_h < 0.12:
                break
            bh = float(rng.uniform(0.6, 0.95)) * min(room_h, 0.35)
            depth = float(rng.uniform(0.6, 0.9)) * (dx - 0.02)
            book = _material(rng, tuple(rng.uniform(0.1, 0.8, 3)), TextureKind.NONE, 1.0)
            parts.append(
                Part(
                    f"book_{k}_{b}",
                    (-dx / 2 + 0.01, y, z),
                    (-dx / 2 + 0.01 + depth, y + w, z + bh),
                    book,
                )
            )
            y += w + 0.002
    return Design("shelf", (dx, dy, h), tuple(parts))


def _cabinet(rng: np.random.Generator) -> Design:
    dx, dy = float(rng.uniform(0.4, 0.6)), float(rng.uniform(0.6, 1.2))
    h = float(rng.uniform(0.8, 1.2))
    body = _material(rng, WOOD_RGB + PAINT_RGB, TextureKind.WOOD, 0.8)
    fronts = _material(rng, WOOD_RGB + PAINT_RGB, TextureKind.PAINTED, 1.0)
    metal = _material(rng, METAL_RGB, TextureKind.NONE, 1.0)
    # From the back: carcass, door fronts (2 cm), handles (2.5 cm) reaching the footprint's front.
    door_x = dx / 2 - 0.045
    front_x = door_x + 0.02
    parts = [
        Part("plinth", (-dx / 2, -dy / 2 + 0.03, 0.0), (door_x - 0.04, dy / 2 - 0.03, 0.08), body),
        Part("carcass", (-dx / 2, -dy / 2 + 0.01, 0.08), (door_x, dy / 2 - 0.01, h - 0.03), body),
        Part("top", (-dx / 2, -dy / 2, h - 0.03), (front_x + 0.01, dy / 2, h), body),
    ]
    for k, (y0, width) in enumerate(_slots_y(dy, 0.01, 0.75)):
        parts.append(
            Part(
                f"door_{k}",
                (door_x, y0 + 0.004, 0.09),
                (front_x, y0 + width - 0.004, h - 0.035),
                fronts,
            )
        )
        # Handles at the doors' meeting edge (one door: its free edge).
        hy = y0 + (width - 0.05 if k == 0 else 0.05)
        zc = h - 0.15
        parts.append(
            Part(
                f"handle_{k}",
                (front_x, hy - 0.008, zc - 0.06),
                (dx / 2, hy + 0.008, zc + 0.06),
                metal,
            )
        )
    return Design("cabinet", (dx, dy, h), tuple(parts))


def _sofa(rng: np.random.Generator) -> Design:
    dx, dy = float(rng.uniform(0.85, 1.0)), float(rng.uniform(1.6, 2.4))
    h = float(rng.uniform(0.75, 0.9))
    seat_h, arm_h, arm_w, back_t = (
        0.42,
        float(rng.uniform(0.55, 0.65)),
        float(rng.uniform(0.12, 0.2)),
        0.2,
    )
    fabric = _material(rng, FABRIC_RGB, TextureKind.FABRIC, 0.3)
    cushion = _material(rng, FABRIC_RGB, TextureKind.FABRIC, 0.3)
    feet = _material(rng, WOOD_RGB, TextureKind.WOOD, 0.5)
    parts = _legs("foot", dx, dy, 0.08, 0.05, 0.03, feet, True)
    parts += [
        Part("base", (-dx / 2, -dy / 2, 0.08), (dx / 2, dy / 2, seat_h - 0.1), fabric),
        Part("back", (-dx / 2, -dy / 2, seat_h - 0.1), (-dx / 2 + back_t, dy / 2, h), fabric),
        Part(
            "arm_l",
            (-dx / 2 + back_t, dy / 2 - arm_w, seat_h - 0.1),
            (dx / 2, dy / 2, arm_h),
            fabric,
        ),
        Part(
            "arm_r",
            (-dx / 2 + back_t, -dy / 2, seat_h - 0.1),
            (dx / 2, -dy / 2 + arm_w, arm_h),
            fabric,
        ),
    ]
    n = int(rng.integers(2, 4))
    inner = (dy - 2 * arm_w) / n
    for k in range(n):
        y0 = -dy / 2 + arm_w + k * inner
        parts.append(
            Part(
                f"cushion_{k}",
                (-dx / 2 + back_t, y0 + 0.005, seat_h - 0.1),
                (dx / 2 - 0.02, y0 + inner - 0.005, seat_h),
                cushion,
            )
        )
    return Design("sofa", (dx, dy, h), tuple(parts))


def _bed(rng: np.random.Generator) -> Design:
    dx, dy = float(rng.uniform(2.0, 2.15)), float(rng.uniform(1.0, 1.8))
    head_h = float(rng.uniform(0.8, 1.1))
    wood = _material(rng, WOOD_RGB, TextureKind.WOOD, 0.8)
    sheet = _material(rng, ((0.92, 0.92, 0.9), (0.85, 0.88, 0.92)), TextureKind.FABRIC, 0.3)
    cover = _material(rng, FABRIC_RGB, TextureKind.FABRIC, 0.4)
    head_t = 0.06
    parts = _legs("leg", dx, dy, 0.12, 0.07, 0.0, wood, False)
    parts += [
        Part("frame", (-dx / 2 + head_t, -dy / 2, 0.12), (dx / 2, dy / 2, 0.32), wood),
        Part("headboard", (-dx / 2, -dy / 2, 0.0), (-dx / 2 + head_t, dy / 2, head_h), wood),
        Part(
            "mattress",
            (-dx / 2 + head_t, -dy / 2 + 0.03, 0.32),
            (dx / 2 - 0.03, dy / 2 - 0.03, 0.52),
            sheet,
        ),
        Part(
            "cover",
            (-dx / 2 + 0.75, -dy / 2 + 0.01, 0.33),
            (dx / 2 - 0.01, dy / 2 - 0.01, 0.55),
            cover,
        ),
    ]
    for k, (y0, width) in enumerate(_slots_y(dy, 0.1, 1.3)):
        parts.append(
            Part(
                f"pillow_{k}",
                (-dx / 2 + head_t + 0.05, y0 + 0.03, 0.52),
                (-dx / 2 + head_t + 0.45, y0 + width - 0.03, 0.64),
                sheet,
            )
        )
    return Design("bed", (dx, dy, max(head_h, 0.64)), tuple(parts))


DESIGNERS: dict[str, Callable[[np.random.Generator], Design]] = {
    "table": _table,
    "desk": _desk,
    "chair": _chair,
    "shelf": _shelf,
    "cabinet": _cabinet,
    "sofa": _sofa,
    "bed": _bed,
}


def design(kind: str, rng: np.random.Generator) -> Design:
    """A seeded design of one piece of furniture of the given kind (one of KINDS)."""
    return DESIGNERS[kind](rng)


def footprint(piece: Design, quarter_turns: int) -> tuple[float, float]:
    """World x and y extent of a design turned by quarter_turns * 90 degrees."""
    dx, dy, _ = piece.size_xyz
    return (dx, dy) if quarter_turns % 2 == 0 else (dy, dx)


def _turn(x: float, y: float, quarter_turns: int) -> tuple[float, float]:
    for _ in range(quarter_turns % 4):
        x, y = -y, x
    return x, y


def place(
    piece: Design,
    name: str,
    instance_id: int,
    centre_xy: tuple[float, float],
    quarter_turns: int,
) -> list[StaticBox]:
    """The world boxes of a design whose front (+x) is turned by quarter_turns * 90 degrees.

    Part names are `<name>/<part>`; every part has the instance id and the piece's class label.
    """
    boxes = []
    for part in piece.parts:
        c = [(a + b) / 2 for a, b in zip(part.lo, part.hi, strict=True)]
        half = [(b - a) / 2 for a, b in zip(part.lo, part.hi, strict=True)]
        cx, cy = _turn(c[0], c[1], quarter_turns)
        hx, hy = (half[0], half[1]) if quarter_turns % 2 == 0 else (half[1], half[0])
        boxes.append(
            StaticBox(
                f"{name}/{part.name}",
                piece.kind,
                instance_id,
                (centre_xy[0] + cx, centre_xy[1] + cy, c[2]),
                (hx, hy, half[2]),
                0.0,
                part.material,
                part.shape,
            )
        )
    return boxes


def seat_of(
    piece: Design,
    name: str,
    instance_id: int,
    centre_xy: tuple[float, float],
    quarter_turns: int,
) -> Seat | None:
    """Where a person sits on a placed piece (its part `seat`), or None for pieces without one."""
    part = next((p for p in piece.parts if p.name == "seat"), None)
    if part is None:
        return None
    cx, cy = _turn((part.lo[0] + part.hi[0]) / 2, (part.lo[1] + part.hi[1]) / 2, quarter_turns)
    return Seat(
        name,
        instance_id,
        (centre_xy[0] + cx, centre_xy[1] + cy),
        math.remainder(quarter_turns * math.pi / 2, 2 * math.pi),
        part.hi[2],
        part.hi[0] - part.lo[0],
        part.hi[1] - part.lo[1],
    )


def front_zone(
    piece: Design,
    centre_xy: tuple[float, float],
    quarter_turns: int,
    depth_m: float,
    width_m: float,
) -> tuple[float, float, float, float]:
    """The floor rectangle (x0, y0, x1, y1) `depth_m` deep in front of a placed piece, at least
    `width_m` wide and centred on it: where a person stands to sit down."""
    dx, dy, _ = piece.size_xyz
    w = max(dy, width_m)
    corners = [
        _turn(x, y, quarter_turns) for x in (dx / 2, dx / 2 + depth_m) for y in (-w / 2, w / 2)
    ]
    xs = [centre_xy[0] + c[0] for c in corners]
    ys = [centre_xy[1] + c[1] for c in corners]
    return min(xs), min(ys), max(xs), max(ys)


def wall_turns(side: str) -> int:
    """Quarter turns that put a piece's back against the wall on `side` (W, S, E, N)."""
    return {"W": 0, "S": 1, "E": 2, "N": 3}[side]
