"""The sky as a cube map: a horizon-to-zenith gradient, a darker ground colour, and a sun disc
with a soft glow, drawn with numpy for the direction of every texel.

Faces are stacked vertically in the order +X, -X, +Y, -Y, +Z, -Z of the OpenGL cube-map
convention (a texel (s, t) of face +X looks along (1, -t, -s), ...). `WORLD_FROM_CUBE` turns those
directions into the world frame (z up) as MuJoCo's skybox shows them.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from grade_sim.world.model import Sky

# MuJoCo draws the skybox rotated so that the cube's +Y is the world's +Z (up).
WORLD_FROM_CUBE = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, -1.0], [0.0, 1.0, 0.0]])
SUN_RADIUS_RAD = 0.03
GLOW_RADIUS_RAD = 0.35


def _face_directions(face: int, n: int) -> NDArray[np.float64]:
    """Unit view directions (n, n, 3) of one cube face's texels, in cube coordinates."""
    c = (np.arange(n) + 0.5) / n * 2.0 - 1.0
    t, s = np.meshgrid(c, c, indexing="ij")  # t: row, s: column
    one = np.ones_like(s)
    d = {
        0: (one, -t, -s),
        1: (-one, -t, s),
        2: (s, one, t),
        3: (s, -one, -t),
        4: (s, -t, one),
        5: (-s, -t, -one),
    }[face]
    v = np.stack(d, axis=-1)
    out: NDArray[np.float64] = v / np.linalg.norm(v, axis=-1, keepdims=True)
    return out


def sky_colour(sky: Sky, directions_world: NDArray[np.float64]) -> NDArray[np.float64]:
    """RGB in [0, 1] of the sky seen along unit world directions (..., 3)."""
    up = directions_world[..., 2]
    above = np.clip(up, 0.0, 1.0) ** 0.5  # the horizon band is wide, the zenith colour high up
    horizon, zenith = np.asarray(sky.horizon_rgb), np.asarray(sky.zenith_rgb)
    rgb = horizon + (zenith - horizon) * above[..., None]
    below = np.clip(-up * 8.0, 0.0, 1.0)[..., None]  # blend to the ground just under the horizon
    rgb = rgb * (1.0 - below) + np.asarray(sky.ground_rgb) * below
    cos_sun = directions_world @ np.asarray(sky.sun_direction_xyz)
    angle = np.arccos(np.clip(cos_sun, -1.0, 1.0))
    disc = np.clip((SUN_RADIUS_RAD * 1.3 - angle) / (SUN_RADIUS_RAD * 0.3), 0.0, 1.0)
    glow = 0.45 * np.exp(-((angle / GLOW_RADIUS_RAD) ** 2))
    sun = np.asarray(sky.sun_rgb)
    rgb = rgb + sun * glow[..., None]
    rgb = rgb * (1.0 - disc[..., None]) + np.maximum(sun, 0.95) * disc[..., None]
    out: NDArray[np.float64] = np.clip(rgb, 0.0, 1.0)
    return out


def sky_cube(sky: Sky, face_px: int) -> NDArray[np.uint8]:
    """The skybox image: six face_px x face_px faces stacked, (6 * face_px, face_px, 3) uint8."""
    faces = []
    for face in range(6):
        d_world = _face_directions(face, face_px) @ WORLD_FROM_CUBE.T
        faces.append(sky_colour(sky, d_world))
    out: NDArray[np.uint8] = (np.concatenate(faces, axis=0) * 255.0 + 0.5).astype(np.uint8)
    return out
