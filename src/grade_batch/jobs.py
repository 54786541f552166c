"""A sweep expanded into jobs: one per group x combination x seed, in a fixed order.

A job is plain data (it crosses process and Ray boundaries): its id (a folder name and the
dataset's sequence name), the scenario file, the seed, the overrides and the ROS domain it runs
in; a job of a slam_table sweep names the table's world and kind instead of a scenario. The
overrides become `grade run --set TOP_KEY=VALUE` arguments: each changed top-level key is passed
whole, so relative paths in the scenario still resolve against its own folder.
"""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from grade_batch.errors import BatchConfigError
from grade_batch.spec import Axis, Group, SweepFile, parse_value
from grade_common.errors import ConfigError
from grade_common.overrides import apply_overrides


@dataclass(frozen=True)
class Job:
    """One sequence of the dataset: a scenario run and its pipeline."""

    index: int  # position in the sweep (fixes the ROS domain and the order of the tables)
    job_id: str
    group: str
    scenario: str  # absolute path of the scenario file
    seed: int
    settings: tuple[tuple[str, Any], ...]  # dotted key -> parsed value, group `set` first
    domain_id: int
    table_sequence: tuple[str, str] | None = None  # (world, kind) of a slam_table sweep

    def describe(self) -> dict[str, Any]:
        """The job's settings as the manifest and failure reports show them."""
        if self.table_sequence is not None:
            world, kind = self.table_sequence
            return {
                "group": self.group,
                "world": world,
                "kind": kind,
                "seed": self.seed,
                "ros_domain_id": self.domain_id,
            }
        return {
            "group": self.group,
            "scenario": self.scenario,
            "seed": self.seed,
            "set": {k: v for k, v in self.settings},
            "ros_domain_id": self.domain_id,
        }

    def run_overrides(self) -> list[str]:
        """`--set` arguments for `grade run`: the seed and every changed top-level key."""
        return [f"seed={self.seed}"] + [
            f"{key}={json.dumps(value)}" for key, value in top_level_changes(self).items()
        ]


def _combinations(group: Group) -> list[tuple[tuple[str, Any], ...]]:
    """Every (key, value) combination of a group's product axes x its zip positions."""

    def pairs(axis: Axis) -> list[tuple[str, Any]]:
        return [(axis.key, parse_value(v)) for v in axis.values]

    product = list(itertools.product(*(pairs(a) for a in group.product)))
    zipped = list(zip(*(pairs(a) for a in group.zip), strict=True)) if group.zip else [()]
    return [tuple(p) + tuple(z) for p in product for z in zipped]


def expand(spec: SweepFile) -> list[Job]:
    """The jobs of a sweep, in file order: groups, then combinations, then seeds.

    Raises:
        BatchConfigError: an override names a key the scenario cannot take (e.g. a list index
            past its end), or two jobs would get the same id.
    """
    sweep = spec.sweep
    first, last = sweep.domain_ids
    jobs: list[Job] = []
    for group in sweep.groups:
        base = tuple((s.key, parse_value(s.value)) for s in group.set)
        combos = _combinations(group)
        for number, combo in enumerate(combos):
            for seed in group.seeds:
                index = len(jobs)
                job_id = (
                    f"{group.name}_{number:02d}_s{seed}"
                    if len(combos) > 1
                    else (f"{group.name}_s{seed}")
                )
                job = Job(
                    index=index,
                    job_id=job_id,
                    group=group.name,
                    scenario=str(spec.path_of(group.scenario)) if group.scenario else "",
                    seed=seed,
                    settings=base + combo,
                    domain_id=first + index % (last - first + 1),
                    table_sequence=(group.world, group.kind) if group.world else None,
                )
                if job.table_sequence is None:
                    top_level_changes(job)  # reports a bad key now, not in a worker later
                jobs.append(job)
    ids = [j.job_id for j in jobs]
    if len(set(ids)) != len(ids):
        raise BatchConfigError(f"groups: job ids {ids} are not unique")
    return jobs


def top_level_changes(job: Job) -> dict[str, Any]:
    """The scenario's top-level keys that the job's overrides change, with their new values.

    Raises:
        BatchConfigError: the scenario is unreadable or a dotted key does not fit it.
    """
    try:
        data = yaml.safe_load(Path(job.scenario).read_text()) or {}
    except (OSError, yaml.YAMLError) as err:
        raise BatchConfigError(f"{job.scenario}: cannot read scenario: {err}") from err
    if not isinstance(data, dict):
        raise BatchConfigError(f"{job.scenario}: expected a mapping at the top level")
    try:
        changed = apply_overrides(data, job.settings, f"{job.group}: set")
    except ConfigError as err:
        raise BatchConfigError(str(err)) from None
    tops = dict.fromkeys(key.split(".")[0] for key, _ in job.settings)  # first-set order
    return {top: changed[top] for top in tops}
