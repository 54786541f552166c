"""The compiled skinning pass gives the vertices of the sparse-product formula it replaced, bit
for bit, on MakeHuman people in random poses."""

from __future__ import annotations

import numpy as np
from scipy.spatial.transform import Rotation

from grade_people.body_mesh import Clothing, body_mesh, skin_vertices
from grade_people.makehuman.dress import makehuman_params
from grade_people.makehuman.shape import random_shape
from grade_people.skeleton import N_JOINTS, rest_positions


def _formula(mesh, rest, pos, rot):  # type: ignore[no-untyped-def]
    """skin_vertices as two sparse products and two einsums (grade before the kernel)."""
    w = mesh.sparse_weights
    shift = pos - np.einsum("jab,jb->ja", rot, rest)
    blend = (w @ rot.reshape(len(rot), 9)).reshape(-1, 3, 3)
    return w @ shift + np.einsum("vab,vb->va", blend, mesh.vertices)


def test_skinning_matches_the_sparse_formula_bit_for_bit() -> None:
    rng = np.random.default_rng(3)
    for _ in range(3):
        params = makehuman_params(random_shape((1.5, 1.95), rng))
        mesh = body_mesh(params, Clothing({}, False, False))  # type: ignore[arg-type]
        rest = rest_positions(params)
        for _ in range(4):
            rot = Rotation.random(N_JOINTS, random_state=int(rng.integers(1 << 31))).as_matrix()
            pos = rest + rng.normal(0.0, 0.3, rest.shape) + rng.uniform(-20, 20, 3)
            got = skin_vertices(mesh, rest, pos, rot)
            assert got.shape == mesh.vertices.shape
            np.testing.assert_array_equal(got, _formula(mesh, rest, pos, rot))
