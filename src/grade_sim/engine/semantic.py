"""Semantic classes: the class table of a scene and the instance -> class lookup.

Class ids are stable across scenes for the labels every world generator knows (BASE_CLASSES, in
this order); labels of a world not listed there (a mesh world's own part names) follow, sorted by
name. Id 0 is "unlabeled": pixels without a surface (beyond the far plane) and geoms without an
instance. Colours are fixed per id (a golden-ratio walk round the hue circle), for previews.
"""

from __future__ import annotations

import colorsys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

UNLABELED = "unlabeled"

# The labels of the built-in worlds, actors and robots (grade_sim.world, grade_sim.scene), so a
# class keeps its id whichever scenario a run uses. New labels go at the end (ids never move).
BASE_CLASSES: tuple[str, ...] = (
    UNLABELED,
    "floor",
    "wall",
    "ceiling",
    "furniture",
    "ground",
    "tree",
    "rock",
    "bush",
    "table",
    "desk",
    "shelf",
    "sofa",
    "bed",
    "cabinet",
    "crate",
    "tabletop_object",
    "environment",
    "person",
    "flying_box",
    "flying_sphere",
    "flying_ellipsoid",
    "flying_capsule",
    "flying_cylinder",
    "robot_uav",
    "robot_omni",
)


def class_colour(class_id: int) -> tuple[int, int, int]:
    """The preview colour (r, g, b) of a class id; black for unlabeled."""
    if class_id == 0:
        return (0, 0, 0)
    hue = (class_id * 0.618033988749895) % 1.0
    value = 0.95 if class_id % 2 else 0.75
    r, g, b = colorsys.hsv_to_rgb(hue, 0.8, value)
    return (round(r * 255), round(g * 255), round(b * 255))


@dataclass(frozen=True)
class ClassTable:
    """Class names by id (index 0 = unlabeled)."""

    names: tuple[str, ...]

    @classmethod
    def of_labels(cls, labels: Iterable[str]) -> ClassTable:
        """The base classes, then the labels not among them in name order."""
        extra = sorted(set(labels) - set(BASE_CLASSES))
        return cls((*BASE_CLASSES, *extra))

    def class_id(self, label: str) -> int:
        return self.names.index(label)

    def instance_lut(self, instance_labels: Mapping[int, str]) -> NDArray[np.uint16]:
        """Class id by instance id (index = instance id; unknown instances -> 0)."""
        size = max(instance_labels, default=0) + 1
        lut = np.zeros(size, dtype=np.uint16)
        index = {name: k for k, name in enumerate(self.names)}
        for iid, label in instance_labels.items():
            lut[iid] = index[label]
        return lut

    def to_mapping(self) -> dict[int, dict[str, object]]:
        """{id: {name, colour}}: the classes.yaml of a run directory."""
        return {
            k: {"name": name, "colour": list(class_colour(k))} for k, name in enumerate(self.names)
        }


def semantic_image(instance: NDArray[np.uint16], lut: NDArray[np.uint16]) -> NDArray[np.uint16]:
    """Class id per pixel from the instance mask (instances beyond the table -> 0)."""
    padded = lut if len(lut) > int(instance.max(initial=0)) else _grow(lut, int(instance.max()))
    out: NDArray[np.uint16] = padded[instance]
    return out


def _grow(lut: NDArray[np.uint16], largest: int) -> NDArray[np.uint16]:
    grown = np.zeros(largest + 1, dtype=np.uint16)
    grown[: len(lut)] = lut
    return grown


def colourise(semantic: NDArray[np.uint16], table: ClassTable) -> NDArray[np.uint8]:
    """An RGB preview of a semantic image (ids beyond the table are black)."""
    palette = np.array([class_colour(k) for k in range(len(table.names))], dtype=np.uint8)
    ids = np.where(semantic < len(palette), semantic, 0)
    out: NDArray[np.uint8] = palette[ids]
    return out
