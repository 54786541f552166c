"""One call for a trajectory evaluation: associate, align, ATE + RPE + tracking quality."""

from __future__ import annotations

from dataclasses import dataclass, field

from grade_eval.core.align import AlignConfig, Alignment, align
from grade_eval.core.metrics import ErrorResult, PoseRelation, RpeConfig, ape, rpe
from grade_eval.core.sync import SyncConfig, associate
from grade_eval.core.tracking import TrackingConfig, TrackingResult, tracking_quality
from grade_eval.core.trajectory import PoseTrajectory


@dataclass(frozen=True)
class TrajectoryEvalConfig:
    """Every knob of a trajectory evaluation, validated by the member configs."""

    sync: SyncConfig = field(default_factory=SyncConfig)
    align: AlignConfig = field(default_factory=AlignConfig)
    rpe: RpeConfig = field(default_factory=RpeConfig)
    tracking: TrackingConfig = field(default_factory=TrackingConfig)


@dataclass(frozen=True)
class TrajectoryEval:
    """ATE (translation, rotation), RPE (translation, rotation) and tracking, plus inputs."""

    ate: ErrorResult
    ate_rot_deg: ErrorResult
    rpe_trans: ErrorResult
    rpe_rot_deg: ErrorResult
    tracking: TrackingResult
    alignment: Alignment
    reference: PoseTrajectory
    estimate_aligned: PoseTrajectory
    num_estimate_poses: int
    tracking_gap_s: float

    def summary(self) -> dict[str, float]:
        """Flat numbers for a table row."""
        return {
            "ate_rmse_m": self.ate.stats.rmse,
            "ate_mean_m": self.ate.stats.mean,
            "ate_median_m": self.ate.stats.median,
            "ate_std_m": self.ate.stats.std,
            "ate_min_m": self.ate.stats.min,
            "ate_max_m": self.ate.stats.max,
            "ate_rot_rmse_deg": self.ate_rot_deg.stats.rmse,
            "rpe_trans_rmse_m": self.rpe_trans.stats.rmse,
            "rpe_rot_rmse_deg": self.rpe_rot_deg.stats.rmse,
            "missing_time_s": self.tracking.missing_time_s,
            "tracking_rate": self.tracking.tracking_rate,
            "matched_poses": float(self.ate.stats.count),
            "estimate_poses": float(self.num_estimate_poses),
            "scale": self.alignment.scale,
        }


def evaluate_trajectory(
    reference: PoseTrajectory, estimate: PoseTrajectory, config: TrajectoryEvalConfig | None = None
) -> TrajectoryEval:
    """Full evaluation; tracking quality uses all estimate stamps (shifted by the offset)."""
    cfg = config or TrajectoryEvalConfig()
    ref, est = associate(reference, estimate, cfg.sync)
    est_aligned, alignment = align(ref, est, cfg.align)
    track = tracking_quality(
        reference.stamps_s, estimate.stamps_s + cfg.sync.offset_s, cfg.tracking
    )
    return TrajectoryEval(
        ate=ape(ref, est_aligned, PoseRelation.TRANSLATION),
        ate_rot_deg=ape(ref, est_aligned, PoseRelation.ROTATION_ANGLE_DEG),
        rpe_trans=rpe(ref, est_aligned, PoseRelation.TRANSLATION, cfg.rpe),
        rpe_rot_deg=rpe(ref, est_aligned, PoseRelation.ROTATION_ANGLE_DEG, cfg.rpe),
        tracking=track,
        alignment=alignment,
        reference=ref,
        estimate_aligned=est_aligned,
        num_estimate_poses=estimate.num_poses,
        tracking_gap_s=cfg.tracking.gap_threshold_s,
    )
