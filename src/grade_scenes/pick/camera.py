"""The robot's RGB-D cameras (head, wrist) and the oblique view, rendered by MuJoCo; and the
contact sheet of a grasp sequence."""

from __future__ import annotations

from dataclasses import dataclass, field

import cv2
import mujoco
import numpy as np

from grade_common.types import FloatArray
from grade_scenes.pick.world import PickWorld
from grade_scenes.render import offscreen_renderer


@dataclass
class Cameras:
    """One offscreen renderer per image size, reused for every frame."""

    world: PickWorld
    width: int = 480
    height: int = 360
    _renderer: mujoco.Renderer | None = field(default=None, init=False)
    _option: mujoco.MjvOption = field(default_factory=mujoco.MjvOption, init=False)

    def _get(self) -> mujoco.Renderer:
        if self._renderer is None:
            self._renderer = offscreen_renderer(self.world.model, self.height, self.width)
            self._option = mujoco.MjvOption()
            self._option.sitegroup[:] = 0  # robosuite's grip markers are sites: not in images
        return self._renderer

    def rgb(self, camera: str) -> np.ndarray:
        """(h, w, 3) uint8 image of the named camera in the current physics state."""
        renderer = self._get()
        renderer.disable_depth_rendering()
        renderer.update_scene(self.world.data, camera=camera, scene_option=self._option)
        return np.asarray(renderer.render(), dtype=np.uint8).copy()

    def depth_m(self, camera: str) -> FloatArray:
        """(h, w) planar depth in metres of the named camera."""
        renderer = self._get()
        renderer.enable_depth_rendering()
        renderer.update_scene(self.world.data, camera=camera, scene_option=self._option)
        out: FloatArray = np.asarray(renderer.render(), dtype=np.float64).copy()
        renderer.disable_depth_rendering()
        return out

    def close(self) -> None:
        if self._renderer is not None:
            self._renderer.close()
            self._renderer = None


def contact_sheet(frames: list[tuple[str, np.ndarray]], columns: int = 4) -> np.ndarray:
    """Frames in rows of `columns`, each labelled in its top-left corner (RGB uint8)."""
    if not frames:
        raise ValueError("contact_sheet: no frames")
    h, w = frames[0][1].shape[:2]
    rows = (len(frames) + columns - 1) // columns
    sheet = np.full((rows * h, columns * w, 3), 255, dtype=np.uint8)
    for k, (label, image) in enumerate(frames):
        r, c = divmod(k, columns)
        tile = image.copy()
        cv2.rectangle(tile, (0, 0), (w, 22), (0, 0, 0), -1)
        cv2.putText(
            tile, label, (5, 16), cv2.FONT_HERSHEY_SIMPLEX, 0.45, (255, 255, 255), 1, cv2.LINE_AA
        )
        sheet[r * h : (r + 1) * h, c * w : (c + 1) * w] = tile
    return sheet
