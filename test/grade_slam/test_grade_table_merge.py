"""`grade bench slam --grade-table OUT --merge FOLDER...`: the folders' sequences are checked
against the preset, and a `grade batch` of the table, killed and resumed, gives the rows of one
--grade-table run."""

from __future__ import annotations

import csv
import os
import signal
import subprocess
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import yaml
from test_grade_table import BASE, PRESET, SMALL_CAMERA, _preset_file

from grade_common.output_guard import write_marker
from grade_slam.errors import SlamError
from grade_slam.grade_sequences import GradePreset, load_preset, sequence_scenario
from grade_slam.grade_table_files import scenario_text
from grade_slam.grade_table_merge import merge_folders as merge


def _preset(folder: Path, **changes: Any) -> Path:
    """test_grade_table's tiny preset with a small camera: the LiDAR backend needs no more."""
    return _preset_file(folder, **{**SMALL_CAMERA, **changes})


def _job_folder(folder: Path, preset: GradePreset, kind: str, results: bool = True) -> Path:
    """A --grade-table folder holding one sequence of `preset`, as a finished job leaves it."""
    name = f"small_{kind}_s3"
    (folder / "sequences").mkdir(parents=True)
    write_marker(folder)
    scenario = sequence_scenario(preset, BASE, "small", kind, 3)
    (folder / "sequences" / f"{name}.scenario.yaml").write_text(scenario_text(scenario))
    (folder / "sequences" / f"{name}.json").write_text("{}\n")
    if results:
        (folder / "results").mkdir()
        for suffix in (".json", ".txt"):
            (folder / "results" / f"{name}__kiss_icp__r0{suffix}").write_text(f"{kind}\n")
    return folder


def merge_folders(preset: GradePreset, out: Path, folders: list[Path]) -> GradePreset:
    """Merge with the backends and repeats the job folders hold."""
    out.mkdir(exist_ok=True)
    return merge(preset, out, ("kiss_icp",), 1, folders)


def test_a_whole_table_is_copied_into_out(tmp_path: Path) -> None:
    preset = load_preset(_preset(tmp_path / "p"))
    jobs = [_job_folder(tmp_path / k, preset, k) for k in ("people_N_H", "static_H")]
    table = merge_folders(preset, tmp_path / "out", jobs)
    assert (table.kinds, table.seeds, table.world_names) == (
        ("static_H", "people_N_H"),
        (3,),
        ["small"],
    )
    copied = tmp_path / "out" / "results" / "small_static_H_s3__kiss_icp__r0.txt"
    assert copied.read_text() == "static_H\n"
    # merging again finds the same bytes: accepted
    merge_folders(preset, tmp_path / "out", jobs)


def test_folders_of_another_preset_are_refused(tmp_path: Path) -> None:
    preset = load_preset(_preset(tmp_path / "p"))
    longer = replace(preset, duration_s=2.0)  # as `--duration-s 2` would make it
    jobs = [
        _job_folder(tmp_path / "a", preset, "static_H"),
        _job_folder(tmp_path / "b", longer, "people_N_H"),
    ]
    with pytest.raises(
        SlamError, match=r"small_people_N_H_s3 was made from another scenario than the preset"
    ):
        merge_folders(preset, tmp_path / "out", jobs)


@pytest.mark.parametrize(
    ("kinds", "results", "message"),
    [
        (["static_H"], False, r"small_static_H_s3__kiss_icp__r0.json: missing; was .* --repeats 1"),
        (["static_H", "static_H"], True, r"small_static_H_s3: in both"),
        (["static"], True, r"small_static_s3 is not a sequence of the preset"),
    ],
)
def test_incomplete_or_foreign_sequences_are_refused(
    tmp_path: Path, kinds: list[str], results: bool, message: str
) -> None:
    preset = load_preset(_preset(tmp_path / "p"))
    other = replace(preset, kinds=("static",))
    jobs = [
        _job_folder(tmp_path / f"j{i}", other if k == "static" else preset, k, results)
        for i, k in enumerate(kinds)
    ]
    with pytest.raises(SlamError, match=message):
        merge_folders(preset, tmp_path / "out", jobs)


