"""Per-thread CPU accounting of `grade bench sim` (grade_sim.sim.thread_cpu)."""

from __future__ import annotations

import subprocess
import sys
import threading
import time

import pytest

from grade_sim.sim.thread_cpu import ENDED, TASKS, ThreadCpu, pool_name

pytestmark = pytest.mark.skipif(not TASKS.is_dir(), reason="needs Linux /proc/self/task")


def _burn(cpu_s: float) -> None:
    """Keep this thread busy for cpu_s of its own CPU time (not wall time: load-proof)."""
    t0 = time.thread_time()
    while time.thread_time() - t0 < cpu_s:
        sum(range(1000))


def test_pool_workers_add_up_under_the_pool_s_name() -> None:
    assert pool_name("llvmpipe-0") == pool_name("llvmpipe-1") == "llvmpipe"
    assert pool_name("sim-worker_0") == "sim-worker"
    assert pool_name("MainThread") == "MainThread"


def test_a_python_thread_is_counted_under_its_threading_name() -> None:
    cpu = ThreadCpu(interval_s=0.05)
    cpu.start()
    worker = threading.Thread(target=_burn, args=(0.3,), name="busy-1")
    worker.start()
    while worker.is_alive():
        cpu._read()  # a reading while it runs, as the sampler thread takes them
        worker.join(0.02)
    report = cpu.stop()
    assert report.by_thread_s["busy"] >= 0.25  # clock ticks: within a few 10 ms
    assert report.total_s >= sum(v for k, v in report.by_thread_s.items()) - 0.05


_ENDED_CHILD = """
import threading, time
from grade_sim.sim.thread_cpu import ENDED, ThreadCpu
def burn(cpu_s):
    t0 = time.thread_time()
    while time.thread_time() - t0 < cpu_s:
        sum(range(1000))
cpu = ThreadCpu(interval_s=3600.0)  # no reading between start and stop
cpu.start()
worker = threading.Thread(target=burn, args=(0.3,), name="short-lived")
worker.start()
worker.join()
report = cpu.stop()
assert "short-lived" not in report.by_thread_s, report
assert report.by_thread_s[ENDED] >= 0.25, report
"""


def test_a_thread_that_ended_unread_is_the_rest_of_the_process_time() -> None:
    # In its own process: a suite worker holds threads of earlier tests (llvmpipe, numba,
    # ROS) that start, end and round in ways this accounting test must not depend on.
    run = subprocess.run(
        [sys.executable, "-c", _ENDED_CHILD], capture_output=True, text=True, check=False
    )
    assert run.returncode == 0, run.stderr


def test_idle_threads_do_not_hide_a_thread_that_ended_unread() -> None:
    # A long-lived process (a test worker, a node) holds many idle threads; the rounding allowance
    # is per thread that ran, so 200 idle ones must not swallow an ended thread's 0.3 s.
    release = threading.Event()
    idle = [threading.Thread(target=release.wait, daemon=True) for _ in range(200)]
    for thread in idle:
        thread.start()
    try:
        cpu = ThreadCpu(interval_s=3600.0)  # no reading between start and stop
        cpu.start()
        worker = threading.Thread(target=_burn, args=(0.3,), name="short-lived")
        worker.start()
        worker.join()
        report = cpu.stop()
    finally:
        release.set()
        for thread in idle:
            thread.join()
    assert "short-lived" not in report.by_thread_s
    assert report.by_thread_s[ENDED] >= 0.25, report
