"""Flying objects: random shapes moving along keyframed random paths in free space."""

from __future__ import annotations

import enum
from dataclasses import dataclass

import numpy as np

from grade_common.occupancy import OccupancyGrid
from grade_common.rotations import quat_to_matrix
from grade_common.types import FloatArray
from grade_people.paths import coarsen, sample_free_point
from grade_sim.actors.geometry import (
    ActorGeometry,
    Box3D,
    InstanceInfo,
    RigidPart,
    significant,
)
from grade_sim.actors.group import PlannedGroup
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


# The engine's geom size of each shape from its half sizes (hx, hy, hz), and the significant
# digits it keeps of them.
_GEOM_SIZE = {
    ObjectShape.BOX: (lambda h: h, 9),
    ObjectShape.SPHERE: (lambda h: h[0], 6),
    ObjectShape.CAPSULE: (lambda h: (h[0], h[2]), 6),
    ObjectShape.CYLINDER: (lambda h: (h[0], h[2]), 6),
    ObjectShape.ELLIPSOID: (lambda h: h, 9),
}


def box_half_extents(spec: FlyingObjectSpec) -> FloatArray:
    """Half the extents of the object's box along its own axes."""
    h = np.asarray(spec.half_size)
    return {
        ObjectShape.BOX: h,
        ObjectShape.ELLIPSOID: h,
        ObjectShape.SPHERE: np.full(3, h[0]),
        ObjectShape.CAPSULE: np.array([h[0], h[0], h[2] + h[0]]),
        ObjectShape.CYLINDER: np.array([h[0], h[0], h[2]]),
    }[spec.shape]


@dataclass(frozen=True, kw_only=True)
class FlyingObjects(PlannedGroup[FlyingObjectSpec, FlyingTimeline]):
    """Flying objects as an actor group: one rigid body each, on a planned flight (above
    people's heads: no contact shadow, no obstacle)."""

    kind = "object"

    def body_names(self) -> tuple[str, ...]:
        return tuple(o.name for o in self.specs)

    def body_labels(self) -> tuple[str, ...]:
        return tuple(f"flying object {o.name}" for o in self.specs)

    def instances(self) -> tuple[InstanceInfo, ...]:
        return tuple(
            InstanceInfo(o.instance_id, o.name, f"flying_{o.shape.value}") for o in self.specs
        )

    def geometry(self) -> tuple[ActorGeometry, ...]:
        out: list[ActorGeometry] = []
        for obj in self.specs:
            size_of, digits = _GEOM_SIZE[obj.shape]
            size = significant(size_of(obj.half_size), digits)  # type: ignore[no-untyped-call]
            out.append(
                RigidPart(
                    obj.name,
                    obj.instance_id,
                    obj.shape.value,
                    tuple(size),
                    tuple(significant(obj.rgba)),
                )
            )
        return tuple(out)

    def poses(self, step: int) -> tuple[FloatArray, FloatArray]:
        k = min(step, self.n_steps - 1)
        return (
            np.array([t.position_xyz[k] for t in self.timelines]),
            np.array([t.quat_wxyz[k] for t in self.timelines]),
        )

    def boxes(self, step: int, positions: FloatArray) -> list[Box3D]:
        k = min(step, self.n_steps - 1)
        return [
            Box3D(
                obj.instance_id,
                tl.position_xyz[k].copy(),
                2 * box_half_extents(obj),
                quat_to_matrix(tl.quat_wxyz[k]),
            )
            for obj, tl in zip(self.specs, self.timelines, strict=True)
        ]

    def record(self, n_steps: int) -> dict[str, np.ndarray]:
        out: dict[str, np.ndarray] = {}
        for o, tl in zip(self.specs, self.timelines, strict=True):
            out[f"object/{o.name}/position_xyz"] = tl.position_xyz[:n_steps]
            out[f"object/{o.name}/quat_wxyz"] = tl.quat_wxyz[:n_steps]
        return out
