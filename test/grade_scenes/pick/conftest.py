"""Scenes for the arm's tests: boxes and cans standing at reachable places."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import trimesh

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


WIDE = ObjectSpec(name="wide", shape=Shape.BOX, size_m=(0.04, 0.12, 0.08), density_kg_m3=400.0)


@pytest.fixture(scope="module")
def three_object_scene(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The box, the can and a second box of similar size (which one is which must be told
    apart by shape), all in the head camera's view."""
    return scene_file(
        tmp_path_factory.mktemp("three") / "c",
        (BOX, CAN, WIDE),
        [(0.62, 0.05), (0.66, -0.12), (0.5, -0.2)],
    )


@pytest.fixture(scope="module")
def cone_scene(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tall cone standing on its point end: 3 cm across at the foot, 8.8 cm across at the
    top, 24 cm high. From above it is wider than the gripper opens (7.9 cm) wherever the
    hand can reach down to; from the side its lower part fits."""
    folder = tmp_path_factory.mktemp("cone")
    angles = np.linspace(0, 2 * np.pi, 32, endpoint=False)

    def ring(radius_m: float, z_m: float) -> np.ndarray:
        return np.column_stack(
            [radius_m * np.cos(angles), radius_m * np.sin(angles), np.full(32, z_m)]
        )

    trimesh.convex.convex_hull(np.vstack([ring(0.015, 0.0), ring(0.044, 0.24)])).export(
        folder / "cone.stl"
    )
    spec = ObjectSpec(name="cone", mesh=str(folder / "cone.stl"), density_kg_m3=300.0)
    (entry,) = build_catalog(ObjectSetConfig(objects=(spec,)))
    # Upright, foot down: statically stable (the centre of mass is above the foot), though
    # trimesh's quasi-static probability of that pose is under the 0.02 threshold.
    vertices = np.asarray(entry.obj.mesh.vertices)
    transform = np.eye(4)
    transform[:3, 3] = [0.6, 0.0, TABLE.top_height_m - vertices[:, 2].min()]
    write_candidates(
        folder / "c", (Scene(0, (PlacedObject(0, 0, transform),)),), (entry,), TABLE, {}
    )
    return folder / "c" / SCENE_DIR / "scene_000.yaml"
