"""ROS 2 nodes of grade_replay (the only modules here that import rclpy)."""
