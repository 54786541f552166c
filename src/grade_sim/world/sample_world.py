"""A small textured mesh world written as OBJ + MTL + PNG files (tests, docs, a first try).

A 6 x 4 m room centred on the origin: a floor whose texture has four plain quadrants (red
top-left, green top-right, blue bottom-left, yellow bottom-right, seen from above with +y up),
four painted walls, a table and a chair (one OBJ object each, several boxes), and a crate with
a striped texture. Object names carry the classes (`table_01`, `chair_01`, `wall_north`); a
label map file shows the other route.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from grade_common.types import FloatArray

# Floor quadrant colours (RGB, 0-255) by the quadrant's sign of (x, y).
QUADRANT_RGB = {
    (-1, 1): (220, 30, 30),
    (1, 1): (30, 200, 40),
    (-1, -1): (30, 60, 220),
    (1, -1): (230, 210, 30),
}
FLOOR_HALF_XY = (3.0, 2.0)
WALL_HEIGHT_M = 2.4
LABEL_MAP_TEXT = '"crate*": box\n"wall_*": wall\n"floor*": floor\n'


def floor_image(size: int = 256) -> NDArray[np.uint8]:
    """The floor texture, RGB, row 0 at the top."""
    img = np.zeros((size, size, 3), dtype=np.uint8)
    h = size // 2
    img[:h, :h] = QUADRANT_RGB[(-1, 1)]
    img[:h, h:] = QUADRANT_RGB[(1, 1)]
    img[h:, :h] = QUADRANT_RGB[(-1, -1)]
    img[h:, h:] = QUADRANT_RGB[(1, -1)]
    return img


def stripes_image(size: int = 64) -> NDArray[np.uint8]:
    img = np.full((size, size, 3), (150, 100, 50), dtype=np.uint8)
    img[:, :: size // 8] = (90, 55, 25)
    return img


class _ObjText:
    def __init__(self) -> None:
        self.lines: list[str] = ["mtllib world.mtl"]
        self.n_v = 0
        self.n_vt = 0

    def box(self, lo: FloatArray, hi: FloatArray, uv_scale: float = 0.0) -> None:
        """A closed box; with uv_scale > 0 each face gets texcoords (face size / uv_scale)."""
        x = (lo[0], hi[0])
        y = (lo[1], hi[1])
        z = (lo[2], hi[2])
        base = self.n_v
        for k in range(8):
            self.lines.append(f"v {x[k & 1]:.4f} {y[(k >> 1) & 1]:.4f} {z[(k >> 2) & 1]:.4f}")
        self.n_v += 8
        quads = ((0, 2, 3, 1), (4, 5, 7, 6), (0, 1, 5, 4), (2, 6, 7, 3), (0, 4, 6, 2), (1, 3, 7, 5))
        for q in quads:
            if uv_scale > 0:
                t = self.n_vt
                for u, v in ((0, 0), (1, 0), (1, 1), (0, 1)):
                    self.lines.append(f"vt {u:.3f} {v:.3f}")
                self.n_vt += 4
                self.lines.append(
                    "f " + " ".join(f"{base + i + 1}/{t + j + 1}" for j, i in enumerate(q))
                )
            else:
                self.lines.append("f " + " ".join(str(base + i + 1) for i in q))


def write_sample_world(folder: Path) -> Path:
    """Write world.obj, world.mtl, floor.png, crate.png and labels.yaml; returns the OBJ path."""
    import cv2

    folder.mkdir(parents=True, exist_ok=True)
    cv2.imwrite(str(folder / "floor.png"), floor_image()[:, :, ::-1])
    cv2.imwrite(str(folder / "crate.png"), stripes_image()[:, :, ::-1])
    (folder / "labels.yaml").write_text(LABEL_MAP_TEXT)
    (folder / "world.mtl").write_text(
        "newmtl floor_tiles\nKd 1 1 1\nmap_Kd floor.png\n"
        "newmtl wall_paint\nKd 0.85 0.82 0.75\n"
        "newmtl oak\nKd 0.55 0.38 0.22\n"
        "newmtl seat_fabric\nKd 0.30 0.35 0.55\n"
        "newmtl crate_wood\nKd 1 1 1\nmap_Kd crate.png\n"
    )
    obj = _ObjText()
    hx, hy = FLOOR_HALF_XY
    obj.lines += ["o floor", "usemtl floor_tiles"]
    obj.lines += [f"v {-hx} {-hy} 0", f"v {hx} {-hy} 0", f"v {hx} {hy} 0", f"v {-hx} {hy} 0"]
    obj.lines += ["vt 0 0", "vt 1 0", "vt 1 1", "vt 0 1", "f 1/1 2/2 3/3 4/4"]
    obj.n_v, obj.n_vt = 4, 4
    t = 0.1
    for name, lo, hi in (
        ("wall_north", (-hx, hy, 0), (hx, hy + t, WALL_HEIGHT_M)),
        ("wall_south", (-hx, -hy - t, 0), (hx, -hy, WALL_HEIGHT_M)),
        ("wall_east", (hx, -hy, 0), (hx + t, hy, WALL_HEIGHT_M)),
        ("wall_west", (-hx - t, -hy, 0), (-hx, hy, WALL_HEIGHT_M)),
    ):
        obj.lines += [f"o {name}", "usemtl wall_paint"]
        obj.box(np.array(lo, float), np.array(hi, float))
    # A table at (1.2, 0.6): top and four legs, one object.
    obj.lines += ["o table_01", "usemtl oak"]
    cx, cy = 1.2, 0.6
    obj.box(np.array([cx - 0.6, cy - 0.4, 0.72]), np.array([cx + 0.6, cy + 0.4, 0.76]))
    for sx in (-1, 1):
        for sy in (-1, 1):
            lx, ly = cx + sx * 0.52, cy + sy * 0.32
            obj.box(np.array([lx - 0.03, ly - 0.03, 0]), np.array([lx + 0.03, ly + 0.03, 0.72]))
    obj.lines += ["o chair_01", "usemtl seat_fabric"]
    cx, cy = 1.2, -0.3
    obj.box(np.array([cx - 0.22, cy - 0.22, 0]), np.array([cx + 0.22, cy + 0.22, 0.45]))
    obj.box(np.array([cx - 0.22, cy - 0.26, 0.45]), np.array([cx + 0.22, cy - 0.22, 0.9]))
    obj.lines += ["o crate_02", "usemtl crate_wood"]
    obj.box(np.array([-2.2, 0.8, 0]), np.array([-1.6, 1.4, 0.6]), uv_scale=1.0)
    path = folder / "world.obj"
    path.write_text("\n".join(obj.lines) + "\n")
    return path
