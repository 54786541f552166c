"""`grade doctor` as a user runs it (a real `grade` process): an optional part that is not
installed names its make target; a required part that is broken gives exit code 1."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from grade_common.doctor import Finding, Need, State, exit_code, report_lines, summary_line

pytestmark = [pytest.mark.slow, pytest.mark.distro]


def _doctor(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "grade_cli.main", "doctor", *args],
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_a_missing_optional_part_names_its_install_command(tmp_path: Path) -> None:
    # Where bpy's environment would be, but is not: as on a machine without `make setup-render`.
    absent = tmp_path / ".venv-render" / "bin" / "python"
    proc = _doctor(env={"GRADE_BLENDER_PYTHON": str(absent)})
    lines = proc.stdout.splitlines()
    [row] = [i for i, line in enumerate(lines[:-1]) if "bpy (Cycles)" in line]
    assert lines[row].startswith("missing"), proc.stdout
    assert str(absent) in lines[row]
    assert lines[row + 1].strip() == "-> make setup-render"
    # Required parts work on this machine, so an optional part alone never fails the doctor.
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "optional, not working: " in lines[-1]
    assert "bpy (Cycles)" in lines[-1]


def test_a_broken_required_part_exits_non_zero(tmp_path: Path) -> None:
    absent = tmp_path / ".venv-jazzy" / "bin" / "python"
    proc = _doctor("--python", str(absent), "--summary")
    assert proc.returncode == 1
    # --summary still prints the report when something required is broken.
    assert f"broken  Python environment  {absent} does not exist" in proc.stdout
    assert "-> make setup" in proc.stdout
    assert "REQUIRED, broken: Python environment" in proc.stdout.splitlines()[-1]


def test_this_environment_passes_and_names_its_distro() -> None:
    from grade_common.ros_distro import current_distro

    proc = _doctor()
    assert proc.returncode == 0, proc.stdout + proc.stderr
    [ros] = [line for line in proc.stdout.splitlines() if line.startswith("ok      ROS 2 ")]
    assert current_distro().value in ros
    assert "rmw_fastrtps_cpp" in ros
    [loopback] = [line for line in proc.stdout.splitlines() if "loopback transport" in line]
    assert loopback.startswith("ok"), proc.stdout


def test_report_and_exit_code_follow_the_required_parts() -> None:
    ok = Finding("ROS 2", Need.REQUIRED, State.OK, "jazzy")
    optional = Finding("Ray", Need.OPTIONAL, State.MISSING, "not installed", "make setup")
    broken = Finding("GL renderer", Need.REQUIRED, State.BROKEN, "no EGL", "apt-get install x")
    assert exit_code([ok, optional]) == 0
    assert exit_code([ok, optional, broken]) == 1
    lines = report_lines([ok, optional, broken])
    assert lines[1].startswith("missing Ray")
    assert lines[1].endswith("(optional)")
    assert lines[2].strip() == "-> make setup"
    assert lines[4].strip() == "-> apt-get install x"
    assert summary_line([ok, optional]) == (
        "grade doctor: 1/2 parts work; optional, not working: Ray"
    )
