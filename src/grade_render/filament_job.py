"""The job the Filament worker reads: the run's compiled MuJoCo model and each frame's state.

Filament draws the simulator's own model (`mujoco.mjrf.ModelScene`): its geoms, skinned people,
materials, textures and lights, so the job is the model (MuJoCo's binary .mjb), the recorded
state of every frame to render (qpos and mocap poses: one forward pass poses everything,
skins included) and each frame's camera (grade_render.job.FramePlan). filament.json holds the
settings and the cameras, filament.npz the arrays; grade_render.filament_worker reads them.
"""

from __future__ import annotations

import copy
import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from grade_common.types import FloatArray
from grade_render.job import FramePlan
from grade_render.settings import RenderSettings
from grade_render.world_state import WorldState
from grade_sim.world.light_units import intensity_cd, luminance

# Filament's camera keeps its default exposure (f/16, 1/125 s, ISO 100: EV100 = log2(16^2 * 125));
# grade's exposure is in the lights: the model's light colours are already those the cameras'
# exposure sees (grade_sim.world.light_units.exposed_world), so a light of raster colour d has
# the intensity I = luminance(d) pi 1.2 2^EV100 at Filament's EV100. Filament's (unfocused) spot
# lights take luminous power, I = power / pi, and fall off with the inverse square of distance
# (up to `light_range`); directional lights take illuminance in lux.
FILAMENT_CAMERA_EV100 = math.log2(16.0**2 * 125.0)
FILAMENT_LIGHT_RANGE_M = 100.0
# The share of the raster's ambient fill that Filament's uniform environment gets. The raster
# adds `a * albedo` to its display colour (no tone curve); Filament adds it to the linear colour
# (its albedo linearised from sRGB) before the AgX-like curve, which lifts dark values: at the
# full physical radiance the default scenario's ceiling (ambient only) drew 101 against the
# raster's 41 and the frame 1.65x as bright. 0.18 was chosen to draw that ceiling as the raster
# does (measured 640x480, frame 0; 0.125: 31, 0.25: 48; docs/render.md).
FILAMENT_AMBIENT_GAIN = 0.18


def filament_lights(model: Any) -> Any:
    """`model` (a copy) with each light's Filament intensity and a colour of unit luminance."""
    for k in range(model.nlight):
        rgb = model.light_diffuse[k].astype(np.float64)
        y = luminance(rgb)
        if y <= 0:
            model.light_intensity[k] = 0.0
            continue
        value = intensity_cd(rgb, FILAMENT_CAMERA_EV100)
        directional = int(model.light_type[k]) == 1  # mjLIGHT_DIRECTIONAL
        model.light_intensity[k] = value if directional else math.pi * value
        model.light_diffuse[k] = rgb / y
        model.light_range[k] = FILAMENT_LIGHT_RANGE_M
    return model


def filament_ambient(model: Any) -> tuple[list[float], float]:
    """The raster's flat ambient fill as a uniform image-based light for Filament: (the
    environment's colour, each channel in [0, 1], its intensity in cd/m^2); intensity 0 = none.

    MuJoCo adds `a * albedo` for the ambient `a` of the headlight (when active) and of every
    light, `a` already in the camera's exposure (like the lights' colours, whose `ambient_lx`
    run.yaml lists: E = a pi 1.2 2^EV100). A uniform environment of radiance L gives a diffuse
    surface the illuminance pi L, so at Filament's camera exposure L = E / pi, times
    FILAMENT_AMBIENT_GAIN (the two renderers' colour pipelines differ).
    """
    total = np.asarray(model.light_ambient, np.float64).reshape(-1, 3).sum(axis=0)
    if int(model.vis.headlight.active):
        total = total + np.asarray(model.vis.headlight.ambient, np.float64)
    a = [float(c) for c in total]
    y = luminance(a)
    if y <= 0:
        return [0.0, 0.0, 0.0], 0.0
    unit = np.asarray(a) / y
    radiance = FILAMENT_AMBIENT_GAIN * intensity_cd(a, FILAMENT_CAMERA_EV100) / math.pi
    peak = float(unit.max())
    return [float(c) for c in unit / peak], radiance * peak


@dataclass(frozen=True)
class FilamentJob:
    model_mjb: bytes
    qpos: FloatArray  # (frames, nq)
    mocap_pos: FloatArray  # (frames, nmocap, 3)
    mocap_quat: FloatArray  # (frames, nmocap, 4)
    geom_instance: NDArray[np.uint16]  # by geom id
    skin_instance: NDArray[np.uint16]  # by skin id
    plans: list[FramePlan]
    # The raster's ambient fill as a uniform image-based light (filament_ambient).
    ambient_rgb: tuple[float, float, float] = (0.0, 0.0, 0.0)
    ambient_cd_m2: float = 0.0


def plan_filament(world: WorldState, plans: list[FramePlan]) -> FilamentJob:
    """The model and the recorded state at each planned frame (writes nothing)."""
    import mujoco

    m = filament_lights(copy.copy(world.model))
    ambient_rgb, ambient_cd_m2 = filament_ambient(m)
    buf = np.zeros(mujoco.mj_sizeModel(m), np.uint8)
    mujoco.mj_saveModel(m, None, buf)
    qpos, mocap_pos, mocap_quat = [], [], []
    for plan in plans:
        world.pose(plan.step)
        qpos.append(world.data.qpos.copy())
        mocap_pos.append(world.data.mocap_pos.copy())
        mocap_quat.append(world.data.mocap_quat.copy())
    return FilamentJob(
        buf.tobytes(),
        np.array(qpos),
        np.array(mocap_pos).reshape(len(plans), m.nmocap, 3),
        np.array(mocap_quat).reshape(len(plans), m.nmocap, 4),
        np.asarray(world.engine.geom_instance_ids, dtype=np.uint16),
        np.asarray(world.engine.skin_instance_ids, dtype=np.uint16),
        plans,
        (ambient_rgb[0], ambient_rgb[1], ambient_rgb[2]),
        ambient_cd_m2,
    )


def write_filament_job(job_dir: Path, settings: RenderSettings, job: FilamentJob) -> None:
    """Write model.mjb, filament.json and filament.npz into `job_dir` (created)."""
    job_dir.mkdir(parents=True, exist_ok=True)
    (job_dir / "model.mjb").write_bytes(job.model_mjb)
    doc = {
        "ambient": {"rgb": list(job.ambient_rgb), "intensity": job.ambient_cd_m2},
        "exposure": settings.exposure,
        "reflections": settings.reflections,
        "shadows": settings.shadows,
        "frames": [
            {
                "index": p.index,
                "width": p.width,
                "height": p.height,
                "K": [float(v) for v in p.k.ravel()],
                "near_m": p.near_m,
                "far_m": p.far_m,
            }
            for p in job.plans
        ],
    }
    (job_dir / "filament.json").write_text(json.dumps(doc))
    arrays = {
        "qpos": job.qpos,
        "mocap_pos": job.mocap_pos,
        "mocap_quat": job.mocap_quat,
        "geom_instance": job.geom_instance,
        "skin_instance": job.skin_instance,
        "world_optical": np.stack([p.world_optical for p in job.plans]),
    }
    with open(job_dir / "filament.npz", "wb") as fh:
        np.savez(fh, **arrays)  # type: ignore[arg-type]
