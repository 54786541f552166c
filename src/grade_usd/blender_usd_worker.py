"""Blender's view of an exported stage: run by Blender's Python (`bpy`) in its own process.

    python blender_usd_worker.py JOB_DIR

It imports only the standard library, numpy, bpy and grade render's worker (its ground-truth
pass: depth and object index through pixel centres). JOB_DIR/job.json names the stage, the
camera prim, the time code, the image size, the Cycles samples, the exposure and, read from the
stage by grade (which has usd-core), each prim's instance id and the radiance of the stage's
untextured DomeLights. The stage goes through Blender's own USD importer
(`bpy.ops.wm.usd_import`: meshes, UsdSkel people, cameras, lights, UsdPreviewSurface
materials); the worker adds only what that importer leaves out (the domes, as the world's
background), the render settings, the frame and each object's pass index. It writes
JOB_DIR/gt.npy (planar depth in metres, 0 where nothing is hit, and the instance id per pixel,
both through pixel centres) and, when asked, rgb.png, then prints one JSON line
`{"done": true, "objects": N}`.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import numpy as np

# The ground-truth pass is grade render's (its worker imports only numpy and bpy as well).
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "grade_render"))
from blender_worker import gt_compositor, read_gt  # type: ignore[import-not-found]


def _instance_of(name: str, ids: dict[str, int]) -> int:
    """An object's instance id: Blender names objects after their prims (".001" on repeats)."""
    base = name.split(".")[0]
    return ids.get(name, ids.get(base, 0))


def main(argv: list[str]) -> int:
    import bpy

    job_dir = Path(argv[0])
    job: dict[str, Any] = json.loads((job_dir / "job.json").read_text())
    bpy.ops.wm.read_factory_settings(use_empty=True)
    bpy.ops.wm.usd_import(
        filepath=job["stage"],
        merge_parent_xform=False,  # keep one object per prim: names are the prims'
        import_subdivision=False,
        set_frame_range=True,
        light_intensity_scale=float(job["light_intensity_scale"]),
    )
    s = bpy.context.scene
    peak = max(job["dome_rgb"])
    if peak > 0:
        world = bpy.data.worlds.new("dome")
        world.use_nodes = True
        background = world.node_tree.nodes["Background"]
        # A colour socket holds 0..1: the radiance's size goes into the strength.
        background.inputs["Color"].default_value = (*(c / peak for c in job["dome_rgb"]), 1.0)
        background.inputs["Strength"].default_value = peak
        s.world = world
    ids: dict[str, int] = job["instances"]
    objects = list(s.objects)
    for obj in objects:
        obj.pass_index = _instance_of(obj.name, ids)
    cams = [o for o in objects if o.type == "CAMERA" and o.name == job["camera"]]
    if not cams:
        names = sorted(o.name for o in objects if o.type == "CAMERA")
        raise SystemExit(f"no camera {job['camera']!r} in the imported stage; it has {names}")
    s.camera = cams[0]
    cams[0].data.clip_end = float(job["far_m"]) * 1.5
    s.frame_set(int(job["frame"]))
    s.render.engine = "CYCLES"
    s.cycles.device = "CPU"
    s.cycles.seed = 0
    s.render.resolution_x, s.render.resolution_y = int(job["width"]), int(job["height"])
    s.render.resolution_percentage = 100
    s.render.pixel_aspect_x = s.render.pixel_aspect_y = 1.0
    vl = s.view_layers[0]
    vl.use_pass_z = True
    vl.use_pass_object_index = True
    if job.get("rgb"):
        s.cycles.samples = int(job["samples"])
        s.cycles.use_denoising = True
        s.view_settings.view_transform = "Standard"  # sRGB of the linear value, as MuJoCo's
        s.view_settings.exposure = float(job["exposure"])
        s.render.image_settings.file_format = "PNG"
        s.render.filepath = str(job_dir / "rgb.png")
        bpy.ops.render.render(write_still=True)
    # Ground truth: one camera ray through each pixel centre (Z and object index only).
    s.compositing_node_group = gt_compositor(bpy)
    s.render.use_compositing = True
    s.cycles.samples = 1
    s.cycles.use_denoising = False
    s.cycles.max_bounces = 0
    s.cycles.pixel_filter_type, s.cycles.filter_width = "BOX", 0.01
    s.view_settings.view_transform = "Standard"
    settings = s.render.image_settings
    settings.file_format, settings.color_mode, settings.color_depth = "OPEN_EXR", "RGBA", "32"
    exr = job_dir / "gt.exr"
    s.render.filepath = str(exr)
    bpy.ops.render.render(write_still=True)
    tmp = job_dir / ".gt.partial.npy"
    np.save(tmp, read_gt(bpy, exr))
    os.replace(tmp, job_dir / "gt.npy")
    print(json.dumps({"done": True, "objects": len(objects)}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
