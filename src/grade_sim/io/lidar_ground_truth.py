"""Per-scan lidar ground truth in the run directory: KITTI / SemanticKITTI files per lidar.

Layout and readers: grade_common.kitti. A scan is written when its first ray is at or after the
first pose of the robot's ground-truth trajectory (the experiment start, on the odometry
schedule), so every written scan can be deskewed from gt/<robot>/trajectory.txt; earlier scans
(the bootstrap's) are in the bag only. Each file is staged and moved into place, so an
interrupted run leaves only whole files.
"""

from __future__ import annotations

from pathlib import Path
from typing import IO

import yaml

from grade_common import kitti
from grade_common.atomic import StagedOutput
from grade_common.rotations import quat_to_matrix
from grade_common.tum import pose_header, tum_pose_line
from grade_sim.scene import Scene
from grade_sim.sensors.lidar.classes import class_ids
from grade_sim.sensors.messages import TopicSpec
from grade_sim.sensors.observer import Discard, LidarSample
from grade_sim.sensors.schedule import RateSchedule, stamp_ns_of


def first_trajectory_stamp_ns(scene: Scene, start_step: int) -> int:
    """Stamp of the first pose in gt/<robot>/trajectory.txt: the first step at or after the
    experiment start on the odometry schedule (GroundTruthWriter.on_step)."""
    rates = scene.scenario.rates
    schedule = RateSchedule(rates.odom_hz, rates.physics_hz)
    step = start_step
    while not schedule.due(step):
        step += 1
    return stamp_ns_of(step, rates.physics_hz)


class _LidarFiles:
    def __init__(self, folder: Path, classes: dict[str, int]) -> None:
        self.folder = folder
        (folder / kitti.SCANS_DIR).mkdir(parents=True, exist_ok=True)
        (folder / kitti.LABELS_DIR).mkdir(parents=True, exist_ok=True)
        (folder / kitti.POINT_TIMES_DIR).mkdir(parents=True, exist_ok=True)
        (folder / kitti.CLASSES_YAML).write_text(
            yaml.safe_dump({i: name for name, i in sorted(classes.items(), key=lambda x: x[1])})
        )
        # Open for the whole run (one line per scan), closed by close().
        self.times: IO[str] = open(folder / kitti.TIMES_TXT, "w")  # noqa: SIM115
        self.poses: IO[str] = open(folder / kitti.POSES_TXT, "w")  # noqa: SIM115
        self.tum: IO[str] = open(folder / kitti.GROUNDTRUTH_TXT, "w")  # noqa: SIM115
        self.tum.write(pose_header("lidar frame in world at the scan stamp"))
        self.count = 0

    def write(self, sample: LidarSample) -> None:
        scan = sample.scan
        name = kitti.scan_name(self.count)
        for sub, suffix, data in (
            (kitti.SCANS_DIR, ".bin", scan.kitti_bin()),
            (kitti.LABELS_DIR, ".label", scan.kitti_label()),
            (kitti.POINT_TIMES_DIR, ".bin", scan.point_times()),
        ):
            with StagedOutput(self.folder / sub / f"{name}{suffix}", overwrite=True) as tmp:
                tmp.write_bytes(data)
        self.times.write(f"{scan.stamp_ns / 1e9:.9f}\n")
        self.poses.write(
            kitti.pose_line(scan.position_world_sensor, quat_to_matrix(scan.quat_world_sensor))
        )
        self.tum.write(
            tum_pose_line(scan.stamp_ns, scan.position_world_sensor, scan.quat_world_sensor)
        )
        self.count += 1

    def close(self) -> None:
        for f in (self.times, self.poses, self.tum):
            f.close()


class LidarGroundTruthWriter(Discard):
    """SimObserver (and LidarObserver) writing gt/<robot>/<lidar>/ for every lidar of a scene;
    like `Discard`, it keeps no message or camera frame."""

    def __init__(self, gt_root: Path, scene: Scene, start_step: int) -> None:
        self.start_step = start_step
        self.first_stamp_ns = first_trajectory_stamp_ns(scene, start_step)
        classes = class_ids({i: info.label for i, info in scene.instances.items()})
        self._files = {
            (r.model.name, lidar.name): _LidarFiles(gt_root / r.model.name / lidar.name, classes)
            for r in scene.robots
            for lidar in r.model.config.lidars
        }

    def wants_messages(self, topics: tuple[TopicSpec, ...]) -> bool:
        return False

    def wants_sample(self, robot: str, sensor: str, step: int, stamp_ns: int) -> bool:
        return stamp_ns >= self.first_stamp_ns and (robot, sensor) in self._files

    def on_lidar(self, sample: LidarSample) -> None:
        if sample.scan.stamp_ns >= self.first_stamp_ns:
            self._files[(sample.robot, sample.lidar)].write(sample)

    def close(self, status: str) -> None:
        for files in self._files.values():
            files.close()

    @property
    def scans_written(self) -> int:
        return sum(f.count for f in self._files.values())
