"""How a box's faces map to the six images of a cube texture."""

from __future__ import annotations

# Per cube-map face (MuJoCo's order +x, -x, +y, -y, +z, -z): the normal's axis and sign, then
# the box axis and sign that image columns and rows run along (OpenGL's cube-map convention,
# which MuJoCo uses for a box with a cube texture: each face spans its image once).
FACES: tuple[tuple[int, int, int, int, int, int], ...] = (
    (0, 1, 2, -1, 1, -1),
    (0, -1, 2, 1, 1, -1),
    (1, 1, 0, 1, 2, 1),
    (1, -1, 0, 1, 2, -1),
    (2, 1, 0, 1, 1, -1),
    (2, -1, 0, -1, 1, -1),
)
