"""Seeded procedural textures for world materials and clothes: wood, tiles, plaster, fabric...

Each texture is an RGB image drawn from a `TextureSpec` (kind, two colours, variant seed, size)
with numpy and OpenCV only; it tiles seamlessly, so a material repeats it over any surface. Images
are generated once and kept in a cache folder keyed by a hash of the spec (and of
`LIBRARY_VERSION`, bumped whenever a generator changes its output), so a world's textures cost
their generation time only on the first build on a machine. Writes go through a staged name and
an atomic rename: processes building the same world at once never read a half-written file.

`SURFACES` holds the per-kind lighting response (specular, shininess, reflectance) engines give
the material.
"""

from __future__ import annotations

import enum
import functools
import hashlib
import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np
from numpy.typing import NDArray

from grade_common.atomic import StagedOutput
from grade_common.cache_dir import cache_dir
from grade_common.errors import OutputExistsError


class TextureKind(enum.Enum):
    """What a material's texture shows: nothing, one of MuJoCo's builtin patterns (checker,
    gradient, noise), or an image of the procedural library (`grade_common.textures`)."""

    NONE = "none"
    CHECKER = "checker"
    GRADIENT = "gradient"
    NOISE = "noise"
    WOOD = "wood"
    PARQUET = "parquet"
    TILES = "tiles"
    CARPET = "carpet"
    PLASTER = "plaster"
    PAINTED = "painted"  # painted wall with grime
    BRICK = "brick"
    CONCRETE = "concrete"
    FABRIC = "fabric"
    GRASS = "grass"
    DIRT = "dirt"
    BARK = "bark"
    LEAVES = "leaves"
    MARBLE = "marble"
    METAL = "metal"


# Bump when any generator's output changes: cached images of older versions are then ignored.
LIBRARY_VERSION = 1
DEFAULT_SIZE_PX = 512
CACHE_ENV = "GRADE_TEXTURE_CACHE"

Image = NDArray[np.uint8]
Field = NDArray[np.float32]
# float RGB in [0, 1]: a colour (3,) or an image (size, size, 3)
Rgb = NDArray[np.float32]


@dataclass(frozen=True)
class Surface:
    """How a material answers light (MuJoCo's material attributes, all in [0, 1])."""

    specular: float
    shininess: float
    reflectance: float  # drawn only when the renderer's reflections are on


SURFACES: dict[TextureKind, Surface] = {
    TextureKind.WOOD: Surface(0.25, 0.45, 0.04),
    TextureKind.PARQUET: Surface(0.35, 0.6, 0.06),
    TextureKind.TILES: Surface(0.55, 0.8, 0.12),
    TextureKind.CARPET: Surface(0.02, 0.05, 0.0),
    TextureKind.PLASTER: Surface(0.05, 0.1, 0.0),
    TextureKind.PAINTED: Surface(0.12, 0.3, 0.0),
    TextureKind.BRICK: Surface(0.04, 0.1, 0.0),
    TextureKind.CONCRETE: Surface(0.06, 0.15, 0.0),
    TextureKind.FABRIC: Surface(0.03, 0.05, 0.0),
    TextureKind.GRASS: Surface(0.05, 0.1, 0.0),
    TextureKind.DIRT: Surface(0.02, 0.05, 0.0),
    TextureKind.BARK: Surface(0.03, 0.05, 0.0),
    TextureKind.LEAVES: Surface(0.15, 0.3, 0.0),
    TextureKind.MARBLE: Surface(0.6, 0.9, 0.15),
    TextureKind.METAL: Surface(0.8, 0.9, 0.2),
}
# The builtin kinds (MuJoCo draws them itself) keep their old look.
DEFAULT_SURFACE = Surface(0.1, 0.5, 0.0)


def surface_of(kind: TextureKind) -> Surface:
    return SURFACES.get(kind, DEFAULT_SURFACE)


