"""Backend registry and settings: unknown names, missing packages and bad values are refused
with the parameter, the allowed values and the install command."""

from __future__ import annotations

import pytest
from slam_support import MISSING_BACKEND

from grade_common.schema import from_mapping
from grade_slam.backends import (
    OPEN3D_INSTALL,
    ORB_SLAM3_INSTALL,
    create_backend,
)
from grade_slam.config import SlamConfig
from grade_slam.errors import SlamConfigError


def test_unknown_backend_names_the_parameter_the_allowed_values_and_how_to_install() -> None:
    with pytest.raises(SlamConfigError) as info:
        create_backend(SlamConfig(backend="kiss_icp"))
    text = str(info.value)
    assert "backend = 'kiss_icp' is invalid" in text
    assert "allowed values ['open3d_rgbd', 'orb_slam3_rgbd', 'orb_slam3_rgbd_inertial']" in text
    assert OPEN3D_INSTALL in text
    assert ORB_SLAM3_INSTALL in text


def test_backend_whose_package_is_missing_says_how_to_install_it() -> None:
    # the real import path of create_backend, with a package that does not exist
    with pytest.raises(SlamConfigError) as info:
        create_backend(SlamConfig(backend="missing"), {"missing": MISSING_BACKEND})
    text = str(info.value)
    assert "backend = 'missing' needs the Python package 'grade_no_such_slam_package'" in text
    assert "install it with: pip install grade-no-such-slam-package==1.0" in text
    assert "allowed values ['missing']" in text


@pytest.mark.parametrize(
    ("key", "value", "match"),
    [
        ("method", "orb", r"method = 'orb' is invalid: allowed values \['hybrid', "),
        ("depth_max_m", 0.0, r"depth_max_m = 0\.0 is invalid"),
        ("min_fitness", 1.5, r"min_fitness = 1\.5 is invalid"),
        ("iterations", [], r"iterations = \[\] is invalid"),
        ("backend", "Open3D!", r"backend = 'Open3D!' is invalid: must match"),
        ("max_lost_frames", 0, r"max_lost_frames = 0 is invalid"),
        ("voxel", 1, r"unknown parameters \['voxel'\]"),
    ],
)
def test_bad_settings_name_the_parameter(key: str, value: object, match: str) -> None:
    with pytest.raises(SlamConfigError, match=match):
        from_mapping(SlamConfig, {key: value})
