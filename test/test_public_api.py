"""Each package re-exports what a library user needs, lazily: `import grade_sim` (or any light
module) pulls in no engine, no ROS and no ray caster, and every exported name resolves."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

PACKAGES = [
    "grade_common",
    "grade_people",
    "grade_sim",
    "grade_replay",
    "grade_eval",
    "grade_noise",
    "grade_control",
    "grade_launch",
    "grade_render",
    "grade_scenes",
    "grade_slam",
    "grade_batch",
]
HEAVY = ("mujoco", "rclpy", "embreex", "bpy", "open3d")


def test_importing_every_package_stays_light() -> None:
    code = (
        "import sys\n"
        f"for name in {PACKAGES!r}:\n"
        "    __import__(name)\n"
        f"loaded = sorted(m for m in {HEAVY!r} if m in sys.modules)\n"
        "assert not loaded, loaded\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert result.returncode == 0, result.stderr[-2000:]


@pytest.mark.parametrize("package", PACKAGES)
def test_every_exported_name_resolves(package: str) -> None:
    module = importlib.import_module(package)
    assert module.__all__, f"{package} exports nothing"
    assert sorted(dir(module)) == sorted(module.__all__)
    for name in module.__all__:
        value = getattr(module, name)
        assert getattr(value, "__name__", name) == name, (package, name)


def test_an_unknown_name_is_an_attribute_error() -> None:
    import grade_sim

    with pytest.raises(AttributeError, match="module 'grade_sim' has no attribute 'Nope'"):
        _ = grade_sim.Nope
