"""A timed trajectory of 3D poses and SE(3) helpers (quaternions are w, x, y, z)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray
from scipy.spatial.transform import Rotation

from grade_common.rotations import matrices_to_quats, quats_to_matrices
from grade_common.types import FloatArray
from grade_eval.errors import EvalError, TrajectoryError


def rotation_angles_rad(rotations: FloatArray) -> FloatArray:
    """Angle of each rotation (norm of its rotation vector), as evo's so3_log_angle."""
    return np.asarray(Rotation.from_matrix(rotations).magnitude(), dtype=np.float64)


def se3_inverse(poses: FloatArray) -> FloatArray:
    """Inverse of each SE(3) matrix in (N, 4, 4)."""
    inv = np.zeros_like(poses)
    rot_t = np.transpose(poses[:, :3, :3], (0, 2, 1))
    inv[:, :3, :3] = rot_t
    inv[:, :3, 3] = -np.einsum("nij,nj->ni", rot_t, poses[:, :3, 3])
    inv[:, 3, 3] = 1.0
    return inv


def se3_from(rotation: FloatArray, translation: FloatArray) -> FloatArray:
    """One 4x4 SE(3) matrix from a 3x3 rotation and a 3-vector."""
    pose = np.eye(4)
    pose[:3, :3] = rotation
    pose[:3, 3] = translation
    return pose


@dataclass(frozen=True)
class PoseTrajectory:
    """Poses at strictly increasing stamps: position (x, y, z) in metres, unit quaternion wxyz.

    Validated on construction: shapes agree, values finite, quaternions of unit norm (within
    1e-3; they are re-normalised), stamps strictly increasing.
    """

    stamps_s: FloatArray
    positions_xyz: FloatArray
    orientations_quat_wxyz: FloatArray
    name: str = "trajectory"
    _cache: dict[str, FloatArray] = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self) -> None:
        stamps = np.asarray(self.stamps_s, dtype=np.float64).reshape(-1)
        pos = np.asarray(self.positions_xyz, dtype=np.float64)
        quat = np.asarray(self.orientations_quat_wxyz, dtype=np.float64)
        n = stamps.shape[0]
        if pos.shape != (n, 3):
            raise TrajectoryError(
                f"{self.name}: positions_xyz has shape {pos.shape}, expected ({n}, 3)"
            )
        if quat.shape != (n, 4):
            raise TrajectoryError(
                f"{self.name}: orientations_quat_wxyz has shape {quat.shape}, expected ({n}, 4)"
            )
        for label, arr in (
            ("stamps_s", stamps),
            ("positions_xyz", pos),
            ("orientations_quat_wxyz", quat),
        ):
            bad = ~np.isfinite(arr)
            if bad.any():
                row = int(np.argwhere(bad)[0][0])
                raise TrajectoryError(f"{self.name}: {label} has a non-finite value at pose {row}")
        if n:
            norms = np.linalg.norm(quat, axis=1)
            bad_norm = np.abs(norms - 1.0) > 1e-3
            if bad_norm.any():
                row = int(np.argmax(bad_norm))
                raise TrajectoryError(
                    f"{self.name}: quaternion at pose {row} has norm {norms[row]:.6g}; "
                    "a unit quaternion (norm 1 within 1e-3) is required"
                )
            quat = quat / norms[:, None]
        steps = np.diff(stamps)
        if (steps <= 0).any():
            i = int(np.argmax(steps <= 0))
            raise TrajectoryError(
                f"{self.name}: stamps must be strictly increasing, but pose {i + 1} has stamp "
                f"{stamps[i + 1]:.9f} s after {stamps[i]:.9f} s at pose {i}"
            )
        object.__setattr__(self, "stamps_s", stamps)
        object.__setattr__(self, "positions_xyz", pos)
        object.__setattr__(self, "orientations_quat_wxyz", quat)

    @property
    def num_poses(self) -> int:
        """Number of poses."""
        return int(self.stamps_s.shape[0])

    @property
    def rotations(self) -> FloatArray:
        """Rotation matrices (N, 3, 3), cached."""
        if "rot" not in self._cache:
            self._cache["rot"] = (
                quats_to_matrices(self.orientations_quat_wxyz)
                if self.num_poses
                else np.zeros((0, 3, 3))
            )
        return self._cache["rot"]

    @property
    def poses_se3(self) -> FloatArray:
        """Poses as (N, 4, 4) SE(3) matrices (pose of the body in the trajectory's frame)."""
        poses = np.zeros((self.num_poses, 4, 4))
        poses[:, :3, :3] = self.rotations
        poses[:, :3, 3] = self.positions_xyz
        poses[:, 3, 3] = 1.0
        return poses

    @property
    def path_length_m(self) -> float:
        """Total travelled distance."""
        return float(np.linalg.norm(np.diff(self.positions_xyz, axis=0), axis=1).sum())

    @classmethod
    def from_se3(
        cls, stamps_s: FloatArray, poses_se3: FloatArray, name: str = "trajectory"
    ) -> PoseTrajectory:
        """Build from (N, 4, 4) matrices (rotation blocks must be orthonormal)."""
        poses = np.asarray(poses_se3, dtype=np.float64)
        quat = matrices_to_quats(poses[:, :3, :3]) if len(poses) else np.zeros((0, 4))
        return cls(np.asarray(stamps_s, dtype=np.float64), poses[:, :3, 3].copy(), quat, name)

    def subset(self, ids: NDArray[np.intp]) -> PoseTrajectory:
        """The poses at the given indices (must keep stamps increasing)."""
        return PoseTrajectory(
            self.stamps_s[ids], self.positions_xyz[ids], self.orientations_quat_wxyz[ids], self.name
        )

    def transformed(self, transform_se3: FloatArray, scale: float = 1.0) -> PoseTrajectory:
        """Positions scaled by `scale` then every pose left-multiplied by `transform_se3`."""
        rot = transform_se3[:3, :3]
        pos = scale * self.positions_xyz @ rot.T + transform_se3[:3, 3]
        new_rot = np.einsum("ij,njk->nik", rot, self.rotations)
        quat = matrices_to_quats(new_rot) if self.num_poses else np.zeros((0, 4))
        return PoseTrajectory(self.stamps_s, pos, quat, self.name)


def check_associated(
    reference: PoseTrajectory,
    estimate: PoseTrajectory,
    error: type[EvalError],
    mismatch: str,
    empty: str,
) -> None:
    """Raise `error` unless both trajectories hold the same, non-zero number of poses.

    Alignment and the metrics each raise their own error class with their own wording
    (`mismatch` is followed by the two pose counts).
    """
    if reference.num_poses != estimate.num_poses:
        raise error(f"{mismatch}: {reference.num_poses} vs {estimate.num_poses} poses")
    if reference.num_poses == 0:
        raise error(empty)
