"""One owner of the local-transport variables: grade_common.transport decides them, and
`source scripts/env.sh` exports exactly what it decides."""

from __future__ import annotations

import os
import shlex
import subprocess
from pathlib import Path

import pytest
import yaml

from grade_common.ros_distro import fastdds_profile_env
from grade_common.transport import (
    DISCOVERY_RANGE_ENV,
    DISCOVERY_RANGE_WITH_PROFILE,
    FASTDDS2_PROFILE_ENV,
    PROFILE_ENV,
    PROFILE_RELPATH,
    RMW_ENV,
    main,
    transport_environment,
)


@pytest.mark.parametrize("rmw", [None, "rmw_fastrtps_cpp", "rmw_fastrtps_dynamic_cpp"])
def test_fast_dds_gets_the_shipped_profile_and_system_default(rmw: str | None) -> None:
    env = transport_environment({} if rmw is None else {RMW_ENV: rmw})
    assert env[DISCOVERY_RANGE_ENV] == "SYSTEM_DEFAULT"
    assert Path(env[fastdds_profile_env()]).is_file()
    assert (
        Path(env[fastdds_profile_env()]).read_bytes()
        == (Path(__file__).resolve().parents[2] / PROFILE_RELPATH).read_bytes()
    )


def test_another_rmw_keeps_discovery_on_localhost() -> None:
    assert transport_environment({RMW_ENV: "rmw_cyclonedds_cpp"}) == {
        DISCOVERY_RANGE_ENV: "LOCALHOST"
    }


def test_main_prints_the_variables_as_exports(capsys: pytest.CaptureFixture[str]) -> None:
    assert main() == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines == [f"export {k}={shlex.quote(v)}" for k, v in transport_environment().items()]


@pytest.mark.parametrize("rmw", ["rmw_fastrtps_cpp", "rmw_cyclonedds_cpp"])
def test_env_sh_exports_what_the_module_decides(repo_root: Path, rmw: str) -> None:
    """A shell that had set the variables by hand gets the module's values from env.sh."""
    env = {**os.environ, RMW_ENV: rmw, DISCOVERY_RANGE_ENV: "SUBNET", PROFILE_ENV: "/nope.xml"}
    expected = transport_environment({RMW_ENV: rmw})
    script = f"source {repo_root}/scripts/env.sh && " + " && ".join(
        f'echo "{name}=${{{name}}}"' for name in expected
    )
    out = subprocess.run(
        ["bash", "-c", script], capture_output=True, text=True, check=True, env=env
    ).stdout
    assert dict(line.split("=", 1) for line in out.splitlines()) == expected


LAUNCH_FILES = sorted((Path(__file__).resolve().parents[2] / "launch").glob("*.launch.yaml"))


@pytest.mark.parametrize("path", LAUNCH_FILES, ids=lambda p: p.name)
def test_every_launch_file_sets_the_fast_dds_transport_first(path: Path) -> None:
    """`ros2 launch` does not source env.sh: each launch file sets the module's Fast DDS values
    itself, before the first process or include (the profile from the installed share folder)."""
    actions = yaml.safe_load(path.read_text())["launch"]
    first = next(i for i, a in enumerate(actions) if not {"arg", "set_env"} & set(a))
    set_env = {
        a["set_env"]["name"]: a["set_env"]["value"] for a in actions[:first] if "set_env" in a
    }
    assert set_env == {
        PROFILE_ENV: f"$(find-pkg-share grade)/{PROFILE_RELPATH.as_posix()}",
        FASTDDS2_PROFILE_ENV: f"$(find-pkg-share grade)/{PROFILE_RELPATH.as_posix()}",
        DISCOVERY_RANGE_ENV: DISCOVERY_RANGE_WITH_PROFILE,
    }
