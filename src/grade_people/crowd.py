"""A crowd of walking people stepped jointly: goal to goal, avoiding each other, walls and robots.

Every person follows a global path on the occupancy grid (A* + shortcuts, paths.py) to a
goal drawn from the free space, stands or turns on the spot between walks (as the scenario's
`people.motions` allow), and at `avoidance.rate_hz` picks a new velocity with ORCA
(grade_people/orca.py) against the other people (reciprocal), the obstacle cells near it and the
robots (which do not yield). Between those instants the velocity is constant, so positions at
the physics rate are exact integrals of it.

The output is one PersonTimeline per person, filled step by step: all at once before the run in
scripted mode (robots from their planned paths), or inside the run's step loop in reactive mode
(robots from their live poses; goals may be set from outside with `set_goal`).
"""

from __future__ import annotations

import enum
import logging
import math
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from scipy.spatial import cKDTree

from grade_common.occupancy import OccupancyGrid
from grade_common.types import FloatArray
from grade_people.config import PeopleConfig, PersonMotion
from grade_people.orca import HalfPlanes, choose_velocities, orca_half_planes
from grade_people.paths import coarsen, plan_path, sample_free_point
from grade_people.people import (
    AMPLITUDE_RATE,
    HEADING_RATE_RPS,
    MOTION_CODES,
    PERSON_RADIUS_M,
    TURN_CADENCE_HZ,
    TURN_RATE_RPS,
    PersonTimeline,
    phase_step_rad,
)
from grade_people.seat import Seat
from grade_people.toward import meet_robot

_LOG = logging.getLogger(__name__)

ARRIVAL_M = 0.15  # a goal is reached this close
WAYPOINT_M = 0.3  # an intermediate waypoint is passed this close
MIN_GOAL_DISTANCE_M = 1.5
OBSTACLE_CELLS = 8  # nearest obstacle cells each person avoids at each update
MOVING_MPS = 0.05  # slower than this counts as standing
# Sitting (a `sit` stop): the walk ends on the planning grid in front of a free chair; from there
# the person steps up to the seat (its centre SIT_FRONT_M ahead of the seat's front edge),
# turns its back to the chair, sits down while sliding back over SIT_DOWN_S, sits, stands up the
# same way, steps back out and waits there until the sit pose has faded (SIT_RELEASE_S after
# getting up: the blend's weight is then below 0.2 %).
SIT_FRONT_M = 0.2
SIT_DOWN_S = 1.2
SIT_RELEASE_S = 2.2
SIT_STEP_SPEED = 0.7  # of the person's walking speed, stepping up to the chair and away
SIT_BACK_M = 0.16  # the hips this far in front of the backrest's front face
# Walk targets in front of a seat: from this far past its front edge, outwards.
SIT_STAND_M = tuple(0.25 + 0.05 * i for i in range(16))
MOVING_OBSTACLES = 12  # nearest robots / animal discs each person avoids at each update


def avoidance_decimation(config: PeopleConfig, dt_s: float) -> int:
    """Physics steps per avoidance update: the crowd's state is known this far ahead."""
    return max(1, round(1.0 / (config.avoidance.rate_hz * dt_s)))


