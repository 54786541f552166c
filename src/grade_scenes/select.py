"""Choosing the benchmark set: N of the candidate scenes with balanced object counts and the
highest coverage of (object, stable pose) pairs.

The choice is an integer linear programme, solved exactly by HiGHS (scipy.optimize.milp):
binary x_s (scene s chosen) and y_p (pair p shown by some chosen scene);
maximise sum y_p subject to y_p <= sum of x_s over the scenes showing p, sum x_s = N, and
C_min <= sum of x_s over the scenes showing object o <= C_max for every object. The solver's
dual bound gives the optimality gap (zero when solved to optimality). SceneReplica states
diversity as the entropy of stable-pose use; it is reported beside the coverage, and ties in
coverage are broken towards higher entropy by a small secondary term.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy.optimize import Bounds, LinearConstraint, milp

from grade_common.schema import Checked, Wording, bounds
from grade_scenes.errors import GenerationError, ObjectSetError
from grade_scenes.generate import Scene


@dataclass(frozen=True)
class SelectConfig(Checked):
    WORDING = Wording(error=ObjectSetError, root="select")

    count: int = field(default=20, metadata=bounds(1, 100000))
    min_per_object: int = field(default=5, metadata=bounds(0, 100000))
    max_per_object: int = field(default=7, metadata=bounds(1, 100000))
    time_limit_s: float = field(default=60.0, metadata=bounds(0.1, 3600.0))

    def validate(self, path: str) -> None:
        if self.min_per_object > self.max_per_object:
            raise ObjectSetError(
                f"select.min_per_object: {self.min_per_object} exceeds max_per_object "
                f"{self.max_per_object}"
            )


@dataclass(frozen=True)
class Selection:
    scene_indices: tuple[int, ...]
    coverage: int  # distinct (object, stable pose) pairs shown
    possible_pairs: int  # pairs shown by any candidate
    entropy_bits: float  # of the (object, pose) use over the chosen scenes
    object_counts: tuple[int, ...]
    optimality_gap: float  # (bound - coverage) / bound from the solver; 0 = proven optimal


def _statistics(
    scenes: tuple[Scene, ...], chosen: list[int], num_objects: int
) -> tuple[int, float, tuple[int, ...]]:
    uses: dict[tuple[int, int], int] = {}
    counts = [0] * num_objects
    for s in chosen:
        for o in scenes[s].objects:
            uses[(o.object_index, o.pose_index)] = uses.get((o.object_index, o.pose_index), 0) + 1
            counts[o.object_index] += 1
    freq = np.array(list(uses.values()), dtype=np.float64)
    p = freq / freq.sum() if freq.size else freq
    entropy = float(-(p * np.log2(p)).sum()) if p.size else 0.0
    return len(uses), entropy, tuple(counts)


def select_scenes(scenes: tuple[Scene, ...], num_objects: int, config: SelectConfig) -> Selection:
    """The best set (see module doc).

    Raises:
        GenerationError: no set of the candidates meets the count bounds.
    """
    pairs = sorted({p for s in scenes for p in s.pairs()})
    pair_col = {p: len(scenes) + k for k, p in enumerate(pairs)}
    n_vars = len(scenes) + len(pairs)
    rows, lower, upper = [], [], []
    for p in pairs:  # y_p - sum_{s shows p} x_s <= 0
        row = np.zeros(n_vars)
        row[pair_col[p]] = 1.0
        for k, s in enumerate(scenes):
            if p in s.pairs():
                row[k] = -1.0
        rows.append(row)
        lower.append(-np.inf)
        upper.append(0.0)
    row = np.zeros(n_vars)
    row[: len(scenes)] = 1.0
    rows.append(row)
    lower.append(config.count)
    upper.append(config.count)
    for obj in range(num_objects):
        row = np.zeros(n_vars)
        for k, s in enumerate(scenes):
            row[k] = sum(1 for o in s.objects if o.object_index == obj)
        rows.append(row)
        lower.append(config.min_per_object)
        upper.append(config.max_per_object)
    # Secondary term: below one pair's worth in total, favour scenes with rarer pairs (entropy).
    rarity = np.zeros(len(scenes))
    shown = {p: sum(1 for s in scenes if p in s.pairs()) for p in pairs}
    for k, s in enumerate(scenes):
        rarity[k] = sum(1.0 / shown[p] for p in s.pairs())
    objective = np.zeros(n_vars)
    objective[len(scenes) :] = -1.0
    objective[: len(scenes)] = -0.5 * rarity / (rarity.sum() + 1.0)
    result = milp(
        objective,
        constraints=LinearConstraint(np.array(rows), lower, upper),
        integrality=np.ones(n_vars),
        bounds=Bounds(0, 1),
        options={"time_limit": config.time_limit_s},
    )
    if result.x is None:
        raise GenerationError(
            f"no {config.count} of the {len(scenes)} candidates give every object between "
            f"{config.min_per_object} and {config.max_per_object} appearances ({result.message}); "
            "generate more candidates or widen the bounds"
        )
    chosen = [k for k in range(len(scenes)) if result.x[k] > 0.5]
    coverage, entropy, counts = _statistics(scenes, chosen, num_objects)
    bound = -float(getattr(result, "mip_dual_bound", result.fun))
    gap = max(0.0, (np.floor(bound + 1e-6) - coverage) / max(bound, 1.0))
    return Selection(
        tuple(scenes[k].index for k in chosen), coverage, len(pairs), entropy, counts, gap
    )


def random_selection(
    scenes: tuple[Scene, ...], num_objects: int, config: SelectConfig, rng: np.random.Generator
) -> Selection:
    """A random set that meets the count bounds: the baseline the selection must beat.

    Uniform draws of N scenes almost never meet the bounds (about 1 in 10^5 for 16 objects at
    5-7), so the baseline is the same programme with random scene weights and no coverage term.

    Raises:
        GenerationError: no set of the candidates meets the count bounds.
    """
    rows = [np.ones(len(scenes))]
    lower, upper = [float(config.count)], [float(config.count)]
    for obj in range(num_objects):
        rows.append(
            np.array([sum(o.object_index == obj for o in s.objects) for s in scenes], float)
        )
        lower.append(config.min_per_object)
        upper.append(config.max_per_object)
    result = milp(
        rng.normal(size=len(scenes)),
        constraints=LinearConstraint(np.array(rows), lower, upper),
        integrality=np.ones(len(scenes)),
        bounds=Bounds(0, 1),
        options={"time_limit": config.time_limit_s},
    )
    if result.x is None:
        raise GenerationError(f"no set meets the count bounds ({result.message}); widen them")
    chosen = [k for k in range(len(scenes)) if result.x[k] > 0.5]
    coverage, entropy, counts = _statistics(scenes, chosen, num_objects)
    possible = len({p for s in scenes for p in s.pairs()})
    return Selection(
        tuple(scenes[k].index for k in chosen), coverage, possible, entropy, counts, float("nan")
    )