def test_a_partial_table_is_refused(tmp_path: Path) -> None:
    preset = load_preset(_preset(tmp_path / "p", seeds=[3, 4]))
    jobs = [
        _job_folder(tmp_path / "a", preset, "static_H"),
        _job_folder(tmp_path / "b", preset, "people_N_H"),
    ]
    # small_*_s3 exist; add people_N_H with seed 4 by hand: static_H s4 is then missing
    extra = tmp_path / "c" / "sequences"
    extra.mkdir(parents=True)
    write_marker(tmp_path / "c")
    scenario = sequence_scenario(preset, BASE, "small", "people_N_H", 4)
    (extra / "small_people_N_H_s4.scenario.yaml").write_text(scenario_text(scenario))
    with pytest.raises(SlamError, match=r"not a whole table .*missing \['small_static_H_s4'\]"):
        merge_folders(preset, tmp_path / "out", [*jobs, tmp_path / "c"])


def test_out_holding_another_result_is_kept(tmp_path: Path) -> None:
    preset = load_preset(_preset(tmp_path / "p"))
    jobs = [_job_folder(tmp_path / k, preset, k) for k in ("static_H", "people_N_H")]
    out = tmp_path / "out"
    (out / "results").mkdir(parents=True)
    theirs = out / "results" / "small_static_H_s3__kiss_icp__r0.json"
    theirs.write_text("another run\n")
    with pytest.raises(SlamError, match=r"holds another result than"):
        merge_folders(preset, out, jobs)
    assert theirs.read_text() == "another run\n"


def test_a_folder_grade_did_not_write_is_refused(tmp_path: Path) -> None:
    preset = load_preset(_preset(tmp_path / "p"))
    (tmp_path / "mine").mkdir()
    with pytest.raises(SlamError, match=r"mine: not the OUT of a --grade-table run"):
        merge_folders(preset, tmp_path / "out", [tmp_path / "mine"])


def _rows(table: Path) -> list[dict[str, str]]:
    """table.csv without its wall-clock column."""
    with table.open() as f:
        return [
            {k: v for k, v in row.items() if k != "wall_ms_per_frame"} for row in csv.DictReader(f)
        ]


@pytest.mark.slow
def test_a_killed_batch_of_the_table_resumes_and_gives_the_rows_of_one_run(tmp_path: Path) -> None:
    preset = _preset(tmp_path / "p")
    single = tmp_path / "single"
    backends = ("--backends", "kiss_icp", "kiss_icp_masked")
    one = subprocess.run(
        [
            "grade",
            "bench",
            "slam",
            "--grade-table",
            str(single),
            "--preset",
            str(preset),
            *backends,
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert one.returncode == 0, one.stdout + one.stderr
    sweep = tmp_path / "sweep.yaml"
    sweep.write_text(
        yaml.safe_dump(
            {
                "name": "tiny_table",
                "pipeline": {
                    "export": None,
                    "slam_table": {"preset": str(preset), "backends": list(backends[1:])},
                },
                "groups": [
                    {"name": f"small_{kind}", "world": "small", "kind": kind, "seeds": [3]}
                    for kind in PRESET["kinds"]
                ],
                "domain_ids": [70, 79],
            }
        )
    )
    batch_dir = tmp_path / "batch"
    command = ["grade", "batch", str(sweep), "--out", str(batch_dir), "--workers", "1", "--quiet"]
    # killed once its first job is complete: the rerun runs only the second
    proc = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True
    )
    try:
        while not (batch_dir / "jobs" / "small_static_H_s3").is_dir() and proc.poll() is None:
            time.sleep(0.05)
        assert proc.poll() is None, proc.communicate()[0]
        os.killpg(proc.pid, signal.SIGKILL)  # the batch, its worker and the job's processes
    finally:
        proc.wait()
    batch = subprocess.run(command, capture_output=True, text=True, check=False)
    assert batch.returncode == 0, batch.stdout + batch.stderr
    assert "ran 1, skipped 1 complete" in batch.stdout
    merged = _rows(batch_dir / "table" / "table.csv")
    assert len(merged) == 2 * 2  # 2 sequences x 2 backends
    assert all(float(r["frames"]) > 0 and float(r["ate_rmse_m"]) >= 0.0 for r in merged)  # no NaN
    assert merged == _rows(single / "table.csv")
    assert (batch_dir / "table" / "summary.md").read_text() == (single / "summary.md").read_text()
    assert (batch_dir / "table" / "plots" / "trajectories_small_people_N_H_s3.png").is_file()
