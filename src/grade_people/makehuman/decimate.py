"""Halving the MakeHuman mesh once, for every shape: quadric-error half-edge collapses.

Core module (numpy only). MakeHuman's body has ~27 000 triangles; people in a crowd are drawn,
skinned and boxed every frame, so grade draws about half of them. A half-edge collapse moves
one vertex onto a neighbour, so the coarse mesh uses a subset of base.obj's vertices: it is
computed once on the reference shape (at set-up, `assets.convert_wheel`) and applied to every
shape, whose vertices are then simply the shaped base vertices it keeps. The cost of a collapse
is Garland and Heckbert's quadric error, scaled by an importance per vertex (the face keeps
its detail). Vertices on a UV seam or an open boundary never move, so the texture layout and
the surface stay closed; collapses that would flip a triangle or make an edge non-manifold are
refused.
"""

from __future__ import annotations

import heapq

import numpy as np
from numpy.typing import NDArray

from grade_common.types import FloatArray


def _plane_quadrics(p: FloatArray, tris: NDArray[np.int64]) -> FloatArray:
    """(V, 4, 4) sum of area-weighted plane quadrics of the triangles around each vertex."""
    a, b, c = p[tris[:, 0]], p[tris[:, 1]], p[tris[:, 2]]
    n = np.cross(b - a, c - a)
    area = np.linalg.norm(n, axis=1)
    unit = n / np.maximum(area, 1e-30)[:, None]
    plane = np.concatenate([unit, -np.einsum("fi,fi->f", unit, a)[:, None]], axis=1)
    k = np.einsum("fi,fj->fij", plane, plane) * area[:, None, None]
    q = np.zeros((len(p), 4, 4))
    for corner in range(3):
        np.add.at(q, tris[:, corner], k)
    return q


def decimate(
    positions: FloatArray,
    tris: NDArray[np.int64],
    tri_uv: NDArray[np.int64],
    importance: FloatArray,
    target_faces: int,
) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Triangles (F', 3) and their uv indices (F', 3) after collapses down to `target_faces`.

    Args:
        positions: (V, 3) vertex positions the errors are measured on.
        tris, tri_uv: (F, 3) vertex and uv index of every triangle corner.
        importance: (V,) factor on the error of moving each vertex.
        target_faces: stop at or below this many triangles (or when no collapse is allowed).
    """
    faces = tris.copy()
    uvs = tri_uv.copy()
    alive = np.ones(len(faces), dtype=bool)
    n_v = len(positions)
    vert_faces: list[set[int]] = [set() for _ in range(n_v)]
    for f, tri in enumerate(faces):
        for v in tri:
            vert_faces[int(v)].add(f)
    # Locked: vertices with several uv coordinates (seams) or on an open edge.
    uv_sets: list[set[int]] = [set() for _ in range(n_v)]
    for tri, tuv in zip(faces, uvs, strict=True):
        for v, t in zip(tri, tuv, strict=True):
            uv_sets[int(v)].add(int(t))
    edge_count: dict[tuple[int, int], int] = {}
    for tri in faces:
        for i in range(3):
            a, b = int(tri[i]), int(tri[(i + 1) % 3])
            key = (a, b) if a < b else (b, a)
            edge_count[key] = edge_count.get(key, 0) + 1
    locked = np.array([len(s) > 1 for s in uv_sets])
    for (a, b), count in edge_count.items():
        if count != 2:
            locked[a] = locked[b] = True
    quad = _plane_quadrics(positions, faces)
    version = np.zeros(n_v, dtype=np.int64)
    removed = np.zeros(n_v, dtype=bool)
    heap: list[tuple[float, int, int, int]] = []

    def neighbours(u: int) -> set[int]:
        out: set[int] = set()
        for f in vert_faces[u]:
            out.update(int(v) for v in faces[f])
        out.discard(u)
        return out

    def push(u: int) -> None:
        if locked[u] or removed[u]:
            return
        for v in neighbours(u):
            h = np.append(positions[v], 1.0)
            cost = float(h @ (quad[u] + quad[v]) @ h) * float(importance[u])
            heapq.heappush(heap, (cost, u, v, int(version[u])))

    for u in range(n_v):
        if vert_faces[u]:
            push(u)
    n_alive = int(alive.sum())
    while n_alive > target_faces and heap:
        _, u, v, ver = heapq.heappop(heap)
        if removed[u] or removed[v] or ver != version[u]:
            continue
        shared = [f for f in vert_faces[u] if v in faces[f]]
        if len(shared) != 2:
            continue
        # Link condition: u and v share exactly the two neighbours of their edge's triangles.
        opposite = {int(w) for f in shared for w in faces[f] if w != u and w != v}
        if neighbours(u) & neighbours(v) != opposite:
            continue
        # No triangle around u may flip (or degenerate) when u moves onto v.
        ok = True
        for f in vert_faces[u]:
            if f in shared:
                continue
            tri = positions[faces[f]]
            before = np.cross(tri[1] - tri[0], tri[2] - tri[0])
            moved = tri.copy()
            moved[list(faces[f]).index(u)] = positions[v]
            after = np.cross(moved[1] - moved[0], moved[2] - moved[0])
            if np.dot(before, after) <= 0.3 * np.linalg.norm(before) * np.linalg.norm(after):
                ok = False
                break
        if not ok:
            continue
        # u is no seam: all its triangles lie in one uv island, where v has one coordinate.
        f0 = shared[0]
        v_uv = int(uvs[f0][list(faces[f0]).index(v)])
        for f in shared:
            alive[f] = False
            for w in faces[f]:
                vert_faces[int(w)].discard(f)
        for f in list(vert_faces[u]):
            k = list(faces[f]).index(u)
            faces[f][k] = v
            uvs[f][k] = v_uv
            vert_faces[v].add(f)
        vert_faces[u].clear()
        removed[u] = True
        quad[v] += quad[u]
        n_alive -= 2
        for w in neighbours(v) | {v}:
            version[w] += 1
            push(w)
    return faces[alive], uvs[alive]
