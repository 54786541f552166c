"""The worker's lights reproduce the simulator's light model: a Lambertian plane under a spot
light gets a * d * cos(incidence) * cos(angle)^exponent / (a0 + a1 r + a2 r^2), in Cycles."""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pytest

from grade_render.errors import RenderSetupError
from grade_render.worker_process import blender_python

pytestmark = [pytest.mark.render, pytest.mark.slow]

WORKER_DIR = Path(__file__).resolve().parents[2] / "src" / "grade_render"
SCRIPT = """
import math, sys
import bpy, numpy as np
sys.path.insert(0, {worker_dir!r})
from blender_worker import light_nodes
bpy.ops.wm.read_factory_settings(use_empty=True)
s = bpy.context.scene
s.render.engine = "CYCLES"; s.cycles.samples = 16; s.cycles.use_denoising = False
s.cycles.max_bounces = 0; s.render.resolution_x = s.render.resolution_y = 41
s.cycles.pixel_filter_type = "BOX"; s.cycles.filter_width = 0.01  # pixel centres
mesh = bpy.data.meshes.new("plane")
mesh.from_pydata([(-9, -9, 0), (9, -9, 0), (9, 9, 0), (-9, 9, 0)], [], [(0, 1, 2, 3)])
mat = bpy.data.materials.new("white"); mat.use_nodes = True
nodes = mat.node_tree.nodes; nodes.remove(nodes["Principled BSDF"])
diffuse = nodes.new("ShaderNodeBsdfDiffuse"); diffuse.inputs["Color"].default_value = (1, 1, 1, 1)
mat.node_tree.links.new(diffuse.outputs[0], nodes["Material Output"].inputs["Surface"])
mesh.materials.append(mat); plane = bpy.data.objects.new("plane", mesh)
s.collection.objects.link(plane)
light = bpy.data.lights.new("spot", "SPOT"); light.spot_size = math.radians(160)
light.spot_blend = 0.0; light.shadow_soft_size = 0.0
light_nodes(light, 4 * math.pi ** 2 * {d}, {attenuation}, {exponent})
obj = bpy.data.objects.new("spot", light); obj.location = (0, 0, {height})
s.collection.objects.link(obj)
cam = bpy.data.cameras.new("cam"); cam.type = "ORTHO"; cam.ortho_scale = 4.0
cam_obj = bpy.data.objects.new("cam", cam); cam_obj.location = (0, 0, 5)
s.collection.objects.link(cam_obj)
s.camera = cam_obj
s.render.image_settings.file_format = "OPEN_EXR"; s.render.filepath = {exr!r}
bpy.ops.render.render(write_still=True)
img = bpy.data.images.load({exr!r}); px = np.array(img.pixels[:]).reshape(41, 41, 4)
np.save({npy!r}, px[20, 20:, 0])
"""


@pytest.mark.parametrize(
    ("d", "attenuation", "exponent", "height"),
    [
        (0.5, [1.0, 0.0, 0.0], 0.0, 1.0),
        (0.7, [1.0, 0.0, 0.02], 2.0, 2.5),
        (0.6, [1.0, 0.3, 0.0], 10.0, 1.5),
    ],
)
def test_a_plane_under_a_spot_gets_the_simulators_light(
    tmp_path: Path, d: float, attenuation: list[float], exponent: float, height: float
) -> None:
    try:
        python = blender_python()
    except RenderSetupError:
        pytest.skip("bpy is not installed: run `make setup-render`")
    script = tmp_path / "lights.py"
    npy = tmp_path / "row.npy"
    script.write_text(
        SCRIPT.format(
            worker_dir=str(WORKER_DIR), d=d, attenuation=attenuation, exponent=exponent,
            height=height, exr=str(tmp_path / "o.exr"), npy=str(npy),
        )
    )  # fmt: skip
    subprocess.run([python, str(script)], check=True, capture_output=True, timeout=600)
    got = np.load(npy)
    x = np.arange(21) * 4.0 / 41  # pixel centres from the plane's centre out (41 px over 4 m)
    r = np.hypot(x, height)
    cos = height / r  # incidence on the plane = angle to the spot's axis (it points down)
    a0, a1, a2 = attenuation
    want = d * cos * cos**exponent / (a0 + a1 * r + a2 * r * r)
    print(np.round(got, 4), np.round(want, 4))
    assert np.allclose(got, want, rtol=0.01, atol=1e-3)