def is_procedural(kind: TextureKind) -> bool:
    """True for kinds this library draws (False for NONE and MuJoCo's builtin kinds)."""
    return kind in _GENERATORS


@dataclass(frozen=True)
class TextureSpec:
    """Everything a texture image depends on."""

    kind: TextureKind
    rgb1: tuple[float, float, float]  # main colour
    rgb2: tuple[float, float, float]  # second colour (grain, grout, mortar, veins...)
    seed: int = 0
    size_px: int = DEFAULT_SIZE_PX

    def key(self) -> str:
        """Cache key: a hash of the spec's rounded values and the library version."""
        text = f"v{LIBRARY_VERSION}|{self.kind.value}|{self.size_px}|{self.seed}|" + ",".join(
            f"{v:.4f}" for v in (*self.rgb1, *self.rgb2)
        )
        return f"{self.kind.value}-{hashlib.sha256(text.encode()).hexdigest()[:20]}"


# -- tileable noise -------------------------------------------------------------------------------
def _value_noise(rng: np.random.Generator, size: int, cells_y: int, cells_x: int) -> Field:
    """Bicubic value noise in ~[0, 1] over a size x size tile with cells_y x cells_x lattice cells.

    The lattice is wrap-padded before interpolation, so the tile's opposite edges match.
    """
    pad = 3
    grid = rng.random((cells_y, cells_x), dtype=np.float32)
    padded = np.pad(grid, pad, mode="wrap")
    sy, sx = size / cells_y, size / cells_x
    big = cv2.resize(
        padded,
        (round((cells_x + 2 * pad) * sx), round((cells_y + 2 * pad) * sy)),
        interpolation=cv2.INTER_CUBIC,
    )
    oy, ox = round(pad * sy), round(pad * sx)
    out: Field = np.asarray(big[oy : oy + size, ox : ox + size], dtype=np.float32)
    return out


def _pow2(n: int) -> int:
    """The power of two nearest n (n >= 1)."""
    return int(2 ** round(math.log2(n)))


