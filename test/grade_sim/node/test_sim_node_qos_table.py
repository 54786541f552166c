"""sim_node's publishers and the bag's offered-QoS record come from the one QoS table."""

from __future__ import annotations

import pytest
from rclpy.qos import DurabilityPolicy, HistoryPolicy, ReliabilityPolicy, qos_profile_sensor_data

from grade_sim.io.bag_writer import offered_qos
from grade_sim.node.sim_node import QOS
from grade_sim.sensors.messages import QosProfile


@pytest.mark.parametrize("profile", list(QosProfile))
def test_publisher_and_bag_record_say_the_same(profile: QosProfile) -> None:
    policy = profile.policy
    (bag,) = offered_qos(profile)
    node = QOS[profile]
    assert bag.depth == node.depth == policy.depth
    assert node.history is HistoryPolicy.KEEP_LAST
    assert bag.history.name == node.history.name == "KEEP_LAST"
    assert bag.reliability.name == node.reliability.name
    assert (node.reliability is ReliabilityPolicy.RELIABLE) == policy.reliable
    assert bag.durability.name == node.durability.name
    assert (node.durability is DurabilityPolicy.TRANSIENT_LOCAL) == policy.transient_local


def test_sensor_topics_use_the_ros_sensor_data_preset() -> None:
    assert QOS[QosProfile.SENSOR] == qos_profile_sensor_data
