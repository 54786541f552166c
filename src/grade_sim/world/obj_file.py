"""A small Wavefront OBJ + MTL reader that keeps what a labelled, textured world needs.

trimesh (used for the other formats) merges OBJ objects by material and drops `o`/`g` names,
which are exactly where per-part class labels come from; this reader keeps one part per
(object or group name, material). Faces with `v/vt` indices are unrolled to one vertex per
distinct (position, texcoord) pair, as engines need per-vertex texture coordinates. Polygons are
fanned into triangles. Texture coordinates are returned in image convention (v = 0 is the
image's first row), i.e. OBJ's v flipped.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from grade_common.errors import ConfigError
from grade_common.types import FloatArray


@dataclass(frozen=True)
class ObjMaterial:
    name: str
    diffuse_rgb: tuple[float, float, float] = (0.8, 0.8, 0.8)
    opacity: float = 1.0
    texture_path: Path | None = None  # map_Kd, resolved against the MTL file's folder


@dataclass(frozen=True)
class ObjPart:
    object_name: str  # `o` name, else `g` name, else ""
    material: ObjMaterial | None
    vertices_xyz: FloatArray  # (n, 3)
    faces: NDArray[np.int32]  # (m, 3)
    texcoords_uv: FloatArray | None  # (n, 2), image convention; None when no face had any


@dataclass
class _Group:
    name: str
    material: str | None
    corners: list[tuple[int, int]] = field(default_factory=list)  # (v index, vt index or -1)


def read_mtl(path: Path) -> dict[str, ObjMaterial]:
    """Materials of an MTL file by name: diffuse colour Kd, opacity d, texture map_Kd."""
    materials: dict[str, ObjMaterial] = {}
    current: dict[str, object] | None = None

    def close() -> None:
        if current is not None:
            materials[str(current["name"])] = ObjMaterial(**current)  # type: ignore[arg-type]

    for raw in path.read_text(errors="replace").splitlines():
        tokens = raw.strip().split()
        if not tokens or tokens[0].startswith("#"):
            continue
        key, args = tokens[0], tokens[1:]
        if key == "newmtl":
            close()
            current = {"name": " ".join(args)}
        elif current is None:
            continue
        elif key == "Kd" and len(args) >= 3:
            current["diffuse_rgb"] = (float(args[0]), float(args[1]), float(args[2]))
        elif key == "d" and args:
            current["opacity"] = float(args[0])
        elif key == "map_Kd" and args:
            # Options (-s, -o, ...) come first; the file name is the last argument.
            current["texture_path"] = path.parent / shlex.split(raw.strip())[-1]
    close()
    return materials


def read_obj(path: Path) -> list[ObjPart]:
    """The parts of an OBJ file, in the order their first face appears.

    Raises:
        ConfigError: a face refers to a vertex that does not exist, or a number is malformed.
    """
    positions: list[tuple[float, float, float]] = []
    texcoords: list[tuple[float, float]] = []
    materials: dict[str, ObjMaterial] = {}
    groups: dict[tuple[str, str | None], _Group] = {}
    obj_name, grp_name, mat_name = "", "", None
    for line_no, raw in enumerate(path.read_text(errors="replace").splitlines(), 1):
        tokens = raw.split()
        if not tokens or tokens[0].startswith("#"):
            continue
        key, args = tokens[0], tokens[1:]
        try:
            if key == "v":
                positions.append((float(args[0]), float(args[1]), float(args[2])))
            elif key == "vt":
                texcoords.append((float(args[0]), float(args[1]) if len(args) > 1 else 0.0))
            elif key == "o":
                obj_name, grp_name = " ".join(args), ""
            elif key == "g":
                grp_name = " ".join(args)
            elif key == "usemtl":
                mat_name = " ".join(args)
            elif key == "mtllib":
                for lib in args:
                    lib_path = path.parent / lib
                    if not lib_path.is_file():
                        raise ConfigError(
                            f"{path}: line {line_no}: material library {lib!r} "
                            f"does not exist next to the OBJ file"
                        )
                    materials.update(read_mtl(lib_path))
            elif key == "f":
                name = obj_name or grp_name
                group = groups.setdefault((name, mat_name), _Group(name, mat_name))
                corners = [_corner(a, len(positions), len(texcoords)) for a in args]
                for k in range(1, len(corners) - 1):
                    group.corners += [corners[0], corners[k], corners[k + 1]]
        except (ValueError, IndexError) as err:
            raise ConfigError(f"{path}: line {line_no}: malformed OBJ statement {raw!r}") from err
    pos = np.asarray(positions, dtype=np.float64).reshape(-1, 3)
    uv_all = np.asarray(texcoords, dtype=np.float64).reshape(-1, 2)
    parts = []
    for group in groups.values():
        if not group.corners:
            continue
        pairs = np.asarray(group.corners, dtype=np.int64)
        if pairs[:, 0].max() >= len(pos) or pairs[:, 0].min() < 0:
            raise ConfigError(f"{path}: a face of {group.name!r} refers to a missing vertex")
        unique, inverse = np.unique(pairs, axis=0, return_inverse=True)
        has_uv = bool(np.all(unique[:, 1] >= 0)) and len(uv_all) > 0
        if has_uv and unique[:, 1].max() >= len(uv_all):
            raise ConfigError(f"{path}: a face of {group.name!r} refers to a missing texcoord")
        uv = None
        if has_uv:
            uv = uv_all[unique[:, 1]].copy()
            uv[:, 1] = 1.0 - uv[:, 1]
        parts.append(
            ObjPart(
                group.name,
                materials.get(group.material or ""),
                pos[unique[:, 0]],
                inverse.reshape(-1, 3).astype(np.int32),
                uv,
            )
        )
    return parts


def _corner(token: str, n_positions: int, n_texcoords: int) -> tuple[int, int]:
    """(position index, texcoord index or -1) of a face corner `v`, `v/vt`, `v//vn`, `v/vt/vn`;
    negative OBJ indices count back from the latest vertex."""
    fields = token.split("/")
    v = int(fields[0])
    v = v - 1 if v > 0 else n_positions + v
    vt = -1
    if len(fields) > 1 and fields[1]:
        t = int(fields[1])
        vt = t - 1 if t > 0 else n_texcoords + t
    return v, vt
