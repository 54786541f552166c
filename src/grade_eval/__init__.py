"""grade_eval: trajectory (ATE/RPE, tracking time) and map (AME) evaluation."""

from grade_common.lazy import lazy_exports

# What a library user needs, imported on first use: importing the package stays light.
__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "grade_eval.core.trajectory": ("PoseTrajectory",),
        "grade_eval.core.metrics": ("ape", "rpe", "RpeConfig", "PoseRelation", "ErrorResult"),
        "grade_eval.core.align": ("align", "AlignConfig", "AlignMode"),
        "grade_eval.core.evaluate": (
            "evaluate_trajectory",
            "TrajectoryEvalConfig",
            "TrajectoryEval",
        ),
        "grade_eval.core.pointmap": ("PointMap",),
        "grade_eval.core.ame": ("ame_nearest", "AmeResult"),
    },
)
