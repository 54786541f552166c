"""People's COCO-17 keypoints per camera frame: `gt/<robot>/<camera>/keypoints.jsonl`.

One JSON line per recorded frame of every camera (from the experiment start on) in a run with
people, `"people": []` where nobody is in view, so the lines and the frames match one to one:

    {"t": 12.5, "visibility_from": "depth",
     "people": [{"id": 7, "name": "person_0", "num_keypoints": 11,
                 "keypoints": [u, v, vis, ...],          # 17 x 3, COCO order and flags
                 "keypoints_world": [[x, y, z], ...]}]}  # 17 x 3, metres, world frame

`u, v` use the camera's K (centre of pixel (0, 0) at (0, 0)); `vis` is COCO's 0 (outside the
image), 1 (hidden) or 2 (visible), decided by `grade_sim.sensors.keypoints2d`. A person with no
keypoint in front of the camera inside the image is left out of that frame's line. The
keypoints are a function of the people's timelines, which the experiment record stores, so a
replay writes the same file.

Each line is flushed when written; the frame's PNGs are written by the ground-truth writer's
thread, so after a kill -9 the last line may name a frame whose images are missing.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TextIO

import numpy as np

from grade_common.rotations import quat_to_matrix
from grade_common.tum import KEYPOINTS_JSONL, tum_stamp
from grade_people.keypoints import SELF_DEPTH_M
from grade_sim.actors.people_group import People
from grade_sim.engine.protocol import RobotState
from grade_sim.scene import Scene
from grade_sim.sensors.keypoints2d import project_keypoints
from grade_sim.sensors.messages import TopicSpec
from grade_sim.sensors.observer import CameraSample


class KeypointWriter:
    """SimObserver writing keypoints.jsonl into each camera folder under `gt_root`."""

    def __init__(self, gt_root: Path, scene: Scene, start_step: int) -> None:
        self.root = gt_root
        self.scene = scene
        self.start_step = start_step
        self.people = scene.group(People)
        self._ids = np.array([p.instance_id for p in self.people.specs], dtype=np.int64)
        self._files: dict[tuple[str, str], TextIO] = {}
        self._cameras = {
            (r.model.name, c.name) for r in scene.robots for c in r.model.config.cameras
        }
        self.lines_written = 0

    def on_message(self, topic: TopicSpec, stamp_ns: int, cdr: bytes) -> None:
        return None

    def on_step(self, step: int, stamp_ns: int, robot_states: dict[str, RobotState]) -> None:
        return None

    def wants_messages(self, topics: tuple[TopicSpec, ...]) -> bool:
        return False

    def wants_sample(self, robot: str, sensor: str, step: int, stamp_ns: int) -> bool:
        return step >= self.start_step and bool(self.people) and (robot, sensor) in self._cameras

    def on_camera(self, sample: CameraSample) -> None:
        if sample.step < self.start_step or not self.people:
            return
        frame = sample.frame
        shape = next(
            (a.shape for a in (frame.depth_m, frame.instance, frame.rgb) if a is not None), None
        )
        if shape is None:
            return
        height, width = shape[:2]
        world = self.people.keypoints_world(sample.step)
        image = project_keypoints(
            world,
            sample.position_world_optical,
            quat_to_matrix(sample.quat_world_optical),
            sample.k,
            width,
            height,
            frame.depth_m,
            frame.instance,
            self._ids,
            SELF_DEPTH_M,
        )
        people = []
        for p, person in enumerate(self.people.specs):
            vis = image.visibility[p]
            if not vis.any():
                continue
            flat: list[float | int] = []
            for (u, v), flag in zip(image.uv[p], vis, strict=True):
                shown = flag > 0
                flat += [round(float(u), 3) if shown else 0, round(float(v), 3) if shown else 0]
                flat.append(int(flag))
            people.append(
                {
                    "id": int(person.instance_id),
                    "name": person.name,
                    "num_keypoints": int((vis > 0).sum()),
                    "keypoints": flat,
                    "keypoints_world": [[round(float(c), 6) for c in xyz] for xyz in world[p]],
                }
            )
        key = (sample.robot, sample.camera)
        f = self._files.get(key)
        if f is None:
            folder = self.root / sample.robot / sample.camera
            folder.mkdir(parents=True, exist_ok=True)
            # Stays open for the run (a line per frame); closed in close().
            f = self._files[key] = open(folder / KEYPOINTS_JSONL, "w")  # noqa: SIM115
        line = {
            "t": float(tum_stamp(sample.stamp_ns)),
            "visibility_from": image.source.value,
            "people": people,
        }
        f.write(json.dumps(line) + "\n")
        f.flush()
        self.lines_written += 1

    def close(self, status: str) -> None:
        for f in self._files.values():
            f.close()
