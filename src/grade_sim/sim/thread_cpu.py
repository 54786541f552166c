"""CPU time of every thread of this process, by thread name (Linux `/proc/self/task`).

`ThreadCpu` reads each thread's user + system time from `/proc/self/task/<tid>/stat` when
started, then every `interval_s` on a thread of its own (so that threads that end before the run
does, the render thread and the writers, keep their last reading), and once more when stopped.
Python threads are named by their `threading` name (`MainThread`, `mujoco-render`, `gt-writer`,
...: CPython does not give the OS thread that name), the others by their OS name (`llvmpipe-0`,
numba's and Embree's workers). What the process spent in threads that ended between two
readings is the rest of the process's own CPU time (`getrusage`), reported as `ENDED`.
A Python thread whose `join` has returned may still be listed by the OS for a while (it is
exiting; under load, for tens of ms): a reading then counts all its CPU time, under its threading
name if an earlier reading saw it alive, else under its OS name.

Off Linux (no `/proc/self/task`) only the process total is known.
"""

from __future__ import annotations

import os
import re
import resource
import threading
from dataclasses import dataclass
from pathlib import Path

TASKS = Path("/proc/self/task")
ENDED = "(ended between readings)"
SAMPLER_THREAD = "cpu-sampler"
# Numbered workers of one pool (llvmpipe-0, llvmpipe-1; sim-worker_0) add up under one name.
_POOL_SUFFIX = re.compile(r"[-_]\d+$")


def process_cpu_s() -> float:
    """User + system CPU seconds of the whole process so far (threads that ended included)."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _ticks_per_s() -> int:
    return int(os.sysconf("SC_CLK_TCK")) if hasattr(os, "sysconf") else 100


ThreadKey = tuple[int, int]  # (tid, start time in ticks): a tid the kernel reuses is a new key


def read_threads() -> dict[ThreadKey, tuple[str, float]]:
    """(tid, start) -> (OS thread name, user + system CPU seconds) of every live thread; {} off
    Linux."""
    out: dict[ThreadKey, tuple[str, float]] = {}
    if not TASKS.is_dir():
        return out
    tick = float(_ticks_per_s())
    for task in TASKS.iterdir():
        try:
            stat = (task / "stat").read_text()
        except OSError:  # the thread ended while listed
            continue
        # "tid (comm) state ...": comm may hold spaces and parentheses; fields follow the last ")".
        name = stat[stat.index("(") + 1 : stat.rindex(")")]
        fields = stat[stat.rindex(")") + 2 :].split()
        utime, stime = int(fields[11]), int(fields[12])  # fields 14 and 15 of proc(5)
        out[(int(task.name), int(fields[19]))] = (name, (utime + stime) / tick)  # 22: starttime
    return out


def pool_name(name: str) -> str:
    """The name a thread is reported under: its pool's, without the worker's number."""
    return _POOL_SUFFIX.sub("", name)


@dataclass(frozen=True)
class ThreadCpuReport:
    """CPU seconds per thread name between start and stop, and the process's total."""

    by_thread_s: dict[str, float]
    total_s: float

    def per(self, seconds: float) -> dict[str, float]:
        """Each thread's CPU seconds per `seconds` (e.g. per simulated second), largest first."""
        d = max(seconds, 1e-9)
        return {k: v / d for k, v in sorted(self.by_thread_s.items(), key=lambda kv: -kv[1])}


class ThreadCpu:
    """Per-thread CPU time from `start()` to `stop()`; threads made in between count from zero."""

    def __init__(self, interval_s: float = 0.2) -> None:
        self._interval_s = interval_s
        self._lock = threading.Lock()
        self._start: dict[ThreadKey, float] = {}
        self._last: dict[ThreadKey, tuple[str, float]] = {}
        self._names: dict[ThreadKey, str] = {}
        self._total_start = 0.0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._total_start = process_cpu_s()
        self._read()
        self._start = {key: cpu for key, (_, cpu) in self._last.items()}
        self._thread = threading.Thread(target=self._loop, name=SAMPLER_THREAD, daemon=True)
        self._thread.start()

    def stop(self) -> ThreadCpuReport:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        self._read()
        total = process_cpu_s() - self._total_start
        by: dict[str, float] = {}
        with self._lock:
            for key, (os_name, cpu) in self._last.items():
                name = pool_name(self._names.get(key, os_name))
                by[name] = by.get(name, 0.0) + cpu - self._start.get(key, 0.0)
        if by:
            # Readings are truncated to clock ticks, utime and stime each, so each thread whose
            # reading moved may be up to two ticks short: a rest under that is rounding, not a
            # thread. Threads that did not
            # run add no rounding; counting them (a long-lived process holds hundreds of idle
            # threads) hid whole ended threads under the allowance.
            moved = sum(1 for key, (_, cpu) in self._last.items() if cpu != self._start.get(key))
            rest = total - sum(by.values())
            if rest > 2 * max(1, moved) / _ticks_per_s():
                by[ENDED] = rest
        return ThreadCpuReport({k: v for k, v in by.items() if v > 0.0}, total)

    def _loop(self) -> None:
        while not self._stop.wait(self._interval_s):
            self._read()

    def _read(self) -> None:
        live = read_threads()
        names = {t.native_id: t.name for t in threading.enumerate() if t.native_id is not None}
        with self._lock:
            self._last.update(live)
            for key in live:
                if key[0] in names:
                    self._names[key] = names[key[0]]
