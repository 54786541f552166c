"""grade's ground floor: the run-directory and TUM formats, errors, array types, rotations,
atomic output, signal handling, image conversion and the config validator.

Imports only numpy, scipy, yaml and OpenCV; every other grade package may import it, it imports
none of them (docs/architecture.md).
"""

from grade_common.lazy import lazy_exports

# What a library user needs, imported on first use: importing the package stays light.
__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "grade_common.errors": ("GradeError", "ConfigError", "FormatError", "OutputExistsError"),
        "grade_common.rundir": ("RunLayout", "RunStatus", "read_run_yaml"),
        "grade_common.tum": ("PoseTable", "read_poses", "CameraInfo", "read_camera_info"),
        "grade_common.rotations": (
            "quat_to_matrix",
            "matrix_to_quat",
            "quats_to_matrices",
            "matrices_to_quats",
            "quat_from_rpy",
        ),
        "grade_common.occupancy": ("OccupancyGrid",),
        "grade_common.progress": ("step_bar",),
    },
)
