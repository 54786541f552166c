"""The render worker: run by Blender's Python (`bpy`) in a process of its own, one per device.

    python blender_worker.py JOB_DIR

It imports only the standard library, numpy and bpy (its interpreter may be a separate
environment: see docs/render.md), reads JOB_DIR/job.json and JOB_DIR/job.npz written by
`grade_render.job`, and for each frame writes into JOB_DIR/frames/<index>/ the denoised colour
image (rgb.png) and a pixel-centre ground-truth pass (gt.npy: planar depth in metres and the
object index), then prints one JSON line `{"frame": index, "seconds": s, "cpu_s": s}` on
stdout (wall time, and the CPU time of all its threads). Files are written under a temporary
name and renamed, so a killed worker never leaves half a frame.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

GPU_KINDS = ("OPTIX", "CUDA", "HIP", "ONEAPI", "METAL")
BACKGROUND_DEPTH = 1e9  # Cycles writes 1e10 where a ray hits nothing


def _srgb_to_linear(c: np.ndarray) -> np.ndarray:
    c = np.clip(np.asarray(c, dtype=np.float64), 0.0, 1.0)
    return np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)


def pick_device(bpy: Any, want: str) -> tuple[str, str]:
    """('GPU', kind) when Cycles finds a GPU and `want` is gpu/auto, else ('CPU', 'CPU')."""
    if want == "cpu":
        return "CPU", "CPU"
    prefs = bpy.context.preferences.addons["cycles"].preferences
    for kind in GPU_KINDS:
        try:
            prefs.compute_device_type = kind
        except TypeError:  # this build has no backend of that kind
            continue
        prefs.get_devices()
        gpus = [d for d in prefs.devices if d.type == kind]
        if gpus:
            for d in prefs.devices:
                d.use = d.type == kind
            return "GPU", kind
    if want == "gpu":
        raise SystemExit("grade render: --device gpu, but Cycles finds no CUDA/OptiX/HIP GPU")
    prefs.compute_device_type = "NONE"
    return "CPU", "CPU"


class Worker:
    def __init__(self, job_dir: Path) -> None:
        import bpy

        self.bpy = bpy
        self.dir = job_dir
        self.job: dict[str, Any] = json.loads((job_dir / "job.json").read_text())
        with np.load(job_dir / "job.npz") as data:
            self.arrays = {k: data[k] for k in data.files}
        bpy.ops.wm.read_factory_settings(use_empty=True)
        self.scene = bpy.context.scene
        self.objects: list[Any] = []
        self.device = self._settings()
        self._build_world()
        self._build_geoms()
        self._build_skins()
        self._build_lights()
        self._build_camera()
        self._gt_tree = gt_compositor(bpy)

    # -- set-up ------------------------------------------------------------------------------
    def _settings(self) -> tuple[str, str]:
        s, job = self.scene, self.job
        s.render.engine = "CYCLES"
        device, kind = pick_device(self.bpy, job["device"])
        s.cycles.device = device
        s.cycles.seed = int(job["seed"])
        s.cycles.use_animated_seed = False
        bounces = int(job["max_bounces"])
        s.cycles.max_bounces = bounces
        s.cycles.diffuse_bounces = s.cycles.glossy_bounces = min(4, bounces)
        s.cycles.transmission_bounces = min(12, bounces)
        threshold = float(job["noise_threshold"])
        s.cycles.use_adaptive_sampling = threshold > 0
        s.cycles.adaptive_threshold = threshold
        s.cycles.adaptive_min_samples = 0  # Cycles' own choice from the threshold
        s.cycles.use_light_tree = True
        s.cycles.denoiser = "OPENIMAGEDENOISE"
        s.cycles.denoising_quality = "HIGH"
        s.cycles.denoising_prefilter = "ACCURATE"  # albedo and normal guides denoised too
        s.render.use_persistent_data = True
        s.render.resolution_percentage = 100
        s.view_settings.view_transform = "AgX"
        s.view_settings.look = "None"
        s.view_settings.exposure = float(job["exposure"])
        vl = s.view_layers[0]
        vl.use_pass_z = True
        vl.use_pass_object_index = True
        return device, kind

    def _build_world(self) -> None:
        world = self.bpy.data.worlds.new("sky")
        world.use_nodes = True
        bg = world.node_tree.nodes["Background"]
        bg.inputs["Color"].default_value = (*self.job["sky_rgb"], 1.0)
        bg.inputs["Strength"].default_value = float(self.job["sky_strength"])
        self.scene.world = world

    def _material(self, name: str, geom: dict[str, Any], texture_key: str, uv: bool) -> Any:
        """Principled BSDF of the geom's colour x its texture: mapped by the texture coordinates
        of the mesh (`uv`, skins) or as MuJoCo maps a 2D texture on a geom (object x, y)."""
        bpy = self.bpy
        mat = bpy.data.materials.new(name)
        mat.use_nodes = True
        nodes, links = mat.node_tree.nodes, mat.node_tree.links
        bsdf = nodes["Principled BSDF"]
        rgb = _srgb_to_linear(np.asarray(geom["rgba"][:3]))
        bsdf.inputs["Base Color"].default_value = (*rgb, 1.0)
        bsdf.inputs["Roughness"].default_value = float(geom["roughness"])
        key = texture_key
        if key in self.arrays:
            pixels = self.arrays[key]
            h, w = pixels.shape[:2]
            img = bpy.data.images.new(f"t_{name}", w, h)
            rgba = np.ones((h, w, 4), np.float32)
            # A byte image in the sRGB colour space takes sRGB values; Blender's rows go up.
            rgba[:, :, :3] = pixels[::-1] / 255.0
            img.pixels.foreach_set(rgba.ravel())
            img.pack()
            tex = nodes.new("ShaderNodeTexImage")
            tex.image = img
            tex.interpolation = "Linear"
            # With texture coordinates MuJoCo repeats the image texrepeat times per unit of
            # them; without, it maps a 2D texture on a non-plane geom linearly in the geom's x
            # and y (OpenGL object-linear texgen), so walls show it stretched along z.
            coords = nodes.new("ShaderNodeTexCoord")
            scale = nodes.new("ShaderNodeVectorMath")
            scale.operation = "SCALE"
            scale.inputs["Scale"].default_value = float(geom["texrepeat_per_m"])
            links.new(coords.outputs["UV" if uv else "Object"], scale.inputs[0])
            links.new(scale.outputs["Vector"], tex.inputs["Vector"])
            if not uv:
                tex.projection = "FLAT"
            tint = nodes.new("ShaderNodeVectorMath")  # texture x material colour
            tint.operation = "MULTIPLY"
            links.new(tex.outputs["Color"], tint.inputs[0])
            tint.inputs[1].default_value = tuple(rgb)
            links.new(tint.outputs["Vector"], bsdf.inputs["Base Color"])
        return mat

    def _build_geoms(self) -> None:
        bpy = self.bpy
        for k, geom in enumerate(self.job["geoms"]):
            verts = self.arrays[f"v{k}"]
            faces = self.arrays[f"f{k}"]
            mesh = bpy.data.meshes.new(f"g{k}")
            mesh.from_pydata(verts.tolist(), [], faces.tolist())
            mesh.update()
            if geom["smooth"]:
                mesh.shade_smooth()
            uv = bool(geom.get("uv"))
            if uv:  # one (u, v) per face corner, in face order: Blender's loop order
                layer = mesh.uv_layers.new(name="uv")
                layer.data.foreach_set("uv", self.arrays[f"uv{k}"].ravel())
            mesh.materials.append(self._material(f"m{k}", geom, f"tex{k}", uv=uv))
            obj = bpy.data.objects.new(geom["name"], mesh)
            obj.pass_index = int(geom["instance_id"])
            obj.rotation_mode = "QUATERNION"
            self.scene.collection.objects.link(obj)
            self.objects.append(obj)

    def _build_skins(self) -> None:
        """Skinned people: one mesh each in world coordinates, its vertices set per frame."""
        bpy = self.bpy
        self.skins: list[Any] = []
        for k, skin in enumerate(self.job.get("skins", [])):
            faces = self.arrays[f"sf{k}"]
            verts = self.arrays[f"sv{k}"][0]
            mesh = bpy.data.meshes.new(f"s{k}")
            mesh.from_pydata(verts.tolist(), [], faces.tolist())
            uv = self.arrays[f"suv{k}"]
            layer = mesh.uv_layers.new(name="uv")
            loops = np.empty(len(mesh.loops), np.int32)
            mesh.loops.foreach_get("vertex_index", loops)
            layer.data.foreach_set("uv", uv[loops].astype(np.float32).ravel())
            mesh.update()
            mesh.shade_smooth()
            mesh.materials.append(self._material(f"sm{k}", skin, f"stex{k}", uv=True))
            obj = bpy.data.objects.new(skin["name"], mesh)
            obj.pass_index = int(skin["instance_id"])
            self.scene.collection.objects.link(obj)
            self.skins.append(obj)

    def _build_lights(self) -> None:
        bpy = self.bpy
        for k, light in enumerate(self.job["lights"]):
            if light["directional"]:
                data = bpy.data.lights.new(f"l{k}", "SUN")
                data.energy = float(light["power"])
                data.angle = np.radians(2.0)
            else:
                cutoff = float(light["cutoff_deg"])
                spot = cutoff < 90.0  # MuJoCo's wider cones light every direction in front
                data = bpy.data.lights.new(f"l{k}", "SPOT" if spot else "POINT")
                if spot:
                    data.spot_size = np.radians(2.0 * cutoff)
                    data.spot_blend = 0.0  # MuJoCo's cone has a hard edge
                data.shadow_soft_size = float(light["radius_m"])
                light_nodes(
                    data,
                    float(light["power"]),
                    light["attenuation"],
                    float(light["exponent"]) if spot else 0.0,
                )
            data.color = tuple(light["rgb"])
            data.use_shadow = (
                True  # a path-traced light always casts (the raster may not, for speed)
            )
            obj = bpy.data.objects.new(f"l{k}", data)
            obj.location = tuple(light["position_xyz"])
            direction = np.asarray(light["direction_xyz"], float)
            obj.rotation_mode = "QUATERNION"
            obj.rotation_quaternion = _quat_z_to(-direction)
            self.scene.collection.objects.link(obj)

    def _build_camera(self) -> None:
        bpy = self.bpy
        cam = bpy.data.cameras.new("camera")
        cam.sensor_fit = "HORIZONTAL"
        cam.sensor_width = 36.0
        cam.dof.use_dof = False
        self.camera = bpy.data.objects.new("camera", cam)
        self.camera.rotation_mode = "QUATERNION"
        self.scene.collection.objects.link(self.camera)
        self.scene.camera = self.camera
        head = self.job.get("headlight")
        if head:
            # The simulator's headlight: a light riding on the camera (MuJoCo's default).
            data = bpy.data.lights.new("headlight", "POINT")
            data.shadow_soft_size = float(head["radius_m"])
            light_nodes(data, float(head["power"]), head["attenuation"])
            data.color = tuple(head["rgb"])
            light = bpy.data.objects.new("headlight", data)
            light.parent = self.camera
            self.scene.collection.objects.link(light)

    # -- per frame ---------------------------------------------------------------------------
    def _place(self, obj: Any, matrix: np.ndarray) -> None:
        obj.location = tuple(matrix[:3, 3])
        obj.rotation_quaternion = _quat_of(matrix[:3, :3])

    def _pose(self, f: int, which: str) -> None:
        pos = self.arrays[f"{which}_geom_pos"][f]
        mat = self.arrays[f"{which}_geom_mat"][f]
        for k, obj in enumerate(self.objects):
            m = np.eye(4)
            m[:3, :3] = mat[k]
            m[:3, 3] = pos[k]
            self._place(obj, m)
        cam = self.arrays[f"{which}_world_optical"][f] @ np.diag([1.0, -1.0, -1.0, 1.0])
        self._place(self.camera, cam)
        for k, obj in enumerate(self.skins):
            obj.data.vertices.foreach_set("co", self.arrays[f"sv{k}"][f].ravel())
            obj.data.update()

    def _key(self, frame: int) -> None:
        for obj in (*self.objects, self.camera):
            obj.keyframe_insert("location", frame=frame)
            obj.keyframe_insert("rotation_quaternion", frame=frame)

    def _camera_intrinsics(self, frame: dict[str, Any]) -> None:
        s, cam = self.scene, self.camera.data
        w, h = int(frame["width"]), int(frame["height"])
        k = np.asarray(frame["K"], float).reshape(3, 3)
        s.render.resolution_x, s.render.resolution_y = w, h
        cam.lens = k[0, 0] * cam.sensor_width / w
        # Principal point: ROS pixel centres are integers, Blender's image centre is (w-1)/2.
        cam.shift_x = ((w - 1) / 2 - k[0, 2]) / max(w, h)
        cam.shift_y = (k[1, 2] - (h - 1) / 2) / max(w, h)
        s.render.pixel_aspect_x = 1.0
        s.render.pixel_aspect_y = k[0, 0] / k[1, 1]
        cam.clip_start = float(frame["near_m"])
        cam.clip_end = float(frame["far_m"]) * 1.5

    def _render_pass(
        self,
        path: Path,
        samples: int,
        denoise: bool,
        pixel_filter: tuple[str, float],
        blur: bool,
        compositor: Any,
        image_format: tuple[str, str, str],
    ) -> None:
        s = self.scene
        s.render.use_motion_blur = blur
        s.cycles.samples = samples
        s.cycles.use_denoising = denoise
        s.cycles.pixel_filter_type, s.cycles.filter_width = pixel_filter
        s.compositing_node_group = compositor
        s.render.use_compositing = compositor is not None
        settings = s.render.image_settings
        settings.file_format, settings.color_mode, settings.color_depth = image_format
        s.render.filepath = str(path)
        self.bpy.ops.render.render(write_still=True)

    def render_frame(self, f: int) -> None:
        s, job, frame = self.scene, self.job, self.job["frames"][f]
        out = self.dir / "frames" / str(frame["index"])
        out.mkdir(parents=True, exist_ok=True)
        self._camera_intrinsics(frame)
        blur = float(job["motion_blur_s"]) > 0
        for obj in (*self.objects, self.camera):
            obj.animation_data_clear()
        if blur:
            self._pose(f, "open")
            self._key(1)
        self._pose(f, "at")
        if blur:
            self._key(2)
        s.frame_set(2)
        s.render.motion_blur_position = "END"
        s.render.motion_blur_shutter = 1.0
        # Colour: path traced, denoised, pixel filter on, optional motion blur.
        tmp = out / ".rgb.partial.png"
        self._render_pass(
            tmp, int(job["samples"]), bool(job["denoise"]), ("BLACKMAN_HARRIS", 1.5), blur,
            None, ("PNG", "RGB", "8"),
        )  # fmt: skip
        # Ground truth: one sample through each pixel centre, no blur, so depth and instances are
        # those of the geometry at the frame's stamp, pixel for pixel like a rasteriser's.
        exr = out / ".gt.partial.exr"
        bounces = s.cycles.max_bounces
        s.cycles.max_bounces = 0  # its colour is not kept: camera rays only (Z and index)
        self._render_pass(
            exr, 1, False, ("BOX", 0.01), False, self._gt_tree, ("OPEN_EXR", "RGBA", "32")
        )
        s.cycles.max_bounces = bounces
        gt = read_gt(self.bpy, exr)
        tmp_gt = out / ".gt.partial.npy"
        np.save(tmp_gt, gt)
        os.replace(tmp_gt, out / "gt.npy")
        os.replace(tmp, out / "rgb.png")


def gt_compositor(bpy: Any) -> Any:
    """Depth -> red, object index -> green of a float EXR (read back with `read_gt`)."""
    tree = bpy.data.node_groups.new("gt", "CompositorNodeTree")
    tree.interface.new_socket(name="Image", in_out="OUTPUT", socket_type="NodeSocketColor")
    layers = tree.nodes.new("CompositorNodeRLayers")
    combine = tree.nodes.new("CompositorNodeCombineColor")
    out = tree.nodes.new("NodeGroupOutput")
    tree.links.new(layers.outputs["Depth"], combine.inputs["Red"])
    tree.links.new(layers.outputs["Object Index"], combine.inputs["Green"])
    combine.inputs["Alpha"].default_value = 1.0
    tree.links.new(combine.outputs[0], out.inputs[0])
    return tree


def read_gt(bpy: Any, exr: Path) -> np.ndarray:
    """(2, h, w) planar depth in metres (0 where nothing is hit) and object index, top row
    first, from the EXR that `gt_compositor` wrote (removed once read)."""
    img = bpy.data.images.load(str(exr))
    w, h = img.size
    px = np.empty(w * h * 4, np.float32)
    img.pixels.foreach_get(px)
    bpy.data.images.remove(img)
    exr.unlink()
    px = px.reshape(h, w, 4)[::-1]
    depth = px[:, :, 0].copy()
    depth[depth >= BACKGROUND_DEPTH] = 0.0
    return np.stack([depth, px[:, :, 1]])


def light_nodes(data: Any, power: float, attenuation: list[float], exponent: float = 0.0) -> None:
    """Emission strength power * r^2 / (a0 + a1 r + a2 r^2) * cos(angle) ** exponent: the
    light's own fall-off with Cycles' physical 1 / r^2 cancelled (Light Falloff at strength
    1: Linear = r, Constant = r^2) and MuJoCo's spot profile (a light's texture coordinate
    Normal is the emitted direction in its frame, shining along -z: cos = -Normal.z)."""
    data.use_nodes = True
    nodes, links = data.node_tree.nodes, data.node_tree.links
    emission = nodes["Emission"]
    fall = nodes.new("ShaderNodeLightFalloff")
    fall.inputs["Strength"].default_value = 1.0
    fall.inputs["Smooth"].default_value = 0.0

    def math_node(op: str, a: Any, b: Any) -> Any:
        node = nodes.new("ShaderNodeMath")
        node.operation = op
        for socket, value in zip(node.inputs[:2], (a, b), strict=True):
            if isinstance(value, float):
                socket.default_value = value
            else:
                links.new(value, socket)
        return node.outputs[0]

    a0, a1, a2 = (float(v) for v in attenuation)
    denom = math_node(
        "ADD",
        math_node("ADD", a0, math_node("MULTIPLY", a1, fall.outputs["Linear"])),
        math_node("MULTIPLY", a2, fall.outputs["Constant"]),
    )
    strength = math_node("DIVIDE", math_node("MULTIPLY", power, fall.outputs["Constant"]), denom)
    if exponent > 0:
        coords = nodes.new("ShaderNodeTexCoord")
        axis = nodes.new("ShaderNodeSeparateXYZ")
        links.new(coords.outputs["Normal"], axis.inputs[0])
        cos = math_node("MAXIMUM", math_node("MULTIPLY", -1.0, axis.outputs["Z"]), 0.0)
        strength = math_node("MULTIPLY", strength, math_node("POWER", cos, float(exponent)))
    links.new(strength, emission.inputs["Strength"])
    data.energy = 1.0  # the node tree carries the power


def _quat_of(r: np.ndarray) -> tuple[float, float, float, float]:
    """wxyz quaternion of a rotation matrix (Shepperd's method)."""
    m = np.asarray(r, float)
    t = np.trace(m)
    if t > 0:
        s = 2.0 * np.sqrt(1.0 + t)
        q = (0.25 * s, (m[2, 1] - m[1, 2]) / s, (m[0, 2] - m[2, 0]) / s, (m[1, 0] - m[0, 1]) / s)
    else:
        i = int(np.argmax(np.diag(m)))
        j, k = (i + 1) % 3, (i + 2) % 3
        s = 2.0 * np.sqrt(1.0 + m[i, i] - m[j, j] - m[k, k])
        v = [0.0, 0.0, 0.0]
        v[i] = 0.25 * s
        v[j] = (m[j, i] + m[i, j]) / s
        v[k] = (m[k, i] + m[i, k]) / s
        q = ((m[k, j] - m[j, k]) / s, v[0], v[1], v[2])
    return (float(q[0]), float(q[1]), float(q[2]), float(q[3]))


def _quat_z_to(direction: np.ndarray) -> tuple[float, float, float, float]:
    """A rotation taking +z to `direction` (lights shine along their -z)."""
    d = direction / max(float(np.linalg.norm(direction)), 1e-12)
    z = np.array([0.0, 0.0, 1.0])
    axis = np.cross(z, d)
    s = float(np.linalg.norm(axis))
    c = float(z @ d)
    if s < 1e-9:
        return (1.0, 0.0, 0.0, 0.0) if c > 0 else (0.0, 1.0, 0.0, 0.0)
    half = np.arctan2(s, c) / 2
    a = axis / s * np.sin(half)
    return (float(np.cos(half)), float(a[0]), float(a[1]), float(a[2]))


def main(argv: list[str]) -> int:
    job_dir = Path(argv[0])
    worker = Worker(job_dir)
    print(json.dumps({"device": worker.device[0], "kind": worker.device[1]}), flush=True)
    for f in range(len(worker.job["frames"])):
        t0, cpu0 = time.perf_counter(), time.process_time()
        worker.render_frame(f)
        frame = worker.job["frames"][f]["index"]
        seconds, cpu_s = time.perf_counter() - t0, time.process_time() - cpu0
        print(json.dumps({"frame": frame, "seconds": seconds, "cpu_s": cpu_s}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
