"""The sweep file: validation with key paths, expansion into jobs, overrides as --set."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from grade_batch.errors import BatchConfigError
from grade_batch.jobs import expand, top_level_changes
from grade_batch.spec import load_sweep


def write_sweep(tmp_path: Path, repo_root: Path, **extra: Any) -> Path:
    data: dict[str, Any] = {
        "name": "tiny",
        "groups": [
            {
                "name": "indoor",
                "scenario": str(repo_root / "config/indoor_uav.yaml"),
                "seeds": [1, 2],
                "set": {"duration_s": 1.0, "robots.0.cameras.0.width": 160},
                "product": {"people.count": [0, 2]},
            }
        ],
    }
    data.update(extra)
    path = tmp_path / "sweep.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def test_jobs_are_seeds_times_combinations_in_file_order(tmp_path: Path, repo_root: Path) -> None:
    jobs = expand(load_sweep(write_sweep(tmp_path, repo_root)))
    assert [j.job_id for j in jobs] == [
        "indoor_00_s1",
        "indoor_00_s2",
        "indoor_01_s1",
        "indoor_01_s2",
    ]
    assert [dict(j.settings)["people.count"] for j in jobs] == [0, 0, 2, 2]
    assert [j.domain_id for j in jobs] == [1, 2, 3, 4]


def test_overrides_become_whole_top_level_keys(tmp_path: Path, repo_root: Path) -> None:
    job = expand(load_sweep(write_sweep(tmp_path, repo_root)))[2]
    changes = top_level_changes(job)
    assert changes["duration_s"] == 1.0
    assert changes["people"]["count"] == 2
    assert changes["people"]["speed_mps"] == [0.8, 1.4]  # the rest of the section is kept
    camera = changes["robots"][0]["cameras"][0]
    assert (camera["width"], camera["height"]) == (160, 480)
    args = job.run_overrides()
    assert args[0] == "seed=1"
    assert f"duration_s={json.dumps(1.0)}" in args


def test_zip_walks_axes_together(tmp_path: Path, repo_root: Path) -> None:
    path = write_sweep(tmp_path, repo_root)
    data = yaml.safe_load(path.read_text())
    data["groups"][0]["product"] = {}
    data["groups"][0]["zip"] = {
        "people.count": [1, 3],
        "lights.intensity": ["[0.1, 0.2]", "[0.5, 0.6]"],
    }
    path.write_text(yaml.safe_dump(data))
    jobs = expand(load_sweep(path))
    assert [dict(j.settings)["lights.intensity"] for j in jobs[::2]] == [[0.1, 0.2], [0.5, 0.6]]
    assert [dict(j.settings)["people.count"] for j in jobs[::2]] == [1, 3]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"splits": {"train": 0.9, "val": 0.2, "test": 0.0}}, r"train \+ val \+ test = 1\.1"),
        ({"resources": {"num_cpus": 0}}, r"resources\.num_cpus: value 0"),
        ({"pipeline": {"eval": {}}}, r"pipeline\.eval: needs pipeline\.noise"),
        (
            {"pipeline": {"replays": [{"name": "a b"}]}},
            r"pipeline\.replays\.a b\.name: 'a b' is not allowed",
        ),
        ({"bogus": 1}, r"unknown key\(s\) \['bogus'\]"),
        ({"name": "../x"}, r"name: '\.\./x' is not allowed"),
    ],
)
def test_bad_values_name_the_key(
    tmp_path: Path, repo_root: Path, change: dict[str, Any], message: str
) -> None:
    with pytest.raises(BatchConfigError, match=message):
        load_sweep(write_sweep(tmp_path, repo_root, **change))


def test_bad_group_values_name_the_group(tmp_path: Path, repo_root: Path) -> None:
    path = write_sweep(tmp_path, repo_root)
    data = yaml.safe_load(path.read_text())
    data["groups"][0]["seeds"] = [1, 1]
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(BatchConfigError, match=r"groups\.indoor\.seeds: \[1, 1\] has duplicates"):
        load_sweep(path)


def test_an_index_past_the_list_is_reported(tmp_path: Path, repo_root: Path) -> None:
    path = write_sweep(tmp_path, repo_root)
    data = yaml.safe_load(path.read_text())
    data["groups"][0]["set"] = {"robots.3.cameras.0.width": 160}
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(
        BatchConfigError,
        match=r"indoor: set 'robots\.3\.cameras\.0\.width': 'robots\.3' is not an item of "
        r"'robots', a list of 1 item",
    ):
        expand(load_sweep(path))


def test_a_missing_scenario_file_is_reported(tmp_path: Path, repo_root: Path) -> None:
    path = write_sweep(tmp_path, repo_root)
    data = yaml.safe_load(path.read_text())
    data["groups"][0]["scenario"] = "nowhere.yaml"
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(BatchConfigError, match=r"groups\.indoor\.scenario: file .*nowhere\.yaml"):
        load_sweep(path)


def test_the_digest_follows_the_settings(tmp_path: Path, repo_root: Path) -> None:
    a = load_sweep(write_sweep(tmp_path, repo_root)).digest()
    assert a == load_sweep(write_sweep(tmp_path, repo_root)).digest()
    b = load_sweep(write_sweep(tmp_path, repo_root, splits={"seed": 5})).digest()
    assert a != b
