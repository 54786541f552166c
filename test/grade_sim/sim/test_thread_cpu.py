"""Per-thread CPU accounting of `grade bench sim` (grade_sim.sim.thread_cpu)."""

from __future__ import annotations

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


def test_a_thread_that_ended_unread_is_the_rest_of_the_process_time() -> None:
    # The rest is reported only above a clock tick per thread read (their rounding), and a
    # test process may hold many threads from earlier tests (llvmpipe, numba): burn past that.
    burn_s = 0.3 + 0.01 * len(list(TASKS.iterdir()))
    cpu = ThreadCpu(interval_s=3600.0)  # no reading between start and stop
    cpu.start()
    worker = threading.Thread(target=_burn, args=(burn_s,), name="short-lived")
    worker.start()
    worker.join()
    report = cpu.stop()
    assert "short-lived" not in report.by_thread_s
    assert report.by_thread_s[ENDED] >= burn_s - 0.05
