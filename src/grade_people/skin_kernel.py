"""Linear blend skinning of one mesh, compiled (numba, `nogil`): one pass over its vertices.

body_mesh.skin_vertices ran as two sparse products and two einsums, each with (V, 9) or (V, 3)
temporaries: about 0.45 ms a 5 312-vertex MakeHuman person, eight people at 30 Hz on the step
loop's thread. This kernel does the same float64 operations in the same order, so every vertex
comes out bit for bit as before (test/grade_people/test_skin_kernel.py compares them):

- each vertex's blended rotation and shift sum its bones' weighted terms in the order of the
  weight matrix's CSR row, starting from 0.0, as scipy's csr_matvecs does;
- the blended rotation times the rest vertex adds the x and z terms first, then y, as numpy's
  einsum("vab,vb->va") does for a 3-term sum;
- then shift + that product.
"""

from __future__ import annotations

from typing import Any

import numba
import numpy as np

from grade_common.types import FloatArray


@numba.njit(nogil=True, cache=True)
def _blend(
    indptr: Any, indices: Any, weights: Any, rot9: Any, shift: Any, verts: Any, out: Any
) -> None:  # pragma: no cover - compiled
    for v in range(len(indptr) - 1):
        r0 = r1 = r2 = r3 = r4 = r5 = r6 = r7 = r8 = 0.0
        s0 = s1 = s2 = 0.0
        for k in range(indptr[v], indptr[v + 1]):
            j = indices[k]
            w = weights[k]
            r0 += w * rot9[j, 0]
            r1 += w * rot9[j, 1]
            r2 += w * rot9[j, 2]
            r3 += w * rot9[j, 3]
            r4 += w * rot9[j, 4]
            r5 += w * rot9[j, 5]
            r6 += w * rot9[j, 6]
            r7 += w * rot9[j, 7]
            r8 += w * rot9[j, 8]
            s0 += w * shift[j, 0]
            s1 += w * shift[j, 1]
            s2 += w * shift[j, 2]
        x = verts[v, 0]
        y = verts[v, 1]
        z = verts[v, 2]
        out[v, 0] = s0 + ((r0 * x + r2 * z) + r1 * y)
        out[v, 1] = s1 + ((r3 * x + r5 * z) + r4 * y)
        out[v, 2] = s2 + ((r6 * x + r8 * z) + r7 * y)


def blend_skin(
    indptr: Any, indices: Any, weights: Any, rot: FloatArray, shift: FloatArray, verts: FloatArray
) -> FloatArray:
    """(V, 3) skinned vertices: sum_j w_vj (shift_j + rot_j v) for the CSR weights (V x J) of
    rest vertices `verts` (V, 3), joint rotations `rot` (J, 3, 3) and shifts (J, 3)."""
    out = np.empty((len(indptr) - 1, 3))
    _blend(
        indptr,
        indices,
        np.ascontiguousarray(weights, dtype=np.float64),
        np.ascontiguousarray(rot, dtype=np.float64).reshape(len(rot), 9),
        np.ascontiguousarray(shift, dtype=np.float64),
        np.ascontiguousarray(verts, dtype=np.float64),
        out,
    )
    return out


def warm_up() -> None:
    """Compile (or load from numba's cache) the kernel now (set-up, not a frame)."""
    blend_skin(
        np.array([0, 1], np.int32),
        np.zeros(1, np.int32),
        np.ones(1),
        np.eye(3)[None],
        np.zeros((1, 3)),
        np.zeros((1, 3)),
    )
