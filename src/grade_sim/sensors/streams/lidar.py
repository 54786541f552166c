"""A robot's lidar: PointCloud2 (or LaserScan for a 2D laser) at the sensor rate, sim time.

The stream follows its mount's pose at every physics step (the rolling shutter interpolates
between them) and those of other robots' links; actors' poses come from the scene's timelines at
any time, so the stream never asks the engine to pose them. The Embree scene is built from the
engine's meshes on the first scan.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from numpy.typing import NDArray

from grade_common.rotations import quat_from_rpy, quat_to_matrix
from grade_common.types import FloatArray
from grade_sim.config.lidar import LidarConfig, LidarKind
from grade_sim.engine.protocol import EngineBackend, MeshOwner, RayMesh
from grade_sim.engine.raycast import InstanceMesh
from grade_sim.scene import RobotSetup, Scene
from grade_sim.sensors import messages as msgs
from grade_sim.sensors.lidar.beams import column_azimuths_rad, firing, sweep_ns
from grade_sim.sensors.lidar.classes import class_lookup
from grade_sim.sensors.lidar.pose_track import PoseTrack, interpolate
from grade_sim.sensors.lidar.scanner import MovingPart
from grade_sim.sensors.lidar.sensor import LidarSensor, ScanResult, luminance
from grade_sim.sensors.messages import QosProfile, TopicSpec
from grade_sim.sensors.observer import LidarSample
from grade_sim.sensors.schedule import RateSchedule, step_stamps_ns, steps_at_or_before
from grade_sim.sensors.streams.base import StepState, StreamOutput

MIN_REFLECTIVITY = 0.02


def reflectivity_of(mesh: RayMesh, jitter: float, seed: int) -> float:
    """The colour's luma, jittered per instance from the seed (the scene's material draw)."""
    u = np.random.default_rng([seed, 0x11DA, mesh.instance_id]).uniform(-1.0, 1.0)
    return float(np.clip(luminance(mesh.rgba) * (1.0 + jitter * u), MIN_REFLECTIVITY, 1.0))


class LidarStream:
    """One lidar of one robot (see the module doc)."""

    def __init__(self, setup: RobotSetup, config: LidarConfig, scene: Scene) -> None:
        self.robot = setup.model.name
        self.config = config
        self.scene = scene
        self.table = config.resolved()
        phys = scene.scenario.rates.physics_hz
        base = f"/{self.robot}/{config.name}"
        if self.table.kind is LidarKind.LASER_2D:
            self.topic = TopicSpec(f"{base}/scan", "sensor_msgs/msg/LaserScan", QosProfile.SENSOR)
        else:
            self.topic = TopicSpec(
                f"{base}/points", "sensor_msgs/msg/PointCloud2", QosProfile.SENSOR
            )
        self.frame_id = f"{self.robot}/{config.name}_link"
        self._schedule = RateSchedule(self.table.rate_hz, phys)
        self._span_ns = int(firing(self.table, 0).offset_ns.max()) if config.rolling_shutter else 0
        keep = math.ceil(self._span_ns * phys / 1e9) + 3
        self._track = PoseTrack(phys, keep)
        self._mount_xyz = np.asarray(config.mount.xyz, dtype=np.float64)
        self._mount_rot = quat_to_matrix(quat_from_rpy(*config.mount.rpy))
        self._keep = keep
        self._physics_hz = phys
        self._sensor: LidarSensor | None = None
        self._part_source: list[tuple[MeshOwner, int, tuple[str, str]]] = []
        self._robot_tracks: dict[tuple[str, str], PoseTrack] = {}
        self._actor_cache: dict[int, tuple[FloatArray, FloatArray]] = {}
        self._last_stamp_ns: int | None = None

    @property
    def sensor(self) -> LidarSensor | None:
        """The sensor, once the first scan has built it (benchmarks time it directly)."""
        return self._sensor

    @property
    def last_stamp_ns(self) -> int | None:
        """Stamp of the latest scan (its first ray), None before the first."""
        return self._last_stamp_ns

    def topics(self) -> tuple[TopicSpec, ...]:
        return (self.topic,)

    def needs_actors(self, step: int) -> bool:
        return False

    # -- set-up on the first scan ---------------------------------------------------------------
    def _build(self, backend: EngineBackend) -> LidarSensor:
        cfg, seed = self.config, self.scene.scenario.seed
        static: dict[int, list[tuple[FloatArray, float]]] = {}
        parts: list[MovingPart] = []
        for mesh in backend.ray_meshes(cfg.mesh_segments):
            if mesh.owner is MeshOwner.ROBOT and mesh.robot == self.robot:
                continue  # the robot's own body is masked
            refl = reflectivity_of(mesh, cfg.reflectivity_jitter, seed)
            if mesh.owner is MeshOwner.STATIC:
                static.setdefault(mesh.instance_id, []).append((mesh.triangles, refl))
                continue
            parts.append(
                MovingPart(mesh.instance_id, mesh.triangles, np.full(len(mesh.triangles), refl))
            )
            self._part_source.append((mesh.owner, mesh.actor_index, (mesh.robot, mesh.link)))
            if mesh.owner is MeshOwner.ROBOT:
                key = (mesh.robot, mesh.link)
                self._robot_tracks.setdefault(key, PoseTrack(self._physics_hz, self._keep))
        static_meshes = [
            InstanceMesh(
                iid,
                np.concatenate([t for t, _ in items]),
                np.concatenate([np.full(len(t), r) for t, r in items]),
            )
            for iid, items in sorted(static.items())
        ]
        labels = {i: info.label for i, info in self.scene.instances.items()}
        return LidarSensor(cfg, static_meshes, parts, class_lookup(labels), seed, self._physics_hz)

    # -- poses ------------------------------------------------------------------------------------
    def _poses(
        self,
        track: PoseTrack,
        robot_tracks: dict[tuple[str, str], PoseTrack],
        actor_poses: Callable[[int], tuple[FloatArray, FloatArray]],
    ) -> ScanPoses:
        return ScanPoses(
            track,
            robot_tracks,
            actor_poses,
            self._part_source,
            self._physics_hz,
            (self._mount_xyz, self._mount_rot),
        )

    def _frozen_poses(self, stamp_ns: int, step: int) -> ScanPoses:
        """The poses of one sweep (first ray at stamp_ns, last at `step`), copied now: the scan
        may be cast on another thread while this one steps on."""
        first = int(steps_at_or_before(np.array([stamp_ns]), self._physics_hz)[0])
        # The motion segments cover the sweep in whole segments ending at `step`: they reach
        # back at most twice the sweep's steps.
        lo = max(0, step - 2 * (step - first + 1) - 1)
        has_actors = any(s[0] is MeshOwner.ACTOR for s in self._part_source)
        wanted: range | NDArray[np.int64] = range(lo, step + 1)
        times = None if self._sensor is None else self._sensor.caster.part_pose_times(stamp_ns)
        if times is not None:
            # Only the steps the cast will ask for (9 of the ~49 for the default 8 segments):
            # the people's poses cost ~4 ms a step, 0.9 CPU s per simulated s for an HDL-64E.
            wanted = np.maximum(pose_steps(times, self._physics_hz)[0], 0)
        if has_actors:
            self.scene.prepare_actor_poses([int(k) for k in wanted if k not in self._actor_cache])
        actors = {int(k): self._actor_poses(int(k)) for k in wanted} if has_actors else {}
        return self._poses(
            self._track.copy(),
            {key: t.copy() for key, t in self._robot_tracks.items()},
            actors.__getitem__,
        )

    def sensor_pose_at(self, times_ns: NDArray[np.int64]) -> tuple[FloatArray, FloatArray]:
        return self._poses(self._track, self._robot_tracks, self._actor_poses).sensor_pose_at(
            times_ns
        )

    def _actor_poses(self, step: int) -> tuple[FloatArray, FloatArray]:
        if step not in self._actor_cache:
            if len(self._actor_cache) > 2 * self._keep:
                self._actor_cache.pop(min(self._actor_cache))
            self._actor_cache[step] = self.scene.actor_body_poses(step)
        return self._actor_cache[step]

    def forget_actor_poses(self) -> None:
        """Drops the actors' poses kept from earlier scans (a benchmark times a scan's own)."""
        self._actor_cache.clear()

    def part_poses_at(self, times_ns: NDArray[np.int64]) -> tuple[FloatArray, FloatArray]:
        """Poses (s, m, 3), (s, m, 3, 3) of every moving part at each time."""
        return self._poses(self._track, self._robot_tracks, self._actor_poses).part_poses_at(
            times_ns
        )

    # -- the stream -------------------------------------------------------------------------------
    def emit(self, state: StepState, out: StreamOutput) -> None:
        backend = state.backend
        self._track.add(state.step, *backend.link_pose(self.robot, self.config.mount.parent))
        for (robot, link), track in self._robot_tracks.items():
            track.add(state.step, *backend.link_pose(robot, link))
        if not self._schedule.due(state.step):
            return
        stamp_ns = state.stamp_ns - self._span_ns
        if stamp_ns < 0:
            return  # the first sweep would start before the simulation
        if self._sensor is None:
            self._sensor = self._build(backend)
            for (robot, link), track in self._robot_tracks.items():
                track.add(state.step, *backend.link_pose(robot, link))
        # Built even for a scan nobody takes, so that other robots' links are tracked from the
        # same step whoever listens.
        if not out.wanted((self.topic,), self.robot, self.config.name, state.step, stamp_ns):
            return  # nobody takes this scan (the bootstrap's, with no bag and no subscriber)
        self._last_stamp_ns = stamp_ns
        sensor, poses = self._sensor, self._frozen_poses(stamp_ns, state.step)
        step, publish_ns = state.step, state.stamp_ns

        def put_out(result: ScanResult) -> None:
            if self.table.kind is LidarKind.LASER_2D:
                cdr = self._laser_scan(result)
            else:
                cdr = msgs.pointcloud2(result.scan.stamp_ns, self.frame_id, result.scan.points)
            out.publish(self.topic, publish_ns, cdr)
            out.lidar_sample(LidarSample(self.robot, self.config.name, step, result.scan))

        # Embree and the numba kernels release the GIL: pipelined, the cast runs beside physics.
        out.later(lambda: sensor.scan(stamp_ns, poses.sensor_pose_at, poses.part_poses_at), put_out)

    def _laser_scan(self, result: ScanResult) -> bytes:
        n = len(result.returned)
        p = result.scan.points
        ranges = np.full(n, np.inf, dtype=np.float32)
        inten = np.zeros(n, dtype=np.float32)
        xyz = np.stack([p["x"], p["y"], p["z"]], axis=1)
        ranges[result.returned] = np.linalg.norm(xyz, axis=1)
        inten[result.returned] = p["intensity"]
        az = column_azimuths_rad(self.table)
        inc = float(az[1] - az[0]) if n > 1 else 0.0
        span_s = self._span_ns * 1e-9
        return msgs.laser_scan(
            result.scan.stamp_ns,
            self.frame_id,
            (float(az[0]), float(az[-1]), inc),
            span_s / max(n - 1, 1),
            sweep_ns(self.table) * 1e-9,
            (self.table.range_min_m, self.table.range_max_m),
            ranges,
            inten,
        )


def pose_steps(
    times_ns: NDArray[np.int64], physics_hz: float
) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """The physics steps whose actor poses give the poses at `times_ns` (sorted, unique), and
    for each time the indices into them of the steps before and after it (the first n, then
    the next n): a time on a physics step needs only that step."""
    steps = steps_at_or_before(times_ns, physics_hz)
    on_step = step_stamps_ns(steps, physics_hz) == times_ns
    after = np.where(on_step, steps, steps + 1)
    known, at = np.unique(np.r_[steps, after], return_inverse=True)
    return known, at


class ScanPoses:
    """Where the lidar and every moving part are at any time of a sweep, from pose tracks and
    the actors' poses by physics step (live, or copied for a scan cast on another thread)."""

    def __init__(
        self,
        track: PoseTrack,
        robot_tracks: dict[tuple[str, str], PoseTrack],
        actor_poses: Callable[[int], tuple[FloatArray, FloatArray]],
        part_source: list[tuple[MeshOwner, int, tuple[str, str]]],
        physics_hz: float,
        mount: tuple[FloatArray, FloatArray],
    ) -> None:
        self.track = track
        self.robot_tracks = robot_tracks
        self.actor_poses = actor_poses
        self.part_source = part_source
        self.physics_hz = physics_hz
        self.mount_xyz, self.mount_rot = mount

    def sensor_pose_at(self, times_ns: NDArray[np.int64]) -> tuple[FloatArray, FloatArray]:
        pos, rot = self.track.at(times_ns)
        return pos + rot @ self.mount_xyz, rot @ self.mount_rot

    def part_poses_at(self, times_ns: NDArray[np.int64]) -> tuple[FloatArray, FloatArray]:
        """Poses (s, m, 3), (s, m, 3, 3) of every moving part at each time."""
        n, m = len(times_ns), len(self.part_source)
        pos, rot = np.zeros((n, m, 3)), np.zeros((n, m, 3, 3))
        actors = np.array(
            [i for i, s in enumerate(self.part_source) if s[0] is MeshOwner.ACTOR], dtype=np.int64
        )
        if len(actors):
            index = np.array([self.part_source[i][1] for i in actors])
            hz = self.physics_hz
            known, at = pose_steps(times_ns, hz)
            # Before the simulation began the actors stood where they start.
            poses = [self.actor_poses(max(int(k), 0)) for k in known]
            p_all = np.array([p[index] for p, _ in poses])
            q_all = np.array([q[index] for _, q in poses])
            stamps = step_stamps_ns(known, hz)
            i0, i1 = at[:n], at[n:]
            p, r = interpolate(
                stamps[i0], stamps[i1], (p_all[i0], q_all[i0]), (p_all[i1], q_all[i1]), times_ns
            )
            if len(actors) == m:
                pos, rot = p, r  # only actors: no copy into the robot-and-actor arrays
            else:
                pos[:, actors], rot[:, actors] = p, r
        for i, (owner, _, key) in enumerate(self.part_source):
            if owner is MeshOwner.ROBOT:
                pos[:, i], rot[:, i] = self.robot_tracks[key].at(np.asarray(times_ns))
        return pos, rot
