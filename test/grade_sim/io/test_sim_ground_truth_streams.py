"""A run with the opt-in ground-truth streams: semantic, normals and flow reach the bag (32FC3,
32FC2 read back by rosbags) and gt/ (16-bit PNGs, list files, classes.yaml), and agree."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest
import yaml

from grade_common.gt_png import EXTRA_IMAGE_KINDS, png_u16_to_flow, png_u16_to_normals
from grade_common.images import image_to_array
from grade_common.tum import tum_stamp
from grade_sim.config.scenario import Stream, scenario_from_mapping
from grade_sim.engine.semantic import ClassTable
from grade_sim.scene import build_scene
from grade_sim.sensors.messages import typestore
from grade_sim.sim.run import run_scenario

Bag = dict[str, list[tuple[int, str, bytes]]]
STREAMS = ["rgb", "depth", "instance", "semantic", "normals", "flow"]
CAM = "gt/uav1/camera"


@pytest.fixture(scope="module")
def run(
    tmp_path_factory: pytest.TempPathFactory,
    small_data: Callable[..., dict[str, Any]],
    read_bag: Callable[[Path], Bag],
) -> tuple[Path, Bag, ClassTable]:
    data = small_data(seed=5, duration_s=0.3, people={"count": 2}, flying_objects={"count": 1})
    data["robots"][0]["cameras"][0]["streams"] = STREAMS
    scenario = scenario_from_mapping(data)
    result = run_scenario(scenario, tmp_path_factory.mktemp("gt_streams") / "run")
    scene = build_scene(scenario)
    table = ClassTable.of_labels(i.label for i in scene.instances.values())
    return result.path, read_bag(result.path / "bag"), table


def _bag_images(bag: Bag, kind: str) -> dict[str, np.ndarray]:
    out = {}
    for _, msgtype, raw in bag[f"/uav1/camera/{kind}/image_raw"]:
        msg = typestore().deserialize_cdr(raw, msgtype)
        stamp = int(msg.header.stamp.sec) * 1_000_000_000 + int(msg.header.stamp.nanosec)
        out[tum_stamp(stamp)] = image_to_array(msg)
    return out


def _png(path: Path) -> np.ndarray:
    image = cv2.imread(str(path), cv2.IMREAD_UNCHANGED)
    assert image is not None, path
    return image[..., ::-1] if image.ndim == 3 else image


def test_the_stream_names_are_the_folder_names() -> None:
    assert (Stream.SEMANTIC.value, Stream.NORMALS.value, Stream.FLOW.value) == EXTRA_IMAGE_KINDS


def test_classes_yaml_is_the_class_table(run: tuple[Path, Bag, ClassTable]) -> None:
    path, _, table = run
    classes = yaml.safe_load((path / "gt" / "classes.yaml").read_text())
    assert [classes[k]["name"] for k in sorted(classes)] == list(table.names)
    assert all(len(v["colour"]) == 3 for v in classes.values())


def test_semantic_images_are_the_instances_classes(run: tuple[Path, Bag, ClassTable]) -> None:
    path, bag, table = run
    cam = path / CAM
    instances = yaml.safe_load((path / "gt" / "instances.yaml").read_text())
    lut = table.instance_lut({int(i): v["class"] for i, v in instances.items()})
    stamps = [ln.split()[0] for ln in (cam / "rgb.txt").read_text().splitlines()[2:]]
    assert stamps
    for kind in EXTRA_IMAGE_KINDS:
        listed = [ln.split()[0] for ln in (cam / f"{kind}.txt").read_text().splitlines()[2:]]
        assert listed == stamps
    semantic_bag = _bag_images(bag, "semantic")
    seen: set[int] = set()
    for t in stamps:
        instance = _png(cam / "instance" / f"{t}.png")
        semantic = _png(cam / "semantic" / f"{t}.png")
        assert semantic.dtype == np.uint16
        np.testing.assert_array_equal(semantic, lut[instance])
        np.testing.assert_array_equal(semantic_bag[t], semantic)
        seen |= set(np.unique(semantic).tolist())
    assert {table.class_id(c) for c in ("floor", "wall")} <= seen


def test_normals_and_flow_files_match_the_bag(run: tuple[Path, Bag, ClassTable]) -> None:
    path, bag, _ = run
    cam = path / CAM
    normals_bag = _bag_images(bag, "normals")
    flow_bag = _bag_images(bag, "flow")
    instance_bag = _bag_images(bag, "instance")
    instances = yaml.safe_load((path / "gt" / "instances.yaml").read_text())
    people = [int(i) for i, info in instances.items() if info["class"] == "person"]
    stamps = sorted(normals_bag, key=float)  # the bag has the bootstrap frames too
    written = {ln.split()[0] for ln in (cam / "normals.txt").read_text().splitlines()[2:]}
    assert written
    assert written <= set(stamps)
    for k, t in enumerate(stamps):
        n, flow = normals_bag[t], flow_bag[t]
        assert n.shape == (120, 160, 3)
        assert n.dtype == np.float32
        # A closed room: every pixel has a surface. Normals of meshes and skins come from the
        # depth of same-surface neighbours: a one-pixel sliver has none and stays 0.
        norm = np.linalg.norm(n, axis=-1)
        unit = np.abs(norm - 1.0) <= 1e-5
        assert np.all(unit | (norm == 0.0))
        on_people = np.isin(instance_bag[t], people)
        assert unit[~on_people].mean() > 0.999
        assert unit[on_people].mean() > 0.9  # skins: thin limbs' edge pixels are slivers
        assert flow.shape == (120, 160, 2)
        assert flow.dtype == np.float32
        if k == 0 or t == min(written, key=float):
            # No previous frame; the experiment's first frame has none in the ground truth.
            assert np.isnan(flow).all()
        else:
            assert np.isfinite(flow).all()  # skinned people's pixels included
        if t not in written:
            continue
        assert np.abs(png_u16_to_normals(_png(cam / "normals" / f"{t}.png")) - n).max() < 3e-5
        from_png = png_u16_to_flow(_png(cam / "flow" / f"{t}.png"))
        np.testing.assert_array_equal(np.isnan(from_png), np.isnan(flow))
        if np.isfinite(flow).any():
            assert np.nanmax(np.abs(from_png - flow)) <= 0.5 / 64 + 1e-6
