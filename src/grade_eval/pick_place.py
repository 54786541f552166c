"""Pick-and-place bookkeeping in SceneReplica's results-table layout.

One row per (scene, object) attempt with three stages: grasped, lifted, placed (each implies
the previous one), the cause of a failure and the attempt's time. The tables report, per object
and in total, how many attempts reached each stage, like the paper's per-object success
tables; per scene, the pick (lifted) and pick-and-place rates; and the failure causes. Rows
come from a YAML list (`[{scene: scene_010, object: can, grasped: true, lifted: true,
placed: false, failure: not_in_bin, time_s: 14.2}, ...]`), which `grade scenes run` writes with
`dump_attempts`.

SceneReplica's failure breakdown (`category`): every failed attempt is a perception failure
(the object was not found, or its pose estimate was off by more than 10 % of its diameter in
ADD-S), else a planning failure (no grasp, no IK solution, no collision-free path), else an
execution failure (a good estimate and a plan, but the object was missed, slipped, was knocked
or did not land in the bin).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from grade_common.names import ros_name
from grade_common.schema import Wording, bounds, from_mapping, named_items, to_mapping
from grade_eval.errors import EvalConfigError

WORDING = Wording(error=EvalConfigError, root="pick-and-place results")

OPTIONAL_FIELDS = frozenset({"add_m", "add_s_m", "diameter_m"})
# failure causes that are planning failures (the rest, when the estimate was good, are execution)
PLANNING_FAILURES = frozenset({"no_grasp", "ik_failure", "no_path"})
NOT_FOUND = "not_found"  # the perception found no segment for the object
ADD_S_TOLERANCE = 0.1  # of the object's diameter: SceneReplica's bound for a good estimate


class Category(enum.Enum):
    SUCCESS = "success"
    PERCEPTION = "perception"
    PLANNING = "planning"
    EXECUTION = "execution"


@dataclass(frozen=True)
class Attempt:
    scene: str = field(metadata=ros_name())
    object: str = field(metadata=ros_name())
    grasped: bool = False
    lifted: bool = False
    placed: bool = False
    failure: str = field(default="none", metadata=ros_name())  # "none" when placed
    time_s: float = field(default=0.0, metadata=bounds(0.0, 1e6))
    # the pose estimate's ADD and ADD-S against ground truth (model-based perception only)
    add_m: float | None = field(default=None, metadata=bounds(0.0, 100.0))
    add_s_m: float | None = field(default=None, metadata=bounds(0.0, 100.0))
    diameter_m: float | None = field(default=None, metadata=bounds(0.0, 100.0))

    def validate(self, path: str) -> None:
        if (self.lifted and not self.grasped) or (self.placed and not self.lifted):
            raise EvalConfigError(
                f"{path}: lifted needs grasped and placed needs lifted; got grasped="
                f"{self.grasped} lifted={self.lifted} placed={self.placed}"
            )


@dataclass(frozen=True)
class Attempts:
    attempts: tuple[Attempt, ...] = field(metadata=named_items("object"))


def category(attempt: Attempt) -> Category:
    """SceneReplica's outcome class of one attempt (module doc)."""
    if attempt.placed:
        return Category.SUCCESS
    if attempt.failure == NOT_FOUND or not good_estimate(attempt):
        return Category.PERCEPTION
    if attempt.failure in PLANNING_FAILURES:
        return Category.PLANNING
    return Category.EXECUTION


def good_estimate(attempt: Attempt) -> bool:
    """Whether the pose estimate was within ADD-S 10 % of the diameter (True without one)."""
    if attempt.add_s_m is None or attempt.diameter_m is None:
        return True
    return attempt.add_s_m <= ADD_S_TOLERANCE * attempt.diameter_m


def category_table(attempts: tuple[Attempt, ...]) -> str:
    """Per object (Markdown): successes and perception, planning and execution failures."""
    classes = list(Category)
    lines = [
        "| object | attempts | " + " | ".join(c.value for c in classes) + " |",
        "| --- | ---: |" + " ---: |" * len(classes),
    ]
    for name in [*sorted({a.object for a in attempts}), None]:
        rows = [category(a) for a in attempts if name is None or a.object == name]
        label = "**total**" if name is None else name
        counts = " | ".join(str(rows.count(c)) for c in classes)
        lines.append(f"| {label} | {len(rows)} | {counts} |")
    return "\n".join(lines)


