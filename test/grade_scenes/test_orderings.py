"""Orderings and names: the fixed pick order drawn once per scene and stored in the scene file,
and clear errors for a bad scene object, pipeline or ordering name."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from grade_cli.main import main
from grade_common.errors import ConfigError
from grade_scenes.errors import ScenesError
from grade_scenes.pick.perception import Pipeline
from grade_scenes.pick.protocol import Ordering, choice
from grade_scenes.scenefile import fixed_order
from grade_sim.config.tabletop import load_tabletop_scene

NAMES = ["bottle", "can", "cereal", "lemon", "milk"]


def test_fixed_order_is_a_permutation_drawn_from_seed_and_scene() -> None:
    order = fixed_order(NAMES, 0, 12)
    assert sorted(order) == NAMES
    assert fixed_order(NAMES, 0, 12) == order
    others = {fixed_order(NAMES, seed, scene) for seed in (0, 1) for scene in range(8)}
    assert len(others) > 4  # other scenes and seeds draw other orders


def _scene(tmp_path: Path, order: list[str]) -> Path:
    (tmp_path / "m.stl").write_text("solid m\nendsolid m\n")
    obj = {
        "mesh": "m.stl",
        "mass_kg": 0.1,
        "inertia_kg_m2": [1e-4, 1e-4, 1e-4, 0, 0, 0],
        "position_xyz": [0.6, 0.0, 0.8],
        "quaternion_wxyz": [1, 0, 0, 0],
    }
    data = {
        "name": "scene_000",
        "objects": [{"name": "can", **obj}, {"name": "box", **obj}],
        "pick_order": order,
    }
    file = tmp_path / "scene.yaml"
    file.write_text(yaml.safe_dump(data))
    return file


def test_the_scene_file_keeps_its_pick_order(tmp_path: Path) -> None:
    assert load_tabletop_scene(_scene(tmp_path, ["box", "can"])).pick_order == ("box", "can")


@pytest.mark.parametrize("order", [["box", "mug"], ["box"], ["box", "can", "can"]])
def test_a_pick_order_naming_an_unknown_or_missing_object_is_refused(
    tmp_path: Path, order: list[str]
) -> None:
    with pytest.raises(ConfigError, match=r"pick_order: .* must name every object of the scene"):
        load_tabletop_scene(_scene(tmp_path, order))


@pytest.mark.parametrize(
    ("kind", "value", "allowed"),
    [
        (Pipeline, "posecnn", "ground_truth, model_based, model_free"),
        (Ordering, "far_to_near", "near_to_far, fixed"),
    ],
)
def test_unknown_pipeline_or_ordering_names_value_and_allowed(
    kind: type, value: str, allowed: str
) -> None:
    with pytest.raises(ScenesError, match=f"--x '{value}' does not exist; allowed: {allowed}"):
        choice(kind, value, "--x")


def test_the_cli_refuses_an_unknown_pipeline(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["scenes", "run", str(tmp_path), "--out", str(tmp_path / "o"), "--pipeline", "ucn"]
    assert main(args) == 1
    assert "--pipeline 'ucn' does not exist; allowed: ground_truth" in capsys.readouterr().err
