"""Distorted and fisheye images from pinhole renders: the source views and the remap tables.

Core (numpy + OpenCV only). Rasterisers draw pinhole images; a plumb_bob camera is remapped from
one wider pinhole view on the same axis, an equidistant fisheye from the faces of a cube map
(front, right, left, down, up, back; only the faces its rays use). Every output pixel takes its
value from the one view its ray falls in, by the rule of its frame field (`FIELD_RULES`; a frame
is a dataclass of images, such as the engines' CameraFrame): colours bilinear, ids nearest (never
blended), depth nearest and then converted from the view's planar depth to the output's
convention (`DepthKind`), camera-frame vectors nearest and rotated.
"""

from __future__ import annotations

import dataclasses
import enum
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import Any, TypeVar, cast

import cv2
import numpy as np
from numpy.typing import NDArray

from grade_common.errors import ConfigError
from grade_common.types import FloatArray
from grade_sim.config.camera_model import CameraGeometry, CameraModel
from grade_sim.optics.lens import DepthKind, Lens, lens_of

F = TypeVar("F")  # a frame: a dataclass of images (the engines' CameraFrame)
C = TypeVar("C", bound=CameraGeometry)  # a camera config (config.scenario.CameraConfig)

# Pixels each view has beyond the rays it serves, so that bilinear taps stay inside it.
MARGIN_PX = 2
MAX_VIEW_SIZE_PX = 4096
OUTSIDE = -1000.0  # map coordinate of pixels no view serves: cv2.remap's border value (0)


class FieldRule(enum.Enum):
    """How one CameraFrame field is resampled from the views."""

    COLOR = "color"  # bilinear
    LABEL = "label"  # nearest: ids are never blended
    DEPTH = "depth"  # nearest, then planar depth of the view -> the output's DepthKind
    VECTOR_CAM = "vector_cam"  # nearest, then rotated from the view's frame to the output's


# One line per CameraFrame field (grade_sim.engine.protocol); a field without a rule is an error
# at the first remap.
FIELD_RULES: dict[str, FieldRule] = {
    "rgb": FieldRule.COLOR,
    "depth_m": FieldRule.DEPTH,
    "instance": FieldRule.LABEL,
    "semantic": FieldRule.LABEL,
    "normals_cam": FieldRule.VECTOR_CAM,
    # flow_px has no rule: pixel motion in the views is not pixel motion through the lens. The
    # engine remaps where the points were at t-1 (as vectors) and projects them with the lens.
}


@dataclass(frozen=True)
class SourceView:
    """One pinhole render feeding a distorted camera: square pixels, principal point centred."""

    name: str  # "wide", or a cube face: front, right, left, down, up, back
    r_optical_view: FloatArray  # 3x3: the view's optical axes (columns) in the camera's frame
    width: int
    height: int
    focal_px: float

    @property
    def hfov_deg(self) -> float:
        return math.degrees(2 * math.atan(0.5 * self.width / self.focal_px))

    def config(self, camera: C) -> C:
        """The pinhole camera config of this view (the engine renders it like any camera)."""
        return dataclasses.replace(
            camera,
            name=f"{camera.name}/{self.name}",
            width=self.width,
            height=self.height,
            hfov_deg=self.hfov_deg,
            model=CameraModel.PINHOLE,
            distortion=(),
            fov_deg=None,
        )


def _face(x: tuple[int, int, int], y: tuple[int, int, int], z: tuple[int, int, int]) -> FloatArray:
    return np.array([x, y, z], dtype=np.float64).T


# Cube faces: (name, rotation) with the face's optical x, y, z axes in the camera's optical frame.
CUBE_FACES: tuple[tuple[str, FloatArray], ...] = (
    ("front", _face((1, 0, 0), (0, 1, 0), (0, 0, 1))),
    ("right", _face((0, 0, -1), (0, 1, 0), (1, 0, 0))),
    ("left", _face((0, 0, 1), (0, 1, 0), (-1, 0, 0))),
    ("down", _face((1, 0, 0), (0, 0, -1), (0, 1, 0))),
    ("up", _face((1, 0, 0), (0, 0, 1), (0, -1, 0))),
    ("back", _face((-1, 0, 0), (0, 1, 0), (0, 0, -1))),
)


