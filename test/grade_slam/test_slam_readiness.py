"""`grade slam backends`: every backend the benchmarks use, each ready, built on first use, or
missing with its install command."""

from __future__ import annotations

from pathlib import Path

import pytest
from slam_support import MISSING_BACKEND

from grade_slam.backends import BACKENDS
from grade_slam.lidar_odometry import LIDAR_BACKENDS, LidarBackend, LidarBackendSpec
from grade_slam.readiness import Readiness, backend_readiness
from grade_slam.vocabulary_set import VocabularyRecipe, cached_vocabulary_path


def test_every_benchmark_backend_is_listed_with_its_node() -> None:
    nodes = {b.name: b.node for b in backend_readiness()}
    assert nodes == {
        "open3d_rgbd": "slam_node",
        "orb_slam3_rgbd": "slam_node",
        "orb_slam3_rgbd_inertial": "slam_node",
        "kiss_icp": "lidar_odometry_node",
        "genz_icp": "lidar_odometry_node",
    }


def test_orb_slam3_without_its_vocabulary_builds_on_first_use_and_with_it_is_ready(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("pyorbslam3")
    monkeypatch.setenv("GRADE_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("PYORBSLAM3_VOCAB", raising=False)
    orb = {"orb_slam3_rgbd": BACKENDS["orb_slam3_rgbd"]}
    (state,) = backend_readiness(orb, {})
    assert state.state is Readiness.FIRST_USE
    assert "[builds on first use: the first run builds the ORB vocabulary" in state.line()
    assert "grade slam vocab" in state.line()
    # a cached vocabulary (only its place and first lines matter here)
    path = cached_vocabulary_path(VocabularyRecipe())
    path.parent.mkdir(parents=True)
    path.write_text("10 5 0 0\n" + "0 0 " + "1 " * 32 + "0.0\n")
    (state,) = backend_readiness(orb, {})
    assert state.state is Readiness.READY
    assert state.line().endswith("[ready]")
    # a broken $PYORBSLAM3_VOCAB is not ready, and says what to fix
    monkeypatch.setenv("PYORBSLAM3_VOCAB", str(tmp_path / "none.txt"))
    (state,) = backend_readiness(orb, {})
    assert state.state is Readiness.MISSING
    assert "fix $PYORBSLAM3_VOCAB" in state.line()


def test_a_backend_whose_package_does_not_import_is_missing_with_its_install_command() -> None:
    camera = {"gone": MISSING_BACKEND}
    lidar = {
        LidarBackend.KISS_ICP: LidarBackendSpec(
            "grade_no_such_lidar.config",
            "grade_no_such_lidar.pipeline:Pipeline",
            "pip install grade-no-such-lidar==2.0",
            "test lidar",
        )
    }
    states = backend_readiness(camera, lidar)
    assert [s.line() for s in states] == [
        "gone (slam_node): test [missing: pip install grade-no-such-slam-package==1.0]",
        "kiss_icp (lidar_odometry_node): test lidar "
        "[missing: pip install grade-no-such-lidar==2.0]",
    ]
    assert LIDAR_BACKENDS  # the real registry is untouched
