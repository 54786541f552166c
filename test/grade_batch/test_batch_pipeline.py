"""A job's step processes get the project's local transport (grade_common.transport), not
variables set by hand: with Fast DDS, LOCALHOST would bind every interface."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from grade_batch.jobs import expand
from grade_batch.pipeline import JobPlan, job_environment
from grade_batch.spec import load_sweep
from grade_common.ros_distro import fastdds_profile_env
from grade_common.transport import DISCOVERY_RANGE_ENV, RMW_ENV, transport_environment


def _plan(tmp_path: Path, repo_root: Path) -> JobPlan:
    sweep = tmp_path / "sweep.yaml"
    group = {"name": "g", "scenario": str(repo_root / "config/indoor_uav.yaml"), "seeds": [3]}
    sweep.write_text(
        yaml.safe_dump({"name": "env", "groups": [group], "pipeline": {}, "domain_ids": [40, 49]})
    )
    spec = load_sweep(sweep)
    (job,) = expand(spec)
    return JobPlan(job, spec.sweep.pipeline, None, str(tmp_path / "b"), "grade", 2.0)


@pytest.mark.parametrize("rmw", [None, "rmw_cyclonedds_cpp"])
def test_the_job_environment_is_the_transport_modules(
    tmp_path: Path, repo_root: Path, monkeypatch: pytest.MonkeyPatch, rmw: str | None
) -> None:
    # The shell the batch was started from set the variables by hand, the wrong way.
    monkeypatch.setenv(DISCOVERY_RANGE_ENV, "LOCALHOST")
    if rmw is None:
        monkeypatch.delenv(RMW_ENV, raising=False)
    else:
        monkeypatch.setenv(RMW_ENV, rmw)
    env = job_environment(_plan(tmp_path, repo_root))
    expected = transport_environment()
    assert {k: env[k] for k in expected} == expected
    if rmw is None:
        assert env[DISCOVERY_RANGE_ENV] == "SYSTEM_DEFAULT"
        assert Path(env[fastdds_profile_env()]).is_file()
    assert env["ROS_DOMAIN_ID"] == "40"
    assert env["OMP_NUM_THREADS"] == "2"
