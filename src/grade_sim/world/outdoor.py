"""Procedural outdoor worlds (GRADE's savanna-like scenario): terrain, trees, rocks, bushes, grass.

The ground is a textured terrain mesh (world/terrain.py): flat over the walk area (`size_m`,
where the occupancy grid, people and ground robots live) and rising into gentle seeded hills
around it; a thin box just under it gives robots something to collide with. Robots loop on a
regular polygon of `tour_points` corners around the centre (`World.tour_xy`); no obstacle comes
closer than `tour_clearance_m` to its edges, so a UAV or ground robot following the loop never
hits anything static. Everything else is scattered uniformly with a minimum spacing, and more of
it on the hills. A tree is a tapered trunk mesh and two or three layered crown meshes sharing
one instance id; rocks and bushes are lumpy meshes; grass patches are blades that nothing
collides with. Every random choice comes from the generator passed in.
"""

from __future__ import annotations

import math

import numpy as np

from grade_common.occupancy import OccupancyGrid
from grade_common.textures import TextureKind
from grade_sim.config.scenario import LightsConfig, OutdoorConfig
from grade_sim.world import vegetation
from grade_sim.world.light_units import OUTDOOR_EV100
from grade_sim.world.lighting import outdoor_lights
from grade_sim.world.model import Material, StaticBox, StaticMesh, World
from grade_sim.world.terrain import Terrain, generate_terrain

GRID_RESOLUTION_M = 0.2
GROUND_THICKNESS_M = 0.1
# The collision box's top sits this far under the drawn terrain, so the two never z-fight.
GROUND_BOX_DROP_M = 0.05
TERRAIN_SPACING_M = 2.0
# Obstacle footprints keep this much free ground between them (people and robots pass).
SPACING_M = 0.8
PLACEMENT_TRIES = 60
# Boxes whose bottom is above this height (tree crowns) leave the ground walkable.
WALKABLE_BELOW_M = 1.0

# Dry-grass palette of the ground, bark, leaves, stone.
GROUND_RGB = (0.62, 0.55, 0.32)
GRASS_RGB = (0.66, 0.60, 0.34)
BLADES_RGB = (0.62, 0.62, 0.30)
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


class _Meshes:
    """Collects the world's meshes and the footprints they block in the occupancy grid."""

    def __init__(self, first_instance_id: int) -> None:
        self.meshes: list[StaticMesh] = []
        self.footprints: list[StaticBox] = []
        self.next_id = first_instance_id

    def add(
        self,
        name: str,
        label: str,
        shape: vegetation.Shape,
        material: Material,
        collides: bool = True,
        instance_id: int | None = None,
    ) -> None:
        self.meshes.append(
            StaticMesh(
                name,
                label,
                self.next_id if instance_id is None else instance_id,
                shape.vertices_xyz,
                shape.faces,
                material,
                texcoords_uv=shape.texcoords_uv,
                collides=collides,
            )
        )

    def block(self, name: str, label: str, xy: tuple[float, float], radius_m: float) -> None:
        """Mark a square footprint as blocked for walking (a trunk, a rock, a bush)."""
        self.footprints.append(
            StaticBox(
                name,
                label,
                self.next_id,
                (xy[0], xy[1], 0.5),
                (radius_m, radius_m, 0.5),
                0.0,
                Material(rgba=(0.0, 0.0, 0.0, 1.0)),
            )
        )


def _tree(
    out: _Meshes,
    rng: np.random.Generator,
    name: str,
    xy: tuple[float, float],
    ground_z: float,
    height: float,
    crown_r: float,
    trunk_r: float,
    crown_bottom: float,
) -> None:
    flat = bool(rng.random() < 0.6)  # most savanna trees are flat-topped acacias
    leaves = _material(rng, LEAVES_RGB, 0.08, (TextureKind.LEAVES,), (0.3, 0.8))
    bark = _material(rng, BARK_RGB, 0.05, (TextureKind.BARK,), (0.2, 0.5))
    yaw = float(rng.uniform(0, 2 * math.pi))
    at = (xy[0], xy[1], ground_z)
    layers = vegetation.crown_layers(rng, crown_r, crown_bottom, height - crown_bottom, flat)
    for j, layer in enumerate(layers):
        out.add(f"{name}/crown_{j}", "tree", layer.moved(at, yaw), leaves)
    trunk_top = crown_bottom + 0.4 * (height - crown_bottom)
    out.add(f"{name}/trunk", "tree", vegetation.trunk(rng, trunk_r, trunk_top).moved(at), bark)


