"""Procedural indoor worlds: a grid of rooms joined by doorways, furniture, random materials.

Rooms are laid on a rooms_x x rooms_y grid with per-column widths and per-row depths, so the
centres of neighbouring rooms and the doorway between them are collinear: a robot flying from
centre to centre always passes through the door. Furniture stays out of a cross-shaped corridor
through each room centre, keeping those flights and most walking paths clear.
"""

from __future__ import annotations

import hashlib

import numpy as np

from grade_common.occupancy import OccupancyGrid
from grade_common.textures import TextureKind
from grade_people.seat import Seat
from grade_sim.config.scenario import LightsConfig, ProceduralConfig
from grade_sim.world import furniture
from grade_sim.world.lighting import ceiling_lights, indoor_ambience
from grade_sim.world.model import Material, StaticBox, World
from grade_sim.world.openings import WallSpot, add_door_leaves, add_window

CORRIDOR_HALF_WIDTH_M = 0.9
# Positions tried per piece, and per kind before another kind is drawn (a bed does not fit the
# quadrants of a small room; a chair does).
PLACEMENT_TRIES = 60
TRIES_PER_KIND = 15
GRID_RESOLUTION_M = 0.1
# Floor kept free in front of every chair (nothing else is placed there, walls stay out of it):
# room for a person of 0.35 m radius to walk up to the seat's front, turn and sit down; and a
# lane as wide from there to the room's corridor the chair faces (chairs face a corridor).
SEAT_FRONT_DEPTH_M = 1.0
SEAT_FRONT_WIDTH_M = 1.2


def _palette_color(
    rng: np.random.Generator, base: tuple[float, float, float], jitter: float
) -> tuple[float, float, float, float]:
    c = np.clip(np.asarray(base) + rng.uniform(-jitter, jitter, 3), 0.0, 1.0)
    return (float(c[0]), float(c[1]), float(c[2]), 1.0)


def _random_material(
    rng: np.random.Generator,
    base: tuple[float, float, float],
    jitter: float,
    textures: tuple[TextureKind, ...],
) -> Material:
    rgba = _palette_color(rng, base, jitter)
    texture = textures[int(rng.integers(len(textures)))]
    rgb2 = tuple(float(v) for v in np.clip(np.asarray(rgba[:3]) * rng.uniform(0.5, 0.85), 0, 1))
    return Material(
        rgba=rgba,
        texture=texture,
        rgb2=(rgb2[0], rgb2[1], rgb2[2]),
        texrepeat_m=float(rng.uniform(0.4, 1.2)),
    )


# Floors and walls: (kind, main colour, second colour, colour jitter, texture span in metres).
FLOOR_LOOKS = (
    (TextureKind.WOOD, (0.55, 0.37, 0.22), (0.36, 0.22, 0.12), 0.08, (0.9, 1.3)),
    (TextureKind.PARQUET, (0.62, 0.46, 0.3), (0.42, 0.28, 0.16), 0.08, (1.0, 1.4)),
    (TextureKind.TILES, (0.82, 0.8, 0.76), (0.5, 0.49, 0.46), 0.1, (1.2, 2.0)),
    (TextureKind.CARPET, (0.45, 0.35, 0.3), (0.3, 0.26, 0.24), 0.15, (1.0, 2.0)),
    (TextureKind.MARBLE, (0.88, 0.87, 0.84), (0.45, 0.45, 0.47), 0.05, (1.5, 2.5)),
    (TextureKind.CONCRETE, (0.6, 0.6, 0.58), (0.45, 0.45, 0.43), 0.05, (2.0, 3.0)),
)
WALL_LOOKS = (
    (TextureKind.PAINTED, (0.82, 0.8, 0.74), (0.55, 0.52, 0.46), 0.12, (2.0, 3.0)),
    (TextureKind.PLASTER, (0.86, 0.83, 0.77), (0.72, 0.68, 0.62), 0.08, (2.0, 3.0)),
)
ACCENT_WALL_LOOKS = (
    (TextureKind.BRICK, (0.6, 0.3, 0.2), (0.72, 0.7, 0.65), 0.08, (0.9, 1.2)),
    (TextureKind.TILES, (0.85, 0.87, 0.88), (0.55, 0.56, 0.56), 0.08, (0.8, 1.2)),
    (TextureKind.PAINTED, (0.55, 0.65, 0.72), (0.35, 0.38, 0.4), 0.15, (2.0, 3.0)),
    (TextureKind.CONCRETE, (0.62, 0.62, 0.6), (0.48, 0.48, 0.46), 0.05, (2.0, 3.0)),
)
LookChoice = tuple[
    TextureKind, tuple[float, float, float], tuple[float, float, float], float, tuple[float, float]
]


