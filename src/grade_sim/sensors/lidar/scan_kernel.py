"""The compiled loops of a scan (numba): every ray built, cast and decoded in one pass.

A scan of an HDL-64E is 131072 rays; Embree traces one in ~100 ns. Anything done per ray in
numpy (a gather, a matrix product, a mask) costs a few milliseconds per scan, so the whole
per-ray path lives here: the ray from the sensor pose at its firing time, Embree's packet
intersection, and the hit decoded into instance, |cos incidence| and reflectivity.

Embree's functions are declared by symbol name (the library is loaded into the process first),
so the compiled code holds no addresses and numba can cache it on disk between processes.
"""

from __future__ import annotations

from typing import Any

import numba
import numpy as np
from llvmlite import binding
from numba import types

from grade_sim.sensors.lidar import embree_api as api

binding.load_library_permanently(api.library_path())

# Typed Any: numba's stubs know no call signature for external functions.
_intersect16: Any = types.ExternalFunction(
    "rtcIntersect16", types.void(types.uintp, types.uintp, types.uintp, types.uintp)
)
_set_transform: Any = types.ExternalFunction(
    "rtcSetGeometryTransform", types.void(types.uintp, types.uint32, types.int32, types.uintp)
)
_commit_geometry: Any = types.ExternalFunction("rtcCommitGeometry", types.void(types.uintp))

_P = api.PACKET
_XFM = api.FORMAT_FLOAT3X4_COLUMN_MAJOR
_INVALID = api.INVALID_ID
_ORG, _TNEAR, _DIR, _TIME = api.RAY_ORG, api.RAY_TNEAR, api.RAY_DIR, api.RAY_TIME
_TFAR, _MASK, _ID, _FLAGS = api.RAY_TFAR, api.RAY_MASK, api.RAY_ID, api.RAY_FLAGS
_NG, _PRIM, _GEOM, _INST = api.HIT_NG, api.HIT_PRIM, api.HIT_GEOM, api.HIT_INST


@numba.njit(nogil=True, cache=True)
def set_transforms(geometries: Any, transforms: Any) -> None:  # pragma: no cover - compiled
    """Sets every instance's transforms (P, T, 12: 3x4 column-major per time step) and commits
    it."""
    for p in range(len(geometries)):
        for t in range(transforms.shape[1]):
            _set_transform(geometries[p], t, _XFM, transforms[p, t].ctypes.data)
        _commit_geometry(geometries[p])