def generate_outdoor(
    config: OutdoorConfig,
    lights: LightsConfig,
    rng: np.random.Generator,
    first_instance_id: int = 1,
) -> World:
    """Generate an outdoor world; the same config and generator state give the same world."""
    hx, hy = config.size_m[0] / 2, config.size_m[1] / 2
    terrain = generate_terrain(
        (hx, hy), config.terrain_border_m, config.hill_height_m, TERRAIN_SPACING_M, rng
    )
    out = _Meshes(first_instance_id)
    ground_id = out.next_id
    ground = _material(rng, GRASS_RGB, 0.06, (TextureKind.GRASS,), (1.0, 2.5))
    v, f, uv = terrain.mesh()
    out.add("ground", "ground", vegetation.Shape(v, f, uv), ground, collides=False)
    ground_box = StaticBox(
        "ground/collision",
        "ground",
        ground_id,
        (0.0, 0.0, -GROUND_BOX_DROP_M - GROUND_THICKNESS_M / 2),
        (hx, hy, GROUND_THICKNESS_M / 2),
        0.0,
        ground,
    )
    out.next_id += 1
    scatter = _Scatter(config, rng)
    max_height = 2.0
    for k in range(config.trees):
        height = float(rng.uniform(*config.tree_height_m))
        crown_r = float(rng.uniform(0.25, 0.45)) * height
        trunk_r = float(rng.uniform(0.08, 0.2)) + 0.02 * height
        # Crowns overhang the ground but start above head height, so only the trunk blocks
        # walking; the crown still keeps clear of the loop so flying robots pass under nothing.
        xy = scatter.place(trunk_r + 0.3, crown_r * 1.3)
        if xy is None:
            continue
        crown_bottom = max(WALKABLE_BELOW_M + 1.0, float(rng.uniform(0.35, 0.55)) * height)
        _tree(out, rng, f"tree_{k}", xy, 0.0, height, crown_r, trunk_r, crown_bottom)
        out.block(f"tree_{k}", "tree", xy, trunk_r + 0.05)
        out.next_id += 1
        max_height = max(max_height, height * 1.1)
    for kind, count, size_range, rgb, flat, texture in (
        ("rock", config.rocks, config.rock_size_m, ROCK_RGB, (0.35, 0.7), TextureKind.CONCRETE),
        ("bush", config.bushes, config.bush_size_m, BUSH_RGB, (0.5, 0.9), TextureKind.LEAVES),
    ):
        for k in range(count):
            sx, sy = (float(v) for v in rng.uniform(*size_range, size=2))
            sz = float(rng.uniform(*flat)) * min(sx, sy)
            reach = max(math.hypot(sx, sy) / 2, 0.6 * max(sx, sy))
            xy = scatter.place(reach)
            if xy is None:
                continue
            mat = _material(rng, rgb, 0.04, (texture,), (0.1, 0.4))
            maker = vegetation.rock if kind == "rock" else vegetation.bush
            shape = maker(rng, (sx, sy), sz).moved((xy[0], xy[1], 0.0), rng.uniform(-3.1, 3.1))
            out.add(f"{kind}_{k}", kind, shape, mat)
            out.block(f"{kind}_{k}", kind, xy, reach)
            out.next_id += 1
    _add_grass(out, rng, config)
    _decorate_hills(out, rng, config, terrain)
    # Drawn last, so the sun and sky never change where things stand.
    world_lights, ambience, sky = outdoor_lights(lights, rng)
    return World(
        boxes=(ground_box,),
        meshes=tuple(out.meshes),
        lights=tuple(world_lights),
        free_space=OccupancyGrid.from_boxes(
            [ground_box, *out.footprints],
            (-hx, -hy),
            (hx, hy),
            GRID_RESOLUTION_M,
            ("ground",),
            WALKABLE_BELOW_M,
        ),
        bounds_min_xyz=(-hx, -hy, 0.0),
        bounds_max_xyz=(hx, hy, float(max_height)),
        tour_xy=tuple(tour_polygon(config)),
        ceiling_height_m=float(max_height),
        ambience=ambience,
        sky=sky,
        terrain=terrain,
        exposure_ev100=OUTDOOR_EV100,
    )


