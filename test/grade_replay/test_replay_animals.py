"""Animals in a run: cameras and the lidar see them with their instance id, boxes hold them, the
record stores their timelines, and a replay reproduces the run exactly (or hides them), also
with a reactive crowd that steps around the animals live."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest
import yaml

from grade_common import kitti
from grade_common.tum import read_list
from grade_replay.changes import ReplayChanges
from grade_replay.replay import ReplayConfig, replay_run
from grade_sim.actors.animal_group import Animals
from grade_sim.actors.animals import ANIMAL_STATE_KEYS
from grade_sim.actors.people_group import People
from grade_sim.config.scenario import Scenario, scenario_from_mapping
from grade_sim.scene import build_scene
from grade_sim.sim.run import run_scenario
from replay_kit import replay_exactly

CAM = "gt/omni1/camera"
LIDAR = "gt/omni1/lidar"


def _scenario(**overrides: Any) -> Scenario:
    return scenario_from_mapping(
        {
            **{
                "seed": 3,
                "duration_s": 0.5,
                "bootstrap_s": 0.1,
                "environment": {
                    "type": "outdoor",
                    "outdoor": {
                        "size_m": [12.0, 12.0],
                        "trees": 1,
                        "rocks": 1,
                        "bushes": 1,
                        "tour_radius_m": 2.0,
                        "tour_points": 4,
                        "tour_clearance_m": 0.5,
                    },
                },
                "people": {"count": 0},
                "flying_objects": {"count": 0},
                "animals": {"count": 6, "kinds": ["zebra", "gazelle"]},
                "lights": {"count": 1},
                "robots": [
                    {
                        "name": "omni1",
                        "type": "omni",
                        "body_size_m": [0.5, 0.4, 0.25],
                        "cameras": [
                            {
                                "name": "camera",
                                "width": 160,
                                "height": 120,
                                "hfov_deg": 120.0,
                                "mount": {"xyz": [0.1, 0.0, 0.3]},
                            }
                        ],
                        "lidars": [{"name": "lidar", "preset": "vlp16"}],
                    }
                ],
            },
            **overrides,
        }
    )


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return run_scenario(_scenario(), tmp_path_factory.mktemp("animals") / "run").path


def _animal_ids() -> dict[int, str]:
    return {a.instance_id: a.kind.value for a in build_scene(_scenario()).group(Animals).specs}


def test_cameras_see_the_animals_with_their_ids_and_boxes(recorded: Path) -> None:
    ids = _animal_ids()
    instances = yaml.safe_load((recorded / "gt" / "instances.yaml").read_text())
    assert {i: instances[i]["class"] for i in ids} == ids
    cam = recorded / CAM
    seen: set[int] = set()
    for _, name in read_list(cam / "instance.txt"):
        mask = cv2.imread(str(cam / name), cv2.IMREAD_UNCHANGED)
        seen |= {int(i) for i in np.unique(mask)} & set(ids)
    assert seen, "the camera saw no animal"
    boxed = {b["id"] for line in (cam / "boxes2d.jsonl").read_text().splitlines()
             for b in yaml.safe_load(line)["boxes"]}  # fmt: skip
    assert seen <= boxed


def test_the_lidar_sees_the_animals(recorded: Path) -> None:
    pytest.importorskip("embreex")
    ids = set(_animal_ids())
    seen: set[int] = set()
    folder = recorded / LIDAR
    for b in sorted((folder / kitti.LABELS_DIR).glob("*.label")):
        instance, _ = kitti.read_label(b)
        seen |= {int(i) for i in np.unique(instance)} & ids
    assert seen, "the lidar saw no animal"


def test_record_stores_the_animal_timelines(recorded: Path) -> None:
    scene = build_scene(_scenario())
    with np.load(recorded / "record.npz") as npz:
        for animal, timeline in zip(
            scene.group(Animals).specs, scene.group(Animals).timelines, strict=True
        ):
            for key in ANIMAL_STATE_KEYS:
                stored = npz[f"animal/{animal.name}/{key}"]
                np.testing.assert_array_equal(stored, getattr(timeline, key)[: len(stored)])


@pytest.mark.slow
def test_replay_is_exact_and_can_hide_the_zebras(recorded: Path, tmp_path: Path) -> None:
    again = replay_run(ReplayConfig(recorded, tmp_path / "again"))
    assert again.fidelity.exact
    hidden = replay_run(
        ReplayConfig(
            recorded, tmp_path / "no_zebras", changes=ReplayChanges(hide_classes=("zebra",))
        )
    )
    zebras = {i for i, kind in _animal_ids().items() if kind == "zebra"}
    cam = hidden.path / CAM
    for _, name in read_list(cam / "instance.txt"):
        mask = cv2.imread(str(cam / name), cv2.IMREAD_UNCHANGED)
        assert not set(np.unique(mask).tolist()) & zebras


def _reactive_scenario() -> Scenario:
    """Reactive people among the animals; with seed 1, two people blind to the animals would
    walk into one within the 3 s (checked when this was written)."""
    return _scenario(
        seed=1,
        duration_s=3.0,
        people={"count": 4, "mode": "reactive", "body": "parts", "motions": ["walk"]},
        robots=[
            {
                "name": "omni1",
                "type": "omni",
                "body_size_m": [0.5, 0.4, 0.25],
                "cameras": [{"name": "camera", "width": 96, "height": 72, "rate_hz": 10.0}],
            }
        ],
    )


@pytest.mark.slow
def test_replay_of_a_reactive_run_among_animals_is_exact(tmp_path: Path) -> None:
    scenario = _reactive_scenario()
    recorded = run_scenario(scenario, tmp_path / "run").path
    scene = build_scene(scenario)
    assert scene.group(People).crowd_start is not None
    assert scene.group(Animals).specs
    # The live crowd stepped around the animals: no contact in the trace as it happened.
    placement = yaml.safe_load((recorded / "placement.yaml").read_text())
    assert placement["checked"] is True
    assert not [c for c in placement["collisions_seen"] if c.startswith("person_")]
    replay_exactly(recorded, tmp_path / "replay", ("person/", "animal/"))
