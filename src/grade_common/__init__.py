"""grade's ground floor: the run-directory and TUM formats, errors, array types, rotations,
atomic output, signal handling, image conversion and the config validator.

Imports only numpy, scipy, yaml and OpenCV; every other grade package may import it, it imports
none of them (docs/architecture.md).
"""

from grade_common.lazy import lazy_exports

# What a library user needs, imported on first use (grade_common.lazy): importing the package
# stays light.
_EXPORTS = {
    "GradeError": "grade_common.errors",
    "ConfigError": "grade_common.errors",
    "FormatError": "grade_common.errors",
    "OutputExistsError": "grade_common.errors",
    "RunLayout": "grade_common.rundir",
    "RunStatus": "grade_common.rundir",
    "read_run_yaml": "grade_common.rundir",
    "PoseTable": "grade_common.tum",
    "read_poses": "grade_common.tum",
    "CameraInfo": "grade_common.tum",
    "read_camera_info": "grade_common.tum",
    "quat_to_matrix": "grade_common.rotations",
    "matrix_to_quat": "grade_common.rotations",
    "quats_to_matrices": "grade_common.rotations",
    "matrices_to_quats": "grade_common.rotations",
    "quat_from_rpy": "grade_common.rotations",
    "OccupancyGrid": "grade_common.occupancy",
    "step_bar": "grade_common.progress",
}
__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
