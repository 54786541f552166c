"""The explorer's decisions over time: look around, go to frontiers, replan, give up, finish.

`FrontierExplorer` answers "where is the nearest reachable frontier"; this module decides when
to ask and what the robot should do meanwhile. Each `update` gets the time, the robot's position
and yaw and returns a `Plan` when the robot needs a new path (None: keep the current one).

- Start, and whenever no frontier is reachable: turn on the spot in quarter turns (the camera
  sees ahead only), then ask again; finish only when a full look-around found nothing new.
- Going: replan when the goal is reached, when its frontier has been seen (it is no longer a
  frontier), when an obstacle now lies on the next metres of the path, or when the robot
  made no progress for `stuck_timeout_s` (that goal is then given up, and frontiers near it are
  skipped from then on).
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass, field

import numpy as np

from grade_common.types import FloatArray
from grade_control.explorer import OCCUPIED, ExplorationGoal, FrontierExplorer
from grade_control.geometry import wrap_angle


class Phase(enum.Enum):
    """What the explorer is doing."""

    LOOKING_AROUND = "looking_around"  # turning in place to map what surrounds the robot
    GOING = "going"  # following the path to the chosen frontier goal
    FINISHED = "finished"  # a full turn found no reachable frontier: the map is complete


@dataclass(frozen=True)
class Plan:
    """A path for the controller: (N, 3) x, y, yaw (the altitude is the node's)."""

    poses_xy_yaw: FloatArray
    reason: str  # for the log: "look around", or why this frontier goal was chosen


@dataclass(frozen=True)
class MissionSettings:
    """Tolerances of the exploration decisions."""

    goal_tolerance_m: float = 0.3  # a goal this close counts as reached
    yaw_tolerance_rad: float = 0.2  # a look-around this short of a full turn counts as one
    look_timeout_s: float = 40.0  # a look-around ends after this long, full turn or not
    min_goal_distance_m: float = 1.0  # frontier goals nearer than this are not chosen
    stuck_timeout_s: float = 8.0  # no progress for this long: the goal is given up
    progress_m: float = 0.2  # getting this much closer to the goal counts as progress
    lookahead_m: float = 2.0  # an obstacle on this much of the path ahead makes a new plan


@dataclass
class _Look:
    started_s: float
    last_yaw_rad: float
    turned_rad: float = 0.0  # summed yaw changes between updates (each well under half a turn)


@dataclass
class ExplorationMission:
    """Drives a `FrontierExplorer` (see the module docstring)."""

    explorer: FrontierExplorer
    settings: MissionSettings = field(default_factory=MissionSettings)
    phase: Phase = Phase.LOOKING_AROUND
    goal: ExplorationGoal | None = None
    given_up: list[FloatArray] = field(default_factory=list)
    goals_reached: int = 0
    _look: _Look | None = None
    _best_distance_m: float = math.inf
    _progress_since_s: float = 0.0

    @property
    def finished(self) -> bool:
        """Nothing reachable is left to explore (checked after a full look-around)."""
        return self.phase is Phase.FINISHED

    def update(self, now_s: float, position_xy_m: FloatArray, yaw_rad: float) -> Plan | None:
        """The new path for the robot, or None to keep following the current one."""
        position = np.asarray(position_xy_m, dtype=np.float64)[:2]
        if self.phase is Phase.FINISHED:
            return None
        if self.phase is Phase.LOOKING_AROUND:
            if self._look is None:
                return self._start_look(now_s, position, yaw_rad)
            if not self._look_done(now_s, yaw_rad):
                return None
            self._look = None
            return self._next(now_s, position, yaw_rad, after_look=True)
        assert self.goal is not None
        distance = float(np.linalg.norm(position - self.goal.goal_xy_m))
        if distance <= self.settings.goal_tolerance_m:
            self.goals_reached += 1
            return self._next(now_s, position, yaw_rad, after_look=False, why="goal reached")
        if not self._goal_is_frontier():
            return self._next(now_s, position, yaw_rad, after_look=False, why="frontier seen")
        if self._path_blocked(position):
            return self._next(now_s, position, yaw_rad, after_look=False, why="path blocked")
        if distance < self._best_distance_m - self.settings.progress_m:
            self._best_distance_m, self._progress_since_s = distance, now_s
        elif now_s - self._progress_since_s > self.settings.stuck_timeout_s:
            self.given_up.append(self.goal.goal_xy_m.copy())
            return self._next(now_s, position, yaw_rad, after_look=False, why="no progress")
        return None

    def _start_look(self, now_s: float, position: FloatArray, yaw_rad: float) -> Plan:
        yaws = [float(wrap_angle(yaw_rad + k * math.pi / 2)) for k in range(1, 5)]
        self._look = _Look(now_s, yaw_rad)
        poses = np.array([[position[0], position[1], y] for y in yaws])
        return Plan(poses, "look around")

    def _look_done(self, now_s: float, yaw_rad: float) -> bool:
        """A full turn made (or the time for one is up: a robot that cannot turn)."""
        assert self._look is not None
        look = self._look
        look.turned_rad += float(wrap_angle(yaw_rad - look.last_yaw_rad))
        look.last_yaw_rad = yaw_rad
        full_turn = abs(look.turned_rad) >= 2 * math.pi - self.settings.yaw_tolerance_rad
        return full_turn or now_s - look.started_s > self.settings.look_timeout_s

    def _next(
        self,
        now_s: float,
        position: FloatArray,
        yaw_rad: float,
        *,
        after_look: bool,
        why: str = "",
    ) -> Plan | None:
        excluded = np.array(self.given_up).reshape(-1, 2)
        goal = self.explorer.next_goal(
            position, self.settings.min_goal_distance_m, excluded if len(excluded) else None
        )
        if goal is None:
            self.goal = None
            if after_look:  # a full turn here found nothing reachable: nothing is left
                self.phase = Phase.FINISHED
                return None
            self.phase = Phase.LOOKING_AROUND
            return self._start_look(now_s, position, yaw_rad)
        self.phase = Phase.GOING
        self.goal = goal
        self._best_distance_m = float(np.linalg.norm(position - goal.goal_xy_m))
        self._progress_since_s = now_s
        reason = f"{why + ': ' if why else ''}frontier at {goal.goal_xy_m.round(2).tolist()}"
        return Plan(_facing_travel(position, goal.path_xy_m, yaw_rad), reason)

    def _goal_is_frontier(self) -> bool:
        assert self.goal is not None
        labels, _ = self.explorer.frontiers()
        row, col = self.explorer.cell_of(self.goal.goal_xy_m)
        return bool(labels[row, col] > 0)

    def _path_blocked(self, position: FloatArray) -> bool:
        """An obstacle (not just its safety margin) now lies on the next `lookahead_m` of the
        path: people walking past the margin should not throw the plan away."""
        assert self.goal is not None
        grid = self.explorer.grid()
        rows, cols = grid.shape
        for xy in self.goal.path_xy_m:
            distance = float(np.linalg.norm(xy - position))
            if distance <= self.explorer.config.robot_radius_m:
                continue  # where the robot is now: it got there
            if distance > self.settings.lookahead_m:
                break
            row, col = self.explorer.cell_of(xy)
            if 0 <= row < rows and 0 <= col < cols and grid[row, col] == OCCUPIED:
                return True
        return False


def _facing_travel(start: FloatArray, path_xy: FloatArray, yaw_rad: float) -> FloatArray:
    """x, y, yaw per waypoint, yaw along each leg (the camera looks where the robot goes)."""
    out = []
    previous, yaw = start, yaw_rad
    for xy in np.asarray(path_xy, dtype=np.float64):
        leg = xy - previous
        if float(np.hypot(leg[0], leg[1])) > 1e-6:
            yaw = math.atan2(leg[1], leg[0])
        out.append([xy[0], xy[1], yaw])
        previous = xy
    return np.array(out)
