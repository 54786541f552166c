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
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import IO, ClassVar

from grade_common.schema import PARAMETER, Checked, Wording, bounds
from grade_common.signals import STOP_SIGNALS
from grade_launch.plan import ProcessPlan

_POLL_S = 0.05


# A process gets at most an hour to stop after each signal.
_TIMEOUT = bounds(0.0, 3600.0, exclusive_min=True)


@dataclass(frozen=True)
class RunnerConfig(Checked):
    """How the runner stops processes.

    sigterm_timeout_s: seconds between SIGINT and SIGTERM (default 10 s: recorders finish bags).
    sigkill_timeout_s: seconds between SIGTERM and SIGKILL.
    stop_on_crash: a process exiting with a non-zero code stops all others (ros2 launch only
        does so for `on_exit: shutdown`; set False for exactly that behaviour).
    """

    WORDING: ClassVar[Wording] = replace(
        PARAMETER,
        root="RunnerConfig",
        name="RunnerConfig.{path}",
        out_of_range="{name}={raw}: must be in {allowed} seconds",
    )

    sigterm_timeout_s: float = field(default=10.0, metadata=_TIMEOUT)
    sigkill_timeout_s: float = field(default=5.0, metadata=_TIMEOUT)
    stop_on_crash: bool = True


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
    log_dir = _log_dir(dict(os.environ)) if any(p.output.to_log for p in plans) else None
    with contextlib.ExitStack() as stack:
        log_file: IO[str] | None = None
        if log_dir is not None:
            log_dir.mkdir(parents=True, exist_ok=False)
            log_file = stack.enter_context((log_dir / "launch.log").open("w"))
        printer = _Printer(out, err, log_file)
        if log_dir is not None:
            printer.info("launch", f"All log files can be found below {log_dir}")
        interrupts = stack.enter_context(_received_signals())
        group = stack.enter_context(ProcessGroup(config, printer))
        group.start(plans)
        group.wait(interrupts)
        return group.report(interrupted=bool(interrupts), log_dir=log_dir)


@contextlib.contextmanager
def _received_signals() -> Iterator[list[signal.Signals]]:
    """Every SIGINT/SIGTERM received while active, in order (main thread only).

    Not grade_common.signals.stop_flag: a flag cannot count, and each further signal escalates
    the shutdown one step (SIGTERM, then SIGKILL); the log also names the signal.
    """
    received: list[signal.Signals] = []
    if threading.current_thread() is not threading.main_thread():
        yield received
        return
    previous = {
        sig: signal.signal(sig, lambda signum, _: received.append(signal.Signals(signum)))
        for sig in STOP_SIGNALS
    }
    try:
        yield received
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


