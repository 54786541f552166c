"""The job a render worker reads: the scene once, then per frame every geom's and the camera's pose.

job.json holds the settings, the geoms' surfaces, the lights and the frame list; job.npz holds
the arrays (triangles, textures, poses). The worker runs in Blender's Python, so this file format
(plain JSON and numpy arrays) is the whole interface between the two processes.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from grade_common.types import FloatArray
from grade_render.settings import RenderSettings
from grade_render.world_state import GeomShape, LightSpec, SkinShape

# Lights: the simulator's own light model, path traced. MuJoCo lights a diffuse surface of albedo
# a with a * d * cos(incidence) * spot * att, where spot = cos(angle to the axis) ** exponent
# inside the cone (0 outside) and att = 1 / (a0 + a1 r + a2 r^2): the scenario's fall-off, not
# the physical 1 / r^2. A Cycles point light of power P gives a diffuse surface at distance r the
# radiance a P / (4 pi^2 r^2); its Light Falloff node's "Constant" output cancels the r^2, so
# P = 4 pi^2 d with the worker's attenuation nodes reproduces MuJoCo's direct light exactly at any
# distance, and the path tracer adds what the rasteriser lacks: soft shadows and bounce light.
# A sun of strength pi d matches a directional light.
POINT_LIGHT_RADIUS_M = 0.2  # soft shadows: the light is a sphere, not a point
SKY_RGB = (0.75, 0.82, 1.0)
SKY_STRENGTH = 0.35
ROUGHNESS = 0.6  # the simulator's materials are matte (specular 0.1)


@dataclass(frozen=True)
class FramePlan:
    """One image to render: a camera at a recorded frame."""

    index: int  # unique in the job
    robot: str
    camera: str
    stamp: str  # as written in the source run's lists (frame file names use it)
    step: int
    width: int
    height: int
    k: FloatArray  # (3, 3)
    near_m: float
    far_m: float
    world_optical: FloatArray  # (4, 4) at the frame's stamp
    open_world_optical: FloatArray  # (4, 4) when the shutter opens (= world_optical: no blur)
    geom_pos: FloatArray  # (ngeom drawn, 3)
    geom_mat: FloatArray  # (ngeom drawn, 3, 3)
    open_geom_pos: FloatArray
    open_geom_mat: FloatArray
    # World vertices of every drawn skin at the frame's stamp (skins are not motion blurred).
    skin_vertices: tuple[FloatArray, ...] = ()


def light_entries(lights: list[LightSpec]) -> list[dict[str, Any]]:
    """The job's lights: type, colour, power, cone and fall-off (see the note above)."""
    out = []
    for light in lights:
        peak = float(np.max(light.diffuse_rgb))
        if peak <= 0:
            continue
        entry: dict[str, Any] = {
            "position_xyz": [float(v) for v in light.position_xyz],
            "direction_xyz": [float(v) for v in light.direction_xyz],
            "rgb": [float(v) / peak for v in light.diffuse_rgb],
            "directional": light.directional,
            "cast_shadow": light.cast_shadow,
        }
        if light.directional:
            entry["power"] = math.pi * peak
        else:
            entry |= {
                "power": 4 * math.pi**2 * peak,
                "radius_m": POINT_LIGHT_RADIUS_M,
                "cutoff_deg": light.cutoff_deg,
                "exponent": light.exponent,
                "attenuation": list(light.attenuation),
            }
        out.append(entry)
    return out


def headlight_entry(diffuse_rgb: FloatArray) -> dict[str, Any]:
    """The camera-borne headlight: MuJoCo's has no fall-off (a directional light along the
    view), so it is a point light at the camera with constant fall-off."""
    peak = float(np.max(diffuse_rgb))
    return {
        "power": 4 * math.pi**2 * peak,
        "rgb": [float(v) / peak for v in diffuse_rgb] if peak > 0 else [1.0, 1.0, 1.0],
        "radius_m": 0.05,
        "attenuation": [1.0, 0.0, 0.0],
    }


def write_job(
    job_dir: Path,
    settings: RenderSettings,
    shapes: list[GeomShape],
    lights: list[dict[str, Any]],
    frames: list[FramePlan],
    headlight: dict[str, Any] | None = None,
    skins: tuple[SkinShape, ...] = (),
) -> None:
    """Write job.json and job.npz into `job_dir` (created)."""
    job_dir.mkdir(parents=True, exist_ok=True)
    arrays: dict[str, np.ndarray] = {}
    geoms = []
    for k, s in enumerate(shapes):
        arrays[f"v{k}"] = s.vertices_xyz.astype(np.float64)
        arrays[f"f{k}"] = s.faces.astype(np.int32)
        if s.texture_rgb is not None:
            arrays[f"tex{k}"] = s.texture_rgb
        if s.texcoord_uv is not None:
            arrays[f"uv{k}"] = s.texcoord_uv.reshape(-1, 2).astype(np.float32)
        geoms.append(
            {
                "name": s.name,
                "smooth": s.smooth,
                "rgba": [float(v) for v in s.rgba],
                "roughness": ROUGHNESS,
                "texrepeat_per_m": s.texrepeat_per_m,
                "instance_id": s.instance_id,
                "uv": s.texcoord_uv is not None,
            }
        )
    skin_entries = []
    for k, skin in enumerate(skins):
        arrays[f"sf{k}"] = skin.faces.astype(np.int32)
        arrays[f"suv{k}"] = skin.texcoord_uv.astype(np.float32)
        arrays[f"sv{k}"] = np.stack([f.skin_vertices[k] for f in frames]).astype(np.float32)
        if skin.texture_rgb is not None:
            arrays[f"stex{k}"] = skin.texture_rgb
        skin_entries.append(
            {
                "name": skin.name,
                "rgba": [float(v) for v in skin.rgba],
                "roughness": ROUGHNESS,
                "texrepeat_per_m": 1.0,
                "instance_id": skin.instance_id,
            }
        )
    for key in ("geom_pos", "geom_mat", "world_optical"):
        arrays[f"at_{key}"] = np.stack([getattr(f, key) for f in frames])
        arrays[f"open_{key}"] = np.stack([getattr(f, f"open_{key}") for f in frames])
    job = {
        "device": settings.device.value,
        "samples": settings.samples,
        "noise_threshold": settings.noise_threshold,
        "max_bounces": settings.max_bounces,
        "seed": settings.seed,
        "denoise": settings.denoise,
        "motion_blur_s": settings.motion_blur_s,
        "exposure": settings.exposure,
        "sky_rgb": list(SKY_RGB),
        "sky_strength": SKY_STRENGTH,
        "geoms": geoms,
        "skins": skin_entries,
        "lights": lights,
        "headlight": headlight,
        "frames": [
            {
                "index": f.index,
                "width": f.width,
                "height": f.height,
                "K": [float(v) for v in f.k.ravel()],
                "near_m": f.near_m,
                "far_m": f.far_m,
            }
            for f in frames
        ],
    }
    (job_dir / "job.json").write_text(json.dumps(job))
    with open(job_dir / "job.npz", "wb") as fh:
        np.savez(fh, **arrays)  # type: ignore[arg-type]
