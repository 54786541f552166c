"""People as an actor group: rigid-part or skinned bodies, scripted or reactive (a live crowd).

Skinned people are posed from their motion timelines through the motion library
(`grade_people.motion.pose`); a frame asks for a step's skeleton several times (the engine, the
boxes, the skins and the keypoints), so the last SKELETON_STEPS_KEPT steps' are kept.

Reactive people are the one group with run state. The scene as built holds where their crowd
starts (`CrowdStart`); each run starts its own live `Crowd` from it (`started`: the simulator
does, through `Scene.started`), which the run's loop steps (`advance`), filling the run's
timelines as it goes. A replay reads those timelines back from the record (`replayed`).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import cached_property

import numpy as np

from grade_common.occupancy import OccupancyGrid
from grade_common.rotations import matrices_to_quats
from grade_common.types import FloatArray
from grade_people.body_mesh import SkinMesh, body_mesh, skin_vertices
from grade_people.bvh import BvhMotion, RetargetedMotion, retarget
from grade_people.config import CrowdMode, PeopleConfig
from grade_people.crowd import Crowd, RobotObstacle, avoidance_decimation, known_through
from grade_people.keypoints import rigid_coco17_world
from grade_people.motion import AnimationTrack, animation_track, pose, pose_inputs, stack_inputs
from grade_people.people import PartShape, PersonSpec, PersonTimeline, part_poses
from grade_people.seat import Seat
from grade_people.skeleton import coco17_world, face_points, rest_positions
from grade_sim.actors.box_kernels import heading_bounds
from grade_sim.actors.geometry import (
    ActorGeometry,
    Box3D,
    InstanceInfo,
    RigidPart,
    ShadowCaster,
    SkinnedFigure,
    heading_rotation,
    significant,
)
from grade_sim.actors.group import ActorGroup
from grade_sim.actors.placement import Collision

# Steps whose skeleton poses People.skeleton_poses keeps: a pipelined loop is at most
# MAX_FRAMES_IN_FLIGHT frames (4 x 8 steps at 30 Hz, 240 Hz physics) ahead of the observers
# that ask again for a frame's step. 8 people x 163 joints: ~125 kB a step.
SKELETON_STEPS_KEPT = 64
# A person's contact shadow: a disc this wide and a body this tall, times the person's scale.
SHADOW_RADIUS_M = 0.3
SHADOW_HEIGHT_M = 1.75
# The arrays of a person's timeline in the experiment record (PersonTimeline's fields).
TIMELINE_KEYS = ("position_xy", "heading_rad", "phase_rad", "amplitude", "motion", "seat_height_m")
RIGID_PAD_M = 0.15  # a rigid-part person's box: its parts' centres padded by a part's radius


@dataclass(frozen=True, kw_only=True)
class CrowdStart:
    """Where a reactive crowd starts: the inputs of `grade_people.crowd.Crowd` and the state of
    its generator. `crowd()` starts a new live crowd each time, every one the same: each draws
    from its own copy of `rng`, which itself is never drawn from."""

    grid: OccupancyGrid
    config: PeopleConfig
    heights_m: tuple[float, ...]
    n_steps: int
    dt_s: float
    rng: np.random.Generator
    start_clear_of: tuple[RobotObstacle, ...]
    clip_durations_s: tuple[float, ...]
    seats: tuple[Seat, ...]
    names: tuple[str, ...]
    obstacles_at_start: tuple[RobotObstacle, ...]

    def crowd(self) -> Crowd:
        """A live crowd at step 0."""
        crowd = Crowd(
            self.grid,
            self.config,
            self.heights_m,
            self.n_steps,
            self.dt_s,
            copy.deepcopy(self.rng),
            self.start_clear_of,
            self.clip_durations_s,
            self.seats,
            self.names,
        )
        crowd.advance(0, list(self.obstacles_at_start))
        return crowd


@dataclass(frozen=True, kw_only=True)
class People:
    """The people of a scene: specs, motion timelines (planned, or filled live by `crowd`) and
    the parsed motion-capture clips they may play."""

    specs: tuple[PersonSpec, ...] = ()
    timelines: tuple[PersonTimeline, ...] = ()
    config: PeopleConfig | None = None
    n_steps: int = 1
    dt_s: float = 1.0
    crowd_start: CrowdStart | None = None  # reactive people: where every run's crowd starts
    crowd: Crowd | None = None  # the run's live crowd (a started scene's)
    clips: tuple[BvhMotion, ...] = ()

    kind = "person"

    def __len__(self) -> int:
        return len(self.specs)

    def with_timelines(self) -> Iterator[tuple[PersonSpec, PersonTimeline]]:
        """Each actor's spec with its timeline."""
        return zip(self.specs, self.timelines, strict=True)

    @property
    def skinned(self) -> bool:
        """Whether the people have skeletons and skins (else rigid parts)."""
        return bool(self.specs) and self.specs[0].body is not None

    @property
    def reactive(self) -> bool:
        return self.config is not None and self.config.mode is CrowdMode.REACTIVE

    # -- ActorGroup ------------------------------------------------------------------------
    def body_names(self) -> tuple[str, ...]:
        return self._body_names

    @cached_property
    def _body_names(self) -> tuple[str, ...]:
        # Asked for at every actor update (stacked_poses): built once.
        return tuple(f"{p.name}/{part}" for p in self.specs for part in p.body_names())

    def body_labels(self) -> tuple[str, ...]:
        return tuple(f"person {p.name}" for p in self.specs for _ in p.body_names())

    def instances(self) -> tuple[InstanceInfo, ...]:
        return tuple(InstanceInfo(p.instance_id, p.name, "person") for p in self.specs)

    def geometry(self) -> tuple[ActorGeometry, ...]:
        out: list[ActorGeometry] = []
        for person in self.specs:
            if person.body is not None and person.clothing is not None:
                out.append(
                    SkinnedFigure(person.name, person.instance_id, person.body, person.clothing)
                )
                continue
            for part in person.parts():
                if part.shape is PartShape.CAPSULE:
                    size = significant(part.size[:2], 6)
                elif part.shape is PartShape.SPHERE:
                    size = significant(part.size[0], 6)
                else:
                    size = significant(part.size)
                out.append(
                    RigidPart(
                        f"{person.name}/{part.name}",
                        person.instance_id,
                        part.shape.value,
                        tuple(size),
                        tuple(significant(person.colors[part.color])),
                    )
                )
        return tuple(out)

    def poses(self, step: int) -> tuple[FloatArray, FloatArray]:
        k = min(step, self.n_steps - 1)
        if self.skinned:
            joint_pos, joint_rot = self.skeleton_poses(k)
            return joint_pos.reshape(-1, 3), matrices_to_quats(joint_rot).reshape(-1, 4)
        pos, quat = part_poses(*self.rigid_states(k))
        return pos.reshape(-1, 3), quat.reshape(-1, 4)

    def prepare_poses(self, steps: Sequence[int]) -> None:
        """Skinned people: the skeletons of the steps not kept yet, in one pass of `pose` over
        people x steps; each row is posed on its own, so the values are those of one step at a
        time (test_people_prepared_poses), for a fraction of the cost (the pose's ~3 ms a call
        is mostly numpy's overhead per operation)."""
        if not self.skinned:
            return
        cache = self._last_skeleton
        todo = sorted({min(int(k), self.n_steps - 1) for k in steps} - cache.keys())
        if not todo or len(todo) > SKELETON_STEPS_KEPT // 2:
            return
        bodies = [p.body for p in self.specs if p.body is not None]
        inputs = [
            pose_inputs(t, track, self.dt_s, np.array([k]))
            for k in todo
            for t, track in self._tracks_at(k)
        ]
        n = len(bodies)
        joint_pos, joint_rot = pose(
            bodies * len(todo),
            stack_inputs(inputs),
            self.retargeted_clips * len(todo),
            group_rows=n,
        )
        for i, k in enumerate(todo):
            rows = slice(i * n, (i + 1) * n)
            self._keep_skeleton(k, joint_pos[rows].copy(), joint_rot[rows].copy())

    def boxes(self, step: int, positions: FloatArray) -> list[Box3D]:
        """People, in their heading frame: skinned people, the tight box of their skin's
        vertices; rigid-part people, the tight box of their parts inflated by the part radius."""
        boxes: list[Box3D] = []
        k = min(step, self.n_steps - 1)
        start = 0
        skins = iter(self.skins_world(k) if self.skinned else [])
        for person, tl in zip(self.specs, self.timelines, strict=True):
            n_parts = len(person.body_names())
            pts = positions[start : start + n_parts]
            start += n_parts
            pad = RIGID_PAD_M * person.scale
            if person.body is not None:
                pts, pad = next(skins), 0.0
            rot = heading_rotation(tl.heading_rad[k])
            # One compiled pass over the points (a MakeHuman skin has ~5000 vertices a frame;
            # numpy's axis-0 reductions over them cost more than skinning them).
            mean, lo, hi = heading_bounds(
                np.ascontiguousarray(pts, dtype=np.float64), rot[0, 0], rot[1, 0]
            )
            lo -= pad
            hi += pad
            # Feet on the ground; a skin's sole may dip ~2 cm below it mid-step (the box keeps it).
            lo[2] = min(lo[2], -mean[2]) if person.body is not None else -mean[2]
            hi[2] = max(hi[2], person.height_m - mean[2])
            center = mean + rot @ ((lo + hi) / 2)
            boxes.append(Box3D(person.instance_id, center, hi - lo, rot))
        return boxes

    def shadow_casters(self) -> tuple[ShadowCaster, ...]:
        return tuple(
            ShadowCaster(
                f"{p.name}/{p.body_names()[0]}",
                p.name,
                SHADOW_RADIUS_M * p.scale,
                SHADOW_HEIGHT_M * p.scale,
            )
            for p in self.specs
        )

    def obstacles(self, step: int) -> list[RobotObstacle]:
        return []  # people yield to each other inside the crowd

    def collisions_with(
        self, people: Sequence[PersonSpec], timelines: Sequence[PersonTimeline]
    ) -> list[Collision]:
        return []  # people among people: the crowd planner's business

    def advance(self, step: int, obstacles: Callable[[], list[RobotObstacle]]) -> None:
        crowd = self.crowd
        if crowd is None or step == 0:
            return
        # Reactive people see the robots as the last physics step left them, and the animals.
        crowd.advance(step, obstacles() if crowd.updates_at(step) else [])

    def started(self) -> People:
        """Reactive people with a live crowd of their own, at its start (others as they are)."""
        if self.crowd_start is None or self.crowd is not None:
            return self
        crowd = self.crowd_start.crowd()
        return replace(self, crowd=crowd, timelines=tuple(crowd.timelines))

    def already_run(self) -> bool:
        return self.crowd is not None and self.crowd.next_step != 1

    def record(self, n_steps: int) -> dict[str, np.ndarray]:
        return {
            f"person/{p.name}/{key}": getattr(tl, key)[:n_steps]
            for p, tl in zip(self.specs, self.timelines, strict=True)
            for key in TIMELINE_KEYS
        }

    def replayed(self, recorded: Mapping[str, np.ndarray]) -> People:
        """Scripted people regenerate exactly from the seed; reactive people moved with the
        live run, so their timelines come from the record (and nothing steps them again).

        Raises:
            KeyError: the record lacks a person (names them).
        """
        if not self.reactive:
            return self
        got = recorded_timelines(recorded)
        timelines = []
        for person in self.specs:
            tl = got.get(person.name)
            if tl is None or len(tl.position_xy) == 0:
                raise KeyError(person.name)
            arrays = (getattr(tl, key) for key in TIMELINE_KEYS)
            timelines.append(PersonTimeline(*(_padded(a, self.n_steps) for a in arrays)))
        return People(
            specs=self.specs,
            timelines=tuple(timelines),
            config=self.config,
            n_steps=self.n_steps,
            dt_s=self.dt_s,
            clips=self.clips,
        )

    # -- people's own --------------------------------------------------------------------------
    @cached_property
    def tracks(self) -> tuple[AnimationTrack, ...]:
        """Motion-library state of every skinned person's timeline (empty for rigid parts)."""
        return tuple(
            animation_track(t, self.dt_s)
            for p, t in zip(self.specs, self.timelines, strict=True)
            if p.body is not None
        )

    @cached_property
    def _causal_tracks(self) -> dict[int, tuple[tuple[PersonTimeline, AnimationTrack], ...]]:
        return {}

    def _tracks_at(self, k: int) -> tuple[tuple[PersonTimeline, AnimationTrack], ...]:
        """Timelines and motion tracks that pose step k.

        Scripted people: the whole timeline. Reactive people: only what the live crowd had fixed
        at step k (`known_through`), so the live run and its replay pose them identically; the
        swing foot then aims at the block's end instead of the true next footfall.
        """
        skinned = [t for p, t in zip(self.specs, self.timelines, strict=True) if p.body is not None]
        if not self.reactive:
            return tuple(zip(skinned, self.tracks, strict=True))
        assert self.config is not None
        end = known_through(k, avoidance_decimation(self.config, self.dt_s), self.n_steps)
        cache = self._causal_tracks
        if end not in cache:
            cache.clear()  # runs go forward: only the current block is asked for again
            prefixes = [
                PersonTimeline(*(getattr(t, key)[: end + 1] for key in TIMELINE_KEYS))
                for t in skinned
            ]
            cache[end] = tuple((t, animation_track(t, self.dt_s)) for t in prefixes)
        return cache[end]

    @cached_property
    def _last_skeleton(self) -> dict[int, tuple[FloatArray, FloatArray]]:
        return {}

    def skeleton_poses(self, step: int) -> tuple[FloatArray, FloatArray]:
        """Skinned people's joint positions (P, J, 3) and rotations (P, J, 3, 3) at a step
        (read-only arrays: a frame asks for them several times, for the engine, boxes, skins
        and keypoints; the last SKELETON_STEPS_KEPT steps' are kept, since a pipelined run's
        keypoints come for a frame's step after the loop has stepped on)."""
        k = min(step, self.n_steps - 1)
        cache = self._last_skeleton
        if k in cache:
            return cache[k]
        bodies = [p.body for p in self.specs if p.body is not None]
        if not bodies:
            raise ValueError("skeleton_poses: the scene has no skinned people (people.body)")
        steps = np.array([k])
        inputs = [pose_inputs(t, track, self.dt_s, steps) for t, track in self._tracks_at(k)]
        joint_pos, joint_rot = pose(bodies, stack_inputs(inputs), self.retargeted_clips)
        return self._keep_skeleton(k, joint_pos, joint_rot)

    def _keep_skeleton(
        self, k: int, joint_pos: FloatArray, joint_rot: FloatArray
    ) -> tuple[FloatArray, FloatArray]:
        cache = self._last_skeleton
        joint_pos.setflags(write=False)
        joint_rot.setflags(write=False)
        while len(cache) >= SKELETON_STEPS_KEPT:
            del cache[next(iter(cache))]  # the oldest (dicts keep insertion order)
        cache[k] = (joint_pos, joint_rot)
        return cache[k]

    @cached_property
    def retargeted_clips(self) -> tuple[tuple[RetargetedMotion, ...], ...]:
        """people.clips retargeted onto every skinned person's skeleton."""
        return tuple(
            tuple(retarget(c, p.body) for c in self.clips) for p in self.specs if p.body is not None
        )

    @cached_property
    def meshes(self) -> tuple[SkinMesh, ...]:
        """Rest-pose skin of every skinned person (empty for rigid parts)."""
        return tuple(
            body_mesh(p.body, p.clothing)
            for p in self.specs
            if p.body is not None and p.clothing is not None
        )

    def skins_world(self, step: int) -> list[FloatArray]:
        """World vertices (V, 3) of every skinned person's skin at a step (what MuJoCo draws)."""
        joint_pos, joint_rot = self.skeleton_poses(step)
        bodies = [p.body for p in self.specs if p.body is not None]
        return [
            skin_vertices(mesh, rest_positions(body), joint_pos[i], joint_rot[i])
            for i, (mesh, body) in enumerate(zip(self.meshes, bodies, strict=True))
        ]

    def keypoints_world(self, step: int) -> FloatArray:
        """COCO-17 keypoints of every person at a step: (P, 17, 3) world coordinates, from the
        skeleton (skinned people) or the rigid parts' layout."""
        if not self.specs:
            return np.zeros((0, 17, 3))
        if not self.skinned:
            return rigid_coco17_world(*self.rigid_states(step))
        joint_pos, joint_rot = self.skeleton_poses(step)
        scale = np.array([p.scale for p in self.specs])
        face = np.stack([face_points(p.body) for p in self.specs if p.body is not None])
        return coco17_world(joint_pos, joint_rot, scale, face)

    def rigid_states(
        self, step: int
    ) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray, FloatArray]:
        """Every person's state at physics step `step` (the last step after the end), as the
        rigid-part body functions take it (`part_poses`, `rigid_coco17_world`): scale (P,),
        position_xy (P, 2), heading_rad, phase_rad and amplitude (P,)."""
        k = min(step, self.n_steps - 1)
        tl = self.timelines
        return (
            np.array([p.scale for p in self.specs]),
            np.array([t.position_xy[k] for t in tl]),
            np.array([t.heading_rad[k] for t in tl]),
            np.array([t.phase_rad[k] for t in tl]),
            np.array([t.amplitude[k] for t in tl]),
        )


