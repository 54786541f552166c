"""16-bit PNG encodings of the float ground-truth images (surface normals, optical flow).

Flow follows the KITTI flow format so existing readers work: three uint16 channels in the file's
R, G, B order, R = dx * 64 + 2^15, G = dy * 64 + 2^15, B = 1 where the flow is valid (1/64 px
steps, +-512 px range). Normals map each component from [-1, 1] to [1, 65535]
((n + 1) * 32767 + 1, about 3e-5 per step); (0, 0, 0) marks pixels without a surface.

The functions take and return arrays in R, G, B channel order; OpenCV reads and writes B, G, R,
so pass them through `cv2.cvtColor(..., COLOR_RGB2BGR)` (or [..., ::-1]) at the file boundary.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

# The opt-in image folders of a TUM camera folder (beside rgb, depth, instance), by list name.
EXTRA_IMAGE_KINDS = ("semantic", "normals", "flow")
FLOW_SCALE = 64.0
FLOW_OFFSET = 2**15
NORMAL_SCALE = 32767.0


def flow_to_png_u16(flow_px: NDArray[np.float32]) -> NDArray[np.uint16]:
    """(h, w, 2) flow (NaN = none) -> (h, w, 3) uint16 KITTI channels (R, G, B order)."""
    valid = np.isfinite(flow_px[..., 0]) & np.isfinite(flow_px[..., 1])
    scaled = np.rint(flow_px.astype(np.float32) * np.float32(FLOW_SCALE)) + np.float32(FLOW_OFFSET)
    np.clip(scaled, 0, 65535, out=scaled)
    out = np.zeros((*flow_px.shape[:2], 3), dtype=np.uint16)
    out[..., :2] = np.where(valid[..., None], scaled, 0)
    out[..., 2] = valid
    return out


def png_u16_to_flow(png: NDArray[np.uint16]) -> NDArray[np.float32]:
    """Inverse of flow_to_png_u16: invalid pixels are NaN."""
    flow = (png[..., :2].astype(np.float32) - FLOW_OFFSET) / FLOW_SCALE
    flow[png[..., 2] == 0] = np.nan
    return flow


def normals_to_png_u16(normals: NDArray[np.float32]) -> NDArray[np.uint16]:
    """(h, w, 3) unit normals (0 = none) -> (h, w, 3) uint16 (R, G, B = x, y, z)."""
    valid = np.any(normals != 0, axis=-1)
    out = np.rint((np.clip(normals.astype(np.float64), -1, 1) + 1) * NORMAL_SCALE + 1)
    out[~valid] = 0
    return out.astype(np.uint16)


def png_u16_to_normals(png: NDArray[np.uint16]) -> NDArray[np.float32]:
    """Inverse of normals_to_png_u16: pixels without a surface are (0, 0, 0)."""
    n = (png.astype(np.float32) - 1) / NORMAL_SCALE - 1
    n[np.all(png == 0, axis=-1)] = 0
    return n
