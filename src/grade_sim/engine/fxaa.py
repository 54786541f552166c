"""FXAA (fast approximate antialiasing) of a rendered RGB image, compiled (numba, `nogil`).

Drawing RGB at 1.5x and averaging it down (render.supersample) makes llvmpipe shade 2.25x the
pixels: about 15 ms more CPU a 640x480 frame, 0.45 CPU s per simulated second at 30 Hz. FXAA
finds the edges of the image drawn at its own size and blends across them as far as the edge's
sub-pixel position says, in about 2 ms on one core. It follows Timothy Lottes' FXAA 3.11
(quality preset): a pixel is an edge where its luma contrast against its four neighbours
exceeds a threshold; the edge runs along the axis of the smaller second derivative; the walk
along the edge to both of its ends gives how far this pixel lies from where the edge crosses
the pixel row, which is the weight of the neighbour across the edge; a sub-pixel term smooths
single-pixel features. Only edges in the image are found: geometry thinner than a pixel that
the render missed stays missing (supersampling catches some of it).

The result depends on the input image alone (no randomness, no state): the same frame gives
the same bytes.
"""

from __future__ import annotations

from typing import Any

import numba
import numpy as np
from numpy.typing import NDArray

# FXAA 3.11's quality settings (its defaults): the edge threshold relative to the local maximum
# luma and its absolute floor, the amount of sub-pixel smoothing, and the search steps along an
# edge (pixels; 12 steps reach 30 pixels).
EDGE_THRESHOLD = 0.125
EDGE_THRESHOLD_MIN = 0.0312
SUBPIX = 0.75
_STEPS = np.array([1.0, 1.0, 1.0, 1.0, 1.0, 1.5, 2.0, 2.0, 2.0, 2.0, 4.0, 8.0])
# How far a change in the input can move an output pixel: along a row (or a column) this many
# pixels, the edge walk's reach plus the bilinear sample's neighbour; across it, one.
REACH_ALONG_PX = int(np.ceil(_STEPS.sum())) + 1


@numba.njit(nogil=True, cache=True, inline="always")
def _at(luma: Any, y: int, x: int) -> float:  # pragma: no cover - compiled
    h, w = luma.shape
    return float(luma[min(max(y, 0), h - 1), min(max(x, 0), w - 1)])


@numba.njit(nogil=True, cache=True)
def _between(luma: Any, y0: int, y1: int, xf: float, horizontal: bool) -> float:  # pragma: no cover
    """Luma midway between rows y0 and y1 (columns, when not horizontal) at position xf along
    the edge, linearly interpolated."""
    x = int(np.floor(xf))
    t = xf - x
    if horizontal:
        a = 0.5 * (_at(luma, y0, x) + _at(luma, y1, x))
        b = 0.5 * (_at(luma, y0, x + 1) + _at(luma, y1, x + 1))
    else:
        a = 0.5 * (_at(luma, x, y0) + _at(luma, x, y1))
        b = 0.5 * (_at(luma, x + 1, y0) + _at(luma, x + 1, y1))
    return a + (b - a) * t


@numba.njit(nogil=True, cache=True)
def _fxaa(rgb: Any, luma: Any, steps: Any, out: Any) -> None:  # pragma: no cover - compiled
    h, w = luma.shape
    for y in range(h):
        for x in range(w):
            m = luma[y, x]
            n = _at(luma, y - 1, x)
            s = _at(luma, y + 1, x)
            e = _at(luma, y, x + 1)
            wl = _at(luma, y, x - 1)
            hi = max(m, n, s, e, wl)
            lo = min(m, n, s, e, wl)
            contrast = hi - lo
            if contrast < max(EDGE_THRESHOLD_MIN, hi * EDGE_THRESHOLD):
                continue  # out already holds the pixel
            nw = _at(luma, y - 1, x - 1)
            ne = _at(luma, y - 1, x + 1)
            sw = _at(luma, y + 1, x - 1)
            se = _at(luma, y + 1, x + 1)
            # Sub-pixel aliasing: the pixel against its 3x3 neighbourhood's mean.
            mean = (2.0 * (n + s + e + wl) + nw + ne + sw + se) / 12.0
            sub = min(abs(mean - m) / contrast, 1.0)
            sub = (-2.0 * sub + 3.0) * sub * sub
            sub = sub * sub * SUBPIX
            edge_h = abs(nw - 2.0 * wl + sw) + 2.0 * abs(n - 2.0 * m + s) + abs(ne - 2.0 * e + se)
            edge_v = abs(nw - 2.0 * n + ne) + 2.0 * abs(wl - 2.0 * m + e) + abs(sw - 2.0 * s + se)
            # A horizontal edge (luma changes from row to row) is walked along x.
            horizontal = edge_v >= edge_h
            before, after = (n, s) if horizontal else (wl, e)
            grad_before = abs(before - m)
            grad_after = abs(after - m)
            toward = -1 if grad_before >= grad_after else 1
            other = before if toward < 0 else after
            grad = 0.25 * max(grad_before, grad_after)
            local = 0.5 * (m + other)
            # Walk along the edge, midway between this row and the one across the edge.
            r0 = y if horizontal else x
            r1 = r0 + toward
            pos = float(x if horizontal else y)
            dn = dp = 0.0
            end_n = end_p = 0.0
            done_n = done_p = False
            for k in range(steps.shape[0]):
                if not done_n:
                    dn += steps[k]
                    end_n = _between(luma, r0, r1, pos - dn, horizontal) - local
                    done_n = abs(end_n) >= grad
                if not done_p:
                    dp += steps[k]
                    end_p = _between(luma, r0, r1, pos + dp, horizontal) - local
                    done_p = abs(end_p) >= grad
                if done_n and done_p:
                    break
            closer_end = end_n if dn < dp else end_p
            offset = 0.5 - min(dn, dp) / (dn + dp)
            if ((m - local) < 0.0) == (closer_end < 0.0):
                offset = 0.0  # the edge ends on this pixel's side: nothing to blend
            weight = max(offset, sub)
            yy = y + toward if horizontal else y
            xx = x if horizontal else x + toward
            yy = min(max(yy, 0), h - 1)
            xx = min(max(xx, 0), w - 1)
            for c in range(3):
                v = rgb[y, x, c] + (float(rgb[yy, xx, c]) - rgb[y, x, c]) * weight
                out[y, x, c] = np.uint8(min(max(v + 0.5, 0.0), 255.0))


def fxaa(rgb: NDArray[np.uint8]) -> NDArray[np.uint8]:
    """The (h, w, 3) uint8 image with its edges antialiased (a new array)."""
    rgb = np.ascontiguousarray(rgb)
    luma = (rgb.astype(np.float32) @ np.array([0.299, 0.587, 0.114], np.float32)) / 255.0
    out = rgb.copy()
    _fxaa(rgb, luma, _STEPS, out)
    return out


def warm_up() -> None:
    """Compile (or load from numba's cache) the kernel now, not at the first frame."""
    fxaa(np.zeros((2, 2, 3), np.uint8))