def recorded_timelines(recorded: Mapping[str, np.ndarray]) -> dict[str, PersonTimeline]:
    """Every person's timeline in an experiment record's arrays (`person/<name>/<array>`)."""
    names = sorted({k.split("/")[1] for k in recorded if k.startswith("person/")})
    out = {}
    for name in names:
        key = f"person/{name}"
        n = len(recorded[f"{key}/position_xy"])
        arrays = {k: recorded.get(f"{key}/{k}") for k in TIMELINE_KEYS}
        if arrays["motion"] is None:  # records from before motions: everyone walked
            arrays["motion"] = np.zeros(n, dtype=np.int8)
        if arrays["seat_height_m"] is None:  # records from before sitting: nobody sat
            arrays["seat_height_m"] = np.full(n, np.nan)
        out[name] = PersonTimeline(*(arrays[k] for k in TIMELINE_KEYS))  # type: ignore[arg-type]
    return out


def _padded(a: np.ndarray, n: int) -> np.ndarray:
    """The first n rows of a, the last row repeated past its end (an interrupted run)."""
    if len(a) >= n:
        return a[:n]
    return np.concatenate([a, np.repeat(a[-1:], n - len(a), axis=0)])


def people_of(groups: Sequence[ActorGroup]) -> People:
    """The People group among `groups` (an empty one when there is none)."""
    for group in groups:
        if isinstance(group, People):
            return group
    return People()
