"""Bakes kept on disk, keyed by a hash of the world, its lights and the bake settings.

A second build of the same world (the same scenario and seed) reads its lightmaps back instead
of baking again. Files are written under a staged name and renamed into place, so processes
baking the same world at once never read a half-written file.
"""

from __future__ import annotations

import dataclasses
import hashlib
import sys
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from grade_common.atomic import StagedOutput
from grade_common.cache_dir import cache_dir
from grade_common.errors import OutputExistsError
from grade_sim.config.scenario import BakeConfig
from grade_sim.engine.bake.lightmap import Lightmaps, bake_lightmaps, texel_count
from grade_sim.engine.bake.probes import ProbeGrid, ProbeLayout
from grade_sim.world.model import World

# Bump when the bake's output changes for the same inputs: older files are then ignored.
BAKE_VERSION = 2
CACHE_ENV = "GRADE_BAKE_CACHE"
TERRAIN_KEY = "terrain"
PROBE_PREFIX = "probe_"  # probe_baked, probe_live, probe_valid, probe_heights, probe_grid


def default_cache_dir() -> Path:
    """$GRADE_BAKE_CACHE, else $XDG_CACHE_HOME/grade/bake (~/.cache/grade/bake)."""
    return cache_dir(CACHE_ENV, "bake")


def bake_key(world: World, config: BakeConfig) -> str:
    """Hash of everything a bake depends on: geometry, materials, lights, ambience, settings."""
    # Only the settings of the lightmaps themselves: the texture density is applied afterwards
    # and contact shadows are drawn per frame.
    lighting = dataclasses.replace(
        config, enabled=True, texture_px_per_m=1.0, max_face_px=16, contact_shadows=False
    )
    h = hashlib.sha256(f"v{BAKE_VERSION}|{lighting!r}".encode())
    for box in world.boxes:
        h.update(repr(box).encode())
    for mesh in world.meshes:
        h.update(repr((mesh.name, mesh.material)).encode())
        h.update(np.ascontiguousarray(mesh.vertices_xyz, dtype=np.float64).tobytes())
        h.update(np.ascontiguousarray(mesh.faces, dtype=np.int64).tobytes())
    h.update(repr((world.lights, world.ambience)).encode())
    return h.hexdigest()[:24]


def _read(path: Path) -> Lightmaps | None:
    if not path.is_file():
        return None
    try:
        with np.load(path) as data:
            faces = {}
            terrain = None
            for name in data.files:
                if name == TERRAIN_KEY:
                    terrain = np.asarray(data[name], dtype=np.float32)
                    continue
                if name.startswith(PROBE_PREFIX):
                    continue
                box, face = (int(v) for v in name.split("_"))
                faces[(box, face)] = np.asarray(data[name], dtype=np.float32)
            probes = _read_probes(data) if f"{PROBE_PREFIX}grid" in data.files else None
    except (OSError, ValueError, KeyError) as err:
        print(f"bake cache: {path} is damaged ({err}); baking again", file=sys.stderr)
        path.unlink(missing_ok=True)
        return None
    return Lightmaps(faces, terrain, probes)


def _read_probes(data: np.lib.npyio.NpzFile) -> ProbeGrid:
    ox, oy, spacing, nx, ny = (float(v) for v in data[f"{PROBE_PREFIX}grid"])
    heights = tuple(float(h) for h in data[f"{PROBE_PREFIX}heights"])
    layout = ProbeLayout((ox, oy), spacing, int(nx), int(ny), heights)
    return ProbeGrid(
        layout,
        np.asarray(data[f"{PROBE_PREFIX}baked"], dtype=np.float32),
        np.asarray(data[f"{PROBE_PREFIX}live"], dtype=np.float32),
        np.asarray(data[f"{PROBE_PREFIX}valid"], dtype=bool),
    )


def _store(path: Path, maps: Lightmaps) -> None:
    arrays: dict[str, NDArray[Any]] = {f"{b}_{f}": v for (b, f), v in maps.faces.items()}
    if maps.terrain is not None:
        arrays[TERRAIN_KEY] = maps.terrain
    if maps.probes is not None:
        lay = maps.probes.layout
        arrays[f"{PROBE_PREFIX}grid"] = np.array(
            [lay.origin_xy[0], lay.origin_xy[1], lay.spacing_m, lay.nx, lay.ny], np.float64
        )
        arrays[f"{PROBE_PREFIX}heights"] = np.asarray(lay.heights_m, np.float64)
        arrays[f"{PROBE_PREFIX}baked"] = maps.probes.baked_rgb
        arrays[f"{PROBE_PREFIX}live"] = maps.probes.live_rgb
        arrays[f"{PROBE_PREFIX}valid"] = maps.probes.valid
    try:
        with StagedOutput(path) as staged, open(staged, "wb") as out:
            np.savez(out, **arrays)  # type: ignore[arg-type]
    except OutputExistsError:
        pass  # stored meanwhile by a concurrent process: the same bake


def baked_lightmaps(
    world: World, config: BakeConfig, folder: Path | None = None, show_progress: bool = True
) -> tuple[Lightmaps, bool]:
    """The lightmaps of `world`: from the cache folder, else baked (with a progress bar on
    stderr) and stored. Returns them and whether they came from the cache."""
    root = folder if folder is not None else default_cache_dir()
    path = root / f"{bake_key(world, config)}.npz"
    cached = _read(path)
    if cached is not None:
        return cached, True
    from tqdm import tqdm

    total = 2 * texel_count(world, config)  # two passes over every texel
    with tqdm(
        total=total, desc="bake lighting", unit="texel", file=sys.stderr, disable=not show_progress
    ) as bar:
        maps = bake_lightmaps(world, config, progress=bar.update)
    _store(path, maps)
    return maps, False
