"""Session-wide test settings: every ROS 2 process stays on this machine, in this run's domain."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

from grade_common.transport import PROFILE_RELPATH, local_transport_environment

REPO_ROOT = Path(__file__).resolve().parent.parent

# Keep DDS on loopback (grade's Fast DDS profile: shared memory + UDP on 127.0.0.1, see
# grade_common.transport) and give this test run its own domain (101..200; the demo uses 1..100),
# so parallel runs never hear each other. Set at import so every child process inherits.
os.environ.update(local_transport_environment(REPO_ROOT / PROFILE_RELPATH))
os.environ.setdefault("ROS_DOMAIN_ID", str(101 + os.getpid() % 100))
# Under pytest-xdist (`make test` runs two workers) the workers inherit the controller's domain;
# each moves to its own (101..200 still), so two tests running at once never hear each other.
_WORKER = os.environ.get("PYTEST_XDIST_WORKER", "")
if _WORKER.startswith("gw"):
    _base = int(os.environ["ROS_DOMAIN_ID"])
    os.environ["ROS_DOMAIN_ID"] = str(101 + (_base - 101 + 37 * int(_WORKER[2:])) % 100)
os.environ.setdefault("MUJOCO_GL", "egl")
os.environ.setdefault("PYOPENGL_PLATFORM", os.environ["MUJOCO_GL"])


# Property-based and fuzz tests: a fixed, derandomized profile so `make test` (the CI) is
# deterministic and quick; `GRADE_FUZZ_PROFILE=long make test` (or pytest) searches far longer.
# No example database: nothing is written into the checkout.
settings.register_profile(
    "ci",
    max_examples=25,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
settings.register_profile(
    "long",
    max_examples=2000,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
settings.load_profile(os.environ.get("GRADE_FUZZ_PROFILE", "ci"))


@pytest.fixture(scope="session")
def repo_root() -> Path:
    """The repository root (launch/, config/ and src/ live there)."""
    return REPO_ROOT


@pytest.fixture
def observer() -> Iterator[Any]:
    """An rclpy node in the test process, in its own context (a process apart from the nodes
    under test), for checking names, topics and parameters over ROS 2."""
    rclpy = pytest.importorskip("rclpy")
    from rclpy.context import Context

    context = Context()
    rclpy.init(context=context)
    node = rclpy.create_node("test_observer", context=context)
    try:
        yield node
    finally:
        node.destroy_node()
        rclpy.shutdown(context=context)
