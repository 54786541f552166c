"""Finding Blender's Python and running the render worker in it (one process per device)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from importlib.util import find_spec
from pathlib import Path
from typing import Any

from grade_render.errors import SETUP_COMMAND, RenderError, RenderSetupError

WORKER = Path(__file__).with_name("blender_worker.py")
PYTHON_ENV = "GRADE_BLENDER_PYTHON"
# `make setup-render` puts bpy in its own environment: bpy 5.0 requires numpy < 2, grade pins 2.x.
RENDER_VENV = ".venv-render"


def _repo_venv_python() -> Path:
    # src/grade_render/worker_process.py -> the checkout (colcon's symlink install resolves here).
    return Path(__file__).resolve().parents[2] / RENDER_VENV / "bin" / "python"


def blender_python() -> str:
    """The interpreter that imports bpy: $GRADE_BLENDER_PYTHON, this one, or .venv-render's.

    Raises:
        RenderSetupError: none has bpy (the message names the set-up command).
    """
    chosen = os.environ.get(PYTHON_ENV)
    if chosen:
        if not Path(chosen).is_file():
            raise RenderSetupError(f"{PYTHON_ENV}={chosen!r} is not a file")
        return chosen
    if find_spec("bpy") is not None:
        return sys.executable
    venv = _repo_venv_python()
    if venv.is_file():
        return str(venv)
    raise RenderSetupError(
        "Blender's Python module 'bpy' is not installed (about 0.9 GB); install it with "
        f"`{SETUP_COMMAND}` (or point {PYTHON_ENV} at a Python that imports bpy 5.0)"
    )


def run_worker(
    job_dir: Path,
    on_event: Callable[[dict[str, Any]], None],
    python: str | None = None,
    worker: Path = WORKER,
    env: dict[str, str] | None = None,
) -> None:
    """Run the worker on `job_dir`, calling `on_event` for each JSON line it prints.

    `worker` is the Blender worker unless told (the Filament worker runs in this Python, with
    `env` from grade_render.filament_env).

    Raises:
        RenderSetupError: the interpreter cannot import bpy.
        RenderError: the worker failed (its last error lines are in the message).
    """
    exe = python or blender_python()
    base = os.environ if env is None else env
    env = {k: v for k, v in base.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    log = job_dir / "worker.log"  # a file, not a pipe: a full stderr pipe would block Blender
    with open(log, "w") as log_file:
        proc = subprocess.Popen(
            [exe, "-s", str(worker), str(job_dir)],
            stdout=subprocess.PIPE,
            stderr=log_file,
            text=True,
            env=env,
        )
        assert proc.stdout is not None
        try:
            for event in _events(proc.stdout):
                on_event(event)
            code = proc.wait()
        except BaseException:
            proc.terminate()
            proc.wait()
            raise
    err = log.read_text(errors="replace")
    if code != 0:
        tail = "\n".join(err.strip().splitlines()[-8:])
        if "No module named 'bpy'" in err:
            raise RenderSetupError(
                f"{exe} cannot import bpy; install it with `{SETUP_COMMAND}`\n{tail}"
            )
        name = "Blender" if worker == WORKER else worker.stem
        raise RenderError(f"the {name} render worker failed (exit {code}):\n{tail}")


def _events(stream: Any) -> Iterator[dict[str, Any]]:
    # Blender prints its own log lines on stdout too; ours are the JSON objects.
    for line in stream:
        line = line.strip()
        if line.startswith("{") and line.endswith("}"):
            try:
                event = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(event, dict):
                yield event
