"""Doors and windows of procedural rooms, as multi-part objects on the walls.

A wall runs along `axis` (0: x, 1: y) on the line `at`; positions on it are given as a lateral
coordinate along the wall and a normal coordinate across it. Doors stand open (90 degrees, leaf
against the jamb's side) so doorways stay passable for the robots' tours and for people; windows
are panels on the inner face of outer walls (frame, pane, sill). Each is one instance.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np

from grade_common.textures import TextureKind
from grade_sim.world.model import Material, StaticBox

CASING_W_M = 0.07  # door trim width around an opening
CASING_T_M = 0.015  # how far trims stand off the wall face
LEAF_T_M = 0.04
FRAME_W_M = 0.06

GLASS = Material(rgba=(0.55, 0.68, 0.78, 1.0))
HANDLE = Material(rgba=(0.7, 0.7, 0.72, 1.0))


@dataclass(frozen=True)
class WallSpot:
    """The middle of one room side on a wall: the wall runs along `axis` on the line `at`."""

    axis: int  # 0: along x, 1: along y
    at: float
    mid: float  # lateral coordinate of the opening's centre
    thickness_m: float


class PartSink(Protocol):
    next_id: int

    def add_parts(self, parts: list[StaticBox]) -> None: ...


def _box(
    name: str,
    label: str,
    instance_id: int,
    axis: int,
    lateral: tuple[float, float],
    normal: tuple[float, float],
    z: tuple[float, float],
    material: Material,
) -> StaticBox:
    l0, l1 = sorted(lateral)
    n0, n1 = sorted(normal)
    (x0, x1), (y0, y1) = ((l0, l1), (n0, n1)) if axis == 0 else ((n0, n1), (l0, l1))
    return StaticBox(
        name,
        label,
        instance_id,
        ((x0 + x1) / 2, (y0 + y1) / 2, (z[0] + z[1]) / 2),
        ((x1 - x0) / 2, (y1 - y0) / 2, (z[1] - z[0]) / 2),
        0.0,
        material,
    )


def _paint(rng: np.random.Generator, kind: TextureKind) -> Material:
    c = rng.uniform(0.55, 0.95) * np.ones(3) + rng.uniform(-0.06, 0.06, 3)
    c = np.clip(c, 0.0, 1.0)
    c2 = c * 0.8
    return Material(
        rgba=(float(c[0]), float(c[1]), float(c[2]), 1.0),
        texture=kind,
        rgb2=(float(c2[0]), float(c2[1]), float(c2[2])),
        texrepeat_m=0.8,
    )


def add_door_leaves(
    sink: PartSink,
    rng: np.random.Generator,
    name: str,
    spot: WallSpot,
    door_w: float,
    door_h: float,
    corridor_half_m: float,
) -> None:
    """Trims round the doorway at `mid` on both faces and open leaves on a random side.

    Wide doorways get two leaves. The door is left out when its trims would reach past the
    corridor that keeps furniture away (a very wide doorway).
    """
    axis, at, mid, wall_t = spot.axis, spot.at, spot.mid, spot.thickness_m
    edge = door_w / 2
    if edge + CASING_W_M > corridor_half_m - 0.05:
        return
    wood = _paint(rng, TextureKind.WOOD if rng.random() < 0.5 else TextureKind.PAINTED)
    trim = _paint(rng, TextureKind.PAINTED)
    iid = sink.next_id
    side = 1.0 if rng.random() < 0.5 else -1.0
    parts = []
    for face in (1.0, -1.0):
        n = (at + face * wall_t / 2, at + face * (wall_t / 2 + CASING_T_M))
        top = door_h + CASING_W_M
        parts += [
            _box(
                f"{name}/trim_a{face:+.0f}",
                "door",
                iid,
                axis,
                (mid - edge - CASING_W_M, mid - edge),
                n,
                (0.0, top),
                trim,
            ),
            _box(
                f"{name}/trim_b{face:+.0f}",
                "door",
                iid,
                axis,
                (mid + edge, mid + edge + CASING_W_M),
                n,
                (0.0, top),
                trim,
            ),
            _box(
                f"{name}/trim_head{face:+.0f}",
                "door",
                iid,
                axis,
                (mid - edge - CASING_W_M, mid + edge + CASING_W_M),
                n,
                (door_h, top),
                trim,
            ),
        ]
    n_leaves = 2 if door_w > 1.1 else 1
    leaf_w = door_w / n_leaves
    hinges = (-1.0, 1.0) if n_leaves == 2 else ((-1.0,) if rng.random() < 0.5 else (1.0,))
    face_n = at + side * (wall_t / 2 + CASING_T_M)
    for k, h in enumerate(hinges):
        # Open 90 degrees: the leaf stands across the wall, beside the opening's edge.
        lateral = (mid + h * edge, mid + h * (edge + LEAF_T_M))
        normal = (face_n, face_n + side * leaf_w)
        parts.append(
            _box(
                f"{name}/leaf_{k}", "door", iid, axis, lateral, normal, (0.01, door_h - 0.01), wood
            )
        )
        # Handle on the leaf's face towards the doorway, near its free end.
        hl = mid + h * edge
        hn = face_n + side * (leaf_w - 0.07)
        parts.append(
            _box(
                f"{name}/handle_{k}",
                "door",
                iid,
                axis,
                (hl, hl - h * 0.03),
                (hn - 0.06, hn + 0.06),
                (0.98, 1.02),
                HANDLE,
            )
        )
    sink.add_parts(parts)


def add_window(
    sink: PartSink,
    rng: np.random.Generator,
    name: str,
    spot: WallSpot,
    inward: float,
    max_width_m: float,
    wall_h: float,
) -> None:
    """A framed window panel on the inner face of an outer wall; `inward` (+1/-1) is the room
    side of the wall along its normal."""
    axis, at, mid, wall_t = spot.axis, spot.at, spot.mid, spot.thickness_m
    width = float(rng.uniform(0.8, max(0.8, max_width_m)))
    z0 = float(rng.uniform(0.85, 1.0))
    z1 = min(z0 + float(rng.uniform(1.0, 1.3)), wall_h - 0.25)
    if z1 - z0 < 0.4:
        return
    frame = _paint(rng, TextureKind.PAINTED if rng.random() < 0.6 else TextureKind.WOOD)
    iid = sink.next_id
    face = at + inward * wall_t / 2
    pane_n = (face, face + inward * 0.01)
    frame_n = (face, face + inward * 0.04)
    lo, hi = mid - width / 2, mid + width / 2
    fw = FRAME_W_M
    parts = [
        _box(f"{name}/pane", "window", iid, axis, (lo, hi), pane_n, (z0, z1), GLASS),
        _box(f"{name}/frame_l", "window", iid, axis, (lo - fw, lo), frame_n, (z0, z1), frame),
        _box(f"{name}/frame_r", "window", iid, axis, (hi, hi + fw), frame_n, (z0, z1), frame),
        _box(
            f"{name}/frame_top",
            "window",
            iid,
            axis,
            (lo - fw, hi + fw),
            frame_n,
            (z1, z1 + fw),
            frame,
        ),
        _box(
            f"{name}/frame_bottom",
            "window",
            iid,
            axis,
            (lo - fw, hi + fw),
            frame_n,
            (z0 - fw, z0),
            frame,
        ),
        _box(
            f"{name}/sill",
            "window",
            iid,
            axis,
            (lo - fw - 0.05, hi + fw + 0.05),
            (face, face + inward * 0.12),
            (z0 - fw - 0.03, z0 - fw),
            frame,
        ),
    ]
    if width > 1.0:
        parts.append(
            _box(
                f"{name}/mullion",
                "window",
                iid,
                axis,
                (mid - fw / 3, mid + fw / 3),
                frame_n,
                (z0, z1),
                frame,
            )
        )
    zt = z0 + 0.7 * (z1 - z0)
    parts.append(
        _box(
            f"{name}/transom",
            "window",
            iid,
            axis,
            (lo, hi),
            frame_n,
            (zt - fw / 3, zt + fw / 3),
            frame,
        )
    )
    sink.add_parts(parts)
