"""What the contact-sheet scripts share: free-camera renders of a scene at any physics step, a
wall-aware camera distance, and writing a sheet without overwriting anything.

Imported by scripts run as `python scripts/NAME.py` (their folder is then on sys.path).
"""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np

from grade_common.atomic import StagedOutput
from grade_sim.actors.flying import FlyingObjects
from grade_sim.actors.people_group import People
from grade_sim.scene import Scene


class FreeCameraRenderer:
    """MuJoCo renders of `scene` with its actors posed at a step, from a free camera; up to
    max_width x max_height pixels (the offscreen buffer's size)."""

    def __init__(self, scene: Scene, max_width: int, max_height: int) -> None:
        import mujoco

        from grade_sim.engine.mujoco.builder import build_model

        self._mj = mujoco
        self.scene = scene
        self.model = build_model(scene).model
        self.data = mujoco.MjData(self.model)
        self._gl = mujoco.GLContext(max_width, max_height)
        self._gl.make_current()
        self._con = mujoco.MjrContext(self.model, mujoco.mjtFontScale.mjFONTSCALE_100.value)
        mujoco.mjr_setBuffer(mujoco.mjtFramebuffer.mjFB_OFFSCREEN.value, self._con)
        self._vscene = mujoco.MjvScene(self.model, maxgeom=5000)
        self._vscene.flags[mujoco.mjtRndFlag.mjRND_SHADOW] = True
        self._opt = mujoco.MjvOption()
        names = [f"{p.name}/{j}" for p in scene.group(People).specs for j in p.body_names()]
        names += [o.name for o in scene.group(FlyingObjects).specs]
        body = mujoco.mjtObj.mjOBJ_BODY
        self._mocap = np.array(
            [self.model.body_mocapid[mujoco.mj_name2id(self.model, body, n)] for n in names]
        )
        self._posed: int | None = None

    @property
    def mocap_ids(self) -> np.ndarray:
        """Mocap index of every actor body, in Scene.actor_body_poses order (people first)."""
        return self._mocap

    def refresh(self) -> None:
        """Applies mocap poses set by hand in `data` (then render with step None)."""
        self._mj.mj_forward(self.model, self.data)
        self._posed = None

    def pose(self, step: int) -> None:
        """Puts the actors where they are at `step` (for renders and ray tests)."""
        if self._posed == step:
            return
        pos, quat = self.scene.actor_body_poses(step)
        self.data.mocap_pos[self._mocap] = pos
        self.data.mocap_quat[self._mocap] = quat
        self._mj.mj_forward(self.model, self.data)
        self._posed = step

    def render(
        self,
        step: int | None,
        lookat: np.ndarray,
        azimuth_deg: float,
        elevation_deg: float,
        distance_m: float,
        size: tuple[int, int],
    ) -> np.ndarray:
        """RGB (height, width, 3) of the scene at `step` (None: as posed now, by `pose` or by
        hand and `refresh`); size = (width, height)."""
        if step is not None:
            self.pose(step)
        mj = self._mj
        cam = mj.MjvCamera()
        cam.type = mj.mjtCamera.mjCAMERA_FREE
        cam.lookat[:] = lookat
        cam.azimuth, cam.elevation, cam.distance = azimuth_deg, elevation_deg, distance_m
        mj.mjv_updateScene(
            self.model, self.data, self._opt, None, cam, mj.mjtCatBit.mjCAT_ALL.value, self._vscene
        )
        width, height = size
        rect = mj.MjrRect(0, 0, width, height)
        mj.mjr_render(rect, self._vscene, self._con)
        img = np.empty((height, width, 3), dtype=np.uint8)
        mj.mjr_readPixels(img, None, rect, self._con)
        return img[::-1].copy()

    def ray_m(self, origin: np.ndarray, direction: np.ndarray) -> float:
        """Distance from origin along direction to the first geom (inf: none); actors posed at
        the last step rendered or posed. Skins are not geoms: rays pass through people."""
        geom = np.zeros(1, dtype=np.int32)
        unit = direction / np.linalg.norm(direction)
        hit = self._mj.mj_ray(self.model, self.data, origin, unit, None, 1, -1, geom)
        return float("inf") if hit < 0 else float(hit)

    def clearance_m(
        self, lookat: np.ndarray, azimuth_deg: float, elevation_deg: float, spread_deg: float
    ) -> float:
        """Free distance from lookat towards a free camera at this azimuth and elevation (the
        nearest hit of three rays, spread_deg apart in azimuth)."""
        out = float("inf")
        el = np.radians(elevation_deg)
        for spread in (-spread_deg, 0.0, spread_deg):
            az = np.radians(azimuth_deg + spread)
            forward = np.array([np.cos(el) * np.cos(az), np.cos(el) * np.sin(az), np.sin(el)])
            out = min(out, self.ray_m(lookat, -forward))
        return out

    def close(self) -> None:
        self._con.free()
        self._gl.free()


def magnified_row(images: list[np.ndarray], y: int, x: int) -> np.ndarray:
    """The 120x90 window at (y, x) of each image, magnified 3x without smoothing and framed by
    4 white pixels, side by side: one row of a before/after sheet."""
    tiles = [
        cv2.resize(img[y : y + 90, x : x + 120], (360, 270), interpolation=cv2.INTER_NEAREST)
        for img in images
    ]
    return np.hstack([np.pad(t, ((4, 4), (4, 4), (0, 0)), constant_values=255) for t in tiles])


def write_image(path: Path, rgb: np.ndarray) -> None:
    """Writes an RGB sheet (format from the suffix); refuses to replace an existing file and
    moves the file into place only when complete."""
    params = [cv2.IMWRITE_JPEG_QUALITY, 88] if path.suffix.lower() in (".jpg", ".jpeg") else []
    bgr = cv2.cvtColor(np.ascontiguousarray(rgb), cv2.COLOR_RGB2BGR)
    ok, data = cv2.imencode(path.suffix, bgr, params)
    if not ok:
        raise SystemExit(f"{path}: OpenCV cannot encode {path.suffix!r} images")
    path.parent.mkdir(parents=True, exist_ok=True)
    with StagedOutput(path) as staging:
        staging.write_bytes(data.tobytes())
    print(f"wrote {path} ({rgb.shape[1]}x{rgb.shape[0]})")
