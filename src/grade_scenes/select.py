"""Choosing the benchmark set: N of the candidate scenes with balanced object counts and the
highest SceneReplica diversity.

SceneReplica's diversity is the sum over objects of the entropy (bits) of that object's
stable-pose use over the chosen scenes: D = sum_o H(p_o), p_o(k) = share of object o's
appearances that show it in pose k. It is maximised in two stages under the count bounds
(every object appears C_min..C_max times in N scenes):

1. an integer linear programme, solved exactly by HiGHS (scipy.optimize.milp), for the highest
   coverage of (object, stable pose) pairs: binary x_s (scene s chosen) and y_p (pair p shown);
   maximise sum y_p subject to y_p <= sum of x_s over the scenes showing p, sum x_s = N, and
   the count bounds. The solver's dual bound gives its optimality gap. Ties in coverage are
   broken towards scenes with rarer pairs by a small secondary term;
2. a seeded one-swap local search from that set: exchange a chosen scene for an unchosen one
   whenever the count bounds still hold and D grows, until no swap improves D (a local
   optimum; D is not linear, so the programme cannot maximise it directly).

The joint entropy of (object, pose) use, which earlier versions reported as "entropy_bits",
is still computed and reported, labelled as such: it is not SceneReplica's measure.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy.optimize import Bounds, LinearConstraint, milp

from grade_common.schema import Checked, Wording, bounds
from grade_common.types import FloatArray
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
    diversity_bits: float  # SceneReplica's: sum over objects of their pose-use entropy
    joint_entropy_bits: float  # entropy of the joint (object, pose) use; not SceneReplica's
    object_counts: tuple[int, ...]
    optimality_gap: float  # coverage stage: (bound - coverage) / bound; 0 = proven optimal
    swaps: int = 0  # improving swaps of the diversity stage


def _entropy_bits(counts: FloatArray) -> float:
    total = counts.sum()
    if total <= 0:
        return 0.0
    p = counts[counts > 0] / total
    return float(-(p * np.log2(p)).sum())


def _use_counts(scenes: tuple[Scene, ...], chosen: list[int], num_objects: int) -> FloatArray:
    """(num_objects, max pose + 1) appearances of each (object, pose) in the chosen scenes."""
    poses = 1 + max((o.pose_index for s in scenes for o in s.objects), default=0)
    uses = np.zeros((num_objects, poses))
    for s in chosen:
        for o in scenes[s].objects:
            uses[o.object_index, o.pose_index] += 1
    return uses


def diversity_bits(uses: FloatArray) -> float:
    """SceneReplica's diversity of a (objects, poses) use-count table: sum of the row entropies."""
    return sum(_entropy_bits(row) for row in uses)


def _statistics(
    scenes: tuple[Scene, ...], chosen: list[int], num_objects: int
) -> tuple[int, float, float, tuple[int, ...]]:
    uses = _use_counts(scenes, chosen, num_objects)
    counts = tuple(int(c) for c in uses.sum(axis=1))
    coverage = int((uses > 0).sum())
    return coverage, diversity_bits(uses), _entropy_bits(uses.ravel()), counts


def _swap_search(
    scenes: tuple[Scene, ...],
    chosen: list[int],
    num_objects: int,
    config: SelectConfig,
    rng: np.random.Generator,
) -> tuple[list[int], int]:
    """One-swap local search for the highest diversity within the count bounds (module doc)."""
    empty = _use_counts(scenes, [], num_objects)
    per_scene = []
    for k in range(len(scenes)):
        table = empty.copy()
        for o in scenes[k].objects:
            table[o.object_index, o.pose_index] += 1
        per_scene.append(table)
    current = set(chosen)
    uses = sum((per_scene[k] for k in current), empty.copy())
    best = diversity_bits(uses)
    swaps = 0
    improved = True
    while improved:
        improved = False
        outs = rng.permutation(sorted(current))
        ins = rng.permutation([k for k in range(len(scenes)) if k not in current])
        for out in (int(k) for k in outs):
            for inn in (int(k) for k in ins):
                if inn in current:
                    continue
                trial = uses - per_scene[out] + per_scene[inn]
                counts = trial.sum(axis=1)
                if counts.min() < config.min_per_object or counts.max() > config.max_per_object:
                    continue
                value = diversity_bits(trial)
                if value > best + 1e-9:
                    current.remove(out)
                    current.add(inn)
                    uses, best, swaps, improved = trial, value, swaps + 1, True
                    break
            if improved:
                break
    return sorted(current), swaps


def select_scenes(
    scenes: tuple[Scene, ...],
    num_objects: int,
    config: SelectConfig,
    rng: np.random.Generator,
    swap: bool = True,
) -> Selection:
    """The most diverse set found (see module doc); `rng` orders the swap search.

    Args:
        swap: run the diversity stage; False returns the coverage programme's set.

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
    coverage, _, _, _ = _statistics(scenes, chosen, num_objects)
    bound = -float(getattr(result, "mip_dual_bound", result.fun))
    gap = max(0.0, (np.floor(bound + 1e-6) - coverage) / max(bound, 1.0))
    swaps = 0
    if swap:
        chosen, swaps = _swap_search(scenes, chosen, num_objects, config, rng)
    coverage, diversity, joint, counts = _statistics(scenes, chosen, num_objects)
    return Selection(
        tuple(scenes[k].index for k in chosen),
        coverage,
        len(pairs),
        diversity,
        joint,
        counts,
        float(gap),
        swaps,
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
    coverage, diversity, joint, counts = _statistics(scenes, chosen, num_objects)
    possible = len({p for s in scenes for p in s.pairs()})
    return Selection(
        tuple(scenes[k].index for k in chosen),
        coverage,
        possible,
        diversity,
        joint,
        counts,
        float("nan"),
    )
