"""IMU noise, RotorS discrete form: white noise, bias random walk (with correlation time),
turn-on bias.

Gyroscope and accelerometer have separate parameters (`AxisNoiseParams`); `imu_noise` applies both
to a block of samples and returns the updated state, so one call per message (online) and one call
per long array (statistics, offline) follow the same equations.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.signal import lfilter

from grade_common.types import FloatArray
from grade_noise.errors import NoiseInputError
from grade_noise.presets import check_fields, lookup


@dataclass(frozen=True)
class AxisNoiseParams:
    """Noise of one 3-axis sensor (gyroscope or accelerometer), RotorS parameter names.

    Attributes:
        noise_density: white noise N, [unit]/sqrt(Hz) (rad/s/sqrt(Hz) or m/s^2/sqrt(Hz)).
        random_walk: bias random walk sigma_b, [unit]/s/sqrt(Hz) (the ADEV slope K).
        correlation_time_s: bias correlation time tau (> 0; large values give a pure random walk).
        turn_on_bias_sigma: standard deviation of the bias drawn once per axis at start.
    """

    noise_density: float
    random_walk: float
    correlation_time_s: float
    turn_on_bias_sigma: float

    def __post_init__(self) -> None:
        non_negative = ("noise_density", "random_walk", "turn_on_bias_sigma")
        check_fields(self, "IMU", non_negative, rule="finite and >= 0")
        check_fields(self, "IMU", ("correlation_time_s",), positive=True, rule="> 0 s")


@dataclass(frozen=True)
class ImuNoiseParams:
    """Gyroscope and accelerometer noise of one IMU."""

    gyro: AxisNoiseParams
    accel: AxisNoiseParams


IMU_PRESETS: dict[str, ImuNoiseParams] = {
    # RotorS / GRADE defaults (ADIS16448-class drone IMU), see shared reference notes.
    "drone": ImuNoiseParams(
        gyro=AxisNoiseParams(3.394e-4, 3.8785e-5, 1000.0, 0.0087),
        accel=AxisNoiseParams(4.0e-3, 6.0e-3, 300.0, 0.196),
    ),
    # A cheaper MEMS part (phone / hobby flight controller class): about 3x the white noise,
    # 2.5x-5x the bias instability and larger turn-on offsets. Illustrative, not a datasheet.
    "consumer": ImuNoiseParams(
        gyro=AxisNoiseParams(1.0e-3, 2.0e-4, 500.0, 0.02),
        accel=AxisNoiseParams(1.2e-2, 1.5e-2, 300.0, 0.3),
    ),
    # No noise at all: pass-through, for A/B runs with the same pipeline.
    "none": ImuNoiseParams(
        gyro=AxisNoiseParams(0.0, 0.0, 1000.0, 0.0),
        accel=AxisNoiseParams(0.0, 0.0, 1000.0, 0.0),
    ),
}


def imu_preset(name: str) -> ImuNoiseParams:
    """Return the IMU preset `name`; raise NoiseConfigError listing the valid names."""
    return lookup(IMU_PRESETS, name, "IMU")


@dataclass(frozen=True)
class ImuNoiseState:
    """Biases carried between calls: random-walk part and constant turn-on part, per sensor."""

    gyro_bias: FloatArray  # (3,) rad/s, the random walk so far (starts at zero)
    accel_bias: FloatArray  # (3,) m/s^2, likewise
    gyro_turn_on: FloatArray  # (3,) rad/s, drawn once at turn-on
    accel_turn_on: FloatArray  # (3,) m/s^2, drawn once at turn-on


def initial_imu_state(params: ImuNoiseParams, rng: np.random.Generator) -> ImuNoiseState:
    """Draw the turn-on biases (once per axis); the random-walk biases start at zero."""
    return ImuNoiseState(
        gyro_bias=np.zeros(3),
        accel_bias=np.zeros(3),
        gyro_turn_on=rng.normal(0.0, params.gyro.turn_on_bias_sigma, 3),
        accel_turn_on=rng.normal(0.0, params.accel.turn_on_bias_sigma, 3),
    )


def _axis_constants(dt_s: float, p: AxisNoiseParams) -> tuple[float, float, float]:
    """RotorS discrete constants of a step dt_s: white sigma_d, bias decay a, drive sigma_bd."""
    sigma_d = p.noise_density / math.sqrt(dt_s)
    a = math.exp(-dt_s / p.correlation_time_s)
    sigma_bd = math.sqrt(
        -(p.random_walk**2)
        * p.correlation_time_s
        / 2.0
        * math.expm1(-2.0 * dt_s / p.correlation_time_s)
    )
    return sigma_d, a, sigma_bd


def _axis_noise(
    values: FloatArray, dt_s: float, bias0: FloatArray, p: AxisNoiseParams, rng: np.random.Generator
) -> tuple[FloatArray, FloatArray]:
    """RotorS discrete step for n samples: (noise incl. bias, bias after the last sample)."""
    n = values.shape[0]
    sigma_d, a, sigma_bd = _axis_constants(dt_s, p)
    white = rng.standard_normal((n, 3)) * sigma_d
    drive = rng.standard_normal((n, 3)) * sigma_bd
    # b_k = a b_{k-1} + w_k, run along time for each axis, starting from the carried bias.
    if n <= 4:  # a few samples: a plain loop is much cheaper than lfilter's set-up
        bias = np.empty((n, 3))
        prev = bias0
        for i in range(n):
            prev = a * prev + drive[i]
            bias[i] = prev
    else:
        bias = np.asarray(
            lfilter([1.0], [1.0, -a], drive, axis=0, zi=(a * bias0)[None, :])[0], dtype=np.float64
        )
    return white + bias, bias[-1].copy()


def _imu_noise_one(
    gyro: FloatArray,
    accel: FloatArray,
    dt_s: float,
    state: ImuNoiseState,
    rng: np.random.Generator,
    params: ImuNoiseParams,
) -> tuple[FloatArray, FloatArray, ImuNoiseState]:
    """One (3,) message (online use): the equations and draws of `_axis_noise` for n = 1, in
    plain floats, since numpy's per-call overhead on 3-vectors dominates."""
    gyro_l, accel_l = gyro.tolist(), accel.tolist()
    if not all(map(math.isfinite, gyro_l + accel_l)):
        raise NoiseInputError("IMU input contains NaN or infinite values; cannot add noise")
    # one draw in the order of the block path: gyro white, gyro drive, accel white, accel drive
    z = rng.standard_normal(12).tolist()
    outs: list[list[float]] = []
    biases: list[list[float]] = []
    for values, bias0, turn_on, p, zw, zb in (
        (gyro_l, state.gyro_bias, state.gyro_turn_on, params.gyro, z[0:3], z[3:6]),
        (accel_l, state.accel_bias, state.accel_turn_on, params.accel, z[6:9], z[9:12]),
    ):
        sigma_d, a, sigma_bd = _axis_constants(dt_s, p)
        bias = [a * b + w * sigma_bd for b, w in zip(bias0.tolist(), zb, strict=True)]
        outs.append(
            [
                v + (w * sigma_d + b) + t
                for v, w, b, t in zip(values, zw, bias, turn_on.tolist(), strict=True)
            ]
        )
        biases.append(bias)
    new_state = ImuNoiseState(
        np.array(biases[0]), np.array(biases[1]), state.gyro_turn_on, state.accel_turn_on
    )
    return np.array(outs[0]), np.array(outs[1]), new_state


