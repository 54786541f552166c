"""Run the processes of a launch plan: start, prefix their output, stop them all in order.

Shutdown (on SIGINT/SIGTERM to the runner, a node with `on_exit: shutdown` exiting, or a node
crashing) sends SIGINT to every running process, SIGTERM to those still running after
`sigterm_timeout_s` (long enough for a recorder to close its bag), and SIGKILL after a further
`sigkill_timeout_s`. A second Ctrl-C escalates at once to SIGTERM, a third to SIGKILL.
"""

from __future__ import annotations

import contextlib
import datetime
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import IO

from grade_common.errors import ConfigError
from grade_launch.plan import Output, ProcessPlan

_POLL_S = 0.05


@dataclass(frozen=True)
class RunnerConfig:
    """How the runner stops processes.

    sigterm_timeout_s: seconds between SIGINT and SIGTERM (default 10 s: recorders finish bags).
    sigkill_timeout_s: seconds between SIGTERM and SIGKILL.
    stop_on_crash: a process exiting with a non-zero code stops all others (ros2 launch only
        does so for `on_exit: shutdown`; set False for exactly that behaviour).
    """

    sigterm_timeout_s: float = 10.0
    sigkill_timeout_s: float = 5.0
    stop_on_crash: bool = True

    def __post_init__(self) -> None:
        for name in ("sigterm_timeout_s", "sigkill_timeout_s"):
            value = getattr(self, name)
            if not 0.0 < value <= 3600.0:
                raise ConfigError(f"RunnerConfig.{name}={value}: must be in (0, 3600] seconds")


@dataclass(frozen=True)
class ProcessResult:
    """How one process ended."""

    label: str
    pid: int
    returncode: int
    stopped_by_launcher: bool  # it was still running when shutdown signals were sent
    killed: bool  # it needed SIGKILL

    @property
    def failed(self) -> bool:
        """Crashed, or did not stop cleanly when asked."""
        if self.killed:
            return True
        if self.stopped_by_launcher:
            return self.returncode not in (0, -signal.SIGINT, -signal.SIGTERM, 130, 143)
        return self.returncode != 0


@dataclass(frozen=True)
class RunReport:
    """Every process's result and why the run ended."""

    results: tuple[ProcessResult, ...]
    not_started: tuple[str, ...]  # labels of processes that could not be started
    interrupted: bool
    log_dir: Path | None

    @property
    def exit_code(self) -> int:
        """0 when every process started and ended cleanly, 1 otherwise."""
        return 1 if self.not_started or any(r.failed for r in self.results) else 0


@dataclass
class _Running:
    plan: ProcessPlan
    popen: subprocess.Popen[bytes]
    threads: list[threading.Thread] = field(default_factory=list)
    returncode: int | None = None
    stopped_by_launcher: bool = False
    killed: bool = False


class _Printer:
    """Serialises prefixed lines from many reader threads onto the screen and the log."""

    def __init__(self, stdout: IO[str], stderr: IO[str], log_file: IO[str] | None) -> None:
        self.stdout = stdout
        self.stderr = stderr
        self.log_file = log_file
        self.lock = threading.Lock()

    def line(self, text: str, *, screen: IO[str] | None, log: bool) -> None:
        with self.lock:
            if screen is not None:
                screen.write(text + "\n")
                screen.flush()
            if log and self.log_file is not None:
                self.log_file.write(text + "\n")
                self.log_file.flush()

    def info(self, label: str, message: str, level: str = "INFO") -> None:
        stream = self.stderr if level != "INFO" else self.stdout
        self.line(f"[{level}] [{label}]: {message}", screen=stream, log=True)


def _reader(
    pipe: IO[bytes], label: str, screen: IO[str] | None, log: bool, printer: _Printer
) -> None:
    for raw in iter(pipe.readline, b""):
        text = raw.decode(errors="replace").rstrip("\n")
        printer.line(f"[{label}] {text}", screen=screen, log=log)
    pipe.close()


def _log_dir(environ: dict[str, str]) -> Path:
    if environ.get("ROS_LOG_DIR"):
        base = Path(environ["ROS_LOG_DIR"])
    elif environ.get("ROS_HOME"):
        base = Path(environ["ROS_HOME"]) / "log"
    else:
        base = Path.home() / ".ros" / "log"
    stamp = datetime.datetime.now().strftime("%Y-%m-%d-%H-%M-%S-%f")
    return base / f"{stamp}-{socket.gethostname()}-{os.getpid()}"


