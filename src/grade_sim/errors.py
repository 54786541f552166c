"""Errors of the simulator beyond the common ones in `grade_common.errors`."""

from grade_common.errors import GradeError


class BackendError(GradeError):
    """An engine backend is unknown, unavailable, or failed."""


class LidarError(GradeError):
    """A lidar cannot be built or cast (missing Embree, bad ray-drop model file)."""


class SimulationUnstableError(GradeError):
    """The physics produced NaN, Inf or values no scene can hold; the run stops as `failed`."""


class SceneReuseError(GradeError):
    """A started scene (one run's, with its live crowd already stepped) was given to another run."""
