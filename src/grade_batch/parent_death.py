"""Worker processes that end with the process that started them.

A pool worker of a `grade batch` that was killed outright (SIGKILL, the OOM killer) would go on
with its job, commit it beside the rerun's and then wait forever for work on its pipe. Two guards:
- Linux: `prctl(PR_SET_PDEATHSIG, SIGKILL)`, set in the worker and in every step process the
  worker starts, so the kernel kills each the moment its parent dies. The setting is per child
  and is cleared by fork, so each level sets its own; it survives exec.
- Everywhere: a thread in the worker that polls whether its parent is still the process that
  started it and otherwise kills the running step and exits (a worker spends its idle time in
  the pool's pipe read, which no signal of its own would interrupt).
"""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO

PR_SET_PDEATHSIG = 1  # <linux/prctl.h>
PARENT_POLL_S = 1.0

_libc: ctypes.CDLL | None = None
if sys.platform.startswith("linux"):
    _libc = ctypes.CDLL(None, use_errno=True)


def set_parent_death_signal(sig: int = signal.SIGKILL) -> bool:
    """Ask the kernel to send `sig` to this process when its parent ends; False where the system
    has no such request (not Linux).

    Raises:
        OSError: prctl refused.
    """
    if _libc is None:
        return False
    if _libc.prctl(PR_SET_PDEATHSIG, int(sig), 0, 0, 0) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"prctl(PR_SET_PDEATHSIG): {os.strerror(err)}")
    return True


def _step_preexec(parent_pid: int) -> Callable[[], None]:
    def preexec() -> None:
        # In the forked child, before exec: a parent that died before this line was already
        # gone when the request was made, and the kernel would never signal.
        set_parent_death_signal()
        if os.getppid() != parent_pid:
            os._exit(1)

    return preexec


_running: set[subprocess.Popen[bytes]] = set()
_running_lock = threading.Lock()


def run_step(cmd: list[str], *, cwd: Path, env: dict[str, str], log: IO[str]) -> int:
    """Run step `cmd` in `cwd` with its output (stdout and stderr) in `log`; its exit code.

    The step dies with this process (and the parent-alive thread kills it when this worker is
    orphaned).
    """
    preexec = _step_preexec(os.getpid()) if _libc is not None else None
    with subprocess.Popen(
        cmd, cwd=cwd, env=env, stdout=log, stderr=subprocess.STDOUT, preexec_fn=preexec
    ) as proc:
        with _running_lock:
            _running.add(proc)
        try:
            return proc.wait()
        finally:
            with _running_lock:
                _running.discard(proc)


def orphaned(parent_pid: int) -> bool:
    """True once this process's parent is no longer `parent_pid` (it died; the process was
    handed to init or a subreaper)."""
    return os.getppid() != parent_pid


def _watch_parent(parent_pid: int, poll_s: float) -> None:
    while True:
        time.sleep(poll_s)
        if orphaned(parent_pid):
            with _running_lock:
                for proc in _running:
                    proc.kill()
            os._exit(1)


def die_with_parent(parent_pid: int, poll_s: float = PARENT_POLL_S) -> None:
    """Make this (worker) process end when `parent_pid`, the process that started it, ends.

    Call it first thing in the worker (a pool's `initializer`), with the parent's PID taken in
    the parent: if the parent is already gone, the worker exits at once.
    """
    set_parent_death_signal()
    if orphaned(parent_pid):
        os._exit(1)
    threading.Thread(
        target=_watch_parent, args=(parent_pid, poll_s), name="parent-alive", daemon=True
    ).start()
