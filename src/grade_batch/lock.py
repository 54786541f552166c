"""Lock files that name their holder: a process id, that process's start time and its host.

A batch folder is written by one batch process (the manifest, the dataset) and each job by one
worker. A killed batch can leave a worker running (on a system that does not end it with its
parent), and two `grade batch` commands can be started on one folder; either would then write
the same job twice. The lock says who holds it, so a rerun can tell a live holder (refuse, with
its PID) from a dead one (take the lock over). A PID alone is not enough: the kernel reuses PIDs,
so the holder's start time (field 22 of /proc/<pid>/stat, clock ticks since boot) is recorded
and compared too. A lock written on another host cannot be checked from here and counts as held.
"""

from __future__ import annotations

import json
import os
import socket
from dataclasses import asdict, dataclass
from pathlib import Path
from types import TracebackType

from grade_batch.errors import BatchError, LockHeldError

_STAT_STATE = 0  # fields after the ")" that closes the command name: state is the first
_STAT_STARTTIME = 19  # ... and starttime (field 22 of the whole line) the 20th


def _stat_fields(pid: int) -> list[str] | None:
    """The fields of /proc/<pid>/stat after the command name, or None without /proc."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None


def process_start_ticks(pid: int) -> int | None:
    """When process `pid` started (clock ticks since boot), or None where /proc cannot say."""
    fields = _stat_fields(pid)
    return int(fields[_STAT_STARTTIME]) if fields is not None else None


def pid_alive(pid: int, start_ticks: int | None = None) -> bool:
    """True while process `pid` runs (a zombie, killed but not yet reaped, counts as gone) and,
    given `start_ticks`, is the process that started then rather than a later one given the same
    PID."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process: it exists
        pass
    fields = _stat_fields(pid)
    if fields is None:
        return True  # no /proc: trust kill(0)
    if fields[_STAT_STATE] in ("Z", "X"):
        return False
    return start_ticks is None or int(fields[_STAT_STARTTIME]) == start_ticks


@dataclass(frozen=True)
class Holder:
    """Who holds a lock."""

    pid: int
    start_ticks: int | None
    host: str

    @classmethod
    def this_process(cls) -> Holder:
        pid = os.getpid()
        return cls(pid, process_start_ticks(pid), socket.gethostname())

    def alive(self) -> bool:
        """True unless the holder is known to be gone (a holder on another host is alive)."""
        if self.host != socket.gethostname():
            return True
        return pid_alive(self.pid, self.start_ticks)

    def describe(self) -> str:
        if self.host != socket.gethostname():
            return (
                f"pid {self.pid} on {self.host} (another host, which this one cannot check; "
                "remove the lock once that process has stopped)"
            )
        return f"pid {self.pid} on {self.host}"


def read_holder(path: Path) -> Holder | None:
    """The holder written in lock file `path`, or None when there is no such file.

    Raises:
        BatchError: the file is not a lock file of grade.
    """
    try:
        text = path.read_text()
    except FileNotFoundError:
        return None
    except OSError as err:
        raise BatchError(f"{path}: cannot read the lock file: {err}") from err
    try:
        data = json.loads(text)
        return Holder(int(data["pid"]), data["start_ticks"], str(data["host"]))
    except (ValueError, KeyError, TypeError) as err:
        raise BatchError(
            f"{path}: not a grade lock file ({text[:80]!r}); remove it if nothing runs there"
        ) from err


def live_holder(path: Path) -> Holder | None:
    """The holder of lock file `path` if it is alive, else None (no lock, or a dead holder).

    Raises:
        BatchError: the file is not a lock file of grade.
    """
    holder = read_holder(path)
    return holder if holder is not None and holder.alive() else None


class PidLock:
    """Lock file `path` held by this process while the context is active.

    A lock whose holder is dead is taken over; one whose holder is alive raises LockHeldError
    naming `what`, the holder and the file.
    """

    def __init__(self, path: Path, what: str) -> None:
        self.path = path
        self.what = what
        self._holder: Holder | None = None

    def acquire(self) -> None:
        """Create the lock file, taking it over from a dead holder.

        Raises:
            LockHeldError: a live process (or one on another host) holds it.
        """
        self._holder = Holder.this_process()  # here, not in __init__: the process that holds it
        self.path.parent.mkdir(parents=True, exist_ok=True)
        payload = json.dumps(asdict(self._holder)).encode()
        # Written whole under a private name, then linked into place: link() fails when the
        # lock exists, and a reader never sees a half-written lock file.
        private = self.path.with_name(f".{self.path.name}.{self._holder.pid}")
        private.write_bytes(payload)
        try:
            self._link(private)
        finally:
            private.unlink(missing_ok=True)

    def _link(self, private: Path) -> None:
        for _ in range(3):  # a takeover races other takers at most a few times
            try:
                os.link(private, self.path)
            except FileExistsError:
                holder = read_holder(self.path)
                if holder is not None and holder.alive():
                    raise LockHeldError(
                        f"{self.what} is held by {holder.describe()} (lock {self.path}); "
                        "wait for it to finish or stop it, then rerun"
                    ) from None
                self._remove_stale(holder)
                continue
            return
        raise LockHeldError(f"{self.what}: lock {self.path} keeps changing hands; rerun")

    def _remove_stale(self, holder: Holder | None) -> None:
        # Remove the file only if it still names the dead holder: another taker may have
        # replaced it since it was read (then the next link attempt sees the new holder).
        if holder is not None and read_holder(self.path) == holder:
            self.path.unlink(missing_ok=True)

    def release(self) -> None:
        """Remove the lock file if this process still holds it."""
        if self._holder is None:
            return
        try:
            if read_holder(self.path) == self._holder:
                self.path.unlink(missing_ok=True)
        except BatchError:  # replaced by something else: not ours to remove
            pass

    def __enter__(self) -> PidLock:
        self.acquire()
        return self

    def __exit__(
        self,
        _type: type[BaseException] | None,
        _value: BaseException | None,
        _tb: TracebackType | None,
    ) -> None:
        self.release()
