"""ControllerConfig: defaults, parameter round trip, and errors naming the parameter."""

from __future__ import annotations

import math

import pytest

from grade_common.errors import ConfigError, GradeError
from grade_control.config import AxisConfig, ControllerConfig, StateSource
from grade_control.errors import ControlConfigError
from grade_sim.config.scenario import RobotConfig, RobotKind
from grade_sim.robots.model import robot_model


def test_uav_defaults_are_grades() -> None:
    config = ControllerConfig.uav()
    assert config.joint_names == ("x", "y", "z", "roll", "pitch", "yaw")
    assert config.rate_hz == 50.0
    by_name = {a.name: a for a in config.axes}
    assert all((a.kp, a.ki, a.kd, a.integral_limit) == (1.2, 4.0, 0.001, 1.0) for a in config.axes)
    assert [by_name[n].velocity_limit for n in config.joint_names] == [0.5, 0.5, 0.5, 0.7, 0.7, 0.5]
    assert (by_name["roll"].position_min, by_name["roll"].position_max) == (-0.35, 0.35)
    assert by_name["z"].position_min == 0.3
    assert by_name["yaw"].angular
    assert not by_name["x"].angular
    assert all(a.dead_band == 0.05 for a in config.axes)


def test_omni_defaults() -> None:
    config = ControllerConfig.omni()
    assert config.joint_names == ("x", "y", "yaw", "camera_yaw")
    assert config.state_source is StateSource.JOINT_STATES
    gains = {a.name: (a.kp, a.ki) for a in config.axes}
    assert gains == {
        "x": (0.6, 0.004),
        "y": (0.6, 0.004),
        "yaw": (0.4, 4.0),
        "camera_yaw": (0.4, 4.0),
    }


@pytest.mark.parametrize("config", [ControllerConfig.uav(), ControllerConfig.omni()])
def test_parameters_round_trip(config: ControllerConfig) -> None:
    assert ControllerConfig.from_parameters(config.to_parameters()) == config


@pytest.mark.parametrize(
    ("params", "match"),
    [
        ({"axes.z.kp": -1.0}, r"axes\.z\.kp = -1\.0 is invalid: must be >= 0"),
        ({"axes.yaw.ki": math.nan}, r"axes\.yaw\.ki = nan is invalid"),
        ({"axes.x.kd": "fast"}, r"axes\.x\.kd = 'fast' is invalid: must be a number"),
        ({"axes.x.velocity_limit": 0.0}, r"axes\.x\.velocity_limit = 0\.0 is invalid: must be > 0"),
        ({"axes.roll.position_min": 0.5}, r"axes\.roll\.position_min = 0\.5 is invalid: must be <"),
        ({"axes.x.angular": "yes"}, r"axes\.x\.angular = 'yes' is invalid"),
        ({"axes.w.kp": 1.0}, r"parameter axes\.w\.kp names joint 'w'"),
        ({"axes.x.gain": 1.0}, r"parameter axes\.x\.gain is unknown"),
        ({"rate_hz": 0.0}, r"rate_hz = 0\.0 is invalid: must be > 0"),
        ({"rate_hz": 5000.0}, r"rate_hz = 5000\.0 is invalid: must be <= 1000"),
        ({"state_source": "gps"}, r"state_source = 'gps' is invalid: allowed values"),
        ({"velocity_frame": "map"}, r"velocity_frame = 'map' is invalid"),
        ({"setpoint_timeout_s": -1.0}, r"setpoint_timeout_s = -1\.0 is invalid"),
        ({"dead_band_settle_ratio": 2.0}, r"dead_band_settle_ratio = 2\.0 is invalid"),
        ({"anti_windup": 1}, r"anti_windup = 1 is invalid"),
        ({"robot": "my robot"}, r"robot = 'my robot' is invalid"),
        ({"joints": ["x", "x"]}, r"joints = \['x', 'x'\] is invalid: names must be unique"),
        ({"joints": []}, r"joints = \[\] is invalid"),
        (
            {"joints": ["x", "camera_yaw"], "state_source": "odometry"},
            r"state_source = 'odometry' is invalid for joints \['camera_yaw'\]",
        ),
    ],
)
def test_bad_parameter_is_named(params: dict[str, object], match: str) -> None:
    with pytest.raises(ControlConfigError, match=match):
        ControllerConfig.from_parameters(params)


def test_errors_derive_from_project_base() -> None:
    with pytest.raises(ConfigError):
        AxisConfig("x", kp=-1.0)
    assert issubclass(ControlConfigError, GradeError)


def test_unknown_joint_gets_linear_defaults_and_camera_yaw_angular() -> None:
    config = ControllerConfig.from_parameters(
        {"joints": ["x", "camera_yaw", "arm"], "state_source": "joint_states"}
    )
    axes = {a.name: a for a in config.axes}
    assert axes["camera_yaw"].angular
    assert not axes["arm"].angular


@pytest.mark.parametrize(
    ("config", "kind"),
    [(ControllerConfig.uav(), RobotKind.UAV), (ControllerConfig.omni(), RobotKind.OMNI)],
)
def test_default_joints_are_the_simulators(config: ControllerConfig, kind: RobotKind) -> None:
    # Commands and joint states carry names, so only the set of names has to agree; the
    # simulator's chain order (x, y, z, yaw, pitch, roll) is its own.
    model = robot_model(RobotConfig(name=config.robot, type=kind))
    assert set(config.joint_names) == set(model.joint_names)
