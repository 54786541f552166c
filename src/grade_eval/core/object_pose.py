"""Object pose errors for 6D pose estimators: ADD and ADD-S (Hinterstoisser et al. 2012,
Xiang et al. 2018 / PoseCNN), and the usual accuracy-threshold summary.

ADD: mean distance between the model points moved by the true and by the estimated pose.
ADD-S (symmetric objects): mean distance from each truly placed point to the closest point of
the estimated placement. Poses are 4x4 object-to-camera (or world) transforms, metres.
"""

from __future__ import annotations

import numpy as np
from scipy.spatial import cKDTree

from grade_common.types import FloatArray
from grade_eval.errors import EvalConfigError


def _moved(points_xyz: FloatArray, pose: FloatArray) -> FloatArray:
    pose = np.asarray(pose, dtype=np.float64)
    if pose.shape != (4, 4):
        raise EvalConfigError(f"pose: expected a 4x4 transform, got shape {pose.shape}")
    out: FloatArray = np.asarray(points_xyz, dtype=np.float64) @ pose[:3, :3].T + pose[:3, 3]
    return out


def _check_points(points_xyz: FloatArray) -> None:
    if points_xyz.ndim != 2 or points_xyz.shape[1] != 3 or len(points_xyz) == 0:
        raise EvalConfigError(
            f"model points: expected an (n, 3) array with n > 0, got shape {points_xyz.shape}"
        )


def add_m(points_xyz: FloatArray, pose_true: FloatArray, pose_est: FloatArray) -> float:
    """ADD in metres: mean ||T_true p - T_est p|| over the model points p."""
    points = np.asarray(points_xyz, dtype=np.float64)
    _check_points(points)
    diff = _moved(points, pose_true) - _moved(points, pose_est)
    return float(np.linalg.norm(diff, axis=1).mean())


def adds_m(points_xyz: FloatArray, pose_true: FloatArray, pose_est: FloatArray) -> float:
    """ADD-S in metres: mean over p of min over q of ||T_true p - T_est q||."""
    points = np.asarray(points_xyz, dtype=np.float64)
    _check_points(points)
    distances, _ = cKDTree(_moved(points, pose_est)).query(_moved(points, pose_true))
    return float(np.mean(distances))


def accuracy_auc(errors_m: FloatArray, max_threshold_m: float = 0.1, steps: int = 1000) -> float:
    """Area under the accuracy-threshold curve, thresholds 0..max_threshold_m, normalised to 1
    (PoseCNN's ADD/ADD-S AUC with 0.1 m)."""
    errors = np.asarray(errors_m, dtype=np.float64)
    if errors.size == 0:
        raise EvalConfigError("errors_m: empty; need at least one pose error")
    thresholds = np.linspace(0.0, max_threshold_m, steps + 1)
    accuracy = (errors[None, :] <= thresholds[:, None]).mean(axis=1)
    return float(np.trapezoid(accuracy, thresholds) / max_threshold_m)