@numba.njit(nogil=True, cache=True)
def cast(
    static_scene: Any,
    parts_scene: Any,
    dirs_local: Any,
    time_index: Any,
    sensor_pos: Any,
    sensor_rot: Any,
    offset_ns: Any,
    time_shift_ns: float,
    time_window_ns: float,
    range_min_m: float,
    range_max_m: float,
    static_instance: Any,
    static_first_row: Any,
    static_reflectivity: Any,
    part_instance: Any,
    part_first_row: Any,
    part_reflectivity: Any,
    part_rot: Any,
    packet: Any,
    valid: Any,
    out_range: Any,
    out_instance: Any,
    out_cos: Any,
    out_reflectivity: Any,
) -> None:  # pragma: no cover - compiled
    """Casts ray i from sensor_pos[time_index[i]] along sensor_rot[time_index[i]] @
    dirs_local[i] at motion-blur time (offset_ns[i] + time_shift_ns) / time_window_ns in
    [0, 1] (0 when the window is 0), and writes what it hit.

    Each packet of 16 rays goes first through the static world (a flat scene: geomID ->
    static tables), then, only as far as the static hit, through the moving parts (instance p
    of parts_scene is part p; 0 when there are none). A part's normal comes back in its own
    frame, so the ray's direction is turned into that frame (the part's rotation at the ray's
    time, blended as Embree blends the transforms) for the incidence angle.
    Misses and hits nearer than range_min_m get range inf and instance 0.
    """
    n = dirs_local.shape[0]
    word = packet.view(np.uint32)
    steps = part_rot.shape[1]
    s_geom = np.empty(_P, np.uint32)
    s_prim = np.empty(_P, np.uint32)
    s_ng = np.empty((_P, 3), np.float32)
    tau = np.zeros(_P, np.float32)
    for start in range(0, n, _P):
        m = min(_P, n - start)
        for k in range(_P):
            if k >= m:
                valid[k] = 0
                continue
            i = start + k
            valid[k] = -1
            if time_window_ns > 0.0:
                tau[k] = min(max((offset_ns[i] + time_shift_ns) / time_window_ns, 0.0), 1.0)
            t = time_index[i]
            dx, dy, dz = dirs_local[i, 0], dirs_local[i, 1], dirs_local[i, 2]
            r = sensor_rot[t]
            packet[_ORG * _P + k] = sensor_pos[t, 0]
            packet[(_ORG + 1) * _P + k] = sensor_pos[t, 1]
            packet[(_ORG + 2) * _P + k] = sensor_pos[t, 2]
            packet[_TNEAR * _P + k] = 0.0
            packet[_DIR * _P + k] = r[0, 0] * dx + r[0, 1] * dy + r[0, 2] * dz
            packet[(_DIR + 1) * _P + k] = r[1, 0] * dx + r[1, 1] * dy + r[1, 2] * dz
            packet[(_DIR + 2) * _P + k] = r[2, 0] * dx + r[2, 1] * dy + r[2, 2] * dz
            packet[_TIME * _P + k] = tau[k]
            packet[_TFAR * _P + k] = range_max_m
            word[_MASK * _P + k] = 0xFFFFFFFF
            word[_ID * _P + k] = 0
            word[_FLAGS * _P + k] = 0
            word[_GEOM * _P + k] = _INVALID
            word[_INST * _P + k] = _INVALID
        _intersect16(valid.ctypes.data, static_scene, packet.ctypes.data, 0)
        moving = parts_scene != 0
        if moving:
            for k in range(m):
                s_geom[k] = word[_GEOM * _P + k]
                s_prim[k] = word[_PRIM * _P + k]
                for a in range(3):
                    s_ng[k, a] = packet[(_NG + a) * _P + k]
                word[_GEOM * _P + k] = _INVALID
            # tfar now holds each ray's static hit (or range_max_m): parts behind it are skipped.
            _intersect16(valid.ctypes.data, parts_scene, packet.ctypes.data, 0)
        for k in range(m):
            i = start + k
            tfar = packet[_TFAR * _P + k]
            wx = packet[_DIR * _P + k]
            wy = packet[(_DIR + 1) * _P + k]
            wz = packet[(_DIR + 2) * _P + k]
            geom = word[_GEOM * _P + k]
            if geom != _INVALID and moving:
                p = word[_INST * _P + k]
                prim = word[_PRIM * _P + k]
                nx = packet[_NG * _P + k]
                ny = packet[(_NG + 1) * _P + k]
                nz = packet[(_NG + 2) * _P + k]
                out_instance[i] = part_instance[p]
                out_reflectivity[i] = part_reflectivity[part_first_row[p] + prim]
                if steps == 1:
                    s, f = 0, 0.0
                else:
                    u = tau[k] * (steps - 1)
                    s = min(int(u), steps - 2)
                    f = u - s
                # d_part = R(t)^T d_world with R(t) blended between the two time steps.
                g = 1.0 - f
                s1 = min(s + 1, steps - 1)
                lx = ly = lz = 0.0
                for a in range(3):
                    w = wx if a == 0 else (wy if a == 1 else wz)
                    lx += (g * part_rot[p, s, a, 0] + f * part_rot[p, s1, a, 0]) * w
                    ly += (g * part_rot[p, s, a, 1] + f * part_rot[p, s1, a, 1]) * w
                    lz += (g * part_rot[p, s, a, 2] + f * part_rot[p, s1, a, 2]) * w
                dot = nx * lx + ny * ly + nz * lz
            else:
                if moving:
                    geom = s_geom[k]
                    prim = s_prim[k]
                    nx, ny, nz = s_ng[k, 0], s_ng[k, 1], s_ng[k, 2]
                else:
                    prim = word[_PRIM * _P + k]
                    nx = packet[_NG * _P + k]
                    ny = packet[(_NG + 1) * _P + k]
                    nz = packet[(_NG + 2) * _P + k]
                if geom == _INVALID:
                    tfar = -1.0  # no hit: reported below as a miss
                else:
                    out_instance[i] = static_instance[geom]
                    out_reflectivity[i] = static_reflectivity[static_first_row[geom] + prim]
                    dot = nx * wx + ny * wy + nz * wz
            if tfar < range_min_m:
                out_range[i] = np.inf
                out_instance[i] = 0
                out_cos[i] = 0.0
                out_reflectivity[i] = 0.0
                continue
            norm = np.sqrt(nx * nx + ny * ny + nz * nz)
            out_range[i] = tfar
            out_cos[i] = min(abs(dot) / max(norm, 1e-30), 1.0)


@numba.njit(nogil=True, cache=True)
def returns(
    range_m: Any,
    instance_id: Any,
    cos_incidence: Any,
    reflectivity: Any,
    noise: Any,
    sigma_m: float,
    drop_draw: Any,
    drop_probability: Any,
    directions32: Any,
    offset_ns: Any,
    ring: Any,
    class_of_instance: Any,
    points: Any,
    returned: Any,
) -> int:  # pragma: no cover - compiled
    """The scan's points, in firing order, into `points` (POINT_DTYPE, room for every ray):
    rays that hit and were not dropped (drop_draw < drop_probability drops), at their range
    plus sigma_m * noise (never negative; no noise when `noise` is empty) along their
    direction, with intensity = clip(reflectivity * cos incidence, 0, 1). Marks `returned` and
    gives the count."""
    count = 0
    noisy = len(noise) > 0
    sigma32 = np.float32(sigma_m)
    for i in range(len(range_m)):
        r = range_m[i]
        keep = r < np.inf and not drop_draw[i] < drop_probability[i]
        returned[i] = keep
        if not keep:
            continue
        if noisy:
            r = max(r + np.float64(noise[i] * sigma32), 0.0)
        r32 = np.float32(r)
        p = points[count]
        p.x = directions32[i, 0] * r32
        p.y = directions32[i, 1] * r32
        p.z = directions32[i, 2] * r32
        p.intensity = min(max(reflectivity[i] * cos_incidence[i], 0.0), 1.0)
        p.t = offset_ns[i]
        p.ring = ring[i]
        inst = instance_id[i]
        p.class_id = class_of_instance[inst]
        p.instance_id = inst
        count += 1
    return count
