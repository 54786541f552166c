"""A sweep of GRADE's SLAM table (pipeline.slam_table): validation of its keys, one job per
sequence, the job's and the merge's `grade bench slam --grade-table` commands."""

from __future__ import annotations

import itertools
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from grade_batch.errors import BatchConfigError
from grade_batch.jobs import expand
from grade_batch.pipeline import JobPlan, job_commands
from grade_batch.slam_table import merge_command
from grade_batch.spec import TABLE_KIND_PATTERN, load_sweep
from grade_slam.grade_sequences import KINDS

SHIPPED = "config/batch_slam_grade_table.yaml"


def write_table_sweep(tmp_path: Path, repo_root: Path, **changes: Any) -> Path:
    """A two-job table sweep of the shipped preset; `changes` replace top-level keys."""
    data: dict[str, Any] = {
        "name": "table",
        "pipeline": {
            "export": None,
            "slam_table": {
                "preset": str(repo_root / "config/slam_grade_table.yaml"),
                "backends": ["kiss_icp"],
                "repeats": 2,
                "duration_s": 2.0,
            },
        },
        "groups": [
            {"name": "rooms_static_H", "world": "rooms", "kind": "static_H", "seeds": [4, 5]}
        ],
    }
    data.update(changes)
    path = tmp_path / "sweep.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def test_the_kind_pattern_is_gradeS_eight_kinds() -> None:
    # grade_batch may not import grade_slam: its pattern must accept exactly KINDS
    candidates = {
        "".join(parts)
        for parts in itertools.product(
            ["static", "people_N", "people_F", "people_L", "people"], ["", "_H"]
        )
    }
    accepted = {k for k in candidates if re.fullmatch(TABLE_KIND_PATTERN, k)}
    assert accepted == set(KINDS)


def test_the_shipped_sweep_is_the_whole_table(repo_root: Path) -> None:
    spec = load_sweep(repo_root / SHIPPED)
    jobs = expand(spec)
    assert len(jobs) == 2 * 8 * 3
    assert {job.table_sequence for job in jobs} == {
        (world, kind) for world in ("rooms", "hall") for kind in KINDS
    }
    step = spec.sweep.pipeline.slam_table
    assert step is not None
    assert (step.repeats, step.duration_s, step.backends) == (3, 60.0, ())
    assert jobs[0].job_id == "rooms_static_H_s1"
    assert jobs[0].describe() == {
        "group": "rooms_static_H",
        "world": "rooms",
        "kind": "static_H",
        "seed": 1,
        "ros_domain_id": 1,
    }


def test_a_table_job_runs_one_sequence_and_the_merge_takes_every_job(
    tmp_path: Path, repo_root: Path
) -> None:
    spec = load_sweep(write_table_sweep(tmp_path, repo_root))
    jobs = expand(spec)
    preset = str(repo_root / "config/slam_grade_table.yaml")
    plan = JobPlan(
        jobs[1], spec.sweep.pipeline, None, str(tmp_path / "b"), "grade", 1.0, table_preset=preset
    )
    shared = ["--preset", preset, "--repeats", "2", "--backends", "kiss_icp", "--duration-s", "2.0"]
    assert job_commands(plan) == [
        (
            "slam table",
            [
                *("grade", "bench", "slam", "--grade-table", "slam_table", *shared),
                *("--worlds", "rooms", "--kinds", "static_H", "--table-seeds", "5"),
            ],
        )
    ]
    batch = tmp_path / "b"
    assert merge_command(spec, batch, jobs, "grade") == [
        *("grade", "bench", "slam", "--grade-table", str(batch / "table"), *shared),
        *("--merge", str(batch / "jobs/rooms_static_H_s4/slam_table")),
        str(batch / "jobs/rooms_static_H_s5/slam_table"),
    ]


@pytest.mark.parametrize(
    ("group", "pipeline", "message"),
    [
        ({"scenario": "x.yaml"}, {}, r"groups\.g\.scenario: not allowed with pipeline\.slam_table"),
        (
            {"set": {"people.count": 2}},
            {},
            r"groups\.g\.set: not allowed with pipeline\.slam_table",
        ),
        ({"kind": ""}, {}, r"groups\.g\.kind: required with pipeline\.slam_table"),
        ({"kind": "people_X"}, {}, r"groups\.g\.kind.*'people_X'.*\(static\|people_\[NFL\]\)"),
        ({"world": "Hall"}, {}, r"groups\.g\.world.*'Hall'"),
        ({}, {"repeats": 0}, r"pipeline\.slam_table\.repeats.*0"),
        ({}, {"duration_s": 0.5}, r"pipeline\.slam_table\.duration_s.*0\.5"),
        ({}, {"backends": ["KISS"]}, r"pipeline\.slam_table\.backends.*'KISS'"),
        ({}, {"preset": "nowhere.yaml"}, r"pipeline\.slam_table\.preset: file .*nowhere\.yaml"),
    ],
)
def test_bad_table_keys_name_the_field_and_value(
    tmp_path: Path, repo_root: Path, group: dict[str, Any], pipeline: dict[str, Any], message: str
) -> None:
    step = {"preset": str(repo_root / "config/slam_grade_table.yaml"), **pipeline}
    path = write_table_sweep(
        tmp_path,
        repo_root,
        pipeline={"export": None, "slam_table": step},
        groups=[{"name": "g", "world": "rooms", "kind": "static_H", "seeds": [1], **group}],
    )
    with pytest.raises(BatchConfigError, match=message):
        load_sweep(path)


@pytest.mark.parametrize(
    ("pipeline", "message"),
    [
        ({}, r"pipeline\.export: not allowed with pipeline\.slam_table .*set it to null"),
        ({"export": None, "replays": [{"name": "dim"}]}, r"pipeline\.replays: not allowed"),
        ({"export": None, "noise": {"params": "n.yaml"}}, r"pipeline\.noise: not allowed"),
    ],
)
def test_a_table_sweep_has_no_run_steps(
    tmp_path: Path, repo_root: Path, pipeline: dict[str, Any], message: str
) -> None:
    step = {"preset": str(repo_root / "config/slam_grade_table.yaml")}
    path = write_table_sweep(tmp_path, repo_root, pipeline={**pipeline, "slam_table": step})
    with pytest.raises(BatchConfigError, match=message):
        load_sweep(path)


@pytest.mark.parametrize(
    ("group", "message"),
    [
        ({"world": "rooms"}, r"groups\.g\.world: only with pipeline\.slam_table"),
        ({"scenario": ""}, r"groups\.g\.scenario: required"),
    ],
)
def test_a_scenario_group_names_no_table_sequence(
    tmp_path: Path, repo_root: Path, group: dict[str, Any], message: str
) -> None:
    scenario = str(repo_root / "config/indoor_uav.yaml")
    path = tmp_path / "sweep.yaml"
    path.write_text(
        yaml.safe_dump(
            {"name": "s", "groups": [{"name": "g", "scenario": scenario, "seeds": [1], **group}]}
        )
    )
    with pytest.raises(BatchConfigError, match=message):
        load_sweep(path)
