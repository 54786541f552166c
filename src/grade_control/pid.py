"""Per-joint PID on joint positions, producing joint velocity commands (numpy only).

For each joint i, with reference r, reference velocity v_ff and measurement y:

    e    = r - y                       (wrapped to [-pi, pi) for angular joints)
    P    = kp * e
    I   += ki * e * dt                 (clamped to +-integral_limit; frozen while the output
                                        saturates in the error's direction: anti-windup)
    D    = -kd * lowpass(dy/dt)        (on the measurement: no kick on setpoint steps)
    u    = v_ff + P + I + D            (feedback is 0 and I is reset while resting in the
                                        dead band, see below)
    u    = clip to the velocity limit and to what keeps y + u dt inside the position limits

Dead band: GRADE commands 0 whenever |e| < dead_band, so a robot stops at the edge of the band
(up to dead_band away from its goal). Here the band has hysteresis: feedback stays on until
|e| <= dead_band * dead_band_settle_ratio, then rests until |e| >= dead_band again. A ratio of 1
gives GRADE's behaviour; the default 0.2 settles five times closer without chattering.

This is the textbook sign (u grows with r - y). GRADE's controller had the sign inverted and
negated its output to compensate; nothing like that is needed here.
"""

from __future__ import annotations

import numpy as np

from grade_common.types import FloatArray
from grade_control.config import ControllerConfig
from grade_control.geometry import wrap_angle


class JointPid:
    """Vectorised PID over a robot's joints; state: integral, filtered derivative, last y."""

    def __init__(self, config: ControllerConfig) -> None:
        self._config = config
        self._load_gains(config)
        n = len(config.axes)
        self.integral = np.zeros(n)
        self._derivative = np.zeros(n)
        self._last_measured: FloatArray | None = None
        self._resting = np.zeros(n, dtype=bool)

    def _load_gains(self, config: ControllerConfig) -> None:
        axes = config.axes
        self._kp = np.array([a.kp for a in axes])
        self._ki = np.array([a.ki for a in axes])
        self._kd = np.array([a.kd for a in axes])
        self._i_limit = np.array([a.integral_limit for a in axes])
        self._v_limit = np.array([a.velocity_limit for a in axes])
        self._p_min = np.array([a.position_min for a in axes])
        self._p_max = np.array([a.position_max for a in axes])
        self._dead_band = np.array([a.dead_band for a in axes])
        self._angular = np.array([a.angular for a in axes])

    @property
    def config(self) -> ControllerConfig:
        """The configuration in use."""
        return self._config

    def reconfigure(self, config: ControllerConfig) -> None:
        """Take new gains/limits at run time; the integral is kept but re-clamped.

        Raises:
            ValueError: when the joint list changes (that needs a new controller).
        """
        if config.joint_names != self._config.joint_names:
            raise ValueError(
                f"joints cannot change at run time ({self._config.joint_names} -> "
                f"{config.joint_names})"
            )
        self._config = config
        self._load_gains(config)
        self.integral = np.clip(self.integral, -self._i_limit, self._i_limit)

    def reset(self) -> None:
        """Forget the integral and derivative state (e.g. after a mode change)."""
        self.integral[:] = 0.0
        self._derivative[:] = 0.0
        self._last_measured = None
        self._resting[:] = False

    def error(self, reference: FloatArray, measured: FloatArray) -> FloatArray:
        """Reference minus measurement, by the shortest angle for angular joints."""
        error = np.asarray(reference, dtype=np.float64) - np.asarray(measured, dtype=np.float64)
        return np.where(self._angular, wrap_angle(error), error)

    def step(
        self, reference: FloatArray, velocity_ff: FloatArray, measured: FloatArray, dt_s: float
    ) -> FloatArray:
        """One control update; returns joint velocity commands held for the next `dt_s`.

        Args:
            reference: reference joint positions (m, rad).
            velocity_ff: reference joint velocities, fed forward.
            measured: measured joint positions.
            dt_s: time since the previous update (> 0); the command is held this long.
        """
        if not dt_s > 0.0:
            raise ValueError(f"dt_s = {dt_s} must be > 0")
        measured = np.asarray(measured, dtype=np.float64)
        error = self.error(reference, measured)
        magnitude = np.abs(error)
        # Dead band with hysteresis: rest (feedback 0) once the error fell below
        # dead_band * dead_band_settle_ratio, until it leaves the dead band again.
        settle = self._dead_band * self._config.dead_band_settle_ratio
        self._resting = np.where(
            magnitude >= self._dead_band, False, np.where(magnitude <= settle, True, self._resting)
        )
        outside = ~self._resting

        if self._last_measured is None or self._config.derivative_filter_tau_s == 0.0:
            raw_rate = (
                np.zeros_like(measured)
                if self._last_measured is None
                else self._measured_rate(measured, dt_s)
            )
            self._derivative = raw_rate
        else:
            alpha = dt_s / (self._config.derivative_filter_tau_s + dt_s)
            self._derivative = self._derivative + alpha * (
                self._measured_rate(measured, dt_s) - self._derivative
            )
        self._last_measured = measured.copy()

        integral_next = np.clip(
            self.integral + self._ki * error * dt_s, -self._i_limit, self._i_limit
        )
        feedback = self._kp * error + integral_next - self._kd * self._derivative
        raw = np.asarray(velocity_ff, dtype=np.float64) + np.where(outside, feedback, 0.0)
        command = self._limit(raw, measured, dt_s)
        if self._config.anti_windup:
            # Integrate only when the output is not held back in the direction the error pushes.
            held_back = (np.abs(command - raw) > 1e-12) & (np.sign(raw - command) == np.sign(error))
            integrate = outside & ~held_back
        else:
            integrate = outside
        self.integral = np.where(integrate, integral_next, np.where(outside, self.integral, 0.0))
        return command

    def _measured_rate(self, measured: FloatArray, dt_s: float) -> FloatArray:
        assert self._last_measured is not None
        delta = measured - self._last_measured
        return np.where(self._angular, wrap_angle(delta), delta) / dt_s

    def _limit(self, command: FloatArray, measured: FloatArray, dt_s: float) -> FloatArray:
        # Never move further out of the position range; outside it, only inward motion is allowed.
        with np.errstate(invalid="ignore"):
            low = np.minimum((self._p_min - measured) / dt_s, 0.0)
            high = np.maximum((self._p_max - measured) / dt_s, 0.0)
        low = np.where(np.isnan(low), -np.inf, low)
        high = np.where(np.isnan(high), np.inf, high)
        command = np.clip(command, low, high)
        return np.asarray(np.clip(command, -self._v_limit, self._v_limit))
