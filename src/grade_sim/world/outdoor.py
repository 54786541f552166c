"""Procedural outdoor worlds (GRADE's savanna-like scenario): flat ground, trees, rocks, bushes.

The ground is one large textured box centred on the origin. Robots loop on a regular polygon of
`tour_points` corners around the centre (`World.tour_xy`); no obstacle comes closer than
`tour_clearance_m` to its edges, so a UAV or ground robot following the loop never hits anything
static. Everything else is scattered uniformly with a minimum spacing. A tree is a trunk and a
two-box crown sharing one instance id (one object for segmentation); rocks and bushes are single
yawed boxes. Every random choice comes from the generator passed in.
"""

from __future__ import annotations

import math

import numpy as np

from grade_sim.config.scenario import LightsConfig, OutdoorConfig
from grade_sim.world.lighting import outdoor_lights
from grade_sim.world.model import Material, OccupancyGrid, StaticBox, TextureKind, World

GRID_RESOLUTION_M = 0.2
GROUND_THICKNESS_M = 0.1
# Obstacle footprints keep this much free ground between them (people and robots pass).
SPACING_M = 0.8
PLACEMENT_TRIES = 60
# Boxes whose bottom is above this height (tree crowns) leave the ground walkable.
WALKABLE_BELOW_M = 1.0

# Dry-grass palette of the ground, bark, leaves, stone.
GROUND_RGB = (0.62, 0.55, 0.32)
BARK_RGB = (0.36, 0.25, 0.16)
LEAVES_RGB = (0.30, 0.42, 0.18)
ROCK_RGB = (0.52, 0.50, 0.47)
BUSH_RGB = (0.35, 0.45, 0.20)


def _material(
    rng: np.random.Generator,
    base: tuple[float, float, float],
    jitter: float,
    textures: tuple[TextureKind, ...],
    repeat_m: tuple[float, float],
) -> Material:
    c = np.clip(np.asarray(base) + rng.uniform(-jitter, jitter, 3), 0.0, 1.0)
    texture = textures[int(rng.integers(len(textures)))]
    c2 = np.clip(c * rng.uniform(0.55, 0.85), 0.0, 1.0)
    return Material(
        rgba=(float(c[0]), float(c[1]), float(c[2]), 1.0),
        texture=texture,
        rgb2=(float(c2[0]), float(c2[1]), float(c2[2])),
        texrepeat_m=float(rng.uniform(*repeat_m)),
    )


def tour_polygon(config: OutdoorConfig) -> list[tuple[float, float]]:
    """Corners of the robots' loop: a regular polygon of radius tour_radius_m about the origin."""
    n = config.tour_points
    return [
        (
            config.tour_radius_m * math.cos(2 * math.pi * k / n),
            config.tour_radius_m * math.sin(2 * math.pi * k / n),
        )
        for k in range(n)
    ]


def distance_to_loop(xy: tuple[float, float], loop: list[tuple[float, float]]) -> float:
    """Distance of a point to the closed polyline `loop`."""
    p = np.asarray(xy, dtype=np.float64)
    best = math.inf
    for a_t, b_t in zip(loop, loop[1:] + loop[:1], strict=True):
        a = np.asarray(a_t)
        ab = np.asarray(b_t) - a
        u = float(np.clip(np.dot(p - a, ab) / max(float(np.dot(ab, ab)), 1e-12), 0.0, 1.0))
        best = min(best, float(np.linalg.norm(p - (a + u * ab))))
    return best


class _Scatter:
    """Places round footprints uniformly on the ground, away from the loop and each other."""

    def __init__(self, config: OutdoorConfig, rng: np.random.Generator) -> None:
        self.config = config
        self.rng = rng
        self.loop = tour_polygon(config)
        self.placed: list[tuple[float, float, float]] = []  # x, y, radius
        self.half = (config.size_m[0] / 2, config.size_m[1] / 2)

    def place(self, radius_m: float, overhang_m: float = 0.0) -> tuple[float, float] | None:
        """A free centre for a footprint of radius_m whose top reaches overhang_m (>= radius_m)
        sideways: the overhang (a tree crown) also stays out of the loop's corridor."""
        margin = radius_m + 0.2
        loop_reach = self.config.tour_clearance_m + max(radius_m, overhang_m)
        for _ in range(PLACEMENT_TRIES):
            x = float(self.rng.uniform(-self.half[0] + margin, self.half[0] - margin))
            y = float(self.rng.uniform(-self.half[1] + margin, self.half[1] - margin))
            if distance_to_loop((x, y), self.loop) < loop_reach:
                continue
            if any(
                math.hypot(x - px, y - py) < radius_m + pr + SPACING_M for px, py, pr in self.placed
            ):
                continue
            self.placed.append((x, y, radius_m))
            return x, y
        return None  # crowded: the object is left out, as furniture in a full room


