"""The actor-group protocol: what every kind of actor (people, animals, flying objects, ...) gives
the simulator, so that the engine, the sensors, the recording and the step loop loop over groups
and never name a kind.

A group is one kind of actor in one scene: its specs and their planned (or live) motion. Its
bodies are posed kinematically; `poses(step)` returns them in `body_names()` order, and a
scene's actor bodies are its groups' bodies, group after group. A new kind of actor is one module
that implements this protocol and a line in `grade_sim.scene.build_scene` (or a scene made by
hand with it in `groups`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Generic, Protocol, Self, TypeVar, runtime_checkable

import numpy as np

from grade_common.types import FloatArray
from grade_people.crowd import RobotObstacle
from grade_people.people import PersonSpec, PersonTimeline
from grade_sim.actors.geometry import ActorGeometry, Box3D, InstanceInfo, ShadowCaster
from grade_sim.actors.placement import Collision

S = TypeVar("S")  # an actor's spec (what it looks like)
T = TypeVar("T")  # an actor's timeline (its state at every physics step)


@runtime_checkable
class ActorGroup(Protocol):
    """One kind of actor in a scene (see the module doc)."""

    @property
    def kind(self) -> str:
        """The group's key in the experiment record (`<kind>/<name>/<array>`), e.g. `person`."""
        ...

    def body_names(self) -> tuple[str, ...]:
        """The engine's name of every body, in `poses` order."""
        ...

    def body_labels(self) -> tuple[str, ...]:
        """One readable label per body (`person person_0`), for errors about a body."""
        ...

    def instances(self) -> tuple[InstanceInfo, ...]:
        """The instances (one per actor) with their names and class labels."""
        ...

    def geometry(self) -> tuple[ActorGeometry, ...]:
        """What the engine builds, in order: materials, rigid parts and skinned figures."""
        ...

    def poses(self, step: int) -> tuple[FloatArray, FloatArray]:
        """Positions (B, 3) and wxyz quaternions (B, 4) of the bodies at a physics step (the
        last step after the end)."""
        ...

    def prepare_poses(self, steps: Sequence[int]) -> None:
        """Compute the poses of several steps together, before `poses` is asked for each of
        them (a lidar sweep needs about ten). A group whose poses cost much per call (people's
        skeletons) does them in one pass, giving the same values; others do nothing."""
        ...

    def boxes(self, step: int, positions: FloatArray) -> list[Box3D]:
        """One 3D box per actor at a step; `positions` is this group's slice of the posed
        bodies' positions."""
        ...

    def shadow_casters(self) -> tuple[ShadowCaster, ...]:
        """The actors that cast baked contact shadows (none for things that fly)."""
        ...

    def obstacles(self, step: int) -> list[RobotObstacle]:
        """What a live crowd steps around at a step: discs of actors that never yield."""
        ...

    def collisions_with(
        self, people: Sequence[PersonSpec], timelines: Sequence[PersonTimeline]
    ) -> list[Collision]:
        """The group's part in the FCL placement: first contacts of people's planned traces
        with this group's actors (none for actors people cannot meet)."""
        ...

    def advance(self, step: int, obstacles: Callable[[], list[RobotObstacle]]) -> None:
        """Move live actors (a reactive crowd) to a step before it is posed; `obstacles` gives
        the live robots and the other groups' discs, computed only when asked for."""
        ...

    def started(self) -> ActorGroup:
        """The group for one run: its run state (a live crowd) made fresh at its start; a group
        without run state, or one already started, returns itself."""
        ...

    def already_run(self) -> bool:
        """Whether the group's run state has been stepped (a started scene runs once)."""
        ...

    def record(self, n_steps: int) -> dict[str, np.ndarray]:
        """The first n_steps of the group's motion, keyed `<kind>/<name>/<array>`."""
        ...

    def replayed(self, recorded: Mapping[str, np.ndarray]) -> ActorGroup:
        """The group as a recorded run moved it (`recorded`: record.npz's arrays). Planned
        motion regenerates from the seed, so most groups return themselves."""
        ...


class PlannedDefaults:
    """The protocol's defaults for actors whose motion is known when the scene is drawn: no run
    state, no contact shadow, no obstacle to a crowd, no part in people's planned paths, and a
    replay that regenerates them. A group overrides what its actors do otherwise."""

    def shadow_casters(self) -> tuple[ShadowCaster, ...]:
        return ()

    def prepare_poses(self, steps: Sequence[int]) -> None:
        return None  # a planned actor's pose is a look-up

    def obstacles(self, step: int) -> list[RobotObstacle]:
        return []

    def collisions_with(
        self, people: Sequence[PersonSpec], timelines: Sequence[PersonTimeline]
    ) -> list[Collision]:
        return []

    def advance(self, step: int, obstacles: Callable[[], list[RobotObstacle]]) -> None:
        return None  # planned ahead

    def started(self) -> Self:
        return self  # no run state

    def already_run(self) -> bool:
        return False

    def replayed(self, recorded: Mapping[str, np.ndarray]) -> Self:
        return self  # planned motion regenerates from the seed


@dataclass(frozen=True, kw_only=True)
class PlannedGroup(PlannedDefaults, Generic[S, T]):
    """A base for groups planned when the scene is drawn with one spec and one timeline per
    actor (`PlannedDefaults` for the rest). A subclass gives `kind` and the methods that depend
    on what its actors are."""

    specs: tuple[S, ...] = ()
    timelines: tuple[T, ...] = ()
    n_steps: int = 1

    def __len__(self) -> int:
        return len(self.specs)

    def with_timelines(self) -> Iterator[tuple[S, T]]:
        """Each actor's spec with its timeline."""
        return zip(self.specs, self.timelines, strict=True)


def body_slices(groups: tuple[ActorGroup, ...]) -> list[slice]:
    """Each group's rows in the scene's stacked actor-body arrays."""
    out = []
    start = 0
    for group in groups:
        n = len(group.body_names())
        out.append(slice(start, start + n))
        start += n
    return out


def stacked_poses(groups: tuple[ActorGroup, ...], step: int) -> tuple[FloatArray, FloatArray]:
    """Every group's body poses at a step, group after group."""
    positions = []
    quats = []
    for group in groups:
        if group.body_names():
            pos, quat = group.poses(step)
            positions.append(pos)
            quats.append(quat)
    if not positions:
        return np.zeros((0, 3)), np.zeros((0, 4))
    return np.concatenate(positions), np.concatenate(quats)
