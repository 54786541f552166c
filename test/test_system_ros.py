"""The system-ROS path of docs/install.md: grade built with colcon (a plain install, no
--symlink-install) against a sourced ROS 2 environment, then its installed executables
(install/grade/lib/grade/sim_node, recorder, ...) run through `grade launch` on
indoor_uav.launch.yaml.

The sourced ROS 2 here is the wheels' environment exported the way a ROS 2 setup.bash exports an
apt install (ROS_DISTRO, ROS_VERSION, AMENT_PREFIX_PATH, ...), with this checkout's own grade
(the set-up's symlink install and src/) taken off every path, so that only the new install can
be found. apt ROS 2 itself and `ros2 launch` cannot run on this machine (docs/install.md).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from grade_common import ros_distro
from process_support import colcon_build_grade

pytestmark = [pytest.mark.ros, pytest.mark.slow]

PATH_VARS = ("AMENT_PREFIX_PATH", "CMAKE_PREFIX_PATH", "PYTHONPATH", "PATH", "LD_LIBRARY_PATH")


def _without_this_grade(environ: dict[str, str], repo_root: Path) -> dict[str, str]:
    """`environ` with the checkout's grade (its colcon install of grade, src/) off every path:
    a ROS 2 environment that has the dependencies but not grade, as after `rosdep install`."""
    own = ("/install/grade", str(repo_root / "src"))
    env = dict(environ)
    for var in PATH_VARS:
        kept = [p for p in env.get(var, "").split(os.pathsep) if p and not p.endswith(own)]
        kept = [p for p in kept if "/install/grade/" not in p + "/"]
        env[var] = os.pathsep.join(kept)
    env.pop("COLCON_PREFIX_PATH", None)
    return env


def test_colcon_install_runs_the_indoor_uav_launch_file(repo_root: Path, tmp_path: Path) -> None:
    if shutil.which("colcon") is None:
        pytest.skip("colcon is not installed")
    distro = ros_distro.current_distro().value
    # What /opt/ros/<distro>/setup.bash exports besides the paths (which the wheels' venv and
    # the set-up's tf2_msgs prefix provide).
    system = {
        **_without_this_grade(dict(os.environ), repo_root),
        "ROS_DISTRO": distro,
        "ROS_VERSION": "2",
        "ROS_PYTHON_VERSION": "3",
    }
    ws = tmp_path / "ws"
    build = colcon_build_grade(repo_root, ws, system)
    assert build.returncode == 0, build.stdout + build.stderr
    prefix = ws / "install" / "grade"
    for name in ("sim_node", "recorder", "waypoint_mission", "noise_node", "grade"):
        assert os.access(prefix / "lib" / "grade" / name, os.X_OK), name

    run = tmp_path / "run"
    # As a lab would: source the workspace, then launch the installed launch file. First, where
    # this shell finds grade's modules, its command and its package (launch_ros's libexec
    # folder, from which `grade launch` starts sim_node and the others).
    where = (
        "import grade_sim, shutil; from grade_launch.substitution import find_package_prefix; "
        "print(grade_sim.__file__); print(shutil.which('grade')); "
        "print(find_package_prefix('grade'))"
    )
    script = (
        f'source {ws / "install" / "setup.bash"} && python -c "{where}" && '
        f"grade launch {prefix / 'share/grade/launch/indoor_uav.launch.yaml'} "
        f"output_dir:={run} duration_s:=2.0"
    )
    proc = subprocess.run(
        ["bash", "-c", script],
        env={**system, "ROS_LOG_DIR": str(tmp_path / "ros_log")},
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=400,
        check=False,
    )
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    module, grade_exe, package_prefix = proc.stdout.splitlines()[:3]
    # The installed copy ran, not this checkout's sources or its set-up's symlink install.
    assert module.startswith(str(prefix)), out
    assert grade_exe.startswith(str(prefix)), out
    assert package_prefix == str(prefix), out

    meta = yaml.safe_load((run / "run.yaml").read_text())
    assert meta["status"] == "complete"
    assert meta["ros"]["distro"] == distro
    for part in ("summary.json", "record.npz", "bag/metadata.yaml", "gt/instances.yaml"):
        assert (run / part).is_file(), part
    bag = yaml.safe_load((run / "bag" / "metadata.yaml").read_text())
    info = bag["rosbag2_bagfile_information"]
    assert info["ros_distro"] == distro
    assert info["message_count"] > 0