def generate_outdoor(
    config: OutdoorConfig,
    lights: LightsConfig,
    rng: np.random.Generator,
    first_instance_id: int = 1,
) -> World:
    """Generate an outdoor world; the same config and generator state give the same world."""
    hx, hy = config.size_m[0] / 2, config.size_m[1] / 2
    boxes: list[StaticBox] = []
    next_id = first_instance_id

    def add(
        name: str,
        label: str,
        instance_id: int,
        center: tuple[float, float, float],
        half: tuple[float, float, float],
        yaw: float,
        material: Material,
    ) -> None:
        boxes.append(StaticBox(name, label, instance_id, center, half, yaw, material))

    ground = _material(rng, GROUND_RGB, 0.08, (TextureKind.NOISE, TextureKind.CHECKER), (0.5, 2.0))
    add(
        "ground",
        "ground",
        next_id,
        (0.0, 0.0, -GROUND_THICKNESS_M / 2),
        (hx, hy, GROUND_THICKNESS_M / 2),
        0.0,
        ground,
    )
    next_id += 1
    scatter = _Scatter(config, rng)
    max_height = 2.0
    for k in range(config.trees):
        height = float(rng.uniform(*config.tree_height_m))
        crown_r = float(rng.uniform(0.25, 0.45)) * height
        trunk_r = float(rng.uniform(0.08, 0.2)) + 0.02 * height
        # Crowns overhang the ground but start above head height, so only the trunk blocks
        # walking; the crown still keeps clear of the loop so flying robots pass under nothing.
        xy = scatter.place(trunk_r * math.sqrt(2) + 0.3, crown_r * math.sqrt(2))
        if xy is None:
            continue
        crown_bottom = max(WALKABLE_BELOW_M + 1.0, float(rng.uniform(0.35, 0.55)) * height)
        crown_h = height - crown_bottom
        yaw = float(rng.uniform(0.0, math.pi / 2))
        leaves = _material(rng, LEAVES_RGB, 0.08, (TextureKind.NOISE,), (0.3, 0.8))
        bark = _material(rng, BARK_RGB, 0.05, (TextureKind.NONE, TextureKind.NOISE), (0.2, 0.5))
        centre_z = crown_bottom + crown_h / 2
        # Two crown boxes yawed 45 degrees apart read as a rounded canopy from any side.
        for j, (scale_xy, scale_z) in enumerate(((1.0, 0.5), (0.75, 0.6))):
            add(
                f"tree_{k}_crown_{j}",
                "tree",
                next_id,
                (xy[0], xy[1], centre_z),
                (crown_r * scale_xy, crown_r * scale_xy, crown_h * scale_z),
                yaw + j * math.pi / 4,
                leaves,
            )
        # The trunk comes last: it names the tree's instance (scene.instances keeps the last box).
        add(
            f"tree_{k}",
            "tree",
            next_id,
            (xy[0], xy[1], centre_z / 2 + 0.05),
            (trunk_r, trunk_r, centre_z / 2 + 0.05),
            yaw,
            bark,
        )
        next_id += 1
        max_height = max(max_height, crown_bottom + crown_h * 1.1)
    for kind, count, size_range, rgb, flat in (
        ("rock", config.rocks, config.rock_size_m, ROCK_RGB, (0.35, 0.7)),
        ("bush", config.bushes, config.bush_size_m, BUSH_RGB, (0.5, 0.9)),
    ):
        for k in range(count):
            sx, sy = (float(v) for v in rng.uniform(*size_range, size=2))
            sz = float(rng.uniform(*flat)) * min(sx, sy)
            xy = scatter.place(math.hypot(sx, sy) / 2)
            if xy is None:
                continue
            mat = _material(rng, rgb, 0.08, (TextureKind.NOISE, TextureKind.NONE), (0.1, 0.4))
            add(
                f"{kind}_{k}",
                kind,
                next_id,
                (xy[0], xy[1], sz / 2),
                (sx / 2, sy / 2, sz / 2),
                float(rng.uniform(-math.pi, math.pi)),
                mat,
            )
            next_id += 1
    # Drawn last, so the sun and sky never change where things stand.
    world_lights, ambience, sky = outdoor_lights(lights, rng)
    return World(
        boxes=tuple(boxes),
        meshes=(),
        lights=tuple(world_lights),
        free_space=OccupancyGrid.from_boxes(
            boxes, (-hx, -hy), (hx, hy), GRID_RESOLUTION_M, ("ground",), WALKABLE_BELOW_M
        ),
        bounds_min_xyz=(-hx, -hy, 0.0),
        bounds_max_xyz=(hx, hy, float(max_height)),
        tour_xy=tuple(tour_polygon(config)),
        ceiling_height_m=float(max_height),
        ambience=ambience,
        sky=sky,
    )
