"""Beam patterns: each ray's direction in the sensor frame, ring and firing time in a sweep.

Sensor frame (REP 103): x forward, y left, z up. A rotating lidar fires all its beams together
at each of `columns` azimuth steps, turning counter-clockwise from -180 deg (behind the sensor)
over one sweep, so the seam is behind the sensor; the 2D laser sweeps its field from right to
left; the solid-state pattern is a rose curve whose phase runs on with time, so consecutive
frames cover different points of the field (non-repetitive, Livox-like).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from grade_common.types import FloatArray
from grade_sim.config.lidar import LidarKind, LidarPreset

# Rose-curve frequencies (rad/s) of the solid-state pattern: incommensurate, so it never repeats.
ROSETTE_PETAL_RAD_S = 2 * np.pi * 1657.0
ROSETTE_TURN_RAD_S = 2 * np.pi * 271.3 * np.sqrt(2.0)


@dataclass(frozen=True)
class BeamFiring:
    """The rays of one scan in firing order."""

    directions: FloatArray  # (n, 3) unit vectors in the sensor frame
    ring: NDArray[np.uint16]  # (n,) beam index (rotating: 0 = lowest elevation)
    column: NDArray[np.int64]  # (n,) azimuth step (range-image column)
    offset_ns: NDArray[np.int64]  # (n,) firing time after the first ray of the scan


def unit_vectors(azimuth_rad: FloatArray, elevation_rad: FloatArray) -> FloatArray:
    ce = np.cos(elevation_rad)
    out: FloatArray = np.stack(
        [ce * np.cos(azimuth_rad), ce * np.sin(azimuth_rad), np.sin(elevation_rad)], axis=-1
    )
    return out


def column_azimuths_rad(table: LidarPreset) -> FloatArray:
    """The azimuth of every column of a rotating lidar or 2D laser."""
    fov = np.deg2rad(table.fov_deg)
    if table.kind is LidarKind.ROTATING and table.fov_deg >= 360.0:
        out: FloatArray = -np.pi + fov * np.arange(table.columns) / table.columns
        return out
    return np.linspace(-fov / 2, fov / 2, table.columns)


def sweep_ns(table: LidarPreset) -> int:
    return round(1e9 / table.rate_hz)


def firing(table: LidarPreset, scan_start_ns: int) -> BeamFiring:
    """The rays of the scan whose first ray fires at `scan_start_ns` (solid state: its phase)."""
    period = sweep_ns(table)
    if table.kind is LidarKind.SOLID_STATE:
        n = table.columns
        offset = (np.arange(n) * period) // n
        t = (scan_start_ns + offset) * 1e-9
        half_fov = np.deg2rad(table.fov_deg) / 2
        radius = half_fov * np.cos(ROSETTE_PETAL_RAD_S * t)
        turn = ROSETTE_TURN_RAD_S * t
        # Small-angle field: (left, up) angles around the x axis.
        az, el = radius * np.cos(turn), radius * np.sin(turn)
        return BeamFiring(
            unit_vectors(az, el),
            np.zeros(n, dtype=np.uint16),
            np.arange(n, dtype=np.int64),
            offset.astype(np.int64),
        )
    azimuth = column_azimuths_rad(table)
    elevation = np.deg2rad(np.sort(np.asarray(table.elevations_deg, dtype=np.float64)))
    cols, beams = len(azimuth), len(elevation)
    # A partial sweep (2D laser of 270 deg) takes that share of the period.
    span = period * min(1.0, table.fov_deg / 360.0)
    col_offset = (np.arange(cols) * round(span)) // cols
    az = np.repeat(azimuth, beams)
    el = np.tile(elevation, cols)
    return BeamFiring(
        unit_vectors(az, el),
        np.tile(np.arange(beams, dtype=np.uint16), cols),
        np.repeat(np.arange(cols, dtype=np.int64), beams),
        np.repeat(col_offset.astype(np.int64), beams),
    )
