"""ROS 2 side of grade_noise: the online `noise_node`."""
