"""Ray casting with Embree (embreex): one Embree geometry per instance, so geomID -> instance.

Embree works in float32: ranges carry a relative error of ~1e-7 (0.01 mm at 100 m).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from grade_common.types import Float32Array, FloatArray
from grade_sim.errors import LidarError

INSTALL_HINT = "pip install embreex==4.4.0.post1 (requirements/base.txt)"


def _embree() -> tuple[Any, Any, Any]:
    try:
        from embreex import mesh_construction, rtcore, rtcore_scene
    except ImportError as err:
        raise LidarError(f"lidar ray casting needs Embree: {INSTALL_HINT} ({err})") from err
    return rtcore, rtcore_scene, mesh_construction


@dataclass(frozen=True)
class InstanceMesh:
    """The triangles of one instance (world frame) with each triangle's reflectivity."""

    instance_id: int
    triangles: FloatArray  # (n, 3, 3)
    reflectivity: FloatArray  # (n,) in [0, 1]


@dataclass
class Hits:
    """Per ray: range (inf: no hit), instance id, |cos| of the incidence angle, reflectivity."""

    range_m: FloatArray
    instance_id: NDArray[np.uint16]
    cos_incidence: FloatArray
    reflectivity: FloatArray

    @classmethod
    def none(cls, n: int) -> Hits:
        return cls(np.full(n, np.inf), np.zeros(n, np.uint16), np.zeros(n), np.zeros(n))

    def take_nearer(self, other: Hits, rows: NDArray[np.int64]) -> None:
        """Replace rows[i] by other[i] wherever other is nearer."""
        closer = other.range_m < self.range_m[rows]
        idx = rows[closer]
        self.range_m[idx] = other.range_m[closer]
        self.instance_id[idx] = other.instance_id[closer]
        self.cos_incidence[idx] = other.cos_incidence[closer]
        self.reflectivity[idx] = other.reflectivity[closer]


class EmbreeDevice:
    """One Embree device shared by every scene of a run (creating one costs milliseconds)."""

    def __init__(self) -> None:
        rtcore, _, _ = _embree()
        self.handle = rtcore.EmbreeDevice()


class InstanceScene:
    """A committed Embree scene of instance meshes."""

    def __init__(self, meshes: Sequence[InstanceMesh], device: EmbreeDevice) -> None:
        _, rtcore_scene, mesh_construction = _embree()
        self._scene = rtcore_scene.EmbreeScene(device.handle)
        kept = [m for m in meshes if len(m.triangles)]
        self._instance = np.array([m.instance_id for m in kept], dtype=np.uint16)
        # Reflectivity of every triangle of the scene in one table: geomID, primID -> row.
        sizes = [len(m.triangles) for m in kept]
        self._first_row = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
        self._reflectivity = np.concatenate(
            [np.asarray(m.reflectivity, dtype=np.float64) for m in kept] or [np.zeros(0)]
        )
        for mesh in kept:
            # Geometry ids are handed out in creation order: geomID == index in `kept`.
            mesh_construction.TriangleMesh(
                self._scene, np.ascontiguousarray(mesh.triangles, dtype=np.float32)
            )
        self.empty = not kept

    def cast(self, origins: FloatArray, directions: FloatArray, range_max_m: float) -> Hits:
        """Nearest hit of each ray (unit directions) up to range_max_m."""
        n = len(origins)
        hits = Hits.none(n)
        if self.empty or n == 0:
            return hits
        d32 = np.ascontiguousarray(directions, dtype=np.float32)
        res = self.embree_hits(origins, d32, range_max_m)
        geom = res["geomID"]
        # Indoors every ray hits the static world: views instead of gathers then.
        hit: slice | NDArray[np.int64] = slice(None)
        if geom.min() < 0:
            hit = np.flatnonzero(geom >= 0)
            if not len(hit):
                return hits
        g = geom[hit]
        # |cos| of the incidence from Embree's unnormalised geometric normal, in float32 (as
        # Embree computes it): one row-wise dot product with the ray and one with itself.
        normal, d = res["Ng"][hit], d32[hit]
        cos = np.abs(np.einsum("ij,ij->i", normal, d))
        cos /= np.maximum(np.sqrt(np.einsum("ij,ij->i", normal, normal)), np.float32(1e-30))
        np.minimum(cos, np.float32(1.0), out=cos)
        hits.range_m[hit] = res["tfar"][hit]
        hits.instance_id[hit] = self._instance[g]
        hits.cos_incidence[hit] = cos
        hits.reflectivity[hit] = self._reflectivity[self._first_row[g] + res["primID"][hit]]
        return hits

    def embree_hits(
        self,
        origins: FloatArray | Float32Array,
        directions: FloatArray | Float32Array,
        range_max_m: float | FloatArray,
    ) -> dict[str, NDArray[Any]]:
        """Embree's own answer per ray (float32 rays): tfar, geomID (-1: none), primID, Ng.

        range_max_m: one for every ray or one per ray."""
        n = len(origins)
        # Embree writes the hit distances into this array: always a fresh one.
        dists = np.empty(n, dtype=np.float32)
        dists[:] = range_max_m
        res: dict[str, NDArray[Any]] = self._scene.run(
            np.ascontiguousarray(origins, dtype=np.float32),
            np.ascontiguousarray(directions, dtype=np.float32),
            dists=dists,
            output=1,
        )
        return res