def imu_noise(
    gyro_rad_s: FloatArray,
    accel_m_s2: FloatArray,
    dt_s: float,
    state: ImuNoiseState,
    rng: np.random.Generator,
    params: ImuNoiseParams,
) -> tuple[FloatArray, FloatArray, ImuNoiseState]:
    """Add IMU noise to n consecutive samples taken dt_s apart.

    Args:
        gyro_rad_s: (n, 3) or (3,) true angular velocity.
        accel_m_s2: same shape, true specific force.
        dt_s: sample period (> 0).
        state: biases from the previous call (or `initial_imu_state`).
        rng: the stream's generator; draws happen in a fixed order.
        params: gyro and accel noise.

    Returns:
        (noisy gyro, noisy accel, new state), arrays in the input shape.

    Raises:
        NoiseInputError: non-finite samples, mismatched shapes or dt_s <= 0.
    """
    gyro = np.asarray(gyro_rad_s, dtype=np.float64)
    accel = np.asarray(accel_m_s2, dtype=np.float64)
    if gyro.shape != accel.shape or gyro.shape[-1:] != (3,) or gyro.ndim not in (1, 2):
        raise NoiseInputError(
            f"IMU samples must be (n, 3) or (3,) with equal shapes, got gyro {gyro.shape} "
            f"and accel {accel.shape}"
        )
    if not (math.isfinite(dt_s) and dt_s > 0.0):
        raise NoiseInputError(f"IMU sample period dt_s = {dt_s!r}: must be finite and > 0")
    if gyro.ndim == 1:
        return _imu_noise_one(gyro, accel, dt_s, state, rng, params)
    if not (np.all(np.isfinite(gyro)) and np.all(np.isfinite(accel))):
        raise NoiseInputError("IMU input contains NaN or infinite values; cannot add noise")
    g2 = gyro.reshape(-1, 3)
    a2 = accel.reshape(-1, 3)
    g_noise, g_bias = _axis_noise(g2, dt_s, state.gyro_bias, params.gyro, rng)
    a_noise, a_bias = _axis_noise(a2, dt_s, state.accel_bias, params.accel, rng)
    new_state = ImuNoiseState(g_bias, a_bias, state.gyro_turn_on, state.accel_turn_on)
    out_g = (g2 + g_noise + state.gyro_turn_on).reshape(gyro.shape)
    out_a = (a2 + a_noise + state.accel_turn_on).reshape(accel.shape)
    return out_g, out_a, new_state
