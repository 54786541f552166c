"""Embree 4's C API through ctypes, from the library that embreex ships.

embreex binds single rays against flat scenes only. A scan needs more of Embree: instances
(each moving part in its own frame), multi-segment motion blur (each ray sees the parts where
they are at its own firing time) and ray packets. The library embreex installs
(embreex.libs/libembree4*.so) exports all of it. Here: the functions that build and release
scenes (through ctypes, handles passed as plain addresses, `c_size_t`), the constants and the
packet layout; the per-scan calls (transforms, intersection) are made from the numba loops in
`scan_kernel`, which declare them by symbol name.

Enum values and struct layouts are Embree 4's (include/embree4/rtcore_*.h).
"""

from __future__ import annotations

import ctypes
import functools
import glob
import os
import threading
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from grade_sim.engine.raycast import INSTALL_HINT
from grade_sim.errors import LidarError

GEOMETRY_TRIANGLE = 0
GEOMETRY_INSTANCE = 121
BUFFER_INDEX = 0
BUFFER_VERTEX = 1
FORMAT_UINT3 = 0x5003
FORMAT_FLOAT3 = 0x9003
FORMAT_FLOAT3X4_COLUMN_MAJOR = 0x9234
BUILD_QUALITY_HIGH = 2
SCENE_FLAG_DYNAMIC = 1 << 0
INVALID_ID = 0xFFFFFFFF
MAX_TIME_STEPS = 129  # RTC_MAX_TIME_STEP_COUNT

# RTCRayHit16 (structure of arrays, 64-byte aligned): 12 ray fields, then 7 hit fields and
# instID[1]; Embree builds with instance arrays append instPrimID[1]: room for it is kept.
PACKET = 16
PACKET_WORDS = 21 * PACKET
RAY_ORG, RAY_TNEAR, RAY_DIR, RAY_TIME = 0, 3, 4, 7
RAY_TFAR, RAY_MASK, RAY_ID, RAY_FLAGS = 8, 9, 10, 11
HIT_NG, HIT_PRIM, HIT_GEOM, HIT_INST = 12, 17, 18, 19

_Addr = ctypes.c_size_t
_UInt = ctypes.c_uint
_Int = ctypes.c_int


@dataclass(frozen=True)
class EmbreeFunctions:
    """The C functions that build and release scenes (ctypes function objects)."""

    new_device: Any
    device_error: Any
    new_scene: Any
    release_scene: Any
    set_scene_flags: Any
    set_scene_build_quality: Any
    commit_scene: Any
    new_geometry: Any
    release_geometry: Any
    commit_geometry: Any
    attach_geometry: Any
    set_shared_buffer: Any
    set_time_step_count: Any
    set_instanced_scene: Any


def library_path() -> str:
    try:
        import embreex
    except ImportError as err:
        raise LidarError(f"lidar ray casting needs Embree: {INSTALL_HINT} ({err})") from err
    site = os.path.dirname(os.path.dirname(os.path.abspath(embreex.__file__)))
    found = sorted(glob.glob(os.path.join(site, "embreex.libs", "libembree4*.so*")))
    if not found:
        raise LidarError(
            f"no Embree 4 library under {site}/embreex.libs: reinstall embreex ({INSTALL_HINT})"
        )
    return found[0]


@functools.cache
def functions() -> EmbreeFunctions:
    """The library's functions, loaded once per process."""
    lib = ctypes.CDLL(library_path())

    def fn(name: str, result: Any, *args: Any) -> Any:
        f = getattr(lib, name)
        f.restype = result
        f.argtypes = list(args)
        return f

    a = _Addr
    return EmbreeFunctions(
        new_device=fn("rtcNewDevice", a, ctypes.c_char_p),
        device_error=fn("rtcGetDeviceError", _Int, a),
        new_scene=fn("rtcNewScene", a, a),
        release_scene=fn("rtcReleaseScene", None, a),
        set_scene_flags=fn("rtcSetSceneFlags", None, a, _Int),
        set_scene_build_quality=fn("rtcSetSceneBuildQuality", None, a, _Int),
        commit_scene=fn("rtcCommitScene", None, a),
        new_geometry=fn("rtcNewGeometry", a, a, _Int),
        release_geometry=fn("rtcReleaseGeometry", None, a),
        commit_geometry=fn("rtcCommitGeometry", None, a),
        attach_geometry=fn("rtcAttachGeometry", _UInt, a, a),
        set_shared_buffer=fn("rtcSetSharedGeometryBuffer", None, a, _Int, _UInt, _Int, a, a, a, a),
        set_time_step_count=fn("rtcSetGeometryTimeStepCount", None, a, _UInt),
        set_instanced_scene=fn("rtcSetGeometryInstancedScene", None, a, a),
    )


