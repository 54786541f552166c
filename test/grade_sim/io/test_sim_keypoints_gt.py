"""keypoints.jsonl of a simulated run: on the person's instance mask, from the record, seeded."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest

from grade_common.keypoints import COCO17_NAMES, read_keypoints
from grade_common.tum import KEYPOINTS_JSONL, read_list
from grade_sim.actors.people_group import People
from grade_sim.config.scenario import scenario_from_mapping
from grade_sim.engine.protocol import CameraFrame
from grade_sim.io.keypoint_writer import KeypointWriter
from grade_sim.io.record import load_record
from grade_sim.scene import build_scene
from grade_sim.sensors.observer import CameraSample
from grade_sim.sim.run import run_scenario

CAM = "gt/uav1/camera"
PHYSICS_HZ = 240.0
STATE_KEYS = ("position_xy", "heading_rad", "phase_rad", "amplitude")
# A visible joint may sit on the seam between two limb parts (elbow, wrist, knee, ankle): its
# pixel can be the background one pixel beside a forearm a few pixels wide. Such keypoints
# count as on the mask when the mask is within this many pixels.
TOLERANCE_PX = 1


@dataclass(frozen=True)
class Runs:
    first: Path
    second: Path


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory, small_data: Callable[..., Any]) -> Runs:
    data = small_data(
        seed=13,
        duration_s=1.0,
        environment={"procedural": {"rooms_x": 1, "rooms_y": 1}},
        people={"count": 6},
        flying_objects={"count": 0},
    )
    data["robots"][0]["cameras"][0].update(width=320, height=240)
    scenario = scenario_from_mapping(data)
    root = tmp_path_factory.mktemp("keypoints")
    first = run_scenario(scenario, root / "a").path
    second = run_scenario(scenario, root / "b").path
    return Runs(first, second)


def _visible_on_mask(run: Path) -> tuple[int, int, int, dict[str, int]]:
    """(visible keypoints, exactly on their person's mask, within TOLERANCE_PX, misses by name)."""
    cam = run / CAM
    masks = dict(read_list(cam / "instance.txt"))
    total = exact = near = 0
    misses: dict[str, int] = {}
    for t, people in read_keypoints(cam / KEYPOINTS_JSONL).items():
        mask = cv2.imread(str(cam / masks[f"{t:.6f}"]), cv2.IMREAD_UNCHANGED)
        h, w = mask.shape
        for iid, person in people.items():
            flat = person["keypoints"]
            for j, name in enumerate(COCO17_NAMES):
                u, v, vis = flat[3 * j : 3 * j + 3]
                if vis != 2:
                    continue
                total += 1
                c, r = round(u), round(v)
                if mask[r, c] == iid:
                    exact += 1
                    near += 1
                    continue
                r0, r1 = max(r - TOLERANCE_PX, 0), min(r + TOLERANCE_PX + 1, h)
                c0, c1 = max(c - TOLERANCE_PX, 0), min(c + TOLERANCE_PX + 1, w)
                if (mask[r0:r1, c0:c1] == iid).any():
                    near += 1
                else:
                    misses[name] = misses.get(name, 0) + 1
    return total, exact, near, misses


def test_visible_keypoints_land_on_the_persons_mask(runs: Runs) -> None:
    total, exact, near, misses = _visible_on_mask(runs.first)
    print(f"visible {total}, on the mask {exact}, within {TOLERANCE_PX} px {near}, misses {misses}")
    assert total >= 100  # enough people in view for the fraction to mean something
    assert near / total >= 0.95
    assert exact / total >= 0.85


def test_lines_follow_the_frames_and_flag_every_keypoint(runs: Runs) -> None:
    cam = runs.first / CAM
    stamps = {float(t) for t, _ in read_list(cam / "rgb.txt")}
    lines = (cam / KEYPOINTS_JSONL).read_text().splitlines()
    assert sorted(json.loads(line)["t"] for line in lines) == sorted(stamps)  # one line a frame
    flags: set[int] = set()
    for line in lines:
        entry = json.loads(line)
        assert entry["visibility_from"] == "depth"
        for person in entry["people"]:
            vis = person["keypoints"][2::3]
            flags |= set(vis)
            assert person["num_keypoints"] == sum(1 for v in vis if v > 0)
            assert len(person["keypoints_world"]) == 17
    assert flags == {0, 1, 2}  # people leave the image and hide joints behind themselves


def test_a_frame_with_nobody_in_view_gets_its_line(
    tmp_path: Path, small_data: Callable[..., Any]
) -> None:
    scenario = scenario_from_mapping(small_data(people={"count": 2}, flying_objects={"count": 0}))
    writer = KeypointWriter(tmp_path, build_scene(scenario), start_step=0)
    frame = CameraFrame(rgb=None, depth_m=np.zeros((4, 4), np.float32), instance=None)
    k = np.array([[2.0, 0, 2], [0, 2.0, 2], [0, 0, 1]])
    # High above the room looking up (optical z = world z): everyone is behind the camera.
    sample = CameraSample(
        "uav1",
        "camera",
        3,
        12_500_000,
        frame,
        np.array([0, 0, 1000.0]),
        np.array([1.0, 0, 0, 0]),
        k,
        [],
    )
    writer.on_camera(sample)
    writer.close("complete")
    lines = (tmp_path / "uav1" / "camera" / KEYPOINTS_JSONL).read_text().splitlines()
    assert [json.loads(line) for line in lines] == [
        {"t": 0.0125, "visibility_from": "depth", "people": []}
    ]


def test_world_keypoints_follow_from_the_record(runs: Runs) -> None:
    """Replay needs only the record: the scene rebuilt from the recorded scenario has the
    recorded people's timelines, and its skeletons give every written keypoint."""
    record = load_record(runs.first / "record.npz")
    scene = build_scene(record.scenario)
    index = {p.name: i for i, p in enumerate(scene.group(People).specs)}
    with np.load(runs.first / "record.npz") as npz:
        arrays = {k: npz[k] for k in npz.files if k.startswith("person/")}
    checked = 0
    for t, entries in read_keypoints(runs.first / CAM / KEYPOINTS_JSONL).items():
        step = round(t * PHYSICS_HZ)
        for person in entries.values():
            i = index[person["name"]]
            for key in STATE_KEYS:
                recorded = arrays[f"person/{person['name']}/{key}"][step]
                np.testing.assert_array_equal(
                    recorded, getattr(scene.group(People).timelines[i], key)[step]
                )
            world = scene.group(People).keypoints_world(step)[i]
            np.testing.assert_allclose(person["keypoints_world"], world, atol=2e-6)
            checked += 1
    assert checked > 10


def test_same_seed_gives_byte_identical_keypoints(runs: Runs) -> None:
    a = (runs.first / CAM / KEYPOINTS_JSONL).read_bytes()
    b = (runs.second / CAM / KEYPOINTS_JSONL).read_bytes()
    assert a == b


def test_faces_turned_away_are_hidden(runs: Runs) -> None:
    """Self-occlusion: the nose of a person seen from behind is hidden by the head (1); the
    nose of a person facing the camera and on its mask is visible (2). (In this run, seed 13:
    11 noses turned away with the default MakeHuman heads.) Turned away means more than 130
    degrees from the camera: a MakeHuman nose at 127 degrees, at the head's silhouette and seen
    from above by the UAV, shows."""
    cam = runs.first / CAM
    poses = {
        float(row.split()[0]): np.array([float(v) for v in row.split()[1:4]])
        for row in (cam / "groundtruth.txt").read_text().splitlines()
        if row and not row.startswith("#")
    }
    masks = dict(read_list(cam / "instance.txt"))
    away: list[int] = []
    towards: list[int] = []
    for t, people in read_keypoints(cam / KEYPOINTS_JSONL).items():
        mask = cv2.imread(str(cam / masks[f"{t:.6f}"]), cv2.IMREAD_UNCHANGED)
        for iid, person in people.items():
            world = np.array(person["keypoints_world"])
            u, v, vis = person["keypoints"][0:3]
            if vis == 0:
                continue
            facing = world[0] - (world[3] + world[4]) / 2  # nose minus the ears' midpoint
            to_camera = poses[t] - world[0]
            cos = facing @ to_camera / np.linalg.norm(facing) / np.linalg.norm(to_camera)
            if cos < -0.65:
                away.append(vis)
            elif cos > 0.5 and mask[round(v), round(u)] == iid:
                towards.append(vis)
    print(f"turned away: {len(away)} noses, turned towards: {len(towards)}")
    assert len(away) >= 10
    assert all(v == 1 for v in away)
    assert sum(v == 2 for v in towards) >= 0.9 * len(towards)
