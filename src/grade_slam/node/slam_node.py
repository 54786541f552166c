"""ROS 2 node `slam_node`: a third-party RGB-D odometry backend on the live camera topics.

Subscribes /<robot>/<camera>/rgb/image_raw (rgb8/bgr8), depth/image_raw (32FC1 metres or
16UC1 millimetres), camera_info and, with `mask_dynamic`, semantic/image_raw (mono16 class ids);
pairs them by identical stamps (an inertial backend, `orb_slam3_rgbd_inertial`, also takes
/<robot>/<imu> sensor_msgs/Imu and holds each set until an IMU sample at or after its stamp has
arrived, then hands it the samples since the previous set and the camera's mount in the IMU
frame from /tf_static), tracks each set with the backend (`backend` parameter,
`grade_slam.backends`), and publishes the estimated optical-frame pose as nav_msgs/Odometry on
/<robot>/slam/odom and the trajectory so far as nav_msgs/Path on /<robot>/slam/path, both in
`map_frame` (the estimate's origin: the first tracked camera). With `publish_tf` (REP 105) it
also publishes `map_frame -> <robot>/<odom_frame>` on /tf, computed from the simulator's /tf and
/tf_static (run the simulator with publish_world_odom:=false so odom keeps one parent). After
each frame set it publishes the depth stamp as std_msgs/Header on /<robot>/slam/ack: sim_node's
`lockstep_acks` (/<robot>/<camera>/depth/image_raw:/<robot>/slam/ack) then waits for it, so a
slow backend keeps every frame. With `trajectory_output` EST.txt set, each pose is appended to
EST.online.txt as it is published, and the final TUM trajectory (ORB-SLAM3's after its last
optimisation) is written to EST.txt when the node stops (for `grade eval traj`;
`node.estimate_output`). ORB-SLAM3 runs in a child process (`grade_slam.tracker_process`): a
crash of its native code cannot end the node. Frames the transport drops are simply not tracked.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
from geometry_msgs.msg import TransformStamped
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy, qos_profile_sensor_data
from sensor_msgs.msg import CameraInfo, Image, Imu
from std_msgs.msg import Header
from tf2_msgs.msg import TFMessage

from grade_common.images import image_to_array
from grade_common.names import ros_name
from grade_common.node import spin as grade_spin
from grade_common.rotations import matrix_to_quat, quat_to_matrix
from grade_common.schema import Checked, Wording, text
from grade_sim.engine.semantic import BASE_CLASSES
from grade_slam.backends import BACKENDS, create_backend
from grade_slam.config import PARAMETER_WORDING, SlamConfig
from grade_slam.errors import SlamConfigError, SlamError
from grade_slam.frames import ImuBuffer, RgbdFrame, dynamic_class_ids, dynamic_mask_of
from grade_slam.node.estimate_output import MAP_FRAME_PATTERN, EstimateOutput, declare_parameters
from grade_slam.rep105 import FrameChain, map_to_odom

_PENDING_LIMIT = 30  # unpaired images kept per stream (1 s at 30 Hz)
_ODOM_HISTORY = 240  # odom -> base transforms kept (2 s of /tf at 120 Hz)


@dataclass(frozen=True)
class SlamNodeParameters(Checked):
    """The node's own parameters; the backend's are `SlamConfig` (same names)."""

    WORDING: ClassVar[Wording] = PARAMETER_WORDING

    # the images of /<robot>/<camera>/...
    robot: str = field(default="uav1", metadata=ros_name())
    camera: str = field(default="camera", metadata=ros_name())
    # the estimate's frame: the first tracked camera
    map_frame: str = field(default="map", metadata=text(MAP_FRAME_PATTERN))
    # REP 105: publish map_frame -> <robot>/<odom_frame> on /tf
    publish_tf: bool = True
    odom_frame: str = field(default="odom", metadata=ros_name())
    base_frame: str = field(default="base_link", metadata=ros_name())
    trajectory_output: str = field(default="", metadata=text(allow_empty=True))
    # inertial backends: the IMU topic /<robot>/<imu> and its frame <robot>/<imu_frame>
    imu: str = field(default="imu", metadata=ros_name())
    imu_frame: str = field(default="imu_link", metadata=ros_name())


class SlamNode(Node):
    """Tracks the live RGB-D stream with a third-party backend."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__("slam", **kwargs)
        self.params, self.config = declare_parameters(self, SlamNodeParameters, SlamConfig)
        self._estimate = EstimateOutput(
            self,
            f"/{self.params.robot}/slam",
            self.params.map_frame,
            self.params.trajectory_output,
        )
        # Before any subscription: whatever the backend needs first (ORB-SLAM3's vocabulary,
        # built on first use) is made here, never inside a frame callback.
        self.tracker = create_backend(self.config, log=self.get_logger().info)
        self._needs_imu = BACKENDS[self.config.backend].needs_imu
        self._imu = ImuBuffer()
        self._imu_frame = f"{self.params.robot}/{self.params.imu_frame}"
        self._imu_optical: np.ndarray | None = None  # the optical frame in the IMU frame
        self._camera_matrix: np.ndarray | None = None
        streams = ["rgb", "depth"] + (["semantic"] if self.config.mask_dynamic else [])
        self._pending: dict[str, dict[int, Image]] = {name: {} for name in streams}
        self._dynamic_ids = dynamic_class_ids(BASE_CLASSES)
        ns = f"/{self.params.robot}/{self.params.camera}"
        for name in streams:
            self.create_subscription(
                Image,
                f"{ns}/{name}/image_raw",
                lambda msg, n=name: self._store(n, msg),
                qos_profile_sensor_data,
            )
        self.create_subscription(
            CameraInfo, f"{ns}/camera_info", self._on_info, qos_profile_sensor_data
        )
        robot = self.params.robot
        self._odom_frame = f"{robot}/{self.params.odom_frame}"
        self._base_frame = f"{robot}/{self.params.base_frame}"
        self._static = FrameChain()
        self._odom_base: dict[int, np.ndarray] = {}
        self._tf_pub = None
        latched = QoSProfile(
            depth=100,
            reliability=ReliabilityPolicy.RELIABLE,
            durability=DurabilityPolicy.TRANSIENT_LOCAL,
        )
        if self.params.publish_tf or self._needs_imu:  # the mounts: map -> odom, IMU extrinsic
            self.create_subscription(TFMessage, "/tf_static", self._on_tf_static, latched)
        if self._needs_imu:
            # 240 Hz between frames: keep a few hundred samples queued (best effort, as
            # published), a sample missed only lengthens one preintegration step
            imu_qos = QoSProfile(depth=500, reliability=ReliabilityPolicy.BEST_EFFORT)
            self.create_subscription(Imu, f"/{robot}/{self.params.imu}", self._on_imu, imu_qos)
        if self.params.publish_tf:
            self.create_subscription(TFMessage, "/tf", self._on_tf, QoSProfile(depth=100))
            self._tf_pub = self.create_publisher(TFMessage, "/tf", QoSProfile(depth=100))
        self._ack_pub = self.create_publisher(Header, f"/{robot}/slam/ack", QoSProfile(depth=10))
        self.get_logger().info(
            f"tracking {ns} with backend {self.config.backend!r}"
            + (" (people and flying objects masked)" if self.config.mask_dynamic else "")
            + (f" and /{robot}/{self.params.imu}" if self._needs_imu else "")
        )

    @staticmethod
    def _stamp_ns(msg: Any) -> int:
        return int(msg.header.stamp.sec) * 10**9 + int(msg.header.stamp.nanosec)

    def _on_info(self, msg: CameraInfo) -> None:
        self._camera_matrix = np.array(msg.k, dtype=np.float64).reshape(3, 3)

    @staticmethod
    def _matrix(t: Any) -> np.ndarray:
        m = np.eye(4)
        r, q = t.transform.translation, t.transform.rotation
        m[:3, :3] = quat_to_matrix(np.array([q.w, q.x, q.y, q.z]))
        m[:3, 3] = (r.x, r.y, r.z)
        return m

    def _on_tf_static(self, msg: TFMessage) -> None:
        for t in msg.transforms:
            self._static.add(t.header.frame_id, t.child_frame_id, self._matrix(t))

    def _on_tf(self, msg: TFMessage) -> None:
        for t in msg.transforms:
            if t.header.frame_id == self._odom_frame and t.child_frame_id == self._base_frame:
                self._odom_base[self._stamp_ns(t)] = self._matrix(t)
                while len(self._odom_base) > _ODOM_HISTORY:
                    self._odom_base.pop(min(self._odom_base))
            elif t.child_frame_id != self._odom_frame:  # a moving mount (omni camera yaw)
                self._static.add(t.header.frame_id, t.child_frame_id, self._matrix(t))

    def _on_imu(self, msg: Imu) -> None:
        w, a = msg.angular_velocity, msg.linear_acceleration
        self._imu.add(self._stamp_ns(msg), (w.x, w.y, w.z), (a.x, a.y, a.z))
        self._try_track()

    def _store(self, stream: str, msg: Image) -> None:
        pending = self._pending[stream]
        pending[self._stamp_ns(msg)] = msg
        while len(pending) > _PENDING_LIMIT:
            pending.pop(min(pending))
        self._try_track()

    def _try_track(self) -> None:
        ready = sorted(set.intersection(*(set(p) for p in self._pending.values())))
        if not ready or self._camera_matrix is None:
            return
        if self._needs_imu:
            if self._imu_optical is None:
                try:
                    self._imu_optical = self._static.relative(
                        self._imu_frame, self._pending["rgb"][ready[-1]].header.frame_id
                    )
                except SlamError:
                    return  # the mounts on /tf_static have not arrived yet
            if not self._imu.covers(ready[-1]):
                return  # the samples up to this frame are still on their way
        self._track(ready[-1])

    def _frame(self, stamp_ns: int, msgs: dict[str, Image]) -> RgbdFrame:
        rgb_msg, depth_msg = msgs["rgb"], msgs["depth"]
        rgb = image_to_array(rgb_msg, allowed=("rgb8", "bgr8"), error=SlamError)
        if rgb_msg.encoding == "bgr8":
            rgb = rgb[:, :, ::-1]
        depth = image_to_array(depth_msg, allowed=("32FC1", "16UC1"), error=SlamError)
        depth_m = depth.astype(np.float32) * np.float32(
            1e-3 if depth_msg.encoding == "16UC1" else 1.0
        )
        mask = None
        if "semantic" in msgs:
            classes = image_to_array(msgs["semantic"], allowed=("mono16",), error=SlamError)
            mask = dynamic_mask_of(classes.astype(np.uint16), self._dynamic_ids)
        assert self._camera_matrix is not None
        imu = None
        if self._needs_imu:
            assert self._imu_optical is not None
            imu = self._imu.take_until(stamp_ns, self._imu_optical)
        return RgbdFrame(
            stamp_ns,
            np.ascontiguousarray(rgb, dtype=np.uint8),
            depth_m,
            self._camera_matrix,
            mask,
            imu,
        )

    def _track(self, stamp_ns: int) -> None:
        msgs = {name: pending[stamp_ns] for name, pending in self._pending.items()}
        for pending in self._pending.values():  # older ones can no longer be tracked
            for old in [s for s in pending if s <= stamp_ns]:
                del pending[old]
        try:
            frame = self._frame(stamp_ns, msgs)
            pose = self._estimate.track(self.tracker.process, frame)
        except SlamError as err:  # a bad frame, or the backend's process has ended
            self.get_logger().warning(f"frame skipped: {err}", throttle_duration_sec=5.0)
        else:
            if pose is not None:
                self._publish(msgs["rgb"], pose)
        ack = Header()
        ack.stamp = msgs["depth"].header.stamp
        ack.frame_id = msgs["depth"].header.frame_id
        self._ack_pub.publish(ack)

    def _publish_map_to_odom(self, image: Image, pose: np.ndarray) -> None:
        stamp_ns = self._stamp_ns(image)
        older = [s for s in self._odom_base if s <= stamp_ns]
        if self._tf_pub is None or not older:
            return
        try:
            base_optical = self._static.transform(self._base_frame, image.header.frame_id)
        except SlamError as err:
            self.get_logger().warning(f"no map -> odom: {err}", throttle_duration_sec=5.0)
            return
        odom_optical = self._odom_base[max(older)] @ base_optical
        m = map_to_odom(pose, odom_optical)
        t = TransformStamped()
        t.header.stamp = image.header.stamp
        t.header.frame_id = self.params.map_frame
        t.child_frame_id = self._odom_frame
        t.transform.translation.x, t.transform.translation.y, t.transform.translation.z = (
            float(v) for v in m[:3, 3]
        )
        q = t.transform.rotation
        q.w, q.x, q.y, q.z = (float(v) for v in matrix_to_quat(m[:3, :3]))
        self._tf_pub.publish(TFMessage(transforms=[t]))

    def _publish(self, image: Image, pose: np.ndarray) -> None:
        self._estimate.publish(image.header.stamp, image.header.frame_id, pose)
        self._publish_map_to_odom(image, pose)

    def destroy_node(self) -> None:
        # A backend that failed to start (bad parameter, missing vocabulary) left no tracker.
        if hasattr(self, "tracker"):
            self.tracker.close()
            if self._needs_imu:
                since = self.tracker.stats.inertial_since_ns
                self.get_logger().info(
                    f"IMU samples received {self._imu.received}, inertial state initialised "
                    + ("never" if since is None else f"at {since * 1e-9:.3f} s")
                )
            note = self.tracker.trajectory.note
            if note and not self.tracker.stats.tracked:
                self.get_logger().warning(f"no pose given: {note}")
            what = f"{self.config.backend} estimate: optical frame in {self.params.map_frame}"
            self._estimate.finish(self.tracker.stats, self.tracker.trajectory, what)
        super().destroy_node()


main = grade_spin.node_main("slam_node", SlamNode, config_errors=(SlamConfigError,))


if __name__ == "__main__":
    sys.exit(main())