def _look_material(rng: np.random.Generator, choices: tuple[LookChoice, ...]) -> Material:
    kind, c1, c2, jitter, span_m = choices[int(rng.integers(len(choices)))]
    shift = rng.uniform(-jitter, jitter, 3)
    main = np.clip(np.asarray(c1) + shift, 0.0, 1.0)
    second = np.clip(np.asarray(c2) + shift, 0.0, 1.0)
    return Material(
        rgba=(float(main[0]), float(main[1]), float(main[2]), 1.0),
        texture=kind,
        rgb2=(float(second[0]), float(second[1]), float(second[2])),
        texrepeat_m=float(rng.uniform(*span_m)),
        seed=int(rng.integers(1 << 16)),
    )


def _looks_generator(rng: np.random.Generator) -> np.random.Generator:
    """A generator seeded from `rng`'s current state, leaving `rng` where it was."""
    digest = hashlib.sha256(repr(rng.bit_generator.state).encode()).digest()
    return np.random.default_rng(np.frombuffer(digest, dtype=np.uint32))


def _floor_material(rng: np.random.Generator) -> Material:
    return _look_material(rng, FLOOR_LOOKS)


def _wall_palette(rng: np.random.Generator) -> tuple[Material, Material]:
    """The flat's main wall finish and an accent finish."""
    return _look_material(rng, WALL_LOOKS), _look_material(rng, ACCENT_WALL_LOOKS)


class _Builder:
    def __init__(self, first_instance_id: int) -> None:
        self.boxes: list[StaticBox] = []
        self.seats: list[Seat] = []
        self.next_id = first_instance_id

    def add(
        self,
        name: str,
        label: str,
        lo: tuple[float, float, float],
        hi: tuple[float, float, float],
        material: Material,
        yaw: float = 0.0,
    ) -> StaticBox:
        center = tuple((a + b) / 2 for a, b in zip(lo, hi, strict=True))
        half = tuple((b - a) / 2 for a, b in zip(lo, hi, strict=True))
        box = StaticBox(
            name,
            label,
            self.next_id,
            (center[0], center[1], center[2]),
            (half[0], half[1], half[2]),
            yaw,
            material,
        )
        self.next_id += 1
        self.boxes.append(box)
        return box

    def add_parts(self, parts: list[StaticBox]) -> None:
        """Boxes of one multi-part object, which already carry the next instance id."""
        self.boxes.extend(parts)
        self.next_id += 1


