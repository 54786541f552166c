"""APE (ATE) and RPE with the same definitions as evo (evo.core.metrics), vectorised."""

from __future__ import annotations

import enum
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from grade_common.types import FloatArray
from grade_eval.core.trajectory import (
    PoseTrajectory,
    check_associated,
    rotation_angles_rad,
    se3_inverse,
)
from grade_eval.errors import EvalConfigError, TrajectoryError


class PoseRelation(enum.Enum):
    """Which part of the error pose E is measured (evo's names)."""

    TRANSLATION = "trans_part"  # |t(E)| in m
    ROTATION_ANGLE_DEG = "angle_deg"  # |log(R(E))| in degrees
    ROTATION_ANGLE_RAD = "angle_rad"
    ROTATION_PART = "rot_part"  # ||R(E) - I||_F
    FULL = "full"  # ||E - I||_F


class DeltaUnit(enum.Enum):
    """Unit of the RPE delta."""

    FRAMES = "f"
    METRES = "m"


UNITS = {
    PoseRelation.TRANSLATION: "m",
    PoseRelation.ROTATION_ANGLE_DEG: "deg",
    PoseRelation.ROTATION_ANGLE_RAD: "rad",
    PoseRelation.ROTATION_PART: "",
    PoseRelation.FULL: "",
}


@dataclass(frozen=True)
class Statistics:
    """Summary of an error array, as evo's get_all_statistics (std is the population std)."""

    rmse: float
    mean: float
    median: float
    std: float
    min: float
    max: float
    sse: float
    count: int

    @classmethod
    def of(cls, errors: FloatArray) -> Statistics:
        """Statistics of a non-empty, finite error array.

        Raises:
            TrajectoryError: when the array is empty or holds a non-finite value.
        """
        if errors.size == 0:
            raise TrajectoryError("no error values to summarise (empty pose set)")
        if not np.all(np.isfinite(errors)):
            raise TrajectoryError("error values contain NaN or inf")
        sq = errors**2
        return cls(
            rmse=float(np.sqrt(sq.mean())),
            mean=float(errors.mean()),
            median=float(np.median(errors)),
            std=float(errors.std()),
            min=float(errors.min()),
            max=float(errors.max()),
            sse=float(sq.sum()),
            count=int(errors.size),
        )

    def as_dict(self) -> dict[str, float]:
        """Name -> value."""
        return {
            "rmse": self.rmse,
            "mean": self.mean,
            "median": self.median,
            "std": self.std,
            "min": self.min,
            "max": self.max,
            "sse": self.sse,
            "count": float(self.count),
        }


@dataclass(frozen=True)
class ErrorResult:
    """Per-pair errors, the stamps they belong to, and their statistics."""

    errors: FloatArray
    stamps_s: FloatArray
    relation: PoseRelation
    stats: Statistics

    @property
    def unit(self) -> str:
        """Unit of the errors ('' when dimensionless)."""
        return UNITS[self.relation]


def _error_of(relation: PoseRelation, error_poses: FloatArray) -> FloatArray:
    if relation is PoseRelation.TRANSLATION:
        return np.asarray(np.linalg.norm(error_poses[:, :3, 3], axis=1), dtype=np.float64)
    if relation is PoseRelation.ROTATION_ANGLE_RAD:
        return rotation_angles_rad(error_poses[:, :3, :3])
    if relation is PoseRelation.ROTATION_ANGLE_DEG:
        return np.rad2deg(rotation_angles_rad(error_poses[:, :3, :3]))
    if relation is PoseRelation.ROTATION_PART:
        return np.asarray(
            np.linalg.norm(error_poses[:, :3, :3] - np.eye(3), axis=(1, 2)), dtype=np.float64
        )
    return np.asarray(np.linalg.norm(error_poses - np.eye(4), axis=(1, 2)), dtype=np.float64)


def _check_pair(reference: PoseTrajectory, estimate: PoseTrajectory) -> None:
    check_associated(
        reference,
        estimate,
        TrajectoryError,
        "trajectories must be associated first",
        "trajectories are empty",
    )


def ape(
    reference: PoseTrajectory,
    estimate: PoseTrajectory,
    relation: PoseRelation = PoseRelation.TRANSLATION,
) -> ErrorResult:
    """Absolute pose error of associated, aligned trajectories; E_i = est_i^-1 ref_i (as evo)."""
    _check_pair(reference, estimate)
    if relation is PoseRelation.TRANSLATION:
        errors = np.asarray(
            np.linalg.norm(estimate.positions_xyz - reference.positions_xyz, axis=1),
            dtype=np.float64,
        )
    else:
        error_poses = se3_inverse(estimate.poses_se3) @ reference.poses_se3
        errors = _error_of(relation, error_poses)
    return ErrorResult(errors, reference.stamps_s.copy(), relation, Statistics.of(errors))


