"""`scene_overlay`: a live camera image blended with a scene's reference image, for putting
real objects where the reference scene has them (SceneReplica's replication aid).

Subscribes `image_raw` (sensor_msgs/Image, rgb8 or bgr8; remap it to the camera), publishes
`overlay/image_raw` with the same header and encoding. Parameters: reference_image (path to
the PNG from `grade scenes select`), live_weight (0.4), reference_weight (0.6).
"""

from __future__ import annotations

import array

import numpy as np
from rcl_interfaces.msg import ParameterDescriptor
from rclpy.node import Node
from rclpy.qos import qos_profile_sensor_data
from sensor_msgs.msg import Image

from grade_common.errors import ConfigError, FormatError
from grade_common.images import array_to_data, image_to_array
from grade_common.node import spin as grade_spin
from grade_scenes.errors import ScenesError
from grade_scenes.overlay import OverlayConfig, blend, load_rgb


class OverlayNode(Node):
    def __init__(self) -> None:
        super().__init__("scene_overlay")
        self.declare_parameter(
            "reference_image", "", ParameterDescriptor(description="reference PNG of the scene")
        )
        for name in ("live_weight", "reference_weight"):  # defaults: the config's, stated once
            self.declare_parameter(name, getattr(OverlayConfig, name))
        self.config = OverlayConfig(
            reference_image=str(self.get_parameter("reference_image").value),
            live_weight=float(self.get_parameter("live_weight").value),
            reference_weight=float(self.get_parameter("reference_weight").value),
        )
        self.reference_rgb = load_rgb(self.config.reference_image)
        self.publisher = self.create_publisher(Image, "overlay/image_raw", qos_profile_sensor_data)
        self.subscription = self.create_subscription(
            Image, "image_raw", self._on_image, qos_profile_sensor_data
        )

    def _on_image(self, msg: Image) -> None:
        try:
            live = np.asarray(image_to_array(msg, allowed=("rgb8", "bgr8")), dtype=np.uint8)
        except FormatError as err:
            self.get_logger().warning(f"image_raw: {err}; message dropped")
            return
        reference = self.reference_rgb if msg.encoding == "rgb8" else self.reference_rgb[..., ::-1]
        out = blend(live, reference, self.config.live_weight, self.config.reference_weight)
        data, step = array_to_data(out, msg.encoding)
        reply = Image()
        reply.header = msg.header
        reply.height, reply.width = out.shape[:2]
        reply.encoding = msg.encoding
        reply.is_bigendian = 0
        reply.step = step
        reply.data = array.array("B", data)
        self.publisher.publish(reply)


main = grade_spin.node_main("scene_overlay", OverlayNode, config_errors=(ConfigError, ScenesError))

if __name__ == "__main__":
    import sys

    sys.exit(main())
