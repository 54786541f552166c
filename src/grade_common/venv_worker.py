"""Running a worker script in another Python environment and reading its JSON-line events.

Some tools need a library that cannot share grade's environment (bpy and MediaPipe both want
numpy < 2; grade pins 2.x): `make setup-render` / `make setup-realism` put each in a venv of its
own at the checkout's root, and the tool runs a worker script there that talks to grade through
files and one JSON object per stdout line.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from importlib.util import find_spec
from pathlib import Path
from typing import Any

from grade_common.errors import GradeError

LOG_TAIL_LINES = 8


def checkout_venv_python(venv: str) -> Path:
    """The interpreter of the venv `venv` (e.g. ".venv-render") at the root of this checkout."""
    # src/grade_common/venv_worker.py -> the checkout (colcon's symlink install resolves here).
    return Path(__file__).resolve().parents[2] / venv / "bin" / "python"


def find_python(
    *, env_var: str, module: str, venv: str, missing: str, error: type[GradeError]
) -> str:
    """The interpreter that imports `module`: $`env_var`, this one, or the checkout's `venv`.

    Raises:
        error: $`env_var` is not a file, or none of them has `module` (message `missing`).
    """
    chosen = os.environ.get(env_var)
    if chosen:
        if not Path(chosen).is_file():
            raise error(f"{env_var}={chosen!r} is not a file")
        return chosen
    if find_spec(module) is not None:
        return sys.executable
    python = checkout_venv_python(venv)
    if python.is_file():
        return str(python)
    raise error(missing)


@dataclass(frozen=True)
class WorkerEnvironment:
    """A library that lives in a venv of its own: how its Python is found, how it is set up."""

    module: str  # what the worker imports, e.g. "bpy"
    env_var: str  # names a Python that imports it, e.g. "GRADE_BLENDER_PYTHON"
    venv: str  # the checkout's venv that `setup_command` makes, e.g. ".venv-render"
    setup_command: str  # e.g. "make setup-render"
    missing: str  # e.g. "Blender's Python module 'bpy' is not installed (about 0.9 GB)"
    wanted: str  # the version the worker needs, e.g. "bpy 5.0"
    error: type[GradeError]  # the set-up error of the tool

    def python(self) -> str:
        """The interpreter that imports `module`: $`env_var`, this one, or the checkout's venv.

        Raises:
            error: none has `module` (the message names the set-up command).
        """
        return find_python(
            env_var=self.env_var,
            module=self.module,
            venv=self.venv,
            missing=(
                f"{self.missing}; install it with `{self.setup_command}` "
                f"(or point {self.env_var} at a Python that imports {self.wanted})"
            ),
            error=self.error,
        )

    def check_import(self, python: str, log: str) -> None:
        """Raise `error` naming the set-up command if the worker's `log` says that `python`
        could not import `module`.

        Raises:
            error: it could not.
        """
        if f"No module named '{self.module}'" in log:
            raise self.error(
                f"{python} cannot import {self.module}; install it with "
                f"`{self.setup_command}`\n{log_tail(log)}"
            )

    def run_job(
        self,
        python: str,
        script: Path,
        job_dir: Path,
        on_event: Callable[[dict[str, Any]], None],
        *,
        failure: type[GradeError],
        name: str,
        env: dict[str, str] | None = None,
    ) -> str:
        """Run the worker `script` on `job_dir` with `python` (run_json_worker; its stderr goes
        to job_dir/worker.log) and return that log.

        Raises:
            error: `python` cannot import `module` (the message names the set-up command).
            failure: the worker exited non-zero ("the `name` failed", with the log's tail).
        """
        code, log = run_json_worker(
            python, script, [str(job_dir)], job_dir / "worker.log", on_event, env=env
        )
        if code != 0:
            self.check_import(python, log)
            raise failure(f"the {name} failed (exit {code}):\n{log_tail(log)}")
        return log


def run_json_worker(
    python: str,
    script: Path,
    args: list[str],
    log: Path,
    on_event: Callable[[dict[str, Any]], None],
    env: dict[str, str] | None = None,
) -> tuple[int, str]:
    """Run `python -s script *args`, calling `on_event` for each JSON object it prints.

    The worker's stderr goes to the file `log` (a full stderr pipe would block it); grade's
    PYTHONPATH and PYTHONHOME are dropped from `env` (default: this process's environment) so
    that the other environment sees only itself.

    Returns:
        The exit code and the text of `log`.
    """
    base = os.environ if env is None else env
    child_env = {k: v for k, v in base.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    with open(log, "w") as log_file:
        proc = subprocess.Popen(
            [python, "-s", str(script), *args],
            stdout=subprocess.PIPE,
            stderr=log_file,
            text=True,
            env=child_env,
        )
        assert proc.stdout is not None
        try:
            for event in json_events(proc.stdout):
                on_event(event)
            code = proc.wait()
        except BaseException:
            proc.terminate()
            proc.wait()
            raise
    return code, log.read_text(errors="replace")


def log_tail(text: str, lines: int = LOG_TAIL_LINES) -> str:
    """The last `lines` lines of a worker's log, for an error message."""
    return "\n".join(text.strip().splitlines()[-lines:])


def json_events(stream: Any) -> Iterator[dict[str, Any]]:
    """The JSON objects among a stream's lines (libraries print their own lines there too)."""
    for line in stream:
        line = line.strip()
        if line.startswith("{") and line.endswith("}"):
            try:
                event = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(event, dict):
                yield event
