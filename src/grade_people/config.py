"""The people section of a scenario (`people:`): validated dataclasses and the motion names.

The simulator's scenario (`grade_sim.config.scenario`) holds a `PeopleConfig`; the people's own
modules read only this one, so that grade_people never imports the simulator.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

from grade_common.errors import ConfigError
from grade_common.schema import Range, bounds, check_range_pair


class PersonBody(enum.Enum):
    SKINNED = "skinned"  # one skinned mesh over an articulated skeleton (grade_people.skeleton)
    PARTS = "parts"  # the first wave's 12 rigid capsules/spheres/boxes
    # The MakeHuman base mesh, shaped per person, on the same skeleton (grade_people.makehuman)
    MAKEHUMAN = "makehuman"


class PersonMotion(enum.Enum):
    WALK = "walk"
    STAND = "stand"
    TURN = "turn"
    RUN = "run"
    SIT = "sit"
    WAVE = "wave"
    LOOK = "look"
    PHONE = "phone"
    CLIP = "clip"  # one of people.clips (BVH motion capture files), played in place


MAX_CLIPS = 8  # people.clips: each clip has its own motion code (grade_people.people.CLIP_CODES)


class CrowdMode(enum.Enum):
    # Whole timelines computed from the seed before the run (robots: their planned paths).
    SCRIPTED = "scripted"
    # Stepped inside the run against the robots' live poses; steerable over ROS 2.
    REACTIVE = "reactive"


@dataclass(frozen=True)
class AvoidanceConfig:
    """Local avoidance of the crowd (ORCA, grade_people/orca.py) near people, furniture, robots."""

    rate_hz: float = field(default=10.0, metadata=bounds(1.0, 60.0))  # new velocities per second
    time_horizon_s: float = field(default=2.0, metadata=bounds(0.2, 10.0))  # other people, robots
    obstacle_time_horizon_s: float = field(default=0.6, metadata=bounds(0.1, 5.0))  # walls
    # Other people farther than this are not avoided.
    neighbor_distance_m: float = field(default=4.0, metadata=bounds(0.5, 20.0))
    # Most neighbours each person avoids at once.
    max_neighbors: int = field(default=10, metadata=bounds(1, 64))
    # Kept free around each body radius: ORCA is exact only at its own update instants.
    clearance_m: float = field(default=0.05, metadata=bounds(0.0, 0.5))
    # People avoid the robots too.
    avoid_robots: bool = True
    # Kept between people and robots: grows the robot's disc for ORCA and its box for FCL.
    robot_clearance_m: float = field(default=0.1, metadata=bounds(0.0, 2.0))
    # A person standing in the way of nobody gives up a goal it has not reached after this long.
    stuck_timeout_s: float = field(default=12.0, metadata=bounds(1.0, 600.0))


@dataclass(frozen=True)
class PlacementConfig:
    """GRADE's check of every actor's whole 3D trace with FCL (actors/placement.py)."""

    # Check every person's whole trace for collisions with FCL before the run.
    check: bool = True
    # Scripted crowds: people that still collide are re-drawn this many times, then rejected.
    retries: int = field(default=2, metadata=bounds(0, 20))


@dataclass(frozen=True)
class PeopleConfig:
    # Number of people.
    count: int = field(default=8, metadata=bounds(0, 64))
    # Walking speed, drawn per walk from [min, max].
    speed_mps: Range = field(default=(0.8, 1.4), metadata=bounds(0.1, 3.0))
    # Body height, drawn per person from [min, max].
    height_m: Range = field(default=(1.55, 1.90), metadata=bounds(1.0, 2.3))
    # The stops people make between walks (walk is required).
    motions: tuple[PersonMotion, ...] = (PersonMotion.WALK, PersonMotion.STAND, PersonMotion.TURN)
    # Of the choices after each stop: how often the next one is a walk.
    walk_fraction: float = field(default=0.75, metadata=bounds(0.0, 1.0))
    # Of the walks: how many go to meet a robot beside its planned path and on past it, toward
    # or across its camera, instead of anywhere (scripted crowds only: docs/crowd.md)
    toward_robots: float = field(default=0.0, metadata=bounds(0.0, 1.0))
    # Body model: makehuman, skinned mannequins or rigid parts.
    body: PersonBody = PersonBody.MAKEHUMAN
    # scripted (from the seed before the run) or reactive (stepped live, steerable).
    mode: CrowdMode = CrowdMode.SCRIPTED
    pause_s: Range = field(default=(1.5, 5.0), metadata=bounds(0.0, 600.0))  # standing still
    avoidance: AvoidanceConfig = field(default_factory=AvoidanceConfig)
    placement: PlacementConfig = field(default_factory=PlacementConfig)
    # BVH files played in place as stops ('clip' in motions); relative paths are relative to the
    # scenario file. Skinned people only (docs/people.md).
    clips: tuple[str, ...] = ()

    def validate(self, path: str) -> None:
        if self.toward_robots > 0.0 and self.mode is CrowdMode.REACTIVE:
            raise ConfigError(
                f"{path}.toward_robots: {self.toward_robots} needs mode: scripted (the goals "
                f"come from the robots' planned paths); got mode: reactive, where it must be 0"
            )
        if len(self.clips) > MAX_CLIPS:
            raise ConfigError(f"{path}.clips: {len(self.clips)} files; allowed at most {MAX_CLIPS}")
        if PersonMotion.CLIP in self.motions and not self.clips:
            raise ConfigError(
                f"{path}.motions: 'clip' needs BVH files in {path}.clips; got clips: []"
            )
        check_range_pair(self.speed_mps, f"{path}.speed_mps")
        check_range_pair(self.height_m, f"{path}.height_m")
        check_range_pair(self.pause_s, f"{path}.pause_s")
        if PersonMotion.WALK not in self.motions and self.count:
            raise ConfigError(
                f"{path}.motions: must include 'walk' (people walk between "
                f"stops); got {[m.value for m in self.motions]}"
            )
        if PersonMotion.RUN in self.motions:
            raise ConfigError(
                f"{path}.motions: 'run' is not a stop to draw: people run when their speed "
                f"(speed_mps) is above 2 m/s; got {[m.value for m in self.motions]}"
            )
        if PersonMotion.SIT in self.motions and self.body is PersonBody.PARTS:
            raise ConfigError(
                f"{path}.motions: 'sit' needs skinned people ({path}.body: skinned); "
                f"got body: {self.body.value}"
            )
