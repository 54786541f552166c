"""The Filament render worker: MuJoCo's own PBR renderer (`mujoco.mjrf`) in a process of its own.

    python filament_worker.py JOB_DIR

A process of its own because Filament aborts the process when Vulkan is missing (see
grade_render.filament_env, which sets its environment). It imports only the standard library,
numpy, OpenCV and mujoco, reads JOB_DIR/filament.json and JOB_DIR/filament.npz (grade_render.
filament_job: the run's compiled model, each frame's recorded state and camera) and writes for
each frame, like the Blender worker, JOB_DIR/frames/<index>/rgb.png and gt.npy (planar depth in
metres and the instance id), then prints `{"frame": index, "seconds": s}` on stdout.

Three passes per frame (Filament reads one target per render call): colour with
post-processing off (deterministic, scene-linear up to Filament's pre-exposure, tone mapped
here with `tone_map`), depth (reversed-Z, converted to metres) and segmentation by geom id.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

# A post-processing-off colour pass holds Filament's linear colour times its camera exposure
# (EV100 15, the default; the lights' intensities are set for it: filament_job.filament_lights)
# in 8 bits; FILAMENT_GAIN_EV would bring it to the raster renderer's brightness before the tone
# curve's offset (settings.DEFAULT_EXPOSURE_EV) and the AgX-like curve. Measured with 0: the
# default scenario's mean brightness is 0.90-0.92x the raster's (160x120, frames 0 and 11), no
# pixel clipped. The pass holds about 50-70 levels, so smooth gradients band slightly.
FILAMENT_GAIN_EV = 0.0
# The side of each face of the ambient fill's cube texture (one colour: any size would do).
AMBIENT_CUBE_PX = 16


def agx_like(linear: np.ndarray) -> np.ndarray:
    """Scene-linear Rec.709 -> display sRGB in [0, 1]: log2 encoding over [-12.47, 4.03] EV
    (middle grey 0.18 at -2.47) and the polynomial fit of AgX's base sigmoid (T. Sobotka's AgX,
    fit by B. Wrensch), per channel (no AgX inset matrix: hues stay the raster's)."""
    x = np.clip(np.log2(np.maximum(linear, 1e-10)), -12.47393, 4.026069)
    x = (x + 12.47393) / (4.026069 + 12.47393)
    x2 = x * x
    x4 = x2 * x2
    y = (
        15.5 * x4 * x2
        - 40.14 * x4 * x
        + 31.96 * x4
        - 6.868 * x2 * x
        + 0.4298 * x2
        + 0.1191 * x
        - 0.00232
    )
    # The sigmoid's output is display-encoded already (gamma ~2.2 like sRGB).
    out: np.ndarray = np.clip(y, 0.0, 1.0)
    return out


def tone_map(rgb8_linear: np.ndarray, exposure_ev: float) -> np.ndarray:
    """Filament's 8-bit linear colour -> 8-bit display colour (exposure, then `agx_like`)."""
    linear = rgb8_linear.astype(np.float64) / 255.0 * 2.0 ** (FILAMENT_GAIN_EV + exposure_ev)
    return np.rint(agx_like(linear) * 255.0).astype(np.uint8)


def depth_m(reversed_z: np.ndarray, near_m: float, far_m: float) -> np.ndarray:
    """Filament's reversed-Z depth buffer (1 at near, 0 at far) -> planar depth; 0 = nothing."""
    d = reversed_z.astype(np.float64)
    z = near_m * far_m / (d * (far_m - near_m) + near_m)
    out: np.ndarray = np.where(d > 0.0, z, 0.0)
    return out


class Worker:
    def __init__(self, job_dir: Path) -> None:
        import mujoco
        import mujoco.studio.window  # (registers Filament's material assets)
        from mujoco import mjrf
        from mujoco.rendering.filament.model_scene import ModelScene

        self.mj, self.rf = mujoco, mjrf
        self.job_dir = job_dir
        # The scene is built before anything whose size varies with the job (the frame list,
        # the arrays) is read, so its memory layout is the model's alone (fixed_address_layout).
        self.model = mujoco.MjModel.from_binary_path(str(job_dir / "model.mjb"))
        self.data = mujoco.MjData(self.model)
        config = mjrf.ContextConfig(graphics_api=mjrf.GraphicsApi.GRAPHICS_API_VULKAN)
        self.ctx = mjrf.Context(config)
        self.ctx.set_clear_color([0.0, 0.0, 0.0])
        self.scene = ModelScene(self.ctx, self.model)
        self.targets: dict[tuple[str, int, int], Any] = {}
        self.job: dict[str, Any] = json.loads((job_dir / "filament.json").read_text())
        self.arrays = dict(np.load(job_dir / "filament.npz"))
        if self.job["shadows"]:
            # ModelLights takes each light's cast_shadow from the model at every update (a
            # Light.set_cast_shadow is undone by the next ModelScene.update), so set it here.
            self.model.light_castshadow[:] = 1
        self.ambient = self._ambient_light(self.job.get("ambient") or {})

    def _ambient_light(self, ambient: dict[str, Any]) -> Any:
        """The raster's flat ambient fill: a uniform environment (a cube texture of one colour)
        as Filament's image-based light, `ambient["intensity"]` cd/m^2 (filament_job.
        filament_ambient). Filament's default environment is replaced; None without one."""
        rf = self.rf
        intensity = float(ambient.get("intensity", 0.0))
        if intensity <= 0:
            return None
        size = AMBIENT_CUBE_PX
        rgb = np.rint(np.clip(np.asarray(ambient["rgb"], np.float64), 0.0, 1.0) * 255.0)
        texels = np.broadcast_to(rgb.astype(np.uint8), (6 * size, size, 3))
        texture = self.ctx.create_texture(
            rf.TextureConfig(
                width=size,
                height=size,
                format=rf.PixelFormat.PIXEL_FORMAT_RGB8,
                color_space=rf.ColorSpace.COLORSPACE_LINEAR,
                sampler_type=rf.SamplerType.TEXTURE_CUBE,
            )
        )
        data = rf.TextureData()
        data.set_image(np.ascontiguousarray(texels).tobytes())
        texture.upload(data)
        light = self.ctx.create_light(
            rf.LightParams(type=rf.LightType.LIGHT_IMAGE, texture=texture, intensity=intensity)
        )
        self.scene.scene.add_light(light)
        return light, texture, data

    def _target(self, kind: str, width: int, height: int) -> Any:
        rf = self.rf
        key = (kind, width, height)
        if key not in self.targets:
            color = rf.PixelFormat.PIXEL_FORMAT_RGB8
            if kind == "depth":
                color = rf.PixelFormat.PIXEL_FORMAT_R32F
            elif kind == "segmentation":
                color = rf.PixelFormat.PIXEL_FORMAT_RGBA8
            config = rf.RenderTargetConfig(
                width=width,
                height=height,
                color_format=color,
                depth_format=rf.PixelFormat.PIXEL_FORMAT_DEPTH32F,
            )
            self.targets[key] = self.ctx.create_render_target(config)
        return self.targets[key]

    def _pass(self, kind: str, frame: dict[str, Any], camera: Any) -> np.ndarray:
        rf = self.rf
        w, h = int(frame["width"]), int(frame["height"])
        shape, dtype, mode = {
            "rgb": ((h, w, 3), np.uint8, rf.DrawMode.DRAW_MODE_DEFAULT),
            "depth": ((h, w), np.float32, rf.DrawMode.DRAW_MODE_DEPTH),
            "segmentation": ((h, w, 4), np.uint8, rf.DrawMode.DRAW_MODE_SEGMENTATION_BY_ID),
        }[kind]
        target = self._target(kind, w, h)
        buf = np.zeros(shape, dtype)
        read = rf.ReadRequest(target=target)
        read.set_buffer(buf)
        req = rf.RenderRequest()
        req.scene, req.target, req.camera = self.scene.scene, target, camera
        req.viewport.left, req.viewport.bottom = 0, 0
        req.viewport.width, req.viewport.height = w, h
        req.draw_mode = mode
        req.post_processing = False  # temporal effects change pixels between identical frames
        req.reflections = bool(self.job["reflections"])
        req.shadows = True
        req.skybox = True
        req.headlight = False
        self.ctx.wait_for_frame(self.ctx.render([req], [read]))
        return buf

    def camera(self, frame: dict[str, Any], world_optical: np.ndarray) -> Any:
        """An off-axis frustum from the pinhole K: the simulator's rays, pixel for pixel (K's
        principal point is in pixel-centre coordinates: the image spans -0.5 .. w - 0.5)."""
        w, h = float(frame["width"]), float(frame["height"])
        fx, _, cx, _, fy, cy = (float(v) for v in frame["K"][:6])
        cx, cy = cx + 0.5, cy + 0.5
        near = float(frame["near_m"])
        rot = world_optical[:3, :3]
        return self.rf.Camera(
            pos=world_optical[:3, 3],
            forward=rot[:, 2],
            up=-rot[:, 1],
            frustum_center=near * (w / 2 - cx) / fx,
            frustum_width=near * w / (2 * fx),
            frustum_bottom=-near * (h - cy) / fy,
            frustum_top=near * cy / fy,
            frustum_near=near,
            frustum_far=float(frame["far_m"]),
        )

    def render(self, k: int, frame: dict[str, Any]) -> None:
        import cv2

        a = self.arrays
        self.data.qpos[:] = a["qpos"][k]
        if self.model.nmocap:
            self.data.mocap_pos[:] = a["mocap_pos"][k]
            self.data.mocap_quat[:] = a["mocap_quat"][k]
        self.mj.mj_forward(self.model, self.data)
        self.scene.update(self.data)
        cam = self.camera(frame, a["world_optical"][k])
        rgb = tone_map(self._pass("rgb", frame, cam), float(self.job["exposure"]))
        depth = depth_m(self._pass("depth", frame, cam), frame["near_m"], frame["far_m"])
        seg = self._pass("segmentation", frame, cam).astype(np.int64)
        # Filament's segmentation ids: 0 nothing, 1 + geom id, then ngeom + 2 + skin id.
        segid = seg[..., 0] | (seg[..., 1] << 8) | (seg[..., 2] << 16)
        lookup = np.concatenate([[0], a["geom_instance"], [0], a["skin_instance"]])
        instance = lookup.astype(np.float64)[np.clip(segid, 0, len(lookup) - 1)]
        out = self.job_dir / "frames" / str(frame["index"])
        out.mkdir(parents=True, exist_ok=True)
        tmp = out / "rgb.partial.png"
        if not cv2.imwrite(str(tmp), np.ascontiguousarray(rgb[..., ::-1])):
            raise RuntimeError(f"cannot write {tmp}")
        with open(out / "gt.partial.npy", "wb") as fh:
            np.save(fh, np.stack([depth, instance]).astype(np.float32))
        os.replace(out / "gt.partial.npy", out / "gt.npy")
        os.replace(tmp, out / "rgb.png")


# Linux personality flag: no address space layout randomisation (see fixed_address_layout).
ADDR_NO_RANDOMIZE = 0x0040000
# The environment the worker re-executes with: these variables (when set) and nothing else,
# padded by FIXED_LAYOUT_PAD to FIXED_ENV_BYTES in all, so the initial stack and heap are the
# same whatever the caller's environment (a test runner's, a shell's) holds. Only what the
# worker needs, all of it fixed by the set-up (the Python and Vulkan paths): a variable's value
# counts, not only the total (a TMPDIR 100 bytes long changed the image), so PATH, HOME, TMPDIR
# and the locale, which differ between callers, are left out (the worker runs no program).
KEPT_ENV = (
    "PYTHONPATH", "PYTHONHOME", "LD_LIBRARY_PATH", "VK_ICD_FILENAMES", "VK_DRIVER_FILES",
    "LP_NUM_THREADS", "GRADE_FILAMENT_FIXED_LAYOUT",
)  # fmt: skip
FIXED_LAYOUT_FLAG = "GRADE_FILAMENT_FIXED_LAYOUT"
FIXED_LAYOUT_PAD = "GRADE_FILAMENT_PAD"
FIXED_ENV_BYTES = 16384


def fixed_environment(environ: dict[str, str]) -> dict[str, str]:
    """`environ`'s KEPT_ENV, PYTHONHASHSEED 0, the layout flag, and a pad to FIXED_ENV_BYTES."""
    env = {k: environ[k] for k in KEPT_ENV if k in environ}
    env |= {FIXED_LAYOUT_FLAG: "1", "PYTHONHASHSEED": "0", FIXED_LAYOUT_PAD: ""}
    used = sum(len(k) + len(v) + 2 for k, v in env.items())  # "K=V\0" each
    env[FIXED_LAYOUT_PAD] = "x" * max(0, FIXED_ENV_BYTES - used)
    return env


def fixed_address_layout(argv: list[str]) -> None:
    """Re-run this process once in a fixed memory layout (Linux): no address space layout
    randomisation, the job directory as the working directory (argv is always `worker .`) and
    `fixed_environment`.

    Filament's colour depends on where the process's memory lies: one geom's pixels (a door
    trim, 20-27 of 640x480) come out one level of its 8-bit linear colour apart (2-4 after the
    tone curve) in some memory layouts: with ASLR on in 9 of 18 processes; with ASLR off still
    when the environment's size changed by a few bytes (7 of 16 paddings of 0-15 bytes, with
    one lavapipe thread too), so a caller's environment or the job directory's name decided it
    (docs/render.md). Somewhere in the renderer, work is ordered by address. Pinning the layout
    takes the caller and the job out of it; a per-process race at set-up still picks one of the
    two images now and then (not found; docs/render.md). Elsewhere (or where personality() is
    refused) it runs as it is.
    """
    if not sys.platform.startswith("linux") or os.environ.get(FIXED_LAYOUT_FLAG) == "1":
        return
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    current = libc.personality(0xFFFFFFFF)
    if current < 0 or current & ADDR_NO_RANDOMIZE:
        return
    if libc.personality(current | ADDR_NO_RANDOMIZE) < 0:
        return
    os.chdir(argv[1])
    script = str(Path(__file__).resolve())
    os.execve(sys.executable, [sys.executable, script, "."], fixed_environment(dict(os.environ)))


def main(argv: list[str]) -> int:
    fixed_address_layout(argv)
    t0 = time.perf_counter()
    worker = Worker(Path(argv[1]))
    print(json.dumps({"device": "CPU", "kind": "Filament (Vulkan)",
                      "startup_s": time.perf_counter() - t0}), flush=True)  # fmt: skip
    for k, frame in enumerate(worker.job["frames"]):
        t, cpu0 = time.perf_counter(), time.process_time()
        worker.render(k, frame)
        seconds, cpu_s = time.perf_counter() - t, time.process_time() - cpu0
        print(json.dumps({"frame": frame["index"], "seconds": seconds, "cpu_s": cpu_s}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