def pairs_by_index(num_poses: int, delta: int, all_pairs: bool) -> NDArray[np.intp]:
    """(i, j) index pairs j - i = delta; consecutive non-overlapping unless all_pairs (evo)."""
    if all_pairs:
        first = np.arange(max(num_poses - delta, 0), dtype=np.intp)
        return np.stack([first, first + delta], axis=1)
    ids = np.arange(0, num_poses, delta, dtype=np.intp)
    return np.stack([ids[:-1], ids[1:]], axis=1)


def pairs_by_path(
    positions_xyz: FloatArray, delta_m: float, tol_m: float, all_pairs: bool
) -> NDArray[np.intp]:
    """(i, j) pairs whose travelled path between them is delta_m (evo's filter_pairs_by_path)."""
    n = positions_xyz.shape[0]
    steps = np.linalg.norm(np.diff(positions_xyz, axis=0), axis=1)
    if not all_pairs:
        ids = [0]
        current = 0.0
        for i, step in enumerate(steps.tolist(), start=1):
            current += step
            if current >= delta_m:
                ids.append(i)
                current = 0.0
        arr = np.asarray(ids, dtype=np.intp)
        return np.stack([arr[:-1], arr[1:]], axis=1)
    dist = np.concatenate([[0.0], np.cumsum(steps)])
    first = np.arange(n - 1, dtype=np.intp)
    target = dist[first] + delta_m
    upper = np.searchsorted(dist, target, side="left")  # first index with dist >= target
    lower = upper - 1
    # evo takes the first index of the smallest |d_j - d_i - delta| among j > i.
    lower_first = np.searchsorted(dist, dist[np.maximum(lower, 0)], side="left")
    lower_first = np.maximum(lower_first, first + 1)
    upper_c = np.clip(np.maximum(upper, first + 1), 0, n - 1)
    lower_c = np.clip(lower_first, 0, n - 1)
    err_up = np.abs((dist[upper_c] - dist[first]) - delta_m)
    err_lo = np.where(lower >= first + 1, np.abs((dist[lower_c] - dist[first]) - delta_m), np.inf)
    pick = np.where(err_lo <= err_up, lower_c, upper_c)
    err = np.minimum(err_lo, err_up)
    keep = err <= tol_m
    return np.stack([first[keep], pick[keep]], axis=1)


@dataclass(frozen=True)
class RpeConfig:
    """delta (> 0; an integer for frames), delta_unit, relative tolerance for metres, all_pairs."""

    delta: float = 1.0
    delta_unit: DeltaUnit = DeltaUnit.FRAMES
    rel_delta_tol: float = 0.1
    all_pairs: bool = False

    def __post_init__(self) -> None:
        if not (np.isfinite(self.delta) and self.delta > 0):
            raise EvalConfigError(f"delta = {self.delta}: must be finite and > 0")
        if self.delta_unit is DeltaUnit.FRAMES and float(self.delta) != int(self.delta):
            raise EvalConfigError(f"delta = {self.delta}: must be an integer for unit frames")
        if not (0 <= self.rel_delta_tol <= 1):
            raise EvalConfigError(f"rel_delta_tol = {self.rel_delta_tol}: allowed [0, 1]")


def rpe(
    reference: PoseTrajectory,
    estimate: PoseTrajectory,
    relation: PoseRelation = PoseRelation.TRANSLATION,
    config: RpeConfig | None = None,
) -> ErrorResult:
    """Relative pose error; E = (ref_i^-1 ref_j)^-1 (est_i^-1 est_j), pairs from the estimate.

    Raises:
        TrajectoryError: when delta selects no pair.
    """
    cfg = config or RpeConfig()
    _check_pair(reference, estimate)
    if cfg.delta_unit is DeltaUnit.FRAMES:
        pairs = pairs_by_index(estimate.num_poses, int(cfg.delta), cfg.all_pairs)
    else:
        pairs = pairs_by_path(
            estimate.positions_xyz, cfg.delta, cfg.delta * cfg.rel_delta_tol, cfg.all_pairs
        )
    if pairs.shape[0] == 0:
        raise TrajectoryError(
            f"RPE delta = {cfg.delta} ({cfg.delta_unit.value}) selects no pose pair among "
            f"{estimate.num_poses} poses; use a smaller delta"
        )
    ref = reference.poses_se3
    est = estimate.poses_se3
    i, j = pairs[:, 0], pairs[:, 1]
    ref_rel = se3_inverse(ref[i]) @ ref[j]
    est_rel = se3_inverse(est[i]) @ est[j]
    error_poses = se3_inverse(ref_rel) @ est_rel
    errors = _error_of(relation, error_poses)
    return ErrorResult(errors, estimate.stamps_s[j], relation, Statistics.of(errors))