def _fbm(
    rng: np.random.Generator,
    size: int,
    cells: int,
    octaves: int,
    gain: float = 0.5,
    stretch_x: int = 1,
    stretch_y: int = 1,
) -> Field:
    """Fractal noise normalised to [0, 1]; stretch_* > 1 elongates features along that axis."""
    total = np.zeros((size, size), np.float32)
    amp, norm = 1.0, 0.0
    for k in range(octaves):
        c = min(cells * 2**k, size // 2)
        # Lattices must divide the tile (powers of two) or its edges would not match.
        cy, cx = (_pow2(max(1, c // s)) for s in (stretch_y, stretch_x))
        total += amp * _value_noise(rng, size, cy, cx)
        norm += amp
        amp *= gain
    total /= norm
    lo, hi = float(total.min()), float(total.max())
    out: Field = (total - lo) / max(hi - lo, 1e-6)
    return out


def _mix(c1: Rgb, c2: Rgb, t: Field) -> Rgb:
    """Per-pixel blend of two colours: c1 where t = 0, c2 where t = 1."""
    tt = np.clip(t, 0.0, 1.0)[..., None]
    out: Rgb = c1 * (1.0 - tt) + c2 * tt
    return out


def _to_image(rgb: Rgb) -> Image:
    out: Image = (np.clip(rgb, 0.0, 1.0) * 255.0 + 0.5).astype(np.uint8)
    return out


def _stamp(
    size: int,
    margin: int,
    base: Rgb,
    draw: Callable[[Rgb, Field], None],
) -> Rgb:
    """Small shapes (blades, leaves, pebbles) drawn on `base`, wrapped around the tile's edges.

    `draw(layer, alpha)` paints on a canvas `margin` px larger on every side; what falls in the
    margins is folded back onto the opposite edge, so shapes cut by an edge continue across it.
    """
    n = size + 2 * margin
    layer = np.zeros((n, n, 3), np.float32)
    alpha = np.zeros((n, n), np.float32)
    draw(layer, alpha)
    out = base.copy()
    out_alpha = np.zeros((size, size), np.float32)
    spans = ((margin, margin + size, 0), (0, margin, size - margin), (margin + size, n, 0))
    for y0, y1, dy in spans:
        for x0, x1, dx in spans:
            src_a = alpha[y0:y1, x0:x1]
            dst = (slice(dy, dy + y1 - y0), slice(dx, dx + x1 - x0))
            take = src_a > out_alpha[dst]
            out[dst][take] = layer[y0:y1, x0:x1][take]
            out_alpha[dst][take] = src_a[take]
    return out


# -- generators: (rng, size, c1, c2) -> float RGB in [0, 1] ------------------------------------
Generator = Callable[[np.random.Generator, int, Rgb, Rgb], Rgb]


def _grain(rng: np.random.Generator, size: int, along_x: bool) -> Field:
    """Wood grain: streaks along one axis, with fine fibres."""
    streaks = _fbm(
        rng, size, 8, 4, 0.55, stretch_x=8 if along_x else 1, stretch_y=1 if along_x else 8
    )
    rings = 0.5 + 0.5 * np.sin(streaks * 28.0)
    fine = _fbm(
        rng, size, 64, 2, 0.5, stretch_x=16 if along_x else 1, stretch_y=1 if along_x else 16
    )
    out: Field = 0.45 * streaks + 0.35 * rings + 0.2 * fine
    return out


def _wood(rng: np.random.Generator, size: int, c1: Rgb, c2: Rgb) -> Rgb:
    """Floor boards along x: 6 rows per tile, staggered board ends, dark joints."""
    rows = 6
    row_h = size // rows
    grain = _grain(rng, size, along_x=True)
    shade = np.ones((size, size), np.float32)
    joint = np.zeros((size, size), np.float32)
    for r in range(rows):
        y0, y1 = r * row_h, (r + 1) * row_h if r < rows - 1 else size
        ends = np.sort(rng.uniform(0, size, size=int(rng.integers(1, 3))).astype(int))
        bounds = [*ends.tolist(), int(ends[0]) + size]
        for a, b in itertools.pairwise(bounds):
            cols = np.arange(a, b) % size
            shade[y0:y1, cols] = rng.uniform(0.8, 1.15)
            joint[y0:y1, a % size : a % size + 2] = 1.0
        joint[y0 : y0 + 2, :] = 1.0
    rgb = _mix(c1, c2, grain) * shade[..., None]
    out: Rgb = rgb * (1.0 - 0.55 * joint[..., None])
    return out


def _parquet(rng: np.random.Generator, size: int, c1: Rgb, c2: Rgb) -> Rgb:
    """Basket-weave parquet: 4 x 4 blocks of 4 strips, alternating direction."""
    blocks, strips = 4, 4
    b = size // blocks
    s = b // strips
    along_x, along_y = _grain(rng, size, True), _grain(rng, size, False)
    t = np.empty((size, size), np.float32)
    shade = np.ones((size, size), np.float32)
    joint = np.zeros((size, size), np.float32)
    for i in range(blocks):
        for j in range(blocks):
            ys, xs = slice(i * b, (i + 1) * b), slice(j * b, (j + 1) * b)
            horizontal = (i + j) % 2 == 0
            t[ys, xs] = (along_x if horizontal else along_y)[ys, xs]
            for k in range(strips):
                if horizontal:
                    strip = (slice(i * b + k * s, i * b + (k + 1) * s), xs)
                    joint[i * b + k * s : i * b + k * s + 1, xs] = 1.0
                else:
                    strip = (ys, slice(j * b + k * s, j * b + (k + 1) * s))
                    joint[ys, j * b + k * s : j * b + k * s + 1] = 1.0
                shade[strip] = rng.uniform(0.82, 1.15)
            joint[i * b : i * b + 2, xs] = 1.0
            joint[ys, j * b : j * b + 2] = 1.0
    rgb = _mix(c1, c2, t) * shade[..., None]
    out: Rgb = rgb * (1.0 - 0.5 * joint[..., None])
    return out


def _tiles(rng: np.random.Generator, size: int, c1: Rgb, c2: Rgb) -> Rgb:
    """Square tiles (4 x 4 per texture) in grout of colour c2, each tile slightly different."""
    n = 4
    cell = size // n
    grout = max(2, size // 128)
    y, x = np.mgrid[0:size, 0:size]
    iy, ix = y // cell, x // cell
    tile_shade = rng.uniform(0.9, 1.08, (n, n)).astype(np.float32)[iy, ix]
    speckle = _fbm(rng, size, 32, 3, 0.6)
    u, v = (x % cell).astype(np.float32), (y % cell).astype(np.float32)
    edge = np.minimum(np.minimum(u, cell - 1 - u), np.minimum(v, cell - 1 - v))
    bevel = np.clip(edge / (3.0 * grout), 0.0, 1.0) * 0.12 + 0.88
    rgb = c1 * ((0.94 + 0.12 * speckle) * tile_shade * bevel)[..., None]
    is_grout = (edge < grout / 2)[..., None]
    out: Rgb = np.where(is_grout, c2 * (0.9 + 0.2 * speckle[..., None]), rgb)
    return out


def _carpet(rng: np.random.Generator, size: int, c1: Rgb, c2: Rgb) -> Rgb:
    """Dense pile: per-pixel fibre noise over soft blotches, mostly c1 with flecks of c2."""
    fibres = cv2.GaussianBlur(rng.random((size, size), dtype=np.float32), (3, 3), 0.7)
    blotch = _fbm(rng, size, 4, 4, 0.6)
    t = 0.25 * blotch + 0.45 * fibres
    out: Rgb = _mix(c1, c2, t) * (0.85 + 0.3 * fibres)[..., None]
    return out


def _plaster(rng: np.random.Generator, size: int, c1: Rgb, c2: Rgb) -> Rgb:
    """Trowelled plaster: low-contrast swirls and a fine grain."""
    swirls = _fbm(rng, size, 4, 5, 0.6)
    grain = rng.random((size, size), dtype=np.float32)
    t = 0.3 * swirls
    out: Rgb = _mix(c1, c2, t) * (0.95 + 0.06 * grain)[..., None]
    return out


def _painted(rng: np.random.Generator, size: int, c1: Rgb, c2: Rgb) -> Rgb:
    """Painted wall with grime: roller marks, dirty blotches and vertical run-down streaks."""
    roller = _fbm(rng, size, 8, 3, 0.5, stretch_y=6)
    blotch = _fbm(rng, size, 4, 5, 0.55)
    streaks = _fbm(rng, size, 32, 2, 0.5, stretch_y=16)
    grime = (
        np.clip((blotch - 0.6) * 2.0, 0.0, 1.0) * 0.35 + np.clip((streaks - 0.7) * 3, 0, 1) * 0.2
    )
    rgb = _mix(c1, c2, grime) * (0.97 + 0.05 * roller)[..., None]
    return rgb


def _brick(rng: np.random.Generator, size: int, c1: Rgb, c2: Rgb) -> Rgb:
    """Running-bond brick (8 courses, 4 bricks a course) in mortar of colour c2."""
    courses, per_course = 8, 4
    h, w = size // courses, size // per_course
    mortar = max(2, size // 80)
    y, x = np.mgrid[0:size, 0:size]
    row = y // h
    xs = (x + (row % 2) * (w // 2)) % size
    col = xs // w
    tint = rng.uniform(0.78, 1.12, (courses, per_course, 3)).astype(np.float32)[row, col]
    rough = _fbm(rng, size, 32, 3, 0.6)
    brick = c1 * tint * (0.85 + 0.25 * rough)[..., None]
    is_mortar = ((y % h) < mortar) | ((xs % w) < mortar)
    sand = c2 * (0.85 + 0.3 * rough)[..., None]
    out: Rgb = np.where(is_mortar[..., None], sand, brick)
    return out


def _concrete(rng: np.random.Generator, size: int, c1: Rgb, c2: Rgb) -> Rgb:
    """Concrete: mottled grey, darker stains (c2) and small air pores."""
    mottle = _fbm(rng, size, 8, 5, 0.6)
    stains = np.clip((_fbm(rng, size, 3, 4, 0.5) - 0.6) * 2.0, 0.0, 1.0)
    base = _mix(c1, c2, stains) * (0.82 + 0.3 * mottle)[..., None]

    def pores(layer: Rgb, alpha: Field) -> None:
        n = layer.shape[0]
        for _ in range(size // 2):
            cx, cy = (int(v) for v in rng.integers(0, n, 2))
            r = int(rng.integers(1, 3))
            dark = tuple(float(v) for v in c1 * rng.uniform(0.35, 0.6))
            cv2.circle(layer, (cx, cy), r, dark, -1)
            cv2.circle(alpha, (cx, cy), r, 1.0, -1)

    return _stamp(size, 4, base, pores)


def _fabric(rng: np.random.Generator, size: int, c1: Rgb, c2: Rgb) -> Rgb:
    """Woven cloth: a fine twill of threads in c1 and c2 with slub noise."""
    period = max(4, size // 128)
    y, x = np.mgrid[0:size, 0:size].astype(np.float32)
    weft = 0.5 + 0.5 * np.sin(2 * np.pi * y / period)
    warp = 0.5 + 0.5 * np.sin(2 * np.pi * x / period)
    twill = (((x + y) // period) % 2).astype(np.float32)
    slub = _fbm(rng, size, 16, 3, 0.5, stretch_x=4)
    t = 0.35 * twill + 0.15 * (weft * warp) + 0.2 * slub
    out: Rgb = _mix(c1, c2, t) * (0.85 + 0.15 * weft * warp)[..., None]
    return out


def _grass(rng: np.random.Generator, size: int, c1: Rgb, c2: Rgb) -> Rgb:
    """Grass seen from above: a mottled soil-and-green base under thousands of short blades."""
    base = _mix(c2, c1, 0.35 + 0.4 * _fbm(rng, size, 6, 4, 0.55)) * 0.7
    blade_len = max(4, size // 48)

    def blades(layer: Rgb, alpha: Field) -> None:
        n = layer.shape[0]
        for _ in range(size * 8):
            x0, y0 = rng.uniform(0, n, 2)
            ang = rng.uniform(0, 2 * math.pi)
            length = blade_len * rng.uniform(0.5, 1.2)
            x1, y1 = x0 + length * math.cos(ang), y0 + length * math.sin(ang)
            col = c1 * rng.uniform(0.6, 1.25) + (c2 - c1) * rng.uniform(0.0, 0.35)
            colour = tuple(float(v) for v in np.clip(col, 0, 1))
            p0, p1 = (int(x0), int(y0)), (int(x1), int(y1))
            cv2.line(layer, p0, p1, colour, 1, cv2.LINE_AA)
            cv2.line(alpha, p0, p1, 1.0, 1, cv2.LINE_AA)

    return _stamp(size, blade_len * 2, base, blades)


def _dirt(rng: np.random.Generator, size: int, c1: Rgb, c2: Rgb) -> Rgb:
    """Bare soil: clumpy brown noise with scattered pebbles."""
    clumps = _fbm(rng, size, 8, 5, 0.6)
    base = _mix(c1, c2, clumps) * (0.85 + 0.3 * _fbm(rng, size, 64, 2, 0.5))[..., None]

    def pebbles(layer: Rgb, alpha: Field) -> None:
        n = layer.shape[0]
        for _ in range(size // 3):
            cx, cy = (int(v) for v in rng.integers(0, n, 2))
            axes = (int(rng.integers(1, 5)), int(rng.integers(1, 4)))
            grey = float(rng.uniform(0.4, 0.75))
            colour = tuple(float(v) for v in (0.5 * c1 + 0.5 * grey) * rng.uniform(0.8, 1.2))
            angle = float(rng.uniform(0, 180))
            cv2.ellipse(layer, (cx, cy), axes, angle, 0, 360, colour, -1, cv2.LINE_AA)
            cv2.ellipse(alpha, (cx, cy), axes, angle, 0, 360, 1.0, -1, cv2.LINE_AA)

    return _stamp(size, 6, base, pebbles)


def _bark(rng: np.random.Generator, size: int, c1: Rgb, c2: Rgb) -> Rgb:
    """Tree bark: vertical ridges split by dark furrows (texture v runs along the trunk)."""
    ridges = _fbm(rng, size, 16, 4, 0.55, stretch_y=8)
    furrows = np.clip((0.42 - ridges) * 4.0, 0.0, 1.0)
    rough = _fbm(rng, size, 32, 3, 0.6)
    t = 0.5 * furrows + 0.3 * (1.0 - rough)
    out: Rgb = _mix(c1, c2, t) * (1.0 - 0.5 * furrows)[..., None]
    return out


def _leaves(rng: np.random.Generator, size: int, c1: Rgb, c2: Rgb) -> Rgb:
    """Foliage: overlapping leaf shapes in shades of c1 over a dark interior (c2)."""
    base = _mix(c2 * 0.5, c2, _fbm(rng, size, 8, 3, 0.5))
    leaf = max(4, size // 40)

    def draw(layer: Rgb, alpha: Field) -> None:
        n = layer.shape[0]
        for _ in range(size * 2):
            cx, cy = (int(v) for v in rng.integers(0, n, 2))
            axes = (int(leaf * rng.uniform(0.6, 1.3)), int(leaf * rng.uniform(0.25, 0.5)) + 1)
            colour = tuple(float(v) for v in np.clip(c1 * rng.uniform(0.55, 1.3), 0, 1))
            angle = float(rng.uniform(0, 180))
            cv2.ellipse(layer, (cx, cy), axes, angle, 0, 360, colour, -1, cv2.LINE_AA)
            cv2.ellipse(alpha, (cx, cy), axes, angle, 0, 360, 1.0, -1, cv2.LINE_AA)

    return _stamp(size, 2 * leaf, base, draw)


def _marble(rng: np.random.Generator, size: int, c1: Rgb, c2: Rgb) -> Rgb:
    """Marble: c1 stone with turbulent c2 veins."""
    turb = _fbm(rng, size, 4, 6, 0.55)
    x = np.arange(size, dtype=np.float32)[None, :] / size
    veins = np.abs(np.sin(2 * np.pi * (2 * x + 3.0 * turb)))
    t = np.power(1.0 - veins, 3.0) * 0.8 + 0.1 * _fbm(rng, size, 16, 3, 0.5)
    return _mix(c1, c2, t)


def _metal(rng: np.random.Generator, size: int, c1: Rgb, c2: Rgb) -> Rgb:
    """Brushed metal: fine streaks along x and faint smudges."""
    brushed = _fbm(rng, size, 128, 2, 0.5, stretch_x=64)
    smudge = _fbm(rng, size, 4, 3, 0.5)
    return _mix(c1, c2, 0.25 * smudge) * (0.9 + 0.15 * brushed)[..., None]


_GENERATORS: dict[TextureKind, Generator] = {
    TextureKind.WOOD: _wood,
    TextureKind.PARQUET: _parquet,
    TextureKind.TILES: _tiles,
    TextureKind.CARPET: _carpet,
    TextureKind.PLASTER: _plaster,
    TextureKind.PAINTED: _painted,
    TextureKind.BRICK: _brick,
    TextureKind.CONCRETE: _concrete,
    TextureKind.FABRIC: _fabric,
    TextureKind.GRASS: _grass,
    TextureKind.DIRT: _dirt,
    TextureKind.BARK: _bark,
    TextureKind.LEAVES: _leaves,
    TextureKind.MARBLE: _marble,
    TextureKind.METAL: _metal,
}
PROCEDURAL_KINDS: tuple[TextureKind, ...] = tuple(_GENERATORS)


def generate(spec: TextureSpec) -> Image:
    """Draw the texture of `spec`: (size_px, size_px, 3) uint8 RGB, seamless when tiled.

    Raises:
        ValueError: the kind is not drawn by this library, or the size is not a power of two
            in [64, 2048] (the noise lattices must divide it).
    """
    if spec.kind not in _GENERATORS:
        raise ValueError(
            f"texture kind {spec.kind.value!r} is not procedural; "
            f"use one of {[k.value for k in PROCEDURAL_KINDS]}"
        )
    n = spec.size_px
    if n < 64 or n > 2048 or n & (n - 1):
        raise ValueError(f"texture size_px: {n}; allowed: a power of two in [64, 2048]")
    # The seed sequence mixes the kind in, so two kinds with one seed still differ.
    kind_index = list(_GENERATORS).index(spec.kind)
    rng = np.random.default_rng([spec.seed, kind_index, LIBRARY_VERSION])
    c1 = np.asarray(spec.rgb1, np.float32)
    c2 = np.asarray(spec.rgb2, np.float32)
    return _to_image(_GENERATORS[spec.kind](rng, n, c1, c2))


def default_cache_dir() -> Path:
    """$GRADE_TEXTURE_CACHE, else $XDG_CACHE_HOME/grade/textures (~/.cache/grade/textures)."""
    return cache_dir(CACHE_ENV, "textures")


class TextureCache:
    """Texture images by spec: from memory, else from the cache folder, else generated and saved.

    A file that cannot be read back (truncated by a full disk) is regenerated and replaced.
    """

    def __init__(self, folder: Path | None = None) -> None:
        self.folder = folder if folder is not None else default_cache_dir()
        self._memory: dict[TextureSpec, Image] = {}

    def path_of(self, spec: TextureSpec) -> Path:
        return self.folder / f"{spec.key()}.png"

    def image(self, spec: TextureSpec) -> Image:
        """The RGB image of `spec` ((size, size, 3) uint8)."""
        if spec in self._memory:
            return self._memory[spec]
        path = self.path_of(spec)
        img = _read(path, spec.size_px)
        if img is None:
            img = generate(spec)
            _store(path, img)
        self._memory[spec] = img
        return img


@functools.lru_cache(maxsize=4)
def _cache_at(folder: str) -> TextureCache:
    return TextureCache(Path(folder))


def shared_cache() -> TextureCache:
    """The process's texture cache for the current cache folder (images stay in memory too)."""
    return _cache_at(str(default_cache_dir()))


def _read(path: Path, size: int) -> Image | None:
    if not path.is_file():
        return None
    bgr = cv2.imread(str(path), cv2.IMREAD_COLOR)
    if bgr is None or bgr.shape != (size, size, 3):
        path.unlink(missing_ok=True)  # damaged: regenerate
        return None
    out: Image = np.ascontiguousarray(bgr[:, :, ::-1])
    return out


def _store(path: Path, img: Image) -> None:
    """Save atomically; another process saving the same texture first is fine (same bytes)."""
    try:
        with StagedOutput(path) as staged:
            bgr = np.ascontiguousarray(img[:, :, ::-1])
            if not cv2.imwrite(str(staged), bgr, [cv2.IMWRITE_PNG_COMPRESSION, 1]):
                raise OSError(f"cannot write {staged}")
    except OutputExistsError:
        pass  # written meanwhile by a concurrent process: identical content