def run_processes(
    plans: Sequence[ProcessPlan],
    config: RunnerConfig,
    stdout: IO[str] | None = None,
    stderr: IO[str] | None = None,
) -> RunReport:
    """Start every planned process, wait until all have ended, and report how each ended.

    Installs SIGINT/SIGTERM handlers while running when called from the main thread.
    """
    out = stdout if stdout is not None else sys.stdout
    err = stderr if stderr is not None else sys.stderr
    log_dir: Path | None = None
    log_file: IO[str] | None = None
    if any(p.output in (Output.LOG, Output.BOTH) for p in plans):
        log_dir = _log_dir(dict(os.environ))
        log_dir.mkdir(parents=True, exist_ok=False)
        log_file = (log_dir / "launch.log").open("w")
    printer = _Printer(out, err, log_file)
    if log_dir is not None:
        printer.info("launch", f"All log files can be found below {log_dir}")

    interrupts: list[int] = []

    def on_signal(signum: int, _frame: FrameType | None) -> None:
        interrupts.append(signum)

    previous: dict[signal.Signals, object] = {}
    if threading.current_thread() is threading.main_thread():
        for sig in (signal.SIGINT, signal.SIGTERM):
            previous[sig] = signal.signal(sig, on_signal)

    running: list[_Running] = []
    results: list[ProcessResult] = []
    try:
        shutdown_at: float | None = None
        sigterm_sent_at: float | None = None
        not_started: list[str] = []
        for plan in plans:
            try:
                popen = subprocess.Popen(
                    list(plan.cmd),
                    env=dict(plan.env),
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    start_new_session=True,
                )
            except OSError as error:
                printer.info(plan.label, f"could not start {plan.cmd[0]}: {error}", "ERROR")
                not_started = [p.label for p in plans[len(running) :]]
                break
            printer.info(plan.label, f"process started with pid [{popen.pid}]")
            proc = _Running(plan, popen)
            to_screen = plan.output in (Output.SCREEN, Output.BOTH)
            to_log = plan.output in (Output.LOG, Output.BOTH)
            assert popen.stdout is not None
            assert popen.stderr is not None
            for pipe, screen in ((popen.stdout, out if to_screen else None), (popen.stderr, err)):
                thread = threading.Thread(
                    target=_reader, daemon=True, args=(pipe, plan.label, screen, to_log, printer)
                )
                thread.start()
                proc.threads.append(thread)
            running.append(proc)

        def begin_shutdown(reason: str) -> float:
            if any(proc.returncode is None for proc in running):
                printer.info("launch", f"{reason}: stopping all processes (SIGINT)")
            for proc in running:
                if proc.returncode is None:
                    proc.stopped_by_launcher = True
                    _signal(proc, signal.SIGINT)
            return time.monotonic()

        def send_sigterm() -> float:
            for proc in running:
                if proc.returncode is None:
                    printer.info(proc.plan.label, "still running; sending SIGTERM", "WARNING")
                    _signal(proc, signal.SIGTERM)
            return time.monotonic()

        def send_sigkill() -> None:
            for proc in running:
                if proc.returncode is None:
                    printer.info(proc.plan.label, "still running; sending SIGKILL", "ERROR")
                    proc.killed = True
                    _signal(proc, signal.SIGKILL)

        if not_started:
            shutdown_at = begin_shutdown("a process failed to start")
        handled_interrupts = 0
        while any(p.returncode is None for p in running):
            for proc in running:
                if proc.returncode is not None:
                    continue
                code = proc.popen.poll()
                if code is None:
                    continue
                proc.returncode = code
                for thread in proc.threads:
                    thread.join(timeout=2.0)
                result = ProcessResult(
                    proc.plan.label, proc.popen.pid, code, proc.stopped_by_launcher, proc.killed
                )
                results.append(result)
                cmd = " ".join(proc.plan.cmd)
                if code == 0:
                    printer.info(
                        proc.plan.label, f"process has finished cleanly [pid {proc.popen.pid}]"
                    )
                else:
                    level = "ERROR" if result.failed else "INFO"
                    printer.info(
                        proc.plan.label,
                        f"process has died [pid {proc.popen.pid}, exit code {code}, cmd '{cmd}'].",
                        level,
                    )
                if shutdown_at is None:
                    if proc.plan.shutdown_on_exit:
                        shutdown_at = begin_shutdown(
                            f"{proc.plan.label} exited (on_exit: shutdown)"
                        )
                    elif code != 0 and config.stop_on_crash:
                        shutdown_at = begin_shutdown(
                            f"{proc.plan.label} failed with exit code {code}"
                        )
            if len(interrupts) > handled_interrupts:
                handled_interrupts = len(interrupts)
                if shutdown_at is None:
                    shutdown_at = begin_shutdown(f"signal {signal.Signals(interrupts[-1]).name}")
                elif sigterm_sent_at is None:
                    sigterm_sent_at = send_sigterm()
                else:
                    send_sigkill()
            now = time.monotonic()
            if (
                shutdown_at is not None
                and sigterm_sent_at is None
                and now - shutdown_at > config.sigterm_timeout_s
            ):
                sigterm_sent_at = send_sigterm()
            if sigterm_sent_at is not None and now - sigterm_sent_at > config.sigkill_timeout_s:
                send_sigkill()
            time.sleep(_POLL_S)
        return RunReport(tuple(results), tuple(not_started), bool(interrupts), log_dir)
    finally:
        for proc in running:
            if proc.popen.poll() is None:  # only on an unexpected error in this loop
                _signal(proc, signal.SIGKILL)
                proc.popen.wait()
        for sig, handler in previous.items():
            signal.signal(sig, handler)  # type: ignore[arg-type]
        if log_file is not None:
            log_file.close()


def _signal(proc: _Running, signum: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError):
        proc.popen.send_signal(signum)
