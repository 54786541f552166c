"""The object set grade ships: 16 objects, as SceneReplica uses 16 YCB objects.

Six are real household-object meshes that robosuite ships (MIT licence): bottle, bread, can,
cereal box, lemon, milk carton, with robosuite's own scales. YCB models themselves are not on
any package registry, so the other ten are primitives with the dimensions of YCB objects
(cracker box, sugar box, soup can, ...); a user with the YCB models writes an object-set file
naming the mesh files instead (see docs/scenes.md).
"""

from __future__ import annotations

from typing import Any

from grade_scenes.objects import ObjectSetConfig, object_set_from_mapping

# Densities: robosuite's values are light (50-150 kg/m3) for its thin shells; these are the
# solid-body densities that give YCB-like masses for a filled convex hull.
DEFAULT_OBJECTS: list[dict[str, Any]] = [
    {
        "name": "bottle",
        "mesh": "robosuite:bottle",
        "density_kg_m3": 400.0,
        "rgba": [0.55, 0.75, 0.85, 1.0],
    },
    {
        "name": "bread",
        "mesh": "robosuite:bread",
        "scale": [0.8, 0.8, 0.8],
        "density_kg_m3": 200.0,
        "rgba": [0.8, 0.6, 0.35, 1.0],
    },
    {"name": "can", "mesh": "robosuite:can", "density_kg_m3": 900.0, "rgba": [0.8, 0.1, 0.1, 1.0]},
    {
        "name": "cereal",
        "mesh": "robosuite:cereal",
        "density_kg_m3": 250.0,
        "rgba": [0.95, 0.8, 0.2, 1.0],
    },
    {
        "name": "lemon",
        "mesh": "robosuite:lemon",
        "scale": [1.5, 1.0, 1.0],
        "density_kg_m3": 900.0,
        "rgba": [1.0, 0.95, 0.2, 1.0],
    },
    {
        "name": "milk",
        "mesh": "robosuite:milk",
        "scale": [0.9, 0.9, 0.9],
        "density_kg_m3": 500.0,
        "rgba": [0.95, 0.95, 0.95, 1.0],
    },
    {
        "name": "cracker_box",
        "shape": "box",
        "size_m": [0.06, 0.158, 0.21],
        "density_kg_m3": 200.0,
        "rgba": [0.85, 0.2, 0.15, 1.0],
    },
    {
        "name": "sugar_box",
        "shape": "box",
        "size_m": [0.038, 0.089, 0.175],
        "density_kg_m3": 870.0,
        "rgba": [0.95, 0.9, 0.6, 1.0],
    },
    {
        "name": "pudding_box",
        "shape": "box",
        "size_m": [0.035, 0.11, 0.089],
        "density_kg_m3": 550.0,
        "rgba": [0.55, 0.35, 0.2, 1.0],
    },
    {
        "name": "gelatin_box",
        "shape": "box",
        "size_m": [0.028, 0.085, 0.073],
        "density_kg_m3": 560.0,
        "rgba": [0.9, 0.3, 0.5, 1.0],
    },
    {
        "name": "potted_meat_can",
        "shape": "box",
        "size_m": [0.05, 0.097, 0.082],
        "density_kg_m3": 930.0,
        "rgba": [0.3, 0.4, 0.75, 1.0],
    },
    {
        "name": "foam_brick",
        "shape": "box",
        "size_m": [0.05, 0.075, 0.05],
        "density_kg_m3": 150.0,
        "rgba": [0.9, 0.25, 0.25, 1.0],
    },
    {
        "name": "wood_block",
        "shape": "box",
        "size_m": [0.085, 0.085, 0.2],
        "density_kg_m3": 500.0,
        "rgba": [0.75, 0.6, 0.4, 1.0],
    },
    {
        "name": "tomato_soup_can",
        "shape": "cylinder",
        "size_m": [0.0335, 0.101],
        "density_kg_m3": 1000.0,
        "rgba": [0.8, 0.15, 0.1, 1.0],
    },
    {
        "name": "tuna_fish_can",
        "shape": "cylinder",
        "size_m": [0.043, 0.033],
        "density_kg_m3": 900.0,
        "rgba": [0.6, 0.65, 0.7, 1.0],
    },
    {
        "name": "master_chef_can",
        "shape": "cylinder",
        "size_m": [0.051, 0.139],
        "density_kg_m3": 700.0,
        "rgba": [0.2, 0.35, 0.7, 1.0],
    },
]


def default_object_set() -> ObjectSetConfig:
    """The shipped 16-object set (validated like a user's file)."""
    return object_set_from_mapping({"objects": DEFAULT_OBJECTS}, "default object set")
