"""The small scenario most tests run: 2x1 procedural rooms, two people, a flying object, a UAV;
and where in such rooms the wall between them stands.

One definition, so the simulator, replay and render tests exercise the same small world and a
change to it is made once.
"""

from __future__ import annotations

from typing import Any

from grade_sim.config.scenario import Scenario, scenario_from_mapping
from grade_sim.world.model import World


def small_mapping(width: int = 160, height: int = 120, **overrides: Any) -> dict[str, Any]:
    """Plain data of a small, fast scenario (a `width` x `height` camera, short run)."""
    data: dict[str, Any] = {
        "seed": 7,
        "duration_s": 0.5,
        "bootstrap_s": 0.1,
        "environment": {"procedural": {"rooms_x": 2, "rooms_y": 1}},
        "people": {"count": 2},
        "flying_objects": {"count": 1},
        "lights": {"count": 1},
        "robots": [
            {
                "name": "uav1",
                "cameras": [
                    {
                        "name": "camera",
                        "width": width,
                        "height": height,
                        "mount": {"xyz": [0.2, 0.0, 0.0]},
                    }
                ],
            }
        ],
    }
    data.update(overrides)
    return data


def small_scenario(width: int = 160, height: int = 120, **overrides: Any) -> Scenario:
    """The validated small scenario (see `small_mapping`)."""
    return scenario_from_mapping(small_mapping(width, height, **overrides))


def inner_wall(world: World) -> tuple[float, float]:
    """In rooms laid side by side along x (rooms_x: 2): x of the wall between them, and a y
    where that wall is solid (not the door)."""
    walls = [b for b in world.boxes if b.label == "wall" and b.half_size_xyz[0] < 0.2]
    xs = sorted({round(b.center_xyz[0], 6) for b in walls})
    inner = [b for b in walls if xs[0] < b.center_xyz[0] < xs[-1]]
    longest = max(inner, key=lambda b: b.half_size_xyz[1])
    return longest.center_xyz[0], longest.center_xyz[1]