def _add_grass(out: _Meshes, rng: np.random.Generator, config: OutdoorConfig) -> None:
    """Tufts of grass anywhere on the walk area (loop included): drawn, never blocking."""
    hx, hy = config.size_m[0] / 2, config.size_m[1] / 2
    # A few shared materials (each material is a texture to draw with).
    mats = [_material(rng, BLADES_RGB, 0.08, (TextureKind.GRASS,), (0.2, 0.5)) for _ in range(4)]
    for k in range(config.grass_patches):
        radius = float(rng.uniform(0.3, 1.0))
        xy = rng.uniform((-hx + radius, -hy + radius), (hx - radius, hy - radius))
        mat = mats[k % len(mats)]
        blades = int(150 * radius * radius) + 30
        shape = vegetation.grass_patch(rng, radius, blades).moved((xy[0], xy[1], 0.0))
        out.add(f"grass_{k}", "grass", shape, mat, collides=False)
        out.next_id += 1


def _decorate_hills(
    out: _Meshes, rng: np.random.Generator, config: OutdoorConfig, terrain: Terrain
) -> None:
    """Trees, bushes and rocks on the hills outside the walk area, standing on the terrain.

    They are outside the occupancy grid (nobody walks there) and only frame the view.
    """
    hx, hy = config.size_m[0] / 2, config.size_m[1] / 2
    outer_x, outer_y = hx + config.terrain_border_m, hy + config.terrain_border_m
    if config.terrain_border_m < 2.0:
        return
    for k in range(config.trees + config.bushes):
        for _ in range(20):
            x = float(rng.uniform(-outer_x + 1.0, outer_x - 1.0))
            y = float(rng.uniform(-outer_y + 1.0, outer_y - 1.0))
            if abs(x) > hx + 2.0 or abs(y) > hy + 2.0:
                break
        else:
            continue
        if k < config.trees:
            height = float(rng.uniform(*config.tree_height_m))
            crown_r = float(rng.uniform(0.25, 0.45)) * height
            trunk_r = float(rng.uniform(0.08, 0.2)) + 0.02 * height
            ground_z = _lowest_ground(terrain, x, y, trunk_r)
            crown_bottom = float(rng.uniform(0.35, 0.55)) * height
            _tree(
                out, rng, f"hill_tree_{k}", (x, y), ground_z, height, crown_r, trunk_r, crown_bottom
            )
        else:
            s = float(rng.uniform(*config.bush_size_m))
            ground_z = _lowest_ground(terrain, x, y, s / 2)
            mat = _material(rng, BUSH_RGB, 0.08, (TextureKind.LEAVES,), (0.1, 0.4))
            shape = vegetation.bush(rng, (s, s), 0.7 * s).moved((x, y, ground_z))
            out.add(f"hill_bush_{k}", "bush", shape, mat)
        out.next_id += 1


def _lowest_ground(terrain: Terrain, x: float, y: float, radius_m: float) -> float:
    """The lowest terrain height under a footprint, so nothing floats on a slope."""
    a = np.linspace(0, 2 * math.pi, 8, endpoint=False)
    xs = np.append(x + radius_m * np.cos(a), x)
    ys = np.append(y + radius_m * np.sin(a), y)
    return float(terrain.height_at(xs, ys).min())
