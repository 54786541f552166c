"""Flying objects: random shapes moving along keyframed random paths in free space."""

from __future__ import annotations

import enum
from dataclasses import dataclass

import numpy as np

from grade_common.occupancy import OccupancyGrid
from grade_common.types import FloatArray
from grade_people.paths import coarsen, sample_free_point
from grade_sim.config.scenario import FlyingObjectsConfig


class ObjectShape(enum.Enum):
    BOX = "box"
    SPHERE = "sphere"
    CAPSULE = "capsule"
    CYLINDER = "cylinder"
    ELLIPSOID = "ellipsoid"


@dataclass(frozen=True)
class FlyingObjectSpec:
    name: str
    instance_id: int
    shape: ObjectShape
    half_size: tuple[float, float, float]
    rgba: tuple[float, float, float, float]


@dataclass(frozen=True)
class FlyingTimeline:
    position_xyz: FloatArray  # (n, 3)
    quat_wxyz: FloatArray  # (n, 4)


def random_object(
    name: str, instance_id: int, config: FlyingObjectsConfig, rng: np.random.Generator
) -> FlyingObjectSpec:
    shape = list(ObjectShape)[int(rng.integers(len(ObjectShape)))]
    size = float(rng.uniform(*config.size_m)) / 2
    aspect = rng.uniform(0.5, 1.0, 3)
    half = tuple(float(v) for v in size * aspect)
    rgba = (*(float(c) for c in rng.uniform(0.05, 1.0, 3)), 1.0)
    return FlyingObjectSpec(name, instance_id, shape, (half[0], half[1], half[2]), rgba)  # type: ignore[arg-type]


def _smoothstep(u: FloatArray) -> FloatArray:
    return u * u * (3 - 2 * u)


def plan_object_timeline(
    grid: OccupancyGrid,
    config: FlyingObjectsConfig,
    spec: FlyingObjectSpec,
    n_steps: int,
    dt_s: float,
    rng: np.random.Generator,
) -> FlyingTimeline:
    """Keyframes in free space joined by straight, eased segments (loops over the keyframes)."""
    free = coarsen(grid.inflated(max(spec.half_size) + 0.1), 2)
    speed = max(float(rng.uniform(*config.speed_mps)), 1e-3)
    keys = [np.append(sample_free_point(free, rng), rng.uniform(*config.height_m))]
    for _ in range(config.keyframes - 1):
        candidate = keys[-1]
        for _ in range(50):
            xy = sample_free_point(free, rng)
            if free.segment_is_free(keys[-1][:2], xy):
                candidate = np.append(xy, rng.uniform(*config.height_m))
                break
        keys.append(candidate)
    # Return along the keyframes in reverse so every segment is one already known to be free.
    cycle = keys + keys[-2:0:-1] if len(keys) > 2 else keys
    seg_t = [
        max(float(np.linalg.norm(b - a)) / speed, 0.5)
        for a, b in zip(cycle, cycle[1:] + cycle[:1], strict=True)
    ]
    t = np.arange(n_steps) * dt_s
    period = float(sum(seg_t))
    local = np.mod(t, period)
    bounds = np.concatenate([[0.0], np.cumsum(seg_t)])
    idx = np.clip(np.searchsorted(bounds, local, side="right") - 1, 0, len(seg_t) - 1)
    u = _smoothstep((local - bounds[idx]) / np.asarray(seg_t)[idx])
    starts = np.asarray(cycle)[idx]
    ends = np.asarray(cycle[1:] + cycle[:1])[idx]
    pos = starts + (ends - starts) * u[:, None]
    # Constant tumbling about a random axis.
    axis = rng.normal(size=3)
    axis /= np.linalg.norm(axis)
    rate = float(rng.uniform(0.2, 1.2))
    q0 = rng.normal(size=4)
    q0 /= np.linalg.norm(q0)
    half = 0.5 * rate * t
    dq = np.column_stack([np.cos(half), np.sin(half)[:, None] * axis[None, :]])
    w0, v0 = q0[0], q0[1:]
    quat = np.column_stack(
        [dq[:, 0] * w0 - dq[:, 1:] @ v0, dq[:, 0:1] * v0 + w0 * dq[:, 1:] + np.cross(dq[:, 1:], v0)]
    )
    quat /= np.linalg.norm(quat, axis=1, keepdims=True)
    return FlyingTimeline(pos, quat)
