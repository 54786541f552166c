"""Third-party SLAM / odometry in the loop: RGB-D frames in, camera poses out (grade_slam).

core: `config` (validated settings), `backends` (registry of SLAM packages, imported lazily),
`tracker` (poses from frames, tracking loss), `camera_folder` (frames of a recorded TUM folder);
node: `node.slam_node` (live RGB-D topics -> nav_msgs/Odometry + Path + TUM file); CLI: `cli`.
"""

from grade_common.lazy import lazy_exports

# What a library user needs, imported on first use: importing the package stays light.
__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "grade_slam.config": ("SlamConfig", "OdometryMethod"),
        "grade_slam.tracker": ("RgbdTracker",),
    },
)
