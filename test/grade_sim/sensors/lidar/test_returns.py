"""Intensity against incidence, range noise, the physics ray-drop model, and the same seed."""

from __future__ import annotations

import numpy as np
import pytest

from grade_sim.config.lidar import LidarConfig, LidarKind, RayDropKind
from grade_sim.engine import tessellate
from grade_sim.engine.raycast import InstanceMesh
from grade_sim.sensors.lidar.cloud import POINT_DTYPE
from grade_sim.sensors.lidar.returns import PhysicsRayDrop
from grade_sim.sensors.lidar.sensor import LidarSensor

pytest.importorskip("embreex")

REFLECTIVITY = 0.6


def plane_sensor(incidence_deg: float, **cfg: object) -> LidarSensor:
    a = np.deg2rad(incidence_deg)
    rot = np.array([[0, -np.sin(a), np.cos(a)], [0, np.cos(a), np.sin(a)], [-1.0, 0, 0]])
    plane = tessellate.transform(tessellate.plane(50.0, 50.0), rot, np.array([4.0, 0, 0]))
    config = LidarConfig(
        preset="custom",
        kind=LidarKind.LASER_2D,
        elevations_deg=(0.0,),
        columns=8,
        fov_deg=2.0,
        rate_hz=10.0,
        range_min_m=0.1,
        range_max_m=100.0,
        **cfg,  # type: ignore[arg-type]
    )
    mesh = InstanceMesh(5, plane, np.full(len(plane), REFLECTIVITY))
    return LidarSensor(config, [mesh], [], np.arange(2**16, dtype=np.uint16) % 7, seed=3)


def still(times_ns: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return np.zeros((len(times_ns), 3)), np.tile(np.eye(3), (len(times_ns), 1, 1))


def no_parts(t_ns: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return np.zeros((len(t_ns), 0, 3)), np.zeros((len(t_ns), 0, 3, 3))


@pytest.mark.parametrize("incidence_deg", [0.0, 45.0, 70.0])
def test_intensity_is_reflectivity_times_cos_incidence(incidence_deg: float) -> None:
    sensor = plane_sensor(incidence_deg, range_noise_m=0.0, ray_drop=RayDropKind.NONE)
    scan = sensor.scan(0, still, no_parts).scan  # type: ignore[arg-type]
    p = scan.points
    assert len(p) == 8
    # Rays 1 deg either side of the x axis meet the tilted plane at incidence +-1 deg.
    az = np.arctan2(p["y"], p["x"])
    expected = REFLECTIVITY * np.abs(np.cos(np.deg2rad(incidence_deg) - az))
    np.testing.assert_allclose(p["intensity"], expected, atol=1e-4)
    assert np.all(p["instance_id"] == 5)
    assert np.all(p["class_id"] == 5)


def test_intensity_falls_as_incidence_grows() -> None:
    means = []
    for deg in (0.0, 30.0, 60.0, 80.0):
        sensor = plane_sensor(deg, range_noise_m=0.0, ray_drop=RayDropKind.NONE)
        means.append(float(sensor.scan(0, still, no_parts).scan.points["intensity"].mean()))  # type: ignore[arg-type]
    assert means == sorted(means, reverse=True)


def returns_of(
    range_m: np.ndarray,
    noise: np.ndarray,
    sigma_m: float,
    cos_incidence: float = 1.0,
    drop_draw: np.ndarray | None = None,
    drop_probability: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """The compiled returns pass on rays straight along x: points and the returned mask."""
    from grade_sim.sensors.lidar import scan_kernel

    n = len(range_m)
    points = np.empty(n, dtype=POINT_DTYPE)
    returned = np.empty(n, dtype=np.bool_)
    count = scan_kernel.returns(
        range_m,
        np.full(n, 5, np.uint16),
        np.full(n, cos_incidence),
        np.full(n, 0.5),
        noise.astype(np.float32),
        sigma_m,
        np.ones(n, np.float32) if drop_draw is None else drop_draw.astype(np.float32),
        np.zeros(n) if drop_probability is None else drop_probability,
        np.tile(np.array([1.0, 0.0, 0.0], np.float32), (n, 1)),
        np.arange(n, dtype=np.int64),
        np.zeros(n, np.uint16),
        np.arange(16, dtype=np.uint16),
        points,
        returned,
    )
    return points[:count], returned


def test_intensity_is_zero_at_grazing_incidence() -> None:
    p, _ = returns_of(np.array([3.0]), np.zeros(0), 0.0, cos_incidence=0.0)
    assert p["intensity"][0] == 0.0
    p, _ = returns_of(np.array([3.0]), np.zeros(0), 0.0, cos_incidence=1.0)
    assert p["intensity"][0] == pytest.approx(0.5)


def test_range_noise_has_the_configured_sigma() -> None:
    noise = np.random.default_rng(0).standard_normal(200_000)
    p, _ = returns_of(np.full(200_000, 10.0), noise, 0.02)
    assert abs(p["x"].std() - 0.02) < 5e-4
    assert abs(p["x"].mean() - 10.0) < 5e-4
    p, _ = returns_of(np.ones(3), np.zeros(0), 0.0)
    assert np.array_equal(p["x"], np.ones(3, np.float32))
    # Noise never makes a range negative.
    p, _ = returns_of(np.full(3, 0.01), np.full(3, -5.0), 1.0)
    assert np.array_equal(p["x"], np.zeros(3, np.float32))


def test_misses_and_drawn_drops_return_nothing_and_keep_firing_order() -> None:
    range_m = np.array([1.0, np.inf, 2.0, 3.0, 4.0])
    p, returned = returns_of(
        range_m,
        np.zeros(0),
        0.0,
        drop_draw=np.array([0.5, 0.0, 0.1, 0.9, 0.3]),
        drop_probability=np.array([0.4, 1.0, 0.2, 0.2, 0.2]),
    )
    assert returned.tolist() == [True, False, False, True, True]
    assert p["x"].tolist() == [1.0, 3.0, 4.0]
    assert p["t"].tolist() == [0, 3, 4]


def test_physics_drop_follows_range_incidence_reflectivity_and_baseline() -> None:
    model = PhysicsRayDrop(range_max_m=100.0, baseline=0.1)
    near = model.drop_probability(np.array([5.0]), np.array([1.0]), np.array([0.5]))
    assert near[0] == pytest.approx(0.1, abs=1e-6)  # strong return: only the baseline
    far = model.drop_probability(
        np.array([5.0, 60.0, 95.0]), np.array([1.0] * 3), np.array([0.2] * 3)
    )
    assert np.all(np.diff(far) > 0)
    grazing = model.drop_probability(
        np.array([40.0] * 3), np.array([1.0, 0.3, 0.05]), np.array([0.5] * 3)
    )
    assert np.all(np.diff(grazing) > 0)
    assert grazing[-1] > 0.9
    dark = model.drop_probability(np.array([60.0] * 2), np.array([1.0] * 2), np.array([0.9, 0.1]))
    assert dark[1] > dark[0]


def test_the_same_seed_gives_byte_identical_scans() -> None:
    def points(seed_sensor: LidarSensor) -> bytes:
        return seed_sensor.scan(123, still, no_parts).scan.points.tobytes()  # type: ignore[arg-type]

    a = plane_sensor(30.0, range_noise_m=0.05, ray_drop=RayDropKind.PHYSICS, drop_baseline=0.3)
    b = plane_sensor(30.0, range_noise_m=0.05, ray_drop=RayDropKind.PHYSICS, drop_baseline=0.3)
    assert points(a) == points(b)
    b.seed = 4
    assert points(a) != points(b)
