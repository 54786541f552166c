"""Where Filament finds Vulkan, and a probe that Filament can render headless (in a subprocess).

MuJoCo's Filament renderer (`mujoco.mjrf`) runs headless only through Vulkan: its OpenGL
backend is GLX-only and calls exit(1) without an X display, and a missing Vulkan loader aborts
the process. So the probe and the renderer run in child processes. `make setup-filament`
unpacks the Vulkan loader and Mesa's lavapipe (a CPU Vulkan driver) into .vulkan/ of the
checkout without installing them (installing them upgrades the system's Mesa OpenGL); a
Vulkan the system already has is used when .vulkan/ is absent.
"""

from __future__ import annotations

import functools
import os
import subprocess
import sys
from pathlib import Path

from grade_render.errors import RenderSetupError

FILAMENT_SETUP_COMMAND = "make setup-filament"
VULKAN_DIR = ".vulkan"
LIB_SUBDIR = "usr/lib/x86_64-linux-gnu"
ICD_JSON = "lvp_icd.json"
PROBE_TIMEOUT_S = 120.0

# Builds a Vulkan context, then renders one 8x8 frame of a one-box model and checks a pixel.
_PROBE = """
import mujoco, numpy as np
import mujoco.studio.window  # registers Filament's material assets
from mujoco import mjrf
from mujoco.rendering.filament.model_scene import ModelScene
m = mujoco.MjModel.from_xml_string('<mujoco><worldbody><geom type="box" size="1 1 1"/>'
                                   '</worldbody></mujoco>')
d = mujoco.MjData(m)
mujoco.mj_forward(m, d)
ctx = mjrf.Context(mjrf.ContextConfig(graphics_api=mjrf.GraphicsApi.GRAPHICS_API_VULKAN))
ms = ModelScene(ctx, m)
ms.update(d)
target = ctx.create_render_target(mjrf.RenderTargetConfig(
    width=8, height=8, color_format=mjrf.PixelFormat.PIXEL_FORMAT_RGBA8,
    depth_format=mjrf.PixelFormat.PIXEL_FORMAT_DEPTH32F))
buf = np.zeros((8, 8, 4), np.uint8)
read = mjrf.ReadRequest(target=target)
read.set_buffer(buf)
req = mjrf.RenderRequest()
req.scene, req.target = ms.scene, target
req.camera = mjrf.Camera(pos=[0, 0, 5], forward=[0, 0, -1], up=[0, 1, 0], frustum_bottom=-0.1,
                         frustum_top=0.1, frustum_near=0.1, frustum_far=10)
req.viewport.width = req.viewport.height = 8
req.draw_mode = mjrf.DrawMode.DRAW_MODE_SEGMENTATION_BY_ID
ctx.wait_for_frame(ctx.render([req], [read]))
assert buf[4, 4].any(), "Filament rendered nothing"
print("filament-ok")
"""


def _checkout() -> Path:
    # src/grade_render/filament_env.py -> the checkout (colcon's symlink install resolves here).
    return Path(__file__).resolve().parents[2]


def vulkan_env(base: dict[str, str] | None = None) -> dict[str, str]:
    """The environment of a Filament process: .vulkan/'s loader and lavapipe when present."""
    env = dict(os.environ if base is None else base)
    prefix = _checkout() / VULKAN_DIR
    icd = prefix / ICD_JSON
    if icd.is_file():
        lib = str(prefix / LIB_SUBDIR)
        env["LD_LIBRARY_PATH"] = os.pathsep.join(
            p for p in (lib, env.get("LD_LIBRARY_PATH", "")) if p
        )
        env["VK_ICD_FILENAMES"] = str(icd)
    env.pop("DISPLAY", None)  # never the GLX path
    return env


@functools.cache
def probe_filament(python: str = sys.executable) -> None:
    """Check once per process that Filament renders headless through Vulkan.

    Raises:
        RenderSetupError: it cannot (the message has the child's last lines and the fix).
    """
    try:
        proc = subprocess.run(
            [python, "-c", _PROBE],
            env=vulkan_env(),
            capture_output=True,
            text=True,
            timeout=PROBE_TIMEOUT_S,
        )
    except subprocess.TimeoutExpired as err:
        raise RenderSetupError(
            f"the Filament probe did not finish in {PROBE_TIMEOUT_S:.0f} s"
        ) from err
    if proc.returncode == 0 and "filament-ok" in proc.stdout:
        return
    lines = (proc.stderr + proc.stdout).strip().splitlines()
    tail = "\n".join(line for line in lines[-6:] if line.strip())
    why = f"exit {proc.returncode}" if proc.returncode >= 0 else f"signal {-proc.returncode}"
    raise RenderSetupError(
        f"MuJoCo's Filament renderer cannot render headless here ({why}); it needs Vulkan: "
        f"run `{FILAMENT_SETUP_COMMAND}` (unpacks libvulkan1 + mesa-vulkan-drivers into "
        f"{VULKAN_DIR}/) or install those Debian packages\n{tail}"
    )
