"""grade_control: 6-DOF PID joint control from NMPC/active-SLAM setpoints.

Core (numpy/scipy only; the simulator can run it in-process, e.g. for lockstep runs):
- `config.ControllerConfig` (frozen, validated; field names = ROS parameter names),
- `pid.JointPid` (per-joint PID with anti-windup, filtered derivative on measurement, limits),
- `setpoints.SetpointTracker` (pose / twist / joint / trajectory / path setpoints, stale hold),
- `controller.JointController`: ``controller.tracker.set_pose(...)`` etc., then once per control
  period ``controller.update(now_s, measured_joint_positions).velocities``,
- `mission` (scripted waypoints) and `explorer` (2D frontier exploration from depth images).

Nodes (`grade_control.node`): joint_controller, waypoint_mission, explorer.
"""

from grade_common.lazy import lazy_exports

# What a library user needs, imported on first use: importing the package stays light.
__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "grade_control.config": ("ControllerConfig",),
        "grade_control.controller": ("JointController", "Command"),
    },
)
