"""Scenes for the arm's tests: boxes and cans standing at reachable places."""

from __future__ import annotations

from pathlib import Path

import pytest

from grade_scenes.catalog import build_catalog
from grade_scenes.generate import PlacedObject, Scene
from grade_scenes.objects import ObjectSetConfig, ObjectSpec, Shape
from grade_scenes.scenefile import SCENE_DIR, write_candidates
from grade_scenes.table import TableConfig

TABLE = TableConfig()
BOX = ObjectSpec(name="box", shape=Shape.BOX, size_m=(0.05, 0.06, 0.12), density_kg_m3=400.0)
CAN = ObjectSpec(name="can", shape=Shape.CYLINDER, size_m=(0.03, 0.1), density_kg_m3=600.0)


def scene_file(folder: Path, specs: tuple[ObjectSpec, ...], xy: list[tuple[float, float]]) -> Path:
    catalog = build_catalog(ObjectSetConfig(objects=specs))
    placed = []
    for k, entry in enumerate(catalog):
        # The standing pose: the one with the highest rest height.
        pose = max(range(len(entry.poses)), key=lambda i: entry.poses[i].rest_height_m)
        transform = entry.poses[pose].transform_table_object.copy()
        transform[:2, 3] = xy[k]
        transform[2, 3] += TABLE.top_height_m
        placed.append(PlacedObject(k, pose, transform))
    write_candidates(folder, (Scene(0, tuple(placed)),), catalog, TABLE, {})
    return folder / SCENE_DIR / "scene_000.yaml"


@pytest.fixture(scope="module")
def box_scene(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 5 x 6 x 12 cm box standing 0.62 m in front of the robot."""
    return scene_file(tmp_path_factory.mktemp("box") / "c", (BOX,), [(0.62, 0.05)])


@pytest.fixture
def two_object_scene(tmp_path: Path) -> Path:
    """The box and a can beside it."""
    return scene_file(tmp_path / "c", (BOX, CAN), [(0.62, 0.05), (0.66, -0.12)])