def known_through(step: int, decimation: int, n_steps: int) -> int:
    """The last step whose state a reactive crowd has fixed when it is at `step`: the end of
    the avoidance block holding it (velocities are constant within a block)."""
    return min((step // decimation + 1) * decimation, n_steps - 1)


class Activity(enum.Enum):
    WALK = "walk"
    STAND = "stand"
    TURN = "turn"
    SIT = "sit"  # a whole sit stop in front of and on a chair (scripted, not steered by ORCA)


class SitStage(enum.IntEnum):
    """The parts of a sit stop, in order (each lasts whole avoidance blocks)."""

    APPROACH = 0  # step from the walk's end to the seat's front
    TURN = 1  # back to the chair
    DOWN = 2  # sit down, sliding back over the seat
    HOLD = 3
    UP = 4  # stand up, sliding forward
    LEAVE = 5  # step forward to where the walk ended
    SETTLE = 6  # stand until the sit pose has faded
    DONE = 7


_SIT_STAGE_MOTION = {
    SitStage.APPROACH: PersonMotion.WALK,
    SitStage.TURN: PersonMotion.TURN,
    SitStage.DOWN: PersonMotion.SIT,
    SitStage.HOLD: PersonMotion.SIT,
    SitStage.UP: PersonMotion.STAND,
    SitStage.LEAVE: PersonMotion.WALK,
    SitStage.SETTLE: PersonMotion.STAND,
}


@dataclass
class _SitStop:
    """A sit stop on seat `seat` (index into Crowd.seats): its points and the current stage."""

    seat: int
    stand_xy: FloatArray  # where the walk to the chair ended (free on the planning grid)
    front_xy: FloatArray  # at the seat's front: where the person turns and sits down from
    seat_xy: FloatArray  # over the seat: the hips of the seated person
    facing_rad: float
    height_m: float
    hold_steps: int
    from_xy: FloatArray  # where the person was when the current stage began
    stage: SitStage = SitStage.APPROACH
    stage_start: int = 0
    stage_until: int = 0
    up_start: int = 0


@dataclass(frozen=True)
class RobotObstacle:
    """A robot as the crowd sees it: a disc on the ground plane with its velocity."""

    position_xy: FloatArray
    velocity_xy: FloatArray
    radius_m: float
    is_animal: bool = False  # avoided even with avoidance.avoid_robots off
    # ORCA's horizon for it (None: avoidance.time_horizon_s); a fast animal needs a longer one.
    time_horizon_s: float | None = None


@dataclass
class _Plan:
    """What one person is doing now (changed only at avoidance updates)."""

    activity: Activity
    waypoints: list[FloatArray]
    waypoint: int = 0
    until_step: int = 0  # STAND / TURN: the step it ends
    target_heading: float = 0.0
    started_step: int = 0
    steered: bool = False  # walking to a goal set from outside: stand there afterwards
    # STAND: what the person does standing (wave, look, phone, a BVH clip...: the body's clip)
    pause_motion: PersonMotion = PersonMotion.STAND
    clip: int = 0  # pause_motion CLIP: which of people.clips
    seat: int = -1  # WALK: to the front of this seat (reserved), to sit there
    sit: _SitStop | None = None  # SIT: the stop

    @property
    def pause_code(self) -> int:
        """The motion code of the pause (each BVH clip has its own)."""
        extra = self.clip if self.pause_motion is PersonMotion.CLIP else 0
        return MOTION_CODES[self.pause_motion] + extra


class Crowd:
    """Steps N people jointly and writes their timelines (see the module doc).

    Args:
        grid: the world's occupancy grid (not inflated).
        config: the scenario's people section.
        heights_m: each person's height (their stride follows it).
        n_steps: physics steps of the run; dt_s: physics step.
        rng: the seeded generator of all of the crowd's choices.
        start_clear_of: robots where they start; nobody starts on them.
        clip_durations_s: length of each of people.clips.
        seats: the world's chairs (World.seats), for `sit` stops.
        names: the people's names, for the notes (default: "person <index>").
        robot_plans: the robots' planned paths (scripted mode), where `people.toward_robots`
            of the walks go (none: every walk draws its goal anywhere).
    """

    def __init__(
        self,
        grid: OccupancyGrid,
        config: PeopleConfig,
        heights_m: Sequence[float],
        n_steps: int,
        dt_s: float,
        rng: np.random.Generator,
        start_clear_of: Sequence[RobotObstacle] = (),
        clip_durations_s: Sequence[float] = (),
        seats: Sequence[Seat] = (),
        names: Sequence[str] = (),
        robot_plans: RobotSchedule | None = None,
    ) -> None:
        n = len(heights_m)
        self._robot_plans = robot_plans
        self.names = tuple(names) if names else tuple(f"person {i}" for i in range(n))
        # Why people did not sit when they drew a `sit` stop (also logged).
        self.notes: list[str] = []
        self._clip_durations_s = tuple(clip_durations_s)
        self.config = config
        self.n = n
        self.n_steps = n_steps
        self.dt_s = dt_s
        self._rng = rng
        av = config.avoidance
        self.radius_m = PERSON_RADIUS_M + av.clearance_m
        self.decimation = avoidance_decimation(config, dt_s)
        self.update_dt_s = self.decimation * dt_s
        self.planning = coarsen(grid.inflated(self.radius_m), 2)
        # Obstacle cells next to free space are all that ORCA needs of the walls.
        blocked = grid.blocked
        padded = np.pad(blocked, 1, constant_values=False)
        interior = (
            padded[:-2, 1:-1] & padded[2:, 1:-1] & padded[1:-1, :-2] & padded[1:-1, 2:] & blocked
        )
        edge = np.argwhere(blocked & ~interior)
        self._obstacle_xy = grid.center_of(edge) if len(edge) else np.zeros((0, 2))
        self._obstacle_tree = cKDTree(self._obstacle_xy) if len(edge) else None
        self._obstacle_radius_m = grid.resolution_m / math.sqrt(2.0)
        self.pref_speed = np.array([float(rng.uniform(*config.speed_mps)) for _ in range(n)])
        self.height_m = np.asarray(heights_m, dtype=np.float64)
        # Starts on the fine grid with one more cell of margin: the coarse planning grid's cells
        # (and their jitter) reach within a few cm of furniture legs.
        self._start_grid = grid.inflated(self.radius_m + grid.resolution_m)
        if not (~self._start_grid.blocked).any():
            self._start_grid = self.planning
        self.position_xy = np.array([sample_free_point(self._start_grid, rng) for _ in range(n)])
        self.position_xy = self.position_xy.reshape(n, 2)
        self._separate_starts(start_clear_of)
        self.seats = tuple(seats)
        self._seat_stand = [self._stand_point(seat) for seat in self.seats]
        self._seat_user: dict[int, int] = {}  # seat -> person walking to it or sitting on it
        self.heading_rad = rng.uniform(-math.pi, math.pi, n)
        self.velocity_xy = np.zeros((n, 2))
        self.phase_rad = np.zeros(n)
        self.amplitude = np.zeros(n)
        self.motion = np.full(n, MOTION_CODES[PersonMotion.STAND], dtype=np.int8)
        self._plans = [_Plan(Activity.STAND, [], until_step=0) for _ in range(n)]
        self._pending_goals: dict[int, FloatArray] = {}
        self._goal_lock = threading.Lock()
        self._others = [m for m in config.motions if m is not PersonMotion.WALK]
        self._turning = np.zeros(n, dtype=bool)
        self._pause_code = np.full(n, MOTION_CODES[PersonMotion.STAND])
        self._target_heading = self.heading_rad.copy()
        # Step-major arrays written in one assignment per step; each timeline is a column view.
        self._out_pos = np.zeros((n_steps, n, 2))
        self._out_heading = np.zeros((n_steps, n))
        self._out_phase = np.zeros((n_steps, n))
        self._out_amp = np.zeros((n_steps, n))
        self._out_motion = np.zeros((n_steps, n), dtype=np.int8)
        self._out_seat = np.full((n_steps, n), np.nan)
        self.seat_height_m = np.full(n, np.nan)
        self.timelines = tuple(
            PersonTimeline(
                self._out_pos[:, i],
                self._out_heading[:, i],
                self._out_phase[:, i],
                self._out_amp[:, i],
                self._out_motion[:, i],
                self._out_seat[:, i],
            )
            for i in range(n)
        )
        self.next_step = 0
        self._block_start = 0
        self._b_pos = np.zeros((0, n, 2))
        self._b_heading = self._b_amp = self._b_phase = np.zeros((0, n))
        self._b_motion = self.motion
        self._b_seat = self.seat_height_m
        self._sitting = np.zeros(n, dtype=bool)
        self._block_start_next = 1  # the first step of the block being integrated

    # -- public ---------------------------------------------------------------------------------
    def set_goal(self, index: int, goal_xy: FloatArray | tuple[float, float]) -> None:
        """Send person `index` to goal_xy (thread-safe; taken at the next avoidance update)."""
        with self._goal_lock:
            self._pending_goals[index] = np.asarray(goal_xy, dtype=np.float64).copy()

    def updates_at(self, step: int) -> bool:
        """Whether `advance(step)` picks new velocities (and so reads the robots)."""
        return step % self.decimation == 0

    def advance(self, step: int, robots: Sequence[RobotObstacle] = ()) -> None:
        """Compute the state at physics step `step` (the next one due) and write it.

        `robots` is read only on steps where `updates_at(step)`.
        """
        if step != self.next_step:
            raise ValueError(f"crowd is at step {self.next_step}, asked for step {step}")
        if step > 0:
            self._take_block_row(step - self._block_start - 1)
        if self.updates_at(step):
            self._update(step, robots)
            self._integrate_block()
            self._block_start = step
            self._write_block(step)
        self._write(step)
        self.next_step = step + 1

    def run_to_end(
        self, robots_at: Callable[[int], list[RobotObstacle]] | None = None
    ) -> tuple[PersonTimeline, ...]:
        """Scripted mode: every remaining step now, robots from their planned paths."""
        for k in range(self.next_step, self.n_steps):
            robots = robots_at(k) if robots_at is not None and self.updates_at(k) else []
            self.advance(k, robots)
        return self.timelines

    # -- stepping -------------------------------------------------------------------------------
    def _integrate_block(self) -> None:
        """States of the `decimation` steps after an update, in closed form.

        The velocity is constant until the next update, so every quantity below is the exact
        solution of its per-step rule (rate-limited heading and amplitude, phase by distance).
        """
        dt = self.dt_s
        t = np.arange(1, self.decimation + 1)[:, None] * dt  # (D, 1)
        j = np.arange(1, self.decimation + 1)[:, None]
        speed = np.linalg.norm(self.velocity_xy, axis=1)
        moving = speed > MOVING_MPS
        turning = self._turning & ~moving
        self._b_pos = self.position_xy[None] + self.velocity_xy[None] * t[..., None]
        want = np.where(
            moving, np.arctan2(self.velocity_xy[:, 1], self.velocity_xy[:, 0]), self._target_heading
        )
        err = np.remainder(want - self.heading_rad + math.pi, 2 * math.pi) - math.pi
        rate = np.where(moving, HEADING_RATE_RPS, np.where(turning, TURN_RATE_RPS, 0.0))
        self._b_heading = self.heading_rad + np.clip(err, -rate * t, rate * t)
        target_amp = np.where(
            moving, np.clip(speed / self.pref_speed, 0.0, 1.0), np.where(turning, 0.3, 0.0)
        )
        ramp = AMPLITUDE_RATE * t
        self._b_amp = self.amplitude + np.clip(target_amp - self.amplitude, -ramp, ramp)
        # The gait phase follows the distance walked at a cadence set by the speed (faster in a
        # sharp turn: each step's turn is the heading's change over it).
        turn_rad = np.diff(np.concatenate([self.heading_rad[None], self._b_heading]), axis=0)
        per_step = np.where(
            moving,
            phase_step_rad(speed * dt, dt, self.height_m, turn_rad),
            np.where(turning, math.pi * TURN_CADENCE_HZ * dt, 0.0),
        )
        # Standing: the legs close geometrically towards the nearest neutral phase.
        settle = np.remainder(-self.phase_rad + math.pi / 2, math.pi) - math.pi / 2
        closed = settle * (1.0 - (1.0 - min(1.0, 4 * dt)) ** j)
        self._b_phase = self.phase_rad + np.where(
            moving | turning, np.cumsum(per_step, axis=0), closed
        )
        self._b_motion = np.where(
            moving,
            MOTION_CODES[PersonMotion.WALK],
            np.where(turning, MOTION_CODES[PersonMotion.TURN], self._pause_code),
        ).astype(np.int8)
        self._b_seat = np.full(self.n, np.nan)
        for i in np.flatnonzero(self._sitting):
            self._script_sitter(int(i))

    def _script_sitter(self, i: int) -> None:
        """Overwrite person i's rows of the block with its sit stop's scripted states.

        The rules per step are those of the walking planner (people.plan_timeline): heading and
        amplitude rate-limited, the gait phase following the distance walked.
        """
        plan = self._plans[i]
        stop = plan.sit
        assert stop is not None
        dt = self.dt_s
        pos = self.position_xy[i].copy()
        heading = float(self.heading_rad[i])
        amp = float(self.amplitude[i])
        phase = float(self.phase_rad[i])
        speed = SIT_STEP_SPEED * float(self.pref_speed[i])
        stage = stop.stage
        span = max(1, stop.stage_until - stop.stage_start)
        for j in range(self.decimation):
            k = self._block_start_next + j  # the step this row is
            if stage in (SitStage.APPROACH, SitStage.LEAVE):
                target = stop.front_xy if stage is SitStage.APPROACH else stop.stand_xy
                delta = target - pos
                dist = float(np.linalg.norm(delta))
                want = math.atan2(delta[1], delta[0]) if dist > 1e-6 else heading
                err = math.remainder(want - heading, math.tau)
                turn = float(np.clip(err, -HEADING_RATE_RPS * dt, HEADING_RATE_RPS * dt))
                heading += turn
                step = min(dist, speed * dt * max(0.2, math.cos(err)))
                if dist > 1e-9:
                    pos = pos + delta / dist * step
                goal_amp = SIT_STEP_SPEED if dist > 1e-6 else 0.0
                amp += float(np.clip(goal_amp - amp, -AMPLITUDE_RATE * dt, AMPLITUDE_RATE * dt))
                phase += float(phase_step_rad(np.array(step), dt, self.height_m[i], turn))
            elif stage is SitStage.TURN:
                err = math.remainder(stop.facing_rad - heading, math.tau)
                heading += float(np.clip(err, -TURN_RATE_RPS * dt, TURN_RATE_RPS * dt))
                amp += float(np.clip(0.3 - amp, -AMPLITUDE_RATE * dt, AMPLITUDE_RATE * dt))
                phase += math.pi * TURN_CADENCE_HZ * dt
            else:
                amp = max(0.0, amp - AMPLITUDE_RATE * dt)
                phase += math.remainder(-phase, math.pi) * min(1.0, 4 * dt)
                u = min(1.0, (k - stop.stage_start) / span)
                ease = 0.5 - 0.5 * math.cos(math.pi * u)
                if stage is SitStage.DOWN:
                    heading = stop.facing_rad
                    pos = stop.from_xy + (stop.seat_xy - stop.from_xy) * ease
                elif stage is SitStage.UP:
                    pos = stop.from_xy + (stop.front_xy - stop.from_xy) * ease
            self._b_pos[j, i] = pos
            self._b_heading[j, i] = heading
            self._b_amp[j, i] = amp
            self._b_phase[j, i] = phase
        self._b_motion[i] = MOTION_CODES[_SIT_STAGE_MOTION[stage]]
        self._b_seat[i] = stop.height_m
        # Others see the sitter move as it does (it does not yield to them).
        self.velocity_xy[i] = (self._b_pos[-1, i] - self.position_xy[i]) / self.update_dt_s

    def _take_block_row(self, row: int) -> None:
        self.position_xy = self._b_pos[row]
        self.heading_rad = self._b_heading[row]
        self.amplitude = self._b_amp[row]
        self.phase_rad = self._b_phase[row]
        self.motion = self._b_motion
        self.seat_height_m = self._b_seat

    def _write_block(self, step: int) -> None:
        """Write the block's states ahead (`known_through`): skinned bodies plan their next
        footfall from them, live and in replay alike."""
        rows = min(self.decimation, self.n_steps - 1 - step)
        if rows <= 0:
            return
        ahead = slice(step + 1, step + 1 + rows)
        self._out_pos[ahead] = self._b_pos[:rows]
        self._out_heading[ahead] = self._b_heading[:rows]
        self._out_phase[ahead] = self._b_phase[:rows]
        self._out_amp[ahead] = self._b_amp[:rows]
        self._out_motion[ahead] = self._b_motion
        self._out_seat[ahead] = self._b_seat

    def _write(self, step: int) -> None:
        self._out_pos[step] = self.position_xy
        self._out_heading[step] = self.heading_rad
        self._out_phase[step] = self.phase_rad
        self._out_amp[step] = self.amplitude
        self._out_motion[step] = self.motion
        self._out_seat[step] = self.seat_height_m

    def _update(self, step: int, robots: Sequence[RobotObstacle]) -> None:
        with self._goal_lock:
            pending, self._pending_goals = self._pending_goals, {}
            # A goal for someone in a sit stop waits until they have got up and stepped away.
            for i in [i for i in pending if self._plans[i].activity is Activity.SIT]:
                self._pending_goals[i] = pending.pop(i)
        for i, goal in sorted(pending.items()):
            self._release_seat(i)
            self._plans[i] = self._walk_plan(i, goal, step, steered=True)
        preferred = np.zeros((self.n, 2))
        for i in range(self.n):
            preferred[i] = self._preferred_velocity(i, step)
        if self.n == 0:
            return
        self._turning = np.array([p.activity is Activity.TURN for p in self._plans], dtype=bool)
        self._sitting = np.array([p.activity is Activity.SIT for p in self._plans], dtype=bool)
        self._block_start_next = step + 1
        self._pause_code = np.array([p.pause_code for p in self._plans])
        self._target_heading = np.array([p.target_heading for p in self._plans])
        planes = self._half_planes(robots)
        self.velocity_xy = choose_velocities(planes, preferred, self.pref_speed)

    def _preferred_velocity(self, i: int, step: int) -> FloatArray:
        plan = self._plans[i]
        pos = self.position_xy[i]
        if plan.activity is Activity.SIT:
            assert plan.sit is not None
            if self._advance_sit(i, plan.sit, step):
                return np.zeros(2)
            self._release_seat(i)
            plan = self._plans[i] = self._next_plan(i, step)
        if plan.activity is Activity.WALK:
            timeout = round(self.config.avoidance.stuck_timeout_s / self.dt_s)
            if not plan.steered and step - plan.started_step > timeout:
                self._release_seat(i)
                plan = self._plans[i] = self._pause_plan(i, step)
        if plan.activity is not Activity.WALK:
            if step >= plan.until_step and not plan.steered:
                plan = self._plans[i] = self._next_plan(i, step)
            if plan.activity is not Activity.WALK:
                return np.zeros(2)
        while plan.waypoint < len(plan.waypoints) - 1:
            if np.linalg.norm(plan.waypoints[plan.waypoint] - pos) > WAYPOINT_M:
                break
            plan.waypoint += 1
        target = plan.waypoints[plan.waypoint]
        delta = target - pos
        dist = float(np.linalg.norm(delta))
        last = plan.waypoint == len(plan.waypoints) - 1
        if last and dist < ARRIVAL_M:
            if plan.steered:
                self._plans[i] = _Plan(
                    Activity.STAND, [], target_heading=float(self.heading_rad[i]), steered=True
                )
            elif plan.seat >= 0:
                self._plans[i] = self._sit_plan(i, step, plan.seat)
            else:
                self._plans[i] = self._pause_plan(i, step)
            return np.zeros(2)
        speed = float(self.pref_speed[i])
        if last:
            speed = min(speed, dist / self.update_dt_s)
        # Turn towards the path before walking at full speed (no walking sideways).
        err = math.remainder(math.atan2(delta[1], delta[0]) - float(self.heading_rad[i]), math.tau)
        speed *= max(0.2, math.cos(err))
        out: FloatArray = delta / max(dist, 1e-9) * speed
        return out

    # -- plans ----------------------------------------------------------------------------------
    def _next_plan(self, i: int, step: int) -> _Plan:
        """Walk to a new goal, or (with probability 1 - walk_fraction) stand or turn."""
        rng = self._rng
        if self._others and rng.random() >= self.config.walk_fraction:
            return self._pause_plan(i, step)
        start = self._snap_free(self.position_xy[i])
        # No draw at all with toward_robots 0: scenarios without it stay as they were.
        if self.config.toward_robots > 0.0 and rng.random() < self.config.toward_robots:
            path = self._path_toward_robots(i, start, step)
            if path is not None:
                return _Plan(Activity.WALK, path[1:], started_step=step)
        for _ in range(20):
            goal = sample_free_point(self.planning, rng)
            if np.linalg.norm(goal - start) < MIN_GOAL_DISTANCE_M:
                continue
            path = plan_path(self.planning, start, goal)
            if path is not None:
                return _Plan(Activity.WALK, path[1:], started_step=step)
        return self._pause_plan(i, step)  # boxed in: stand instead of walking through walls

    def _path_toward_robots(self, i: int, start: FloatArray, step: int) -> list[FloatArray] | None:
        """A path that meets a robot beside its planned path and goes on past it (toward.py);
        None without planned robots, or when no meeting point can be reached."""
        plans = self._robot_plans
        if plans is None or not plans.names:
            return None
        points = meet_robot(
            start,
            float(self.pref_speed[i]),
            step,
            self.dt_s,
            plans.position_xyz[..., :2],
            plans.yaw_rad,
            plans.radius_m,
            self.radius_m + self.config.avoidance.robot_clearance_m,
            MIN_GOAL_DISTANCE_M,
            self.planning,
            self._rng,
        )
        path = None if points is None else plan_path(self.planning, start, points[0])
        return None if path is None or points is None else [*path, *points[1:]]

    def _pause_plan(self, i: int, step: int, no_sit: bool = False) -> _Plan:
        rng = self._rng
        heading = float(self.heading_rad[i])
        others = [m for m in self._others if not (no_sit and m is PersonMotion.SIT)]
        if not others:
            if no_sit:  # sit was the only stop: stand instead, as long as a stop lasts
                steps = int(rng.uniform(*self.config.pause_s) / self.dt_s)
                return _Plan(Activity.STAND, [], until_step=step + steps, target_heading=heading)
            return _Plan(Activity.STAND, [], until_step=step, target_heading=heading)
        motion = others[int(rng.integers(len(others)))]
        if motion is PersonMotion.SIT:
            return self._sit_walk_plan(i, step)
        if motion is PersonMotion.TURN:
            turn = float(rng.choice([-1, 1]) * rng.uniform(math.pi / 3, math.pi))
            steps = int(abs(turn) / TURN_RATE_RPS / self.dt_s) + 1
            return _Plan(
                Activity.TURN,
                [],
                until_step=step + steps,
                target_heading=heading + turn,
                started_step=step,
            )
        clip = 0
        if motion is PersonMotion.CLIP:  # played once, whole
            clip = int(rng.integers(len(self._clip_durations_s)))
            steps = round(self._clip_durations_s[clip] / self.dt_s)
        else:
            steps = int(rng.uniform(*self.config.pause_s) / self.dt_s)
        return _Plan(
            Activity.STAND,
            [],
            until_step=step + steps,
            target_heading=heading,
            started_step=step,
            pause_motion=motion,
            clip=clip,
        )

    # -- sitting --------------------------------------------------------------------------------
    def _stand_point(self, seat: Seat) -> FloatArray | None:
        """Where a walk to `seat` ends: the nearest point in front of it that is free on the
        planning grid and that ORCA lets a person reach (clear of the obstacle cells by more
        than the radii); None: nowhere within SIT_STAND_M, the chair cannot be reached."""
        clear = self.radius_m + self._obstacle_radius_m + 0.05
        for d in SIT_STAND_M:
            xy = seat.along(seat.depth_m / 2 + d)
            if not self.planning.is_free(xy):
                continue
            if self._obstacle_tree is None or self._obstacle_tree.query(xy)[0] > clear:
                return xy
        return None

    def _sit_walk_plan(self, i: int, step: int) -> _Plan:
        """Walk to the front of a free chair (reserved from now on); if there is none that can
        be reached, another stop (noted and logged)."""
        free = [
            s
            for s in range(len(self.seats))
            if s not in self._seat_user and self._seat_stand[s] is not None
        ]
        start = self._snap_free(self.position_xy[i])
        if free:
            for s in (free[int(j)] for j in self._rng.permutation(len(free))):
                goal = self._seat_stand[s]
                assert goal is not None
                path = plan_path(self.planning, start, goal)
                if path is None:
                    continue
                self._seat_user[s] = i
                waypoints = path[1:] if len(path) > 1 else [goal]
                return _Plan(Activity.WALK, waypoints, started_step=step, seat=s)
        taken = len(self._seat_user)
        cut_off = sum(1 for p in self._seat_stand if p is None)
        why = (
            "the world has no chairs"
            if not self.seats
            else f"of {len(self.seats)} chairs {taken} are taken, {cut_off} have no free floor "
            f"in front and {len(free)} cannot be reached from where they stand"
        )
        plan = self._pause_plan(i, step, no_sit=True)
        instead = plan.pause_motion.value if plan.activity is Activity.STAND else "turn"
        note = f"{self.names[i]} did not sit at step {step}: {why}; did '{instead}' instead"
        self.notes.append(note)
        _LOG.info("%s", note)
        return plan

    def _sit_plan(self, i: int, step: int, seat_index: int) -> _Plan:
        seat = self.seats[seat_index]
        stand = self._seat_stand[seat_index]
        assert stand is not None
        hold = int(self._rng.uniform(*self.config.pause_s) / self.dt_s)
        here = np.asarray(self.position_xy[i], dtype=np.float64).copy()
        stop = _SitStop(
            seat_index,
            stand_xy=here,
            front_xy=seat.along(seat.depth_m / 2 + SIT_FRONT_M),
            seat_xy=seat.along(-seat.depth_m / 2 + SIT_BACK_M),
            facing_rad=seat.facing_rad,
            height_m=seat.height_m,
            hold_steps=hold,
            from_xy=here.copy(),
            stage_start=step,
        )
        stop.stage_until = step + self._blocks(self._sit_stage_steps(i, stop))
        return _Plan(Activity.SIT, [], started_step=step, seat=seat_index, sit=stop)

    def _blocks(self, steps: float) -> int:
        """`steps` rounded up to whole avoidance blocks (stages change only at updates)."""
        return max(1, math.ceil(steps / self.decimation)) * self.decimation

    def _sit_stage_steps(self, i: int, stop: _SitStop) -> float:
        """Steps the current stage of person i's sit stop needs from where they are now."""
        dt = self.dt_s
        stage = stop.stage
        if stage is SitStage.APPROACH or stage is SitStage.LEAVE:
            target = stop.front_xy if stage is SitStage.APPROACH else stop.stand_xy
            speed = SIT_STEP_SPEED * float(self.pref_speed[i])
            # Turning towards it (at most half a turn), then stepping there.
            dist = float(np.linalg.norm(target - self.position_xy[i]))
            return dist / (speed * dt) + math.pi / HEADING_RATE_RPS / dt
        if stage is SitStage.TURN:
            err = abs(math.remainder(stop.facing_rad - float(self.heading_rad[i]), math.tau))
            return err / TURN_RATE_RPS / dt + 1
        if stage is SitStage.DOWN or stage is SitStage.UP:
            return SIT_DOWN_S / dt
        return float(stop.hold_steps)  # HOLD

    def _advance_sit(self, i: int, stop: _SitStop, step: int) -> bool:
        """Move person i's stop to its next stage when the current one is over (at an update
        step); False once it is done."""
        while step >= stop.stage_until:
            stop.stage = SitStage(stop.stage + 1)
            stop.stage_start = step
            stop.from_xy = np.asarray(self.position_xy[i], dtype=np.float64).copy()
            if stop.stage is SitStage.DONE:
                return False
            if stop.stage is SitStage.UP:
                stop.up_start = step
            if stop.stage is SitStage.SETTLE:
                release = stop.up_start + self._blocks(round(SIT_RELEASE_S / self.dt_s))
                stop.stage_until = max(step, release)
            else:
                stop.stage_until = step + self._blocks(self._sit_stage_steps(i, stop))
        return True

    def _release_seat(self, i: int) -> None:
        """Free the seat person i walked to or sat on."""
        for s, user in list(self._seat_user.items()):
            if user == i:
                del self._seat_user[s]

    def _walk_plan(self, i: int, goal_xy: FloatArray, step: int, steered: bool) -> _Plan:
        start = self._snap_free(self.position_xy[i])
        goal = self._snap_free(goal_xy)
        path = plan_path(self.planning, start, goal)
        if path is None:  # unreachable: walk straight, ORCA still keeps walls and people away
            path = [start, goal]
        return _Plan(Activity.WALK, path[1:], started_step=step, steered=steered)

    def _snap_free(self, xy: FloatArray) -> FloatArray:
        """xy itself if free on the planning grid, else the nearest free cell centre."""
        if self.planning.is_free(xy):
            return np.asarray(xy, dtype=np.float64)
        free = np.argwhere(~self.planning.blocked)
        centres = self.planning.center_of(free)
        out: FloatArray = centres[int(np.argmin(np.linalg.norm(centres - xy, axis=1)))]
        return out

    def _separate_starts(self, robots: Sequence[RobotObstacle]) -> None:
        """Re-draw start points that overlap an earlier person's or a robot's."""
        clear = self.config.avoidance.robot_clearance_m
        for i in range(self.n):
            for _ in range(100):
                d = np.linalg.norm(self.position_xy[:i] - self.position_xy[i], axis=1)
                free = not len(d) or d.min() > 2 * self.radius_m + 0.1
                free = free and all(
                    np.linalg.norm(r.position_xy - self.position_xy[i])
                    > self.radius_m + r.radius_m + clear + 0.1
                    for r in robots
                )
                if free:
                    break
                self.position_xy[i] = sample_free_point(self._start_grid, self._rng)

    # -- ORCA constraints -----------------------------------------------------------------------
    def _half_planes(self, robots: Sequence[RobotObstacle]) -> HalfPlanes:
        av = self.config.avoidance
        n = self.n
        pos, vel = self.position_xy, self.velocity_xy
        dt = self.update_dt_s
        parts_point: list[FloatArray] = []
        parts_dir: list[FloatArray] = []
        parts_active: list[np.ndarray] = []

        def against(
            rel_xy: FloatArray,
            other_vel_xy: FloatArray | float,
            combined_radius_m: FloatArray,
            responsibility: FloatArray,
            horizon_s: float | FloatArray,
            active: np.ndarray,
        ) -> None:
            """Add every person's half-planes against (n, m) others at `rel_xy` from them."""
            own = np.repeat(vel[:, None, :], rel_xy.shape[1], axis=1)
            point, direction = orca_half_planes(
                rel_xy, own - other_vel_xy, own, combined_radius_m, responsibility, horizon_s, dt
            )
            parts_point.append(point)
            parts_dir.append(direction)
            parts_active.append(active)

        # Other people: the nearest max_neighbors within neighbor_distance_m, half the effort.
        k = min(av.max_neighbors, n - 1)
        if k > 0:
            rel = pos[None, :, :] - pos[:, None, :]
            dist = np.linalg.norm(rel, axis=2)
            np.fill_diagonal(dist, np.inf)
            nearest = np.argsort(dist, axis=1, kind="stable")[:, :k]
            rows = np.arange(n)[:, None]
            against(
                rel[rows, nearest],
                vel[nearest],
                np.full((n, k), 2 * self.radius_m),
                np.where(self._sitting[nearest], 1.0, 0.5),
                av.time_horizon_s,
                dist[rows, nearest] < av.neighbor_distance_m,
            )
        # Walls and furniture: static, so this person takes all of the avoidance.
        if self._obstacle_tree is not None:
            reach = self.radius_m + self._obstacle_radius_m + 1.5 * float(self.pref_speed.max())
            d, idx = self._obstacle_tree.query(pos, k=OBSTACLE_CELLS, distance_upper_bound=reach)
            d = d.reshape(n, OBSTACLE_CELLS)
            idx = idx.reshape(n, OBSTACLE_CELLS)
            found = np.isfinite(d)
            cells = self._obstacle_xy[np.where(found, idx, 0)]
            against(
                cells - pos[:, None, :],
                0.0,
                np.full((n, OBSTACLE_CELLS), self.radius_m + self._obstacle_radius_m),
                np.ones((n, OBSTACLE_CELLS)),
                av.obstacle_time_horizon_s,
                found,
            )
        # Robots and animals: they do not yield, so people take all of it. Each person sees the
        # nearest MOVING_OBSTACLES of them (ORCA's cost grows with the cube of its constraints).
        robots = [r for r in robots if av.avoid_robots or r.is_animal]
        if robots:
            r_pos = np.array([r.position_xy for r in robots])
            r_vel = np.array([r.velocity_xy for r in robots])
            r_rad = np.array([r.radius_m for r in robots])
            horizon = np.array([av.time_horizon_s if r.time_horizon_s is None
                                else r.time_horizon_s for r in robots])  # fmt: skip
            m = min(len(robots), MOVING_OBSTACLES)
            rel = r_pos[None, :, :] - pos[:, None, :]
            near = np.broadcast_to(np.arange(m), (n, m))
            if len(robots) > m:
                gap = np.linalg.norm(rel, axis=2) - r_rad[None, :]
                near = np.argsort(gap, axis=1, kind="stable")[:, :m]
            rows = np.arange(n)[:, None]
            against(
                rel[rows, near],
                r_vel[near],
                self.radius_m + r_rad[near] + av.robot_clearance_m,
                np.ones((n, m)),
                horizon[near],
                np.ones((n, m), dtype=bool),
            )
        if not parts_point:
            return HalfPlanes(np.zeros((n, 0, 2)), np.zeros((n, 0, 2)), np.zeros((n, 0), bool))
        return HalfPlanes(
            np.concatenate(parts_point, axis=1),
            np.concatenate(parts_dir, axis=1),
            np.concatenate(parts_active, axis=1),
        )


@dataclass(frozen=True)
class RobotSchedule:
    """Robots' planned bodies at every physics step (scripted mode's moving obstacles).

    Arrays are indexed (step, robot); `near_floor` is False while a robot flies above the heads.
    """

    names: tuple[str, ...]
    position_xyz: FloatArray  # (n_steps, R, 3)
    velocity_xy: FloatArray  # (n_steps, R, 2)
    yaw_rad: FloatArray  # (n_steps, R)
    near_floor: np.ndarray  # (n_steps, R) bool
    radius_m: FloatArray  # (R,) disc around the footprint
    half_size_xyz: FloatArray  # (R, 3) body box

    def __call__(self, step: int) -> list[RobotObstacle]:
        if not self.names:
            return []
        k = min(step, len(self.position_xyz) - 1)
        return [
            RobotObstacle(self.position_xyz[k, r, :2], self.velocity_xy[k, r], float(rad))
            for r, rad in enumerate(self.radius_m)
            if self.near_floor[k, r]
        ]
