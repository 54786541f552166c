"""Alignment of an estimated trajectory to the reference: none, first pose, SE(3), Sim(3)."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from grade_common.schema import Checked, Wording, bounds
from grade_common.types import FloatArray
from grade_eval.core.trajectory import PoseTrajectory, check_associated, se3_from, se3_inverse
from grade_eval.errors import EVAL_WORDING, AlignmentError


class AlignMode(enum.Enum):
    """How the estimate is moved into the reference frame before errors are computed."""

    NONE = "none"
    ORIGIN = "origin"  # first estimated pose onto the first reference pose
    SE3 = "se3"  # Umeyama/Horn rotation + translation
    SIM3 = "sim3"  # Umeyama rotation + translation + scale


@dataclass(frozen=True)
class AlignConfig(Checked):
    """mode: AlignMode; first_n: use only the first n poses for Umeyama (None = all, else >= 3)."""

    WORDING: ClassVar[Wording] = EVAL_WORDING

    mode: AlignMode = AlignMode.SE3
    first_n: int | None = field(default=None, metadata=bounds(3))


@dataclass(frozen=True)
class Alignment:
    """x_ref = scale * R x_est + t, stored as rotation (3x3), translation (3,), scale."""

    rotation: FloatArray
    translation: FloatArray
    scale: float

    @property
    def transform_se3(self) -> FloatArray:
        """The rigid part as a 4x4 matrix."""
        return se3_from(self.rotation, self.translation)


def umeyama(x: FloatArray, y: FloatArray, with_scale: bool) -> Alignment:
    """Least-squares Sim(3)/SE(3) mapping points x (N, 3) onto y (N, 3) (Umeyama 1991).

    Raises:
        AlignmentError: fewer than 3 points or a degenerate (collinear) configuration.
    """
    if x.shape != y.shape or x.ndim != 2 or x.shape[1] != 3:
        raise AlignmentError(f"point sets must both be (N, 3), got {x.shape} and {y.shape}")
    n = x.shape[0]
    if n < 3:
        raise AlignmentError(f"Umeyama alignment needs at least 3 poses, got {n}")
    mean_x = x.mean(axis=0)
    mean_y = y.mean(axis=0)
    xc = x - mean_x
    yc = y - mean_y
    with np.errstate(over="ignore", invalid="ignore"):
        sigma_x = float((xc**2).sum()) / n
    with np.errstate(over="ignore", invalid="ignore"):
        cov = yc.T @ xc / n
    if not (np.all(np.isfinite(cov)) and np.isfinite(sigma_x)):
        # LAPACK's SVD of a non-finite matrix can spin for ever (and ignores Ctrl-C).
        biggest = float(max(np.max(np.abs(x)), np.max(np.abs(y))))
        raise AlignmentError(
            f"positions too large to align (up to {biggest:.3g} m; their covariance overflows); "
            "check the trajectories' units and values"
        )
    u, d, vt = np.linalg.svd(cov)
    if np.count_nonzero(d > np.finfo(d.dtype).eps) < 2:
        raise AlignmentError(
            f"degenerate pose configuration (singular values {d}): the {n} positions are "
            "(nearly) collinear or identical; use --align origin or more poses"
        )
    s = np.eye(3)
    if np.linalg.det(u) * np.linalg.det(vt) < 0.0:
        s[2, 2] = -1.0
    rot = u @ s @ vt
    scale = float(np.trace(np.diag(d) @ s) / sigma_x) if with_scale else 1.0
    if with_scale and not (np.isfinite(scale) and scale > 0):
        raise AlignmentError(f"Sim(3) alignment produced an invalid scale {scale}")
    trans = mean_y - scale * rot @ mean_x
    return Alignment(rot, trans, scale)


def align(
    reference: PoseTrajectory, estimate: PoseTrajectory, config: AlignConfig | None = None
) -> tuple[PoseTrajectory, Alignment]:
    """Move the (associated, equal-length) estimate into the reference frame.

    Returns:
        the aligned estimate and the alignment applied.
    """
    cfg = config or AlignConfig()
    check_associated(
        reference,
        estimate,
        AlignmentError,
        "associated trajectories differ in length",
        "cannot align an empty trajectory",
    )
    if cfg.mode is AlignMode.NONE:
        result = Alignment(np.eye(3), np.zeros(3), 1.0)
    elif cfg.mode is AlignMode.ORIGIN:
        to_ref = reference.poses_se3[0] @ se3_inverse(estimate.poses_se3[:1])[0]
        result = Alignment(to_ref[:3, :3], to_ref[:3, 3], 1.0)
    else:
        n = estimate.num_poses if cfg.first_n is None else min(cfg.first_n, estimate.num_poses)
        result = umeyama(
            estimate.positions_xyz[:n],
            reference.positions_xyz[:n],
            with_scale=cfg.mode is AlignMode.SIM3,
        )
    return estimate.transformed(result.transform_se3, result.scale), result
