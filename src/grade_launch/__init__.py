"""grade_launch: `grade launch`, a faithful runner of ROS 2 YAML launch files for machines
without `ros2 launch`.

Layers: `substitution` (the `$(...)` grammar), `actions` (a parsed launch file), `parser` (YAML ->
actions, checked against the supported frontend subset), `executor` (actions -> a `plan` of
process command lines, with ROS `names` exactly as launch_ros builds them), `process` (start,
prefix output, stop in order), `validate` (static check of files), `cli`.

Imports only grade_common, yaml and the standard library: it needs nothing of the simulator.
"""

from grade_common.lazy import lazy_exports

# What a library user needs, imported on first use: importing the package stays light.
__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "grade_launch.parser": ("parse_launch_file",),
        "grade_launch.executor": ("plan_launch",),
    },
)