@dataclass(frozen=True, eq=False)
class CameraRig:
    """A distorted camera's source views and its remap from their side-by-side atlas."""

    lens: Lens
    views: tuple[SourceView, ...]
    depth_kind: DepthKind
    view_index: NDArray[np.int16]  # (h, w): the view serving each output pixel, -1 = none
    map_x: NDArray[np.float32]  # (h, w): source x in the atlas (views side by side)
    map_y: NDArray[np.float32]
    depth_scale: NDArray[np.float32]  # (h, w): output depth / the view's planar depth

    def render(self, render_view: Callable[[str], F]) -> F:
        """Render every view (by its name) and remap the frames to the lens."""
        return self.remap([render_view(v.name) for v in self.views])

    def remap(self, frames: Sequence[F]) -> F:
        """The output frame from one frame per view (in `views` order), field by field.

        Frames are dataclasses whose fields are images or None (not rendered); the output is
        the same dataclass.

        Raises:
            KeyError: a field with no rule in FIELD_RULES.
        """
        kind: Any = type(frames[0])
        out: dict[str, Any] = {}
        for f in dataclasses.fields(kind):
            arrays = [getattr(frame, f.name) for frame in frames]
            if any(a is None for a in arrays):
                out[f.name] = None
                continue
            if f.name not in FIELD_RULES:
                raise KeyError(
                    f"{kind.__name__} field {f.name!r} has no remap rule: add it to "
                    f"grade_sim.optics.rig.FIELD_RULES (one of {[r.value for r in FieldRule]})"
                )
            out[f.name] = self.remap_field(FIELD_RULES[f.name], arrays)
        return cast(F, kind(**out))

    def remap_field(self, rule: FieldRule, arrays: Sequence[NDArray[Any]]) -> NDArray[Any]:
        """One field's output image from its image in every view (in `views` order)."""
        atlas = arrays[0] if len(arrays) == 1 else np.concatenate(arrays, axis=1)
        interp = cv2.INTER_LINEAR if rule is FieldRule.COLOR else cv2.INTER_NEAREST
        maps = self._fixed_maps(interp)
        out: NDArray[Any] = cv2.remap(
            atlas, maps[0], maps[1], interp, borderMode=cv2.BORDER_CONSTANT, borderValue=0
        )
        if out.ndim < atlas.ndim:  # cv2 drops a trailing channel axis of length 1
            out = out[..., None]
        if rule is FieldRule.DEPTH:
            scaled: NDArray[Any] = (out * self.depth_scale).astype(atlas.dtype)
            return scaled
        if rule is FieldRule.VECTOR_CAM:
            rotated = np.zeros_like(out)
            for k, view in enumerate(self.views):
                mask = self.view_index == k
                rotated[mask] = out[mask] @ view.r_optical_view.T.astype(out.dtype)
            return rotated
        return out

    def _fixed_maps(self, interp: int) -> tuple[NDArray[Any], NDArray[Any]]:
        return self._linear_maps if interp == cv2.INTER_LINEAR else self._nearest_maps

    # Fixed-point maps: cv2.remap then skips the float -> fixed conversion on every frame.
    @cached_property
    def _linear_maps(self) -> tuple[NDArray[Any], NDArray[Any]]:
        m1, m2 = cv2.convertMaps(self.map_x, self.map_y, cv2.CV_16SC2)
        return m1, m2

    @cached_property
    def _nearest_maps(self) -> tuple[NDArray[Any], NDArray[Any]]:
        m1, _ = cv2.convertMaps(self.map_x, self.map_y, cv2.CV_16SC2, nninterpolation=True)
        return m1, np.empty((0, 0), np.uint16)  # nearest: no interpolation table


def _candidate_views(lens: Lens, rays: FloatArray, focal_px: float) -> list[SourceView]:
    if lens.model is CameraModel.PLUMB_BOB:
        tan_x = np.abs(rays[:, 0] / rays[:, 2]).max(initial=0.0)
        tan_y = np.abs(rays[:, 1] / rays[:, 2]).max(initial=0.0)
        width = 2 * math.ceil(focal_px * tan_x + MARGIN_PX)
        height = 2 * math.ceil(focal_px * tan_y + MARGIN_PX)
        return [SourceView("wide", np.eye(3), width, height, focal_px)]
    # A face serves rays within 45 deg of its axis (|x/z|, |y/z| <= 1), plus the margin.
    size = 2 * math.ceil(focal_px + MARGIN_PX)
    return [SourceView(name, r, size, size, focal_px) for name, r in CUBE_FACES]