_DEVICE_LOCK = threading.Lock()
_DEVICE: dict[int, int] = {}  # pid -> the process's device (a forked child makes its own)


def shared_device() -> int:
    """The process's one Embree device (`threads=1`), made at first use and kept until exit.

    A second `threads=1` device in a process, even once the first is released, leaves one of
    the TBB workers Embree runs on spinning on a core for as long as the process lives
    (measured: 1.5 CPU s in 1.5 s of wall time, `sched_yield` in TBB's arena). That was the
    unexplained CPU time of a second run in one process (`grade bench sim --pipeline both`:
    the parallel run came second; a batch worker's second job). Every scanner of the process
    makes its scenes on this device instead.
    """
    pid = os.getpid()
    with _DEVICE_LOCK:
        if pid not in _DEVICE:
            handle = int(functions().new_device(b"threads=1"))
            if not handle:
                raise LidarError("Embree could not create a device (rtcNewDevice returned NULL)")
            _DEVICE.clear()
            _DEVICE[pid] = handle
        return _DEVICE[pid]


class Device:
    """The scenes and geometries of one scanner on the process's Embree device
    (`shared_device`); released together (close)."""

    def __init__(self) -> None:
        self.api = functions()
        self.handle = shared_device()
        self._scenes: list[int] = []
        self._geometries: list[int] = []
        # Shared buffers stay Embree's to read for the device's life: kept referenced here.
        self._buffers: list[NDArray[Any]] = []

    def check(self, what: str) -> None:
        code = int(self.api.device_error(self.handle))
        if code:
            raise LidarError(f"Embree failed while {what} (RTCError {code})")

    def scene(self, *, dynamic: bool = False) -> int:
        handle = int(self.api.new_scene(self.handle))
        if dynamic:
            self.api.set_scene_flags(handle, SCENE_FLAG_DYNAMIC)
        else:
            self.api.set_scene_build_quality(handle, BUILD_QUALITY_HIGH)
        self._scenes.append(handle)
        return handle

    def triangles(self, scene: int, triangles: NDArray[np.float64]) -> int:
        """Attaches a triangle mesh ((n, 3, 3) vertices, float32 inside Embree); its geomID."""
        verts = np.ascontiguousarray(np.asarray(triangles).reshape(-1, 3), dtype=np.float32)
        index = np.arange(len(verts), dtype=np.uint32).reshape(-1, 3)
        geom = int(self.api.new_geometry(self.handle, GEOMETRY_TRIANGLE))
        self.api.set_shared_buffer(
            geom, BUFFER_VERTEX, 0, FORMAT_FLOAT3, verts.ctypes.data, 0, 12, len(verts)
        )
        self.api.set_shared_buffer(
            geom, BUFFER_INDEX, 0, FORMAT_UINT3, index.ctypes.data, 0, 12, len(index)
        )
        self._buffers += [verts, index]
        return self._attach(scene, geom)

    def instance(self, scene: int, instanced: int, time_steps: int) -> int:
        """Attaches an instance of scene `instanced` with `time_steps` transforms (set and
        committed by the caller before each commit of `scene`); its handle."""
        geom = int(self.api.new_geometry(self.handle, GEOMETRY_INSTANCE))
        self.api.set_instanced_scene(geom, instanced)
        self.api.set_time_step_count(geom, time_steps)
        self.api.attach_geometry(scene, geom)
        self._geometries.append(geom)
        return geom

    def _attach(self, scene: int, geom: int) -> int:
        self.api.commit_geometry(geom)
        gid = int(self.api.attach_geometry(scene, geom))
        self.api.release_geometry(geom)  # the scene holds it
        return gid

    def commit(self, scene: int, what: str) -> None:
        self.api.commit_scene(scene)
        self.check(what)

    def close(self) -> None:
        """Releases this scanner's geometries and scenes; the device stays for the next one."""
        for geom in self._geometries:
            self.api.release_geometry(geom)
        for scene in reversed(self._scenes):
            self.api.release_scene(scene)
        self._geometries, self._scenes, self._buffers, self.handle = [], [], [], 0

    def __del__(self) -> None:
        if getattr(self, "handle", 0):
            self.close()


def _aligned(n: int, dtype: type[np.generic]) -> NDArray[Any]:
    """n zeros whose first element sits on a 64-byte boundary (Embree loads packets aligned)."""
    size = np.dtype(dtype).itemsize
    raw = np.zeros(n + 64 // size, dtype=dtype)
    skip = (-raw.ctypes.data % 64) // size
    return raw[skip : skip + n]


def packet_buffer() -> tuple[NDArray[np.float32], NDArray[np.int32]]:
    """One RTCRayHit16 (float32 words; integer fields are viewed) and its valid mask, both
    64-byte aligned."""
    return _aligned(PACKET_WORDS, np.float32), _aligned(PACKET, np.int32)
