"""IMU noise: Allan-deviation statistics, RotorS discrete form, state, determinism, bad input."""

from __future__ import annotations

import numpy as np
import pytest

from grade_noise.allan import allan_deviation, fit_white_and_random_walk
from grade_noise.errors import NoiseConfigError, NoiseInputError
from grade_noise.imu import (
    IMU_PRESETS,
    AxisNoiseParams,
    ImuNoiseParams,
    imu_noise,
    imu_preset,
    initial_imu_state,
)

RANDOM_WALK_ONLY = ImuNoiseParams(
    gyro=AxisNoiseParams(1.0e-3, 1.0e-3, 1.0e7, 0.0),
    accel=AxisNoiseParams(4.0e-3, 6.0e-3, 1.0e7, 0.0),
)


@pytest.mark.parametrize(
    ("name", "params"), [("random_walk", RANDOM_WALK_ONLY), ("drone", IMU_PRESETS["drone"])]
)
def test_allan_fit_recovers_density_and_random_walk(name: str, params: ImuNoiseParams) -> None:
    # Two hours stationary at 100 Hz; taus up to T/100 keep the ADEV estimates tight.
    rng = np.random.default_rng(7)
    dt_s, n = 0.01, 720_000
    state = initial_imu_state(params, rng)
    state = type(state)(state.gyro_bias, state.accel_bias, np.zeros(3), np.zeros(3))
    gyro, accel, _ = imu_noise(np.zeros((n, 3)), np.zeros((n, 3)), dt_s, state, rng, params)
    taus = np.logspace(np.log10(0.02), np.log10(n * dt_s / 100), 25)
    for samples, axis_params in ((gyro, params.gyro), (accel, params.accel)):
        for axis in range(3):
            used, adev = allan_deviation(samples[:, axis], dt_s, taus)
            fit = fit_white_and_random_walk(used, adev)
            assert fit.noise_density == pytest.approx(axis_params.noise_density, rel=0.10), name
            assert fit.random_walk == pytest.approx(axis_params.random_walk, rel=0.15), name


def test_allan_fit_of_exact_curve() -> None:
    taus = np.logspace(-2, 2, 20)
    adev = np.sqrt(2e-3**2 / taus + 5e-4**2 * taus / 3)
    fit = fit_white_and_random_walk(taus, adev)
    assert fit.noise_density == pytest.approx(2e-3, rel=1e-9)
    assert fit.random_walk == pytest.approx(5e-4, rel=1e-9)


def test_white_noise_sample_std_is_density_over_sqrt_dt() -> None:
    params = ImuNoiseParams(
        AxisNoiseParams(3.394e-4, 0.0, 1000.0, 0.0), AxisNoiseParams(4.0e-3, 0.0, 300.0, 0.0)
    )
    rng = np.random.default_rng(1)
    dt_s = 1.0 / 240.0
    state = initial_imu_state(params, rng)
    gyro, accel, _ = imu_noise(
        np.zeros((50_000, 3)), np.zeros((50_000, 3)), dt_s, state, rng, params
    )
    assert np.std(gyro) == pytest.approx(3.394e-4 / np.sqrt(dt_s), rel=0.02)
    assert np.std(accel) == pytest.approx(4.0e-3 / np.sqrt(dt_s), rel=0.02)


def test_bias_follows_rotors_gauss_markov_variance() -> None:
    # Stationary variance of b_k = a b_{k-1} + N(0, sigma_bd^2) is sigma_b^2 tau / 2.
    params = ImuNoiseParams(
        AxisNoiseParams(0.0, 0.01, 2.0, 0.0), AxisNoiseParams(0.0, 0.01, 2.0, 0.0)
    )
    rng = np.random.default_rng(5)
    state = initial_imu_state(params, rng)
    gyro, _, _ = imu_noise(np.zeros((400_000, 3)), np.zeros((400_000, 3)), 0.01, state, rng, params)
    assert np.var(gyro[1000:]) == pytest.approx(0.01**2 * 2.0 / 2.0, rel=0.1)


def test_turn_on_bias_is_constant_per_axis_and_has_preset_sigma() -> None:
    params = imu_preset("drone")
    turn_on = np.array(
        [initial_imu_state(params, np.random.default_rng(s)).accel_turn_on for s in range(2000)]
    )
    assert np.std(turn_on) == pytest.approx(0.196, rel=0.05)
    rng = np.random.default_rng(0)
    state = initial_imu_state(imu_preset("drone"), rng)
    no_walk = ImuNoiseParams(
        AxisNoiseParams(0.0, 0.0, 1000.0, 0.0), AxisNoiseParams(0.0, 0.0, 300.0, 0.0)
    )
    g, a, _ = imu_noise(np.zeros((10, 3)), np.zeros((10, 3)), 0.01, state, rng, no_walk)
    np.testing.assert_allclose(g, np.broadcast_to(state.gyro_turn_on, (10, 3)))
    np.testing.assert_allclose(a, np.broadcast_to(state.accel_turn_on, (10, 3)))


def test_state_carries_between_calls_and_seed_repeats() -> None:
    params = imu_preset("consumer")

    def run(seed: int) -> np.ndarray:
        rng = np.random.default_rng(seed)
        state = initial_imu_state(params, rng)
        outs = []
        for _ in range(5):
            g, a, state = imu_noise(
                np.zeros(3), np.array([0.0, 0.0, 9.81]), 1 / 240, state, rng, params
            )
            outs.append(np.concatenate([g, a]))
        return np.array(outs)

    np.testing.assert_array_equal(run(3), run(3))
    assert not np.array_equal(run(3), run(4))


@pytest.mark.parametrize(
    ("gyro", "accel", "dt_s", "match"),
    [
        (np.zeros((4, 3)), np.zeros((4, 2)), 0.01, "equal shapes"),
        (np.array([0.0, np.nan, 0.0]), np.zeros(3), 0.01, "NaN"),
        (np.zeros(3), np.zeros(3), 0.0, "dt_s"),
    ],
)
def test_bad_imu_input(gyro: np.ndarray, accel: np.ndarray, dt_s: float, match: str) -> None:
    params = imu_preset("drone")
    rng = np.random.default_rng(0)
    with pytest.raises(NoiseInputError, match=match):
        imu_noise(gyro, accel, dt_s, initial_imu_state(params, rng), rng, params)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"noise_density": -1.0}, "noise_density"),
        ({"correlation_time_s": 0.0}, "correlation_time_s"),
        ({"random_walk": float("nan")}, "random_walk"),
    ],
)
def test_bad_imu_params(kwargs: dict[str, float], match: str) -> None:
    base = {
        "noise_density": 1e-3,
        "random_walk": 1e-4,
        "correlation_time_s": 100.0,
        "turn_on_bias_sigma": 0.0,
    }
    with pytest.raises(NoiseConfigError, match=match):
        AxisNoiseParams(**{**base, **kwargs})


def test_unknown_preset_lists_names() -> None:
    with pytest.raises(NoiseConfigError, match=r"available: .*consumer.*drone"):
        imu_preset("tactical")