def generate_rooms(
    config: ProceduralConfig,
    lights: LightsConfig,
    rng: np.random.Generator,
    first_instance_id: int = 1,
) -> World:
    """Generate a room-grid world; the same config and generator state give the same world."""
    widths = rng.uniform(*config.room_size_m, size=config.rooms_x)
    depths = rng.uniform(*config.room_size_m, size=config.rooms_y)
    xs = np.concatenate([[0.0], np.cumsum(widths)])
    ys = np.concatenate([[0.0], np.cumsum(depths)])
    height = config.wall_height_m
    t = config.wall_thickness_m
    door_w = config.door_width_m
    door_h = min(2.1, height - 0.2)
    b = _Builder(first_instance_id)

    # Looks (materials of the shell, lights) come from a child generator: the geometry's draws
    # stay those of the main generator whatever the looks draw.
    looks = _looks_generator(rng)
    floor_mat = _floor_material(looks)
    wall_palette = _wall_palette(looks)
    b.add("floor", "floor", (xs[0] - t, ys[0] - t, -0.1), (xs[-1] + t, ys[-1] + t, 0.0), floor_mat)
    b.add(
        "ceiling",
        "ceiling",
        (xs[0] - t, ys[0] - t, height),
        (xs[-1] + t, ys[-1] + t, height + 0.1),
        Material(
            rgba=(0.93, 0.92, 0.9, 1.0),
            texture=TextureKind.PLASTER,
            rgb2=(0.85, 0.84, 0.82),
            texrepeat_m=2.0,
            seed=int(looks.integers(1 << 16)),
        ),
    )

    def wall_material() -> Material:
        # Mostly the main finish, now and then the accent (a brick or tiled wall).
        return wall_palette[0] if looks.random() < 0.75 else wall_palette[1]

    # Walls along x (at each y line), then along y (at each x line); interior ones get a doorway
    # in the middle of every room side, so neighbouring room centres see each other through it.
    for axis, lines, spans, prefix in (
        (0, ys, xs, "wall_x{i}_y{j}"),
        (1, xs, ys, "wall_y{i}_x{j}"),
    ):
        for j, at in enumerate(lines):
            interior = 0 < j < len(lines) - 1
            for i in range(len(spans) - 1):
                mat = wall_material()
                name = prefix.format(i=i, j=j)
                lo, hi = spans[i] - t / 2, spans[i + 1] + t / 2
                if not interior:
                    _add_wall(b, name, axis, at, lo, hi, 0.0, height, t, mat)
                    continue
                mid = (spans[i] + spans[i + 1]) / 2
                _add_wall(b, f"{name}_a", axis, at, lo, mid - door_w / 2, 0.0, height, t, mat)
                _add_wall(b, f"{name}_b", axis, at, mid + door_w / 2, hi, 0.0, height, t, mat)
                _add_wall(
                    b,
                    f"{name}_lintel",
                    axis,
                    at,
                    mid - door_w / 2,
                    mid + door_w / 2,
                    door_h,
                    height,
                    t,
                    mat,
                )

    _add_openings(b, rng, config, xs, ys, door_h)

    centres = [
        ((xs[i] + xs[i + 1]) / 2, (ys[j] + ys[j + 1]) / 2)
        for j in range(config.rooms_y)
        for i in range(config.rooms_x)
    ]
    for i in range(config.rooms_x):
        for j in range(config.rooms_y):
            _furnish(b, rng, config, i, j, (xs[i], ys[j], xs[i + 1], ys[j + 1]))

    # Door lintels start above 1 m, so doorways stay walkable.
    grid = OccupancyGrid.from_boxes(
        b.boxes,
        (xs[0] - t, ys[0] - t),
        (xs[-1] + t, ys[-1] + t),
        GRID_RESOLUTION_M,
        ("floor", "ceiling"),
        walkable_below_m=1.0,
    )
    rooms_xy = [
        (float(xs[i]), float(ys[j]), float(xs[i + 1]), float(ys[j + 1]))
        for j in range(config.rooms_y)
        for i in range(config.rooms_x)
    ]
    world_lights = ceiling_lights(lights, looks, rooms_xy, float(height))
    return World(
        boxes=tuple(b.boxes),
        meshes=(),
        lights=world_lights,
        free_space=grid,
        bounds_min_xyz=(float(xs[0] - t), float(ys[0] - t), 0.0),
        bounds_max_xyz=(float(xs[-1] + t), float(ys[-1] + t), float(height)),
        tour_xy=tuple(
            (float(x), float(y)) for x, y in _tour(centres, config.rooms_x, config.rooms_y)
        ),
        ceiling_height_m=float(height),
        ambience=indoor_ambience(lights, looks),
        seats=tuple(b.seats),
    )


