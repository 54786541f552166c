"""ament_python set-up of the grade package (src layout)."""

from glob import glob

from setuptools import find_packages, setup

PACKAGE = "grade"

# Each ROS 2 executable is installed to lib/grade (ros2 run grade NAME); `grade` also goes to bin.
NODE_EXECUTABLES: dict[str, str] = {
    "sim_node": "grade_sim.node.sim_node:main",
    "joint_controller": "grade_control.node.joint_controller:main",
    "waypoint_mission": "grade_control.node.waypoint_mission:main",
    "explorer": "grade_control.node.explorer:main",
    "noise_node": "grade_noise.node.noise_node:main",
    "recorder": "grade_replay.node.recorder:main",
    "scene_overlay": "grade_scenes.node.overlay_node:main",
    "scene_arm": "grade_scenes.node.arm_node:main",
    "slam_node": "grade_slam.node.slam_node:main",
    "lidar_odometry_node": "grade_slam.node.lidar_odometry_node:main",
}

setup(
    name=PACKAGE,
    version="0.1.0",
    package_dir={"": "src"},
    packages=find_packages("src"),
    package_data={"": ["py.typed"]},
    data_files=[
        ("share/ament_index/resource_index/packages", ["resource/grade"]),
        (f"share/{PACKAGE}", ["package.xml"]),
        (f"share/{PACKAGE}/launch", glob("launch/*.launch.yaml")),
        (f"share/{PACKAGE}/config", glob("config/*.yaml")),
        (f"share/{PACKAGE}/config/robots", glob("config/robots/*.urdf")),
        (f"share/{PACKAGE}/config/fastdds", glob("config/fastdds/*.xml")),
        ("bin", ["scripts/grade"]),
    ],
    install_requires=["setuptools"],
    zip_safe=False,
    maintainer="grade maintainers",
    maintainer_email="maintainers@grade-sim.org",
    description="GRADE re-built for ROS 2 on an embedded CPU simulator.",
    license="Apache-2.0",
    entry_points={
        "console_scripts": [f"{name} = {target}" for name, target in NODE_EXECUTABLES.items()]
        + ["grade = grade_cli.main:main"],
    },
)
