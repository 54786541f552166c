"""Every moving part in one Embree scene, each in its own slot, cast with one call per scan.

A moving part keeps its triangles in its body frame; the rays that can meet it move into that
frame instead (rigid parts are never re-meshed). With one Embree scene per part a scan made one
Embree call, and one round of decoding, per part it touched (~50 for 8 people); here all parts
sit in one scene, part `i` shifted so that its bounding-sphere centre lies on slot `i` of a
grid whose spacing exceeds every sphere's diameter. A ray for part `i` starts where it enters
that part's sphere (moved into slot `i`) and stops where it leaves it, so it never reaches
another slot, and one call casts the rays of every part. The slots stay within a few metres of
the origin, so float32 keeps sub-micrometre precision (the ranges are added back in float64).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from grade_common.types import FloatArray
from grade_sim.sensors.lidar.raycast import EmbreeDevice, InstanceMesh, InstanceScene

SLOT_MARGIN_M = 0.5  # free space between two slots' spheres


@dataclass
class PartHits:
    """The candidate rays that hit their part: index into the candidates, range from the ray's
    origin, part index, primitive id and |cos| of the incidence."""

    which: NDArray[np.int64]
    range_m: FloatArray
    part: NDArray[np.int64]
    prim: NDArray[np.int64]
    cos_incidence: FloatArray


class PartAtlas:
    """Moving parts (triangles in body frames, with bounding spheres) in one Embree scene."""

    def __init__(
        self,
        triangles: Sequence[FloatArray],
        centres: FloatArray,
        radii: FloatArray,
        device: EmbreeDevice,
    ) -> None:
        n = len(triangles)
        spacing = 2.0 * float(np.max(radii, initial=0.0)) + SLOT_MARGIN_M
        k = max(1, math.ceil(round(n ** (1 / 3), 9)))
        i = np.arange(n)
        slots = np.stack([i % k, (i // k) % k, i // (k * k)], axis=1) * spacing
        # Added to a body-frame point of part i: its point in the atlas.
        self.shift: FloatArray = slots - np.asarray(centres, dtype=np.float64).reshape(n, 3)
        self._scene = InstanceScene(
            [
                InstanceMesh(p, np.asarray(t, dtype=np.float64) + self.shift[p], np.zeros(len(t)))
                for p, t in enumerate(triangles)
            ],
            device,
        )
        self.empty = self._scene.empty

    def cast(
        self,
        part: NDArray[np.int64],
        origin_body: FloatArray,
        direction_body: FloatArray,
        t_start: FloatArray,
        t_stop: FloatArray,
    ) -> PartHits:
        """Rays in their part's body frame (unit directions), each cast on its own part only,
        over [t_start, t_stop] (inside the part's bounding sphere)."""
        start = origin_body + t_start[:, None] * direction_body
        start += self.shift[part]
        d32 = direction_body.astype(np.float32)
        res = self._scene.embree_hits(start, d32, t_stop - t_start)
        geom = res["geomID"]
        # A ray never leaves its part's sphere, so it can hit nothing else; checked anyway.
        which = np.flatnonzero(geom == part)
        normal, d = res["Ng"][which], d32[which]
        cos = np.abs(np.einsum("ij,ij->i", normal, d))
        cos /= np.maximum(np.sqrt(np.einsum("ij,ij->i", normal, normal)), np.float32(1e-30))
        np.minimum(cos, np.float32(1.0), out=cos)
        return PartHits(
            which,
            t_start[which] + res["tfar"][which],
            part[which],
            res["primID"][which].astype(np.int64),
            cos,
        )
