"""An exported stage as Blender sees it: imported with Blender's USD importer, rendered by Cycles.

Used to check an export against the simulator's own frames (depth and instance masks at a
recorded camera frame) and to show a stage path traced. bpy runs in its own environment
(`make setup-render`), reached like grade render's worker (grade_render.worker_process).
"""

from __future__ import annotations

import json
import math
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from grade_common.types import FloatArray
from grade_render.worker_process import run_worker
from grade_sim.world.light_units import SATURATION_K
from grade_sim.world.usd_semantics import semantic_instance
from grade_usd.export import LIGHT_RADIUS_M

WORKER = Path(__file__).with_name("blender_usd_worker.py")


@dataclass(frozen=True)
class StageView:
    depth_m: FloatArray  # (h, w) planar depth, 0 where nothing is hit
    instance: np.ndarray  # (h, w) uint16 instance ids (0: none)
    rgb_png: bytes | None  # the path-traced colour image, when asked for


def _dome_rgb(stage_path: Path) -> list[float]:
    """Radiance (nits, per channel) of the stage's untextured DomeLights, which Blender 5.0's
    importer leaves out: the worker makes them the world's background."""
    from pxr import Usd, UsdLux

    stage = Usd.Stage.Open(str(stage_path))
    total = [0.0, 0.0, 0.0]
    for prim in stage.Traverse():
        if prim.IsA(UsdLux.DomeLight):
            dome = UsdLux.DomeLight(prim)
            if dome.GetTextureFileAttr().Get():
                continue
            scale = float(dome.GetIntensityAttr().Get()) * 2.0 ** float(
                dome.GetExposureAttr().Get() or 0.0
            )
            color = dome.GetColorAttr().Get()
            total = [t + scale * float(c) for t, c in zip(total, color, strict=True)]
    return total


def _blender_exposure(stage_path: Path) -> float:
    """Blender's exposure (stops) of a camera at the stage's EV100: luminance L shows as
    L / (1.2 * 2^EV100), the simulator's convention (grade_sim.world.light_units)."""
    from pxr import Usd

    stage = Usd.Stage.Open(str(stage_path))  # held: the layer lives as long as its stage
    data = stage.GetRootLayer().customLayerData
    ev100 = float(data.get("grade:exposureEv100", 0.0))
    return -(ev100 + math.log2(SATURATION_K))


def instance_names(stage_path: Path) -> dict[str, int]:
    """Prim name -> instance id of every prim the stage labels (Blender names objects so)."""
    from pxr import Usd

    stage = Usd.Stage.Open(str(stage_path))
    out: dict[str, int] = {}
    for prim in stage.Traverse():
        iid = semantic_instance(prim)
        if iid is not None:
            out[prim.GetName()] = iid
    return out


def render_stage(
    stage_path: Path,
    camera: str,
    time_code: float,
    size: tuple[int, int],
    far_m: float,
    *,
    samples: int = 0,
    python: str | None = None,
) -> StageView:
    """Render `camera` (a prim name under /World/Cameras) of the stage at `time_code`.

    samples: 0 renders only the ground-truth pass; more also the colour image, exposed as the
    simulator's camera is (the stage's grade:exposureEv100) with a linear display transform.

    Raises:
        RenderSetupError: bpy is not installed.
        RenderError: the worker failed (its log's last lines in the message).
    """
    job_dir = Path(tempfile.mkdtemp(prefix="grade-usd-blender-"))
    try:
        job: dict[str, Any] = {
            "stage": str(Path(stage_path).resolve()),
            "camera": camera,
            "frame": time_code,
            "width": size[0],
            "height": size[1],
            "far_m": far_m,
            "samples": samples,
            "rgb": samples > 0,
            "exposure": _blender_exposure(stage_path),
            # Blender 5.0's importer gives a sphere light of intensity L (nits) the power
            # pi L W, whose surface then shines L / (4 pi r^2): scaled back to L.
            "light_intensity_scale": 4 * math.pi * LIGHT_RADIUS_M**2,
            "instances": instance_names(stage_path),
            "dome_rgb": _dome_rgb(stage_path),
        }
        (job_dir / "job.json").write_text(json.dumps(job))
        run_worker(job_dir, lambda event: None, python, WORKER)
        gt = np.load(job_dir / "gt.npy")
        rgb = (job_dir / "rgb.png").read_bytes() if samples > 0 else None
        return StageView(gt[0].astype(np.float64), np.rint(gt[1]).astype(np.uint16), rgb)
    finally:
        shutil.rmtree(job_dir, ignore_errors=True)