class ProcessGroup:
    """The processes of one launch: started in order, output pumped, exits watched, stopped.

    Use as a context manager: leaving it kills whatever still runs (only after an unexpected
    error, since `wait` returns when all have ended).
    """

    def __init__(self, config: RunnerConfig, printer: _Printer) -> None:
        self.config = config
        self.printer = printer
        self.running: list[_Running] = []
        self.results: list[ProcessResult] = []
        self.not_started: tuple[str, ...] = ()
        self.shutdown_at: float | None = None  # when SIGINT went out
        self.sigterm_sent_at: float | None = None

    def __enter__(self) -> ProcessGroup:
        return self

    def __exit__(self, *_: object) -> None:
        for proc in self.running:
            if proc.popen.poll() is None:
                _signal(proc, signal.SIGKILL)
                proc.popen.wait()

    def start(self, plans: Sequence[ProcessPlan]) -> None:
        """Start the processes in order; if one cannot start, stop those already started."""
        for index, plan in enumerate(plans):
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
                self.printer.info(plan.label, f"could not start {plan.cmd[0]}: {error}", "ERROR")
                self.not_started = tuple(p.label for p in plans[index:])
                self.shutdown("a process failed to start")
                return
            self.printer.info(plan.label, f"process started with pid [{popen.pid}]")
            self.running.append(_Running(plan, popen, self._pump(plan, popen)))

    def _pump(self, plan: ProcessPlan, popen: subprocess.Popen[bytes]) -> list[threading.Thread]:
        """One reader thread per pipe prefixing lines with the label; stderr always on screen."""
        assert popen.stdout is not None
        assert popen.stderr is not None
        screen_out = self.printer.stdout if plan.output.to_screen else None
        threads = []
        for pipe, screen in ((popen.stdout, screen_out), (popen.stderr, self.printer.stderr)):
            thread = threading.Thread(
                target=_reader,
                daemon=True,
                args=(pipe, plan.label, screen, plan.output.to_log, self.printer),
            )
            thread.start()
            threads.append(thread)
        return threads

    def wait(self, interrupts: Sequence[signal.Signals]) -> None:
        """Watch exits and signals until every process has ended, shutting down as needed."""
        handled_interrupts = 0
        while any(p.returncode is None for p in self.running):
            for proc in self.running:
                code = proc.popen.poll() if proc.returncode is None else None
                if code is not None:
                    self._ended(proc, code)
            if len(interrupts) > handled_interrupts:
                handled_interrupts = len(interrupts)
                self._escalate(f"signal {interrupts[-1].name}")
            self._escalate_on_timeout(time.monotonic())
            time.sleep(_POLL_S)

    def report(self, *, interrupted: bool, log_dir: Path | None) -> RunReport:
        """How every process ended, in the order they ended."""
        return RunReport(tuple(self.results), self.not_started, interrupted, log_dir)

    def shutdown(self, reason: str) -> None:
        """Ask every running process to stop (SIGINT); the timeouts escalate from here."""
        if any(proc.returncode is None for proc in self.running):
            self.printer.info("launch", f"{reason}: stopping all processes (SIGINT)")
        self.shutdown_at = self._send(signal.SIGINT, level=None)

    def _ended(self, proc: _Running, code: int) -> None:
        proc.returncode = code
        for thread in proc.threads:
            thread.join(timeout=2.0)
        result = ProcessResult(
            proc.plan.label, proc.popen.pid, code, proc.stopped_by_launcher, proc.killed
        )
        self.results.append(result)
        self._print_end(result, proc.plan)
        if self.shutdown_at is not None:
            return
        if proc.plan.shutdown_on_exit:
            self.shutdown(f"{proc.plan.label} exited (on_exit: shutdown)")
        elif code != 0 and self.config.stop_on_crash:
            self.shutdown(f"{proc.plan.label} failed with exit code {code}")

    def _print_end(self, result: ProcessResult, plan: ProcessPlan) -> None:
        if result.returncode == 0:
            self.printer.info(result.label, f"process has finished cleanly [pid {result.pid}]")
            return
        self.printer.info(
            result.label,
            f"process has died [pid {result.pid}, exit code {result.returncode}, "
            f"cmd '{' '.join(plan.cmd)}'].",
            "ERROR" if result.failed else "INFO",
        )

    def _escalate(self, reason: str) -> None:
        """One step further: SIGINT first, then SIGTERM, then SIGKILL."""
        if self.shutdown_at is None:
            self.shutdown(reason)
        elif self.sigterm_sent_at is None:
            self.sigterm_sent_at = self._send(signal.SIGTERM, level="WARNING")
        else:
            self._send(signal.SIGKILL, level="ERROR")

    def _escalate_on_timeout(self, now: float) -> None:
        config = self.config
        if (
            self.shutdown_at is not None
            and self.sigterm_sent_at is None
            and now - self.shutdown_at > config.sigterm_timeout_s
        ):
            self.sigterm_sent_at = self._send(signal.SIGTERM, level="WARNING")
        if (
            self.sigterm_sent_at is not None
            and now - self.sigterm_sent_at > config.sigkill_timeout_s
        ):
            self._send(signal.SIGKILL, level="ERROR")

    def _send(self, signum: signal.Signals, level: str | None) -> float:
        """Send `signum` to every process still running, saying so at `level` unless None.

        Returns when it was sent.
        """
        for proc in self.running:
            if proc.returncode is None:
                if level is not None:
                    self.printer.info(
                        proc.plan.label, f"still running; sending {signum.name}", level
                    )
                proc.stopped_by_launcher = True
                proc.killed = proc.killed or signum == signal.SIGKILL
                _signal(proc, signum)
        return time.monotonic()


def _signal(proc: _Running, signum: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError):
        proc.popen.send_signal(signum)
