"""grade_launch: `grade launch`, a faithful runner of ROS 2 YAML launch files for machines
without `ros2 launch`.

Layers: `substitution` (the `$(...)` grammar), `frontend` (YAML launch file -> actions -> a plan of
process command lines, exactly as launch_ros builds them), `process` (start, prefix output, stop in
order), `validate` (static check against the supported frontend subset), `cli`.

Imports only grade_common, yaml and the standard library: it needs nothing of the simulator.
"""