def _add_wall(
    b: _Builder,
    name: str,
    axis: int,
    at: float,
    lo: float,
    hi: float,
    z0: float,
    z1: float,
    thickness: float,
    mat: Material,
) -> None:
    """A wall segment running along `axis` (0: x, 1: y) from lo to hi, centred on line `at`."""
    if axis == 0:
        b.add(name, "wall", (lo, at - thickness / 2, z0), (hi, at + thickness / 2, z1), mat)
    else:
        b.add(name, "wall", (at - thickness / 2, lo, z0), (at + thickness / 2, hi, z1), mat)


def _tour(centres: list[tuple[float, float]], nx: int, ny: int) -> list[tuple[float, float]]:
    """A closed loop of room centres where consecutive rooms share a doorway."""
    if nx >= 2 and ny >= 2:
        ring = (
            [(i, 0) for i in range(nx)]
            + [(nx - 1, j) for j in range(1, ny)]
            + [(i, ny - 1) for i in range(nx - 2, -1, -1)]
            + [(0, j) for j in range(ny - 2, 0, -1)]
        )
    else:
        line = [(i, j) for j in range(ny) for i in range(nx)]
        ring = line + line[-2:0:-1]
    return [centres[j * nx + i] for i, j in ring]


def _add_openings(
    b: _Builder,
    rng: np.random.Generator,
    config: ProceduralConfig,
    xs: np.ndarray,
    ys: np.ndarray,
    door_h: float,
) -> None:
    """Open door leaves in the interior doorways, windows on the outer walls.

    Both sit in the middle of a room side, inside the corridors that furniture keeps clear.
    """
    t = config.wall_thickness_m
    for axis, lines, spans in ((0, ys, xs), (1, xs, ys)):
        for j, at in enumerate(lines):
            for i in range(len(spans) - 1):
                spot = WallSpot(axis, float(at), float(spans[i] + spans[i + 1]) / 2, t)
                if 0 < j < len(lines) - 1:
                    add_door_leaves(
                        b,
                        rng,
                        f"door_{axis}_{i}_{j}",
                        spot,
                        config.door_width_m,
                        door_h,
                        CORRIDOR_HALF_WIDTH_M,
                    )
                elif rng.random() < 0.7:
                    add_window(
                        b,
                        rng,
                        f"window_{axis}_{i}_{j}",
                        spot,
                        1.0 if j == 0 else -1.0,
                        2 * CORRIDOR_HALF_WIDTH_M - 0.2,
                        config.wall_height_m,
                    )


