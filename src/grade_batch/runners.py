"""Where jobs run: a local process pool (default) or a Ray cluster, behind one small protocol.

Both run the same `execute_job` on plain-data plans and hand each result to a callback in the
batch process as soon as it arrives (the batch alone writes the manifest). Ray is imported only
when asked for; it schedules each job with the sweep's declared resources (CPUs, GPUs, memory).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from typing import Any, Protocol

from grade_batch.errors import BatchError
from grade_batch.parent_death import die_with_parent
from grade_batch.pipeline import JobPlan, JobResult, execute_job
from grade_batch.spec import Resources

RAY_INSTALL_HINT = "pip install ray==2.60.0 (pinned in requirements/base.txt)"
# Ray's usage statistics are sent to an outside server; this machine may not talk to one.
RAY_QUIET_ENV = {"RAY_USAGE_STATS_ENABLED": "0"}
# A private instance keeps every Ray server on loopback: Ray's single-machine mode (the one it
# uses on macOS/Windows) takes 127.0.0.1 as the node address, so GCS, raylet and workers listen
# there; otherwise they listen on all interfaces whatever `_node_ip_address` says. Ray reads
# the variable when it is imported.
RAY_LOCAL_ENV = {**RAY_QUIET_ENV, "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0"}
LOOPBACK = "127.0.0.1"
OnResult = Callable[[JobResult], None]


class Runner(Protocol):
    """Runs plans, calling `on_result` in this process for each finished job."""

    name: str

    def run(self, plans: Sequence[JobPlan], on_result: OnResult) -> None:
        """Run every plan; return when all have reported."""
        ...


class LocalPool:
    """A pool of `workers` processes on this machine."""

    def __init__(self, workers: int) -> None:
        if workers < 1:
            raise BatchError(f"--workers {workers}: must be at least 1")
        self.workers = workers
        self.name = f"local pool ({workers} worker{'s' if workers > 1 else ''})"

    def run(self, plans: Sequence[JobPlan], on_result: OnResult) -> None:
        if not plans:
            return
        # Workers (and their step processes) end with this process, even when it is killed
        # outright. The parent-death signal follows the thread that forked the worker: the pool
        # forks them in `submit`, from this thread, which waits here until every job is done.
        with ProcessPoolExecutor(
            max_workers=min(self.workers, len(plans)),
            initializer=die_with_parent,
            initargs=(os.getpid(),),
        ) as pool:
            pending: set[Future[JobResult]] = {pool.submit(execute_job, p) for p in plans}
            while pending:
                done, pending = wait(pending, return_when=FIRST_COMPLETED)
                for future in done:
                    on_result(future.result())


def import_ray() -> Any:
    """The `ray` module.

    Raises:
        BatchError: ray is not installed (the message says how to install it).
    """
    try:
        import ray
    except ImportError as err:
        raise BatchError(f"--ray needs the ray package: {RAY_INSTALL_HINT}") from err
    return ray


def start_local_ray(num_cpus: int) -> Any:
    """Start a private one-machine Ray instance bound to 127.0.0.1 (no dashboard); returns the
    `ray` module (the caller shuts it down).

    Raises:
        BatchError: ray is missing, or was imported before in this process without the loopback
            setting (its node address is not 127.0.0.1; the instance is shut down again).
    """
    flag = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"
    if "ray" in sys.modules and os.environ.get(flag) != RAY_LOCAL_ENV[flag]:
        raise BatchError(
            f"ray was imported before {flag}=0 was set, so a local instance would listen on "
            "every interface; set it in the environment before ray is imported"
        )
    os.environ.update(RAY_LOCAL_ENV)
    ray = import_ray()
    ray.init(num_cpus=num_cpus, include_dashboard=False, log_to_driver=False)
    node_ip = ray.util.get_node_ip_address()
    if node_ip != LOOPBACK:  # never expected; refuse rather than serve on other interfaces
        ray.shutdown()
        raise BatchError(f"the local Ray instance took the address {node_ip}, not {LOOPBACK}")
    return ray


class RayRunner:
    """Ray tasks, one per job, each declaring the sweep's resources.

    `address`: "auto" (the running cluster, or RAY_ADDRESS), "local" (a private one-machine
    instance on 127.0.0.1 with `local_cpus` CPUs, shut down afterwards) or a cluster address.
    If the calling process has connected to Ray already, that connection is used as it is.
    """

    def __init__(self, address: str, resources: Resources, local_cpus: int = 2) -> None:
        self.address = address
        self.resources = resources
        self.local_cpus = local_cpus
        self.name = f"ray ({address})"

    def _connect(self, ray: Any) -> bool:
        """Connect unless connected; True when this runner started the connection."""
        if ray.is_initialized():
            return False
        if self.address == "local":
            start_local_ray(self.local_cpus)
        else:
            os.environ.update(RAY_QUIET_ENV)
            ray.init(address=self.address, log_to_driver=False)
        return True

    def run(self, plans: Sequence[JobPlan], on_result: OnResult) -> None:
        if not plans:
            return
        if self.address == "local":
            os.environ.update(RAY_LOCAL_ENV)  # before the first import of ray
        ray = import_ray()
        started = self._connect(ray)
        try:
            options: dict[str, Any] = {
                "num_cpus": self.resources.num_cpus,
                "num_gpus": self.resources.num_gpus,
                "max_retries": 0,  # the manifest decides about retries, on the next run
            }
            if self.resources.memory_mb:
                options["memory"] = self.resources.memory_mb * 1024 * 1024
            task = ray.remote(execute_job).options(**options)
            pending = [task.remote(plan) for plan in plans]
            while pending:
                done, pending = ray.wait(pending, num_returns=1)
                for ref in done:
                    on_result(ray.get(ref))
        finally:
            if started:
                ray.shutdown()
