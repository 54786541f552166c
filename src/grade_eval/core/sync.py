"""Time association of two trajectories: nearest stamp within a maximum difference (as evo)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from grade_eval.core.trajectory import PoseTrajectory
from grade_eval.errors import AssociationError, EvalConfigError


@dataclass(frozen=True)
class SyncConfig:
    """Association parameters.

    max_diff_s: largest accepted |t_ref - (t_est + offset_s)|, > 0.
    offset_s: added to the estimate's stamps before matching.
    """

    max_diff_s: float = 0.01
    offset_s: float = 0.0

    def __post_init__(self) -> None:
        if not (np.isfinite(self.max_diff_s) and self.max_diff_s > 0):
            raise EvalConfigError(f"max_diff_s = {self.max_diff_s}: must be finite and > 0")
        if not np.isfinite(self.offset_s):
            raise EvalConfigError(f"offset_s = {self.offset_s}: must be finite")


def matching_time_indices(
    stamps_1: NDArray[np.float64],
    stamps_2: NDArray[np.float64],
    max_diff_s: float,
    offset_2_s: float = 0.0,
) -> tuple[NDArray[np.intp], NDArray[np.intp]]:
    """Indices of stamps_1 and their nearest stamps_2 (+offset) within max_diff_s.

    Same rule and tie-breaking as evo.core.sync.matching_time_indices (sorted stamps), but
    vectorised. Both inputs must be sorted ascending.
    """
    s2 = np.asarray(stamps_2, dtype=np.float64) + offset_2_s
    s1 = np.asarray(stamps_1, dtype=np.float64)
    if s1.size == 0 or s2.size == 0:
        return np.zeros(0, dtype=np.intp), np.zeros(0, dtype=np.intp)
    inside = (s1 >= s2[0] - max_diff_s) & (s1 <= s2[-1] + max_diff_s)
    ids_1 = np.flatnonzero(inside)
    q = s1[ids_1]
    upper = np.minimum(np.searchsorted(s2, q, side="right"), s2.size - 1)
    diff_ub = s2[upper] - q
    diff_lb = np.where(upper > 0, q - s2[np.maximum(upper - 1, 0)], np.inf)
    take_ub = (diff_ub <= max_diff_s) & (diff_ub < diff_lb)
    take_lb = ~take_ub & (diff_lb <= max_diff_s) & (diff_lb <= diff_ub)
    keep = take_ub | take_lb
    ids_2 = np.where(take_ub, upper, upper - 1)
    return ids_1[keep].astype(np.intp), ids_2[keep].astype(np.intp)


def associate(
    reference: PoseTrajectory, estimate: PoseTrajectory, config: SyncConfig | None = None
) -> tuple[PoseTrajectory, PoseTrajectory]:
    """Reduce both trajectories to pairs of poses at matching stamps.

    As evo: the trajectory with fewer poses is the query so none of its poses is lost twice.

    Raises:
        AssociationError: when no stamps match (message gives both time ranges).
    """
    cfg = config or SyncConfig()
    second_longer = estimate.num_poses > reference.num_poses
    if second_longer:
        ids_ref, ids_est = matching_time_indices(
            reference.stamps_s, estimate.stamps_s, cfg.max_diff_s, cfg.offset_s
        )
    else:
        ids_est, ids_ref = matching_time_indices(
            estimate.stamps_s, reference.stamps_s, cfg.max_diff_s, -cfg.offset_s
        )
    if ids_ref.size == 0:

        def span(t: PoseTrajectory) -> str:
            if t.num_poses == 0:
                return "empty"
            return f"[{t.stamps_s[0]:.6f}, {t.stamps_s[-1]:.6f}] s"

        raise AssociationError(
            f"no overlapping time: {reference.name} {span(reference)} and {estimate.name} "
            f"{span(estimate)} (offset {cfg.offset_s} s) share no stamps within "
            f"max_diff_s = {cfg.max_diff_s}; check the time base or raise max_diff_s"
        )
    return _pick(reference, ids_ref), _pick(estimate, ids_est)


def _pick(traj: PoseTrajectory, ids: NDArray[np.intp]) -> PoseTrajectory:
    if ids.size > 1 and not bool(np.all(np.diff(ids) > 0)):
        # evo would pair one pose twice; two equal stamps make no valid trajectory, so refuse.
        dup = int(ids[int(np.argmax(np.diff(ids) <= 0)) + 1])
        raise AssociationError(
            f"{traj.name}: pose {dup} (stamp {traj.stamps_s[dup]:.6f} s) matches two poses of "
            "the other trajectory; lower max_diff_s so each pose is associated at most once"
        )
    return traj.subset(ids)
