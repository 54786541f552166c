"""A robot's camera: pose, one image topic per kind and camera_info, from one render per frame."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from numpy.typing import NDArray

from grade_common.types import FloatArray
from grade_sim.config.scenario import CameraConfig, RatesConfig, Stream
from grade_sim.engine.protocol import CameraFrame
from grade_sim.optics.lens import lens_of
from grade_sim.sensors import messages as msgs
from grade_sim.sensors.camera import intrinsics
from grade_sim.sensors.messages import QosProfile, TopicSpec
from grade_sim.sensors.observer import CameraSample
from grade_sim.sensors.schedule import RateSchedule
from grade_sim.sensors.streams.base import StepState, StreamOutput


@dataclass(frozen=True)
class ImageFormat:
    """How one image kind is taken from a rendered frame and encoded."""

    array: Callable[[CameraFrame], NDArray[Any] | None]
    encoding: str


# Also the order the images of one frame are emitted in (the bag's message order relies on it).
IMAGE_FORMATS: dict[Stream, ImageFormat] = {
    Stream.RGB: ImageFormat(lambda f: f.rgb, "rgb8"),
    Stream.DEPTH: ImageFormat(lambda f: f.depth_m, "32FC1"),
    Stream.INSTANCE: ImageFormat(lambda f: f.instance, "mono16"),
    Stream.SEMANTIC: ImageFormat(lambda f: f.semantic, "mono16"),
    Stream.NORMALS: ImageFormat(lambda f: f.normals_cam, "32FC3"),
    Stream.FLOW: ImageFormat(lambda f: f.flow_px, "32FC2"),
}


@dataclass(frozen=True)
class Camera:
    """One rendered camera of one robot."""

    robot: str
    config: CameraConfig
    k: FloatArray  # 3x3 intrinsics
    distortion_model: str = "plumb_bob"  # CameraInfo's name of the lens (grade_sim.optics.lens)
    d: FloatArray | None = None  # distortion coefficients; None: a pinhole (five zeros)

    @classmethod
    def of(cls, robot: str, config: CameraConfig) -> Camera:
        lens = lens_of(config)
        return cls(robot, config, intrinsics(config), lens.distortion_model, lens.d)

    @property
    def name(self) -> str:
        return self.config.name

    @property
    def optical_frame(self) -> str:
        return f"{self.robot}/{self.config.name}_optical_frame"


class CameraStreams:
    """A camera's pose (at the camera-pose rate) and its frames (at the camera's own rate).

    The pose is queried once when either is due; each frame is rendered once for all its image
    kinds, then published as images, camera_info and a CameraSample for the observers. A frame
    nobody takes (no bag, no subscriber, no ground truth yet: StreamOutput.wants) is not
    rendered, and of a frame only its image kinds somebody takes (StreamOutput.wanted). Flow
    restarts (NaN) at the first frame of the experiment, whose previous frame is a bootstrap
    frame outside the ground truth, and after a frame whose flow was not rendered.
    """

    def __init__(
        self, camera: Camera, rates: RatesConfig, world_frame: str = "world", start_step: int = 0
    ) -> None:
        base = f"/{camera.robot}/{camera.name}"
        self.camera = camera
        self._start_step = start_step
        self._last_frame_step = -1  # the last step a frame was due at, rendered or not
        self._last_flow_rendered = False  # whether that frame's flow was rendered
        self._world_frame = world_frame
        self._frame_schedule = RateSchedule(camera.config.rate_hz, rates.physics_hz)
        self._pose_schedule = RateSchedule(rates.camera_pose_hz, rates.physics_hz)
        # In the configured order: the order the topics are registered in.
        self._images = {
            kind: TopicSpec(
                f"{base}/{kind.value}/image_raw", "sensor_msgs/msg/Image", QosProfile.SENSOR
            )
            for kind in camera.config.streams
        }
        self._info = TopicSpec(
            f"{base}/camera_info", "sensor_msgs/msg/CameraInfo", QosProfile.SENSOR
        )
        self._pose = TopicSpec(f"{base}/pose", "geometry_msgs/msg/PoseStamped", QosProfile.SENSOR)

    def topics(self) -> tuple[TopicSpec, ...]:
        return (*self._images.values(), self._info, self._pose)

    def needs_actors(self, step: int) -> bool:
        return self._frame_schedule.due(step)

    def emit(self, state: StepState, out: StreamOutput) -> None:
        pose_due = self._pose_schedule.due(state.step)
        frame_due = self._frame_schedule.due(state.step)
        if not (pose_due or frame_due):
            return
        cam = self.camera
        stamp_ns = state.stamp_ns
        pos, quat = state.backend.camera_pose(cam.robot, cam.name)
        if pose_due:
            out.publish(
                self._pose, stamp_ns, msgs.pose_stamped(stamp_ns, self._world_frame, pos, quat)
            )
        if not frame_due:
            return
        step = state.step
        previous_step, previous_flow = self._last_frame_step, self._last_flow_rendered
        wanted = out.wanted(
            (*self._images.values(), self._info), cam.robot, cam.name, step, stamp_ns
        )
        kinds = frozenset(k for k, topic in self._images.items() if topic in wanted)
        self._last_frame_step = step
        self._last_flow_rendered = Stream.FLOW in kinds
        if not kinds:
            if self._info in wanted:  # camera_info alone needs no render
                out.publish(self._info, stamp_ns, self._camera_info(stamp_ns))
            return
        restart = not previous_flow or previous_step < self._start_step <= step
        # Everything the frame's messages need from the engine is read now: when pipelined,
        # the frame comes back after the engine has moved on.
        boxes, objects = state.actor_boxes(), _object_poses(state)

        def put_out(frame: CameraFrame) -> None:
            for kind, fmt in IMAGE_FORMATS.items():
                array = fmt.array(frame)
                if kind in kinds and array is not None:
                    out.publish(
                        self._images[kind],
                        stamp_ns,
                        msgs.image(stamp_ns, cam.optical_frame, array, fmt.encoding),
                    )
            if self._info in wanted:
                out.publish(self._info, stamp_ns, self._camera_info(stamp_ns))
            out.camera_sample(
                CameraSample(
                    cam.robot, cam.name, step, stamp_ns, frame, pos, quat, cam.k, boxes, objects
                )
            )

        out.render(cam.robot, cam.name, kinds, restart, put_out)

    def _camera_info(self, stamp_ns: int) -> bytes:
        cam = self.camera
        return msgs.camera_info(
            stamp_ns,
            cam.optical_frame,
            cam.config.width,
            cam.config.height,
            cam.k,
            cam.distortion_model,
            cam.d,
        )


def _object_poses(state: StepState) -> tuple[tuple[str, FloatArray, FloatArray], ...]:
    bodies = state.scene.world.free_bodies
    if not bodies:
        return ()
    positions, quats = state.backend.free_body_poses()
    return tuple((b.name, positions[k], quats[k]) for k, b in enumerate(bodies))
