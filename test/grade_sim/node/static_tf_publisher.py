"""A stand-in for `ros2 run tf2_ros static_transform_publisher` (tf2_ros is not on PyPI): latch
one identity transform PARENT -> CHILD on /tf_static until SIGINT. Run as a script."""

from __future__ import annotations

import sys

import rclpy
from geometry_msgs.msg import TransformStamped
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from tf2_msgs.msg import TFMessage

from grade_common.node import spin as grade_spin


def main(parent: str, child: str) -> int:
    grade_spin.init()
    node = rclpy.create_node("static_map_odom")
    latched = QoSProfile(
        depth=1,
        reliability=ReliabilityPolicy.RELIABLE,
        durability=DurabilityPolicy.TRANSIENT_LOCAL,
    )
    pub = node.create_publisher(TFMessage, "/tf_static", latched)
    t = TransformStamped()
    t.header.frame_id, t.child_frame_id = parent, child
    t.transform.rotation.w = 1.0
    pub.publish(TFMessage(transforms=[t]))
    print("static transform published", flush=True)
    grade_spin.spin_until_signal(node)
    node.destroy_node()
    rclpy.try_shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
