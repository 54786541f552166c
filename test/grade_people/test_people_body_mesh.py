"""The skinned body mesh: closed, weighted, dressed, seeded."""

from __future__ import annotations

from collections import Counter

import numpy as np

from grade_people.body_mesh import (
    N_REGIONS,
    Region,
    body_mesh,
    clothing_texture,
    random_clothing,
    skin_vertices,
)
from grade_people.skeleton import N_JOINTS, BodyParams, rest_positions

BODY = BodyParams(1.8, 0.7, 1.02, 1.05, 0.95)


def _mesh():  # type: ignore[no-untyped-def]
    return body_mesh(BODY, random_clothing(np.random.default_rng(1)))


def test_every_tube_is_closed_and_consistently_oriented() -> None:
    mesh = _mesh()
    directed = Counter(
        (int(a), int(b)) for f in mesh.faces for a, b in zip(f, np.roll(f, -1), strict=True)
    )
    assert max(directed.values()) == 1  # no edge used twice in one direction
    assert all((b, a) in directed for a, b in directed)  # each edge has its twin: closed


def test_weights_are_a_partition_of_unity_over_real_joints() -> None:
    mesh = _mesh()
    assert mesh.weights.shape == (len(mesh.vertices), N_JOINTS)
    np.testing.assert_allclose(mesh.weights.sum(axis=1), 1.0)
    assert (mesh.weights >= 0).all()
    assert set(np.unique(mesh.region)) == set(range(N_REGIONS))


def test_the_body_fits_its_height_and_stands_on_the_floor() -> None:
    v = _mesh().vertices
    assert abs(v[:, 2].max() - BODY.height_m) < 0.03
    assert -0.01 < v[:, 2].min() < 0.02
    assert np.ptp(v[:, 1]) < 0.7  # shoulder to shoulder, arms hanging


def test_rest_pose_skinning_is_the_identity() -> None:
    mesh = _mesh()
    rest = rest_positions(BODY)
    eye = np.broadcast_to(np.eye(3), (N_JOINTS, 3, 3))
    np.testing.assert_allclose(skin_vertices(mesh, rest, rest, eye), mesh.vertices, atol=1e-12)


def test_clothing_texture_has_one_band_per_region_and_is_seeded() -> None:
    a = random_clothing(np.random.default_rng(7))
    b = random_clothing(np.random.default_rng(7))
    assert a == b
    tex = clothing_texture(a)
    width = tex.shape[1] // N_REGIONS
    for region in Region:
        band = tex[:, region * width : (region + 1) * width]
        expect = np.round(np.asarray(a.colors[region]) * 255)
        assert np.any(np.all(np.abs(band.reshape(-1, 3) - expect) <= 1, axis=1))
    u = _mesh().texcoord[:, 0]
    assert ((u > 0) & (u < 1)).all()
