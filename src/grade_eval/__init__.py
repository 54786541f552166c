"""grade_eval: trajectory (ATE/RPE, tracking time) and map (AME) evaluation."""

from grade_common.lazy import lazy_exports

# What a library user needs, imported on first use (grade_common.lazy): importing the package
# stays light.
_EXPORTS = {
    "PoseTrajectory": "grade_eval.core.trajectory",
    "ape": "grade_eval.core.metrics",
    "rpe": "grade_eval.core.metrics",
    "RpeConfig": "grade_eval.core.metrics",
    "PoseRelation": "grade_eval.core.metrics",
    "ErrorResult": "grade_eval.core.metrics",
    "align": "grade_eval.core.align",
    "AlignConfig": "grade_eval.core.align",
    "AlignMode": "grade_eval.core.align",
    "evaluate_trajectory": "grade_eval.core.evaluate",
    "TrajectoryEvalConfig": "grade_eval.core.evaluate",
    "TrajectoryEval": "grade_eval.core.evaluate",
    "PointMap": "grade_eval.core.pointmap",
    "ame_nearest": "grade_eval.core.ame",
    "AmeResult": "grade_eval.core.ame",
}
__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
