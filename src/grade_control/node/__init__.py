"""ROS 2 nodes of grade_control (the only modules here that import rclpy)."""
