"""Surface normals (grade_sim.engine.normals): known planes and primitives, edges not blended."""

from __future__ import annotations

import numpy as np

from grade_sim.engine.normals import (
    BOX,
    CYLINDER,
    MESH,
    PLANE,
    SPHERE,
    depth_normals,
    normals_camera,
    primitive_normals_local,
)
from grade_sim.engine.pixels import backproject

H, W, F = 90, 120, 80.0
K = np.array([[F, 0.0, (W - 1) / 2], [0.0, F, (H - 1) / 2], [0.0, 0.0, 1.0]])


def _tilted_plane_depth(normal: np.ndarray, offset: float) -> np.ndarray:
    """Planar depth of the plane n . x = offset seen from the origin (optical frame)."""
    v, u = np.mgrid[0:H, 0:W].astype(np.float64)
    rays = np.stack([(u - K[0, 2]) / F, (v - K[1, 2]) / F, np.ones_like(u)], axis=-1)
    return offset / (rays @ normal)


def test_a_known_plane_has_its_normal_facing_the_camera() -> None:
    # A plane geom (local +z) turned to face the camera obliquely, 3 m away.
    n_cam = np.array([0.3, -0.2, -1.0])
    n_cam /= np.linalg.norm(n_cam)
    depth = _tilted_plane_depth(-n_cam, 3.0)
    z = n_cam
    x = np.cross([0.0, 1.0, 0.0], z)
    x /= np.linalg.norm(x)
    rot = np.stack([x, np.cross(z, x), z], axis=1)  # columns: the plane's axes in the world
    normals = normals_camera(
        backproject(depth, K),
        np.zeros((H, W), dtype=np.int64),
        np.eye(3),
        np.zeros(3),
        np.array([PLANE]),
        np.zeros((1, 3)),
        np.array([-3.0 * n_cam]),
        rot[None],
    )
    assert normals.dtype == np.float32
    assert np.allclose(normals, n_cam, atol=1e-6)


def test_the_same_plane_as_a_mesh_gets_its_normal_from_depth() -> None:
    n_cam = np.array([0.0, -0.6, -0.8])
    depth = _tilted_plane_depth(-n_cam, 2.0)
    normals = normals_camera(
        backproject(depth, K),
        np.zeros((H, W), dtype=np.int64),
        np.eye(3),
        np.zeros(3),
        np.array([MESH]),
        np.zeros((1, 3)),
        np.zeros((1, 3)),
        np.eye(3)[None],
    )
    assert np.abs(normals - n_cam).max() < 1e-6


def test_depth_normals_do_not_mix_surfaces_across_an_edge() -> None:
    depth = np.full((H, W), 2.0)
    depth[:, W // 2 :] = 5.0  # a step: two fronto-parallel surfaces
    labels = np.zeros((H, W), dtype=np.int64)
    labels[:, W // 2 :] = 1
    n = depth_normals(backproject(depth, K), labels)
    assert np.allclose(np.abs(n[..., 2]), 1.0)  # the columns beside the step too


def test_primitive_normals() -> None:
    pts = np.array([[0.5, 0.1, -0.2], [0.0, 0.0, 2.0], [1.0, 0.0, 0.3], [0.2, 0.1, 1.0]])
    types = np.array([BOX, SPHERE, CYLINDER, CYLINDER])
    sizes = np.array([[0.5, 0.4, 0.3], [2.0, 0, 0], [1.0, 1.0, 0], [1.0, 1.0, 0]])
    n = primitive_normals_local(pts, types, sizes)
    assert np.allclose(n, [[1, 0, 0], [0, 0, 1], [1, 0, 0], [0, 0, 1]])
