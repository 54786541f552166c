"""The shared quaternion <-> matrix conversions give, bit for bit, what each caller computed with
its own copy before they were merged into grade_common.rotations (the copies are kept here, as
they were, as the reference)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from grade_common.rotations import (
    matrices_to_quats,
    quat_to_matrix,
    quats_to_matrices,
)

RNG = np.random.default_rng(42)
# Any length (the callers normalise), half turns and identities among them.
QUATS = np.concatenate(
    [
        RNG.normal(size=(4000, 4)) * RNG.uniform(0.2, 5.0, size=(4000, 1)),
        np.eye(4),
        -np.eye(4),
        [[1e-8, 1.0, 1e-9, 0.0], [0.7071067811865476, 0.0, 0.7071067811865475, 0.0]],
    ]
)


def _single_before(q: np.ndarray) -> np.ndarray:
    """grade_common.rotations.quat_to_matrix before the merge (one quaternion)."""
    w, x, y, z = np.asarray(q, dtype=np.float64) / np.linalg.norm(q)
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
            [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
            [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
        ]
    )


def _motion_before(q: np.ndarray) -> np.ndarray:
    """grade_people.motion._unit_quat_matrices before the merge (batches)."""
    w, x, y, z = np.moveaxis(q / np.linalg.norm(q, axis=-1, keepdims=True), -1, 0)
    return np.stack(
        [
            np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)], -1),
            np.stack([2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)], -1),
            np.stack([2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)], -1),
        ],
        -2,
    )


def _skeleton_to_matrices_before(quat_wxyz: np.ndarray) -> np.ndarray:
    flat = quat_wxyz.reshape(-1, 4)
    return (
        Rotation.from_quat(np.concatenate([flat[:, 1:], flat[:, :1]], axis=1))
        .as_matrix()
        .reshape(*quat_wxyz.shape[:-1], 3, 3)
    )


def _skeleton_to_quats_before(rot: np.ndarray) -> np.ndarray:
    flat = rot.reshape(-1, 3, 3)
    xyzw = Rotation.from_matrix(flat).as_quat()
    wxyz = np.concatenate([xyzw[:, 3:], xyzw[:, :3]], axis=1)
    wxyz *= np.where(wxyz[:, :1] < 0, -1.0, 1.0)
    return wxyz.reshape(*rot.shape[:-2], 4)


def _trajectory_to_matrices_before(quat_wxyz: np.ndarray) -> np.ndarray:
    xyzw = np.asarray(quat_wxyz, dtype=np.float64)[:, [1, 2, 3, 0]]
    return np.asarray(Rotation.from_quat(xyzw).as_matrix(), dtype=np.float64)


def _trajectory_to_quats_before(rotations: np.ndarray) -> np.ndarray:
    xyzw = Rotation.from_matrix(rotations).as_quat()
    wxyz = np.asarray(xyzw[:, [3, 0, 1, 2]], dtype=np.float64)
    wxyz[wxyz[:, 0] < 0] *= -1.0
    return wxyz


def _same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def test_a_single_quaternion_keeps_the_dot_product_norm() -> None:
    for q in QUATS:
        assert _same_bits(quat_to_matrix(q), _single_before(q)), q
    # lists and float32 inputs, as the engine and the URDF reader pass them
    assert _same_bits(quat_to_matrix([0.3, 0.1, -0.2, 0.9]), _single_before([0.3, 0.1, -0.2, 0.9]))
    q32 = QUATS[:50].astype(np.float32)
    for q in q32:
        assert _same_bits(quat_to_matrix(q), _single_before(q))


@pytest.mark.parametrize("shape", [(len(QUATS),), (10, 401)])
def test_a_batch_keeps_the_motion_library_rotations(shape: tuple[int, ...]) -> None:
    q = QUATS[: int(np.prod(shape))].reshape(*shape, 4)
    assert _same_bits(quat_to_matrix(q), _motion_before(q))


def test_the_scipy_pair_keeps_the_skeleton_and_trajectory_results() -> None:
    unit = QUATS / np.linalg.norm(QUATS, axis=1, keepdims=True)
    m = quats_to_matrices(unit)
    assert _same_bits(m, _skeleton_to_matrices_before(unit))
    assert _same_bits(m, _trajectory_to_matrices_before(unit))
    nested = unit[:4000].reshape(40, 100, 4)
    assert _same_bits(quats_to_matrices(nested), _skeleton_to_matrices_before(nested))
    q = matrices_to_quats(m)
    assert _same_bits(q, _skeleton_to_quats_before(m))
    assert _same_bits(q, _trajectory_to_quats_before(m))
    m_nested = m[:4000].reshape(40, 100, 3, 3)
    assert _same_bits(matrices_to_quats(m_nested), _skeleton_to_quats_before(m_nested))
    assert np.all(q[:, 0] >= 0)
