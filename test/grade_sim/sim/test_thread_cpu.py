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
    # The worker burns, then waits while a reading is taken (as the sampler takes them while a
    # thread lives): read after its burn, not by polling during it, so load cannot make the last
    # reading miss the burn's end.
    burned, release = threading.Event(), threading.Event()

    def burn_then_wait() -> None:
        _burn(0.3)
        burned.set()
        release.wait()

    cpu = ThreadCpu(interval_s=3600.0)
    cpu.start()
    worker = threading.Thread(target=burn_then_wait, name="busy-1")
    worker.start()
    burned.wait()
    cpu._read()
    release.set()
    worker.join()
    report = cpu.stop()
    assert report.by_thread_s["busy"] >= 0.29  # one clock tick of rounding
    assert report.total_s >= sum(v for k, v in report.by_thread_s.items()) - 0.05


def _join_until_gone(thread: threading.Thread) -> None:
    """Join `thread` and wait until the OS has removed it: `join` returns when its Python code is
    done, while the OS thread may still be exiting and listed in /proc with all its CPU time
    (under load, often). Only then has it ended for /proc readings."""
    thread.join()
    task = TASKS / str(thread.native_id)
    for _ in range(5000):
        if not task.exists():
            return
        time.sleep(0.001)
    raise AssertionError(f"thread {thread.name} still listed in {TASKS} 5 s after join")


@pytest.mark.parametrize("idle_threads", [0, 200])
def test_a_thread_that_ended_unread_is_the_rest_of_the_process_time(idle_threads: int) -> None:
    # A long-lived process (a test worker, a node) holds many idle threads; the rounding allowance
    # is per thread that ran, so 200 idle ones must not swallow an ended thread's 0.3 s.
    release = threading.Event()
    idle = [threading.Thread(target=release.wait, daemon=True) for _ in range(idle_threads)]
    for thread in idle:
        thread.start()
    try:
        cpu = ThreadCpu(interval_s=3600.0)  # no reading between start and stop
        cpu.start()
        worker = threading.Thread(target=_burn, args=(0.3,), name="short-lived")
        worker.start()
        _join_until_gone(worker)
        report = cpu.stop()
    finally:
        release.set()
        for thread in idle:
            thread.join()
    assert "short-lived" not in report.by_thread_s
    assert report.by_thread_s[ENDED] >= 0.29, report  # one clock tick of rounding