def _furnish(
    b: _Builder,
    rng: np.random.Generator,
    config: ProceduralConfig,
    i: int,
    j: int,
    rect: tuple[float, float, float, float],
) -> None:
    """Multi-part furniture in the room's quadrants; wall pieces stand with their back to a wall."""
    x0, y0, x1, y1 = rect
    xc, yc = (x0 + x1) / 2, (y0 + y1) / 2
    margin = config.wall_thickness_m / 2 + 0.05
    count = int(rng.integers(config.furniture_per_room[0], config.furniture_per_room[1] + 1))
    placed: list[tuple[float, float, float, float]] = []
    # Floor in front of chairs: no other piece may stand there (each piece keeps 0.3 m from the
    # others; a chair's front keeps its full depth instead).
    fronts: list[tuple[float, float, float, float]] = []
    for k in range(count):
        for attempt in range(PLACEMENT_TRIES):
            if attempt % TRIES_PER_KIND == 0:  # this kind does not fit: try another one
                kind = furniture.KINDS[int(rng.integers(len(furniture.KINDS)))]
                piece = furniture.design(kind, rng)
            side = ("W", "S", "E", "N")[int(rng.integers(4))]
            turns = (
                furniture.wall_turns(side)
                if kind in furniture.AGAINST_WALL
                else int(rng.integers(4))
            )
            sx, sy = furniture.footprint(piece, turns)
            if sx > x1 - x0 - 2 * margin or sy > y1 - y0 - 2 * margin:
                continue
            # Corners and walls of the room's four quadrants, outside the central corridors.
            px = float(rng.uniform(x0 + margin + sx / 2, x1 - margin - sx / 2))
            py = float(rng.uniform(y0 + margin + sy / 2, y1 - margin - sy / 2))
            if kind in furniture.AGAINST_WALL:
                px = {"W": x0 + margin + sx / 2, "E": x1 - margin - sx / 2}.get(side, px)
                py = {"S": y0 + margin + sy / 2, "N": y1 - margin - sy / 2}.get(side, py)
            lo = (px - sx / 2, py - sy / 2)
            hi = (px + sx / 2, py + sy / 2)
            in_corridor_x = (
                lo[0] < xc + CORRIDOR_HALF_WIDTH_M and hi[0] > xc - CORRIDOR_HALF_WIDTH_M
            )
            in_corridor_y = (
                lo[1] < yc + CORRIDOR_HALF_WIDTH_M and hi[1] > yc - CORRIDOR_HALF_WIDTH_M
            )
            overlaps = any(_overlap((*lo, *hi), q, 0.3) for q in placed) or any(
                _overlap((*lo, *hi), f, 0.0) for f in fronts
            )
            front = None
            if kind in furniture.SEATS:
                zone = furniture.front_zone(
                    piece, (px, py), turns, SEAT_FRONT_DEPTH_M, SEAT_FRONT_WIDTH_M
                )
                front = _lane_to_corridor(zone, turns, (px, py), (xc, yc))
                inside = front is not None and (
                    front[0] >= x0 + margin
                    and front[1] >= y0 + margin
                    and front[2] <= x1 - margin
                    and front[3] <= y1 - margin
                )
                overlaps = (
                    overlaps
                    or front is None
                    or not inside
                    or any(_overlap(front, q, 0.0) for q in placed)
                )
            if not (in_corridor_x or in_corridor_y or overlaps):
                break
        else:
            continue
        placed.append((lo[0], lo[1], hi[0], hi[1]))
        name = f"{kind}_r{i}{j}_{k}"
        seat = furniture.seat_of(piece, name, b.next_id, (px, py), turns)
        if front is not None and seat is not None:
            fronts.append(front)
            b.seats.append(seat)
        b.add_parts(furniture.place(piece, name, b.next_id, (px, py), turns))


def _lane_to_corridor(
    zone: tuple[float, float, float, float],
    quarter_turns: int,
    centre_xy: tuple[float, float],
    room_centre_xy: tuple[float, float],
) -> tuple[float, float, float, float] | None:
    """The floor in front of a seat (`zone`) stretched along its facing to the room's corridor
    it faces, so that a person can walk from the corridor straight up to the seat; None when
    the seat faces away from both corridors (towards a wall)."""
    x0, y0, x1, y1 = zone
    (px, py), (xc, yc) = centre_xy, room_centre_xy
    c = CORRIDOR_HALF_WIDTH_M
    turns = quarter_turns % 4
    if turns == 0 and px < xc:
        return x0, y0, max(x1, xc - c), y1
    if turns == 2 and px > xc:
        return min(x0, xc + c), y0, x1, y1
    if turns == 1 and py < yc:
        return x0, y0, x1, max(y1, yc - c)
    if turns == 3 and py > yc:
        return x0, min(y0, yc + c), x1, y1
    return None


def _overlap(
    a: tuple[float, float, float, float], b: tuple[float, float, float, float], gap_m: float
) -> bool:
    """Whether rectangles (x0, y0, x1, y1) come closer than gap_m."""
    return (
        a[0] < b[2] + gap_m and a[2] > b[0] - gap_m and a[1] < b[3] + gap_m and a[3] > b[1] - gap_m
    )
