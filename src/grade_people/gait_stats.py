"""Foot contact and gait statistics of walking people (what `grade bench people` prints).

Core module (numpy only). The inputs are per-person arrays sampled at a fixed stride of physics
steps: the lowest skin point, each foot's stance flag and toe position, the ground speed and the
gait phase rate. Definitions:

- a *stance step* is a sampled step at which a person walks (speed over MOVING_MPS, walk or run
  code) and at least one foot is in the stance part of its gait cycle;
- its *lowest point* is the lowest skin vertex's height over the floor (negative: sunk in);
- a foot's *slide* over one stance is the largest horizontal distance its toe joint (the ball of
  the foot, which a rolling foot pivots about) gets from where it was at the stance's first
  sampled step;
- *cadence* is steps per second (two per gait cycle: phase rate / pi) and the *step length* the
  ground speed over the cadence.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from grade_common.types import FloatArray

MOVING_MPS = 0.05
SPEED_BINS_MPS = (0.3, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 2.0, 3.0)


@dataclass(frozen=True)
class PersonGaitSamples:
    """One person's samples at K steps (sample spacing dt_s)."""

    lowest_z_m: FloatArray  # (K,) lowest skin point over the floor
    stance: NDArray[np.bool_]  # (K, 2) each foot (left, right) in stance
    toe_xy: FloatArray  # (K, 2, 2) toe joints, world xy
    speed_mps: FloatArray  # (K,) ground speed
    phase_rate_rps: FloatArray  # (K,) gait phase rate (rad/s)
    walking: NDArray[np.bool_]  # (K,) walk/run motion code


@dataclass(frozen=True)
class GaitStats:
    stance_steps: int
    lowest_min_m: float
    lowest_max_m: float
    within_2cm: float  # fraction of stance steps with |lowest point| <= 2 cm
    within_3cm: float
    above_2cm: float  # fraction with the lowest point more than 2 cm up (floating)
    stances: int
    slide_p95_m: float
    slide_max_m: float
    walk_speed_median_mps: float
    walk_under_0p3: float  # fraction of walking steps under 0.3 m/s
    # per speed bin: (low, high, steps, median cadence steps/s, median step length m)
    by_speed: tuple[tuple[float, float, int, float, float], ...]


def _stance_slides(stance: NDArray[np.bool_], toe_xy: FloatArray) -> list[float]:
    out = []
    for foot in range(2):
        on = stance[:, foot]
        edges = np.flatnonzero(np.diff(np.concatenate([[0], on.astype(np.int8), [0]])))
        for a, b in zip(edges[::2], edges[1::2], strict=True):
            if b - a < 2:
                continue
            d = np.linalg.norm(toe_xy[a:b, foot] - toe_xy[a, foot], axis=1)
            out.append(float(d.max()))
    return out


def gait_stats(people: list[PersonGaitSamples]) -> GaitStats:
    """Pool every person's samples into the statistics above."""
    lows, slides, speeds, cadences = [], [], [], []
    for p in people:
        moving = p.walking & (p.speed_mps > MOVING_MPS)
        stance_step = moving & p.stance.any(axis=1)
        lows.append(p.lowest_z_m[stance_step])
        slides += _stance_slides(p.stance & moving[:, None], p.toe_xy)
        speeds.append(p.speed_mps[moving])
        cadences.append(p.phase_rate_rps[moving] / math.pi)
    low = np.concatenate(lows) if lows else np.zeros(0)
    speed = np.concatenate(speeds) if speeds else np.zeros(0)
    cadence = np.concatenate(cadences) if cadences else np.zeros(0)
    slide = np.array(slides)
    bins = []
    edges = (MOVING_MPS, *SPEED_BINS_MPS)
    for lo, hi in itertools.pairwise(edges):
        sel = (speed >= lo) & (speed < hi) & (cadence > 0)
        if sel.any():
            c = float(np.median(cadence[sel]))
            s = float(np.median(speed[sel] / cadence[sel]))
        else:
            c = s = float("nan")
        bins.append((lo, hi, int(sel.sum()), c, s))

    def frac(mask: NDArray[np.bool_]) -> float:
        return float(mask.mean()) if mask.size else float("nan")

    return GaitStats(
        stance_steps=int(low.size),
        lowest_min_m=float(low.min()) if low.size else float("nan"),
        lowest_max_m=float(low.max()) if low.size else float("nan"),
        within_2cm=frac(np.abs(low) <= 0.02),
        within_3cm=frac(np.abs(low) <= 0.03),
        above_2cm=frac(low > 0.02),
        stances=int(slide.size),
        slide_p95_m=float(np.percentile(slide, 95)) if slide.size else float("nan"),
        slide_max_m=float(slide.max()) if slide.size else float("nan"),
        walk_speed_median_mps=float(np.median(speed)) if speed.size else float("nan"),
        walk_under_0p3=frac(speed < 0.3),
        by_speed=tuple(bins),
    )


def format_gait_stats(s: GaitStats) -> str:
    """The statistics as the lines `grade bench people` prints."""
    lines = [
        f"foot contact: {s.stance_steps} stance steps; lowest skin point "
        f"{100 * s.lowest_min_m:+.1f} .. {100 * s.lowest_max_m:+.1f} cm; within 2 cm "
        f"{100 * s.within_2cm:.1f} % (target >= 99 %), within 3 cm {100 * s.within_3cm:.1f} % "
        f"(target 100 %), floating > 2 cm {100 * s.above_2cm:.1f} %",
        f"foot slide per stance ({s.stances} stances): 95th percentile "
        f"{100 * s.slide_p95_m:.1f} cm, max {100 * s.slide_max_m:.1f} cm (target < 2 cm)",
        f"walking steps: median speed {s.walk_speed_median_mps:.2f} m/s, "
        f"{100 * s.walk_under_0p3:.0f} % under 0.3 m/s",
        "speed m/s    steps  cadence steps/s  step length m",
    ]
    for lo, hi, n, c, step in s.by_speed:
        if n:
            lines.append(f"{lo:4.2f}-{hi:4.2f} {n:8d} {c:16.2f} {step:14.2f}")
    return "\n".join(lines)