def add_s_table(attempts: tuple[Attempt, ...]) -> str:
    """Per object (Markdown): the pose estimates' mean ADD and ADD-S (mm) and how many were
    within 10 % of the diameter; objects without estimates are left out."""
    lines = [
        "| object | estimates | mean ADD (mm) | mean ADD-S (mm) | ADD-S within 10 % of diameter |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    scored = [a for a in attempts if a.add_s_m is not None and a.add_m is not None]
    for name in [*sorted({a.object for a in scored}), None]:
        rows = [a for a in scored if name is None or a.object == name]
        if not rows:
            continue
        add = 1000.0 * sum(a.add_m or 0.0 for a in rows) / len(rows)
        add_s = 1000.0 * sum(a.add_s_m or 0.0 for a in rows) / len(rows)
        good = sum(good_estimate(a) for a in rows)
        label = "**total**" if name is None else name
        lines.append(f"| {label} | {len(rows)} | {add:.1f} | {add_s:.1f} | {good} |")
    return "\n".join(lines)


def load_attempts(path: str | Path) -> tuple[Attempt, ...]:
    """Read a results YAML file (a list of attempts).

    Raises:
        EvalConfigError: missing file, not YAML, or an invalid attempt (named by its object).
    """
    file = Path(path)
    try:
        data: Any = yaml.safe_load(file.read_text())
    except (OSError, yaml.YAMLError) as err:
        raise EvalConfigError(f"{file}: cannot read pick-and-place results: {err}") from err
    if not isinstance(data, list):
        raise EvalConfigError(f"{file}: expected a list of attempts, got {type(data).__name__}")
    try:
        return from_mapping(Attempts, {"attempts": data}, wording=WORDING).attempts
    except EvalConfigError as err:
        raise EvalConfigError(f"{file}: {err}") from None


def results_table(attempts: tuple[Attempt, ...]) -> str:
    """The per-object table (Markdown): attempts, grasped, lifted, placed, success rate."""
    objects = sorted({a.object for a in attempts})
    lines = [
        "| object | attempts | grasped | lifted | placed | success |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for name in [*objects, None]:
        rows = [a for a in attempts if name is None or a.object == name]
        n = len(rows)
        grasped = sum(a.grasped for a in rows)
        lifted = sum(a.lifted for a in rows)
        placed = sum(a.placed for a in rows)
        label = "**total**" if name is None else name
        rate = f"{100.0 * placed / n:.1f} %" if n else "-"
        lines.append(f"| {label} | {n} | {grasped} | {lifted} | {placed} | {rate} |")
    return "\n".join(lines)


def dump_attempts(attempts: tuple[Attempt, ...]) -> str:
    """The YAML text `load_attempts` reads back (estimate fields only where there are any)."""
    rows = [
        {k: v for k, v in to_mapping(a).items() if v is not None or k not in OPTIONAL_FIELDS}
        for a in attempts
    ]
    text: str = yaml.safe_dump(rows, sort_keys=False)
    return text


def _rate(n: int, total: int) -> str:
    return f"{100.0 * n / total:.1f} %" if total else "-"


def scene_table(attempts: tuple[Attempt, ...]) -> str:
    """Per scene (Markdown): objects, picked (lifted), placed, pick and pick-and-place rates."""
    scenes = list(dict.fromkeys(a.scene for a in attempts))
    lines = [
        "| scene | objects | picked | placed | pick rate | pick-and-place rate |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for name in [*scenes, None]:
        rows = [a for a in attempts if name is None or a.scene == name]
        n, lifted, placed = len(rows), sum(a.lifted for a in rows), sum(a.placed for a in rows)
        label = "**total**" if name is None else name
        lines.append(
            f"| {label} | {n} | {lifted} | {placed} | {_rate(lifted, n)} | {_rate(placed, n)} |"
        )
    return "\n".join(lines)


def failure_table(attempts: tuple[Attempt, ...]) -> str:
    """How many attempts ended with each failure cause (Markdown), most frequent first."""
    counts: dict[str, int] = {}
    for a in attempts:
        counts[a.failure] = counts.get(a.failure, 0) + 1
    lines = ["| outcome | attempts | share |", "| --- | ---: | ---: |"]
    for cause, n in sorted(counts.items(), key=lambda item: (-item[1], item[0])):
        lines.append(f"| {cause} | {n} | {_rate(n, len(attempts))} |")
    return "\n".join(lines)
