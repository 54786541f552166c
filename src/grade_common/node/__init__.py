"""The ROS 2 layer of the ground floor (imports rclpy): one life cycle for every grade node."""