class _RigError(Exception):
    """A rig cannot be built; the message follows the camera's key path."""


def build_rig(config: CameraGeometry, path: str = "camera") -> CameraRig | None:
    """The rig of a distorted camera; None for a pinhole camera (rendered directly).

    Raises:
        ConfigError: a view would exceed MAX_VIEW_SIZE_PX, or a pixel's ray cannot be found.
    """
    try:
        return _build_rig(config)
    except _RigError as err:
        raise ConfigError(f"{path}{err}") from None


# Cached: the scenario check, the model builder and the engine all ask for the same rig.
@lru_cache(maxsize=16)
def _build_rig(config: CameraGeometry) -> CameraRig | None:
    if config.model is CameraModel.PINHOLE:
        return None
    lens = lens_of(config)
    rays_img, valid_img = lens.pixel_rays
    if config.model is CameraModel.PLUMB_BOB and not valid_img.all():
        bad = np.argwhere(~valid_img)[0]
        raise _RigError(
            f".distortion: {list(config.distortion)} cannot be inverted at pixel "
            f"(u={bad[1]}, v={bad[0]}) of the {config.width}x{config.height} image (the "
            "distortion folds there); use smaller coefficients or a smaller hfov_deg"
        )
    rays = rays_img[valid_img]
    focal_px = float(lens.k[0, 0]) * config.supersample
    views = _candidate_views(lens, rays, focal_px)
    axes = np.stack([v.r_optical_view[:, 2] for v in views])
    # Each ray goes to the view whose axis is nearest (the cube map's rule).
    choice = np.argmax(rays @ axes.T, axis=1)
    used = [k for k in range(len(views)) if np.any(choice == k)]
    views = [views[k] for k in used]
    choice = np.searchsorted(np.array(used), choice)
    for v in views:
        if max(v.width, v.height) > MAX_VIEW_SIZE_PX:
            raise _RigError(
                f": the {v.name} source view would be {v.width}x{v.height} px (limit "
                f"{MAX_VIEW_SIZE_PX}); lower supersample ({config.supersample}), hfov_deg "
                f"({config.hfov_deg}) or the distortion"
            )
    widths = np.array([v.width for v in views])
    heights = np.array([v.height for v in views])
    offsets = np.cumsum(widths) - widths
    in_view = np.einsum("nij,ni->nj", np.stack([v.r_optical_view for v in views])[choice], rays)
    sx = focal_px * in_view[:, 0] / in_view[:, 2] + (widths[choice] - 1) / 2
    sy = focal_px * in_view[:, 1] / in_view[:, 2] + (heights[choice] - 1) / 2
    h, w = config.height, config.width
    view_index = np.full((h, w), -1, dtype=np.int16)
    map_x = np.full((h, w), OUTSIDE, dtype=np.float32)
    map_y = np.full((h, w), OUTSIDE, dtype=np.float32)
    view_index[valid_img] = choice
    map_x[valid_img] = sx + offsets[choice]
    map_y[valid_img] = sy
    kind = lens.depth_kind
    depth_scale = np.zeros((h, w), dtype=np.float32)
    # Depth is sampled nearest: an output pixel shows the point its nearest view pixel sees, at
    # that point's range (z_v / u_v.z, u_v the view pixel's unit ray), not a planar z read along
    # another ray. Planar output (plumb_bob) has the one view's axes: z is unchanged.
    if kind is DepthKind.PLANAR:
        depth_scale[valid_img] = 1.0
    else:
        # The very pixels cv2.remap picks (its own rounding of the float32 maps).
        nearest, _ = cv2.convertMaps(map_x, map_y, cv2.CV_16SC2, nninterpolation=True)
        px = nearest[valid_img].astype(np.float64)
        px[:, 0] -= offsets[choice]
        centre = np.stack([(widths[choice] - 1) / 2, (heights[choice] - 1) / 2], axis=1)
        xy = (px - centre) / focal_px
        depth_scale[valid_img] = np.sqrt(1.0 + (xy * xy).sum(axis=1))
    return CameraRig(lens, tuple(views), kind, view_index, map_x, map_y, depth_scale)


def source_views(config: CameraGeometry) -> tuple[SourceView, ...]:
    """The pinhole views a camera is rendered from; () for a pinhole camera (itself)."""
    rig = build_rig(config)
    return () if rig is None else rig.views
