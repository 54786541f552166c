"""Finding Blender's Python and running the render worker in it (one process per device)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from grade_common.venv_worker import WorkerEnvironment
from grade_render.errors import SETUP_COMMAND, RenderError, RenderSetupError

WORKER = Path(__file__).with_name("blender_worker.py")
PYTHON_ENV = "GRADE_BLENDER_PYTHON"
# `make setup-render` puts bpy in its own environment: bpy 5.0 requires numpy < 2, grade pins 2.x.
RENDER_VENV = ".venv-render"


BLENDER = WorkerEnvironment(
    module="bpy",
    env_var=PYTHON_ENV,
    venv=RENDER_VENV,
    setup_command=SETUP_COMMAND,
    missing="Blender's Python module 'bpy' is not installed (about 0.9 GB)",
    wanted="bpy 5.0",
    error=RenderSetupError,
)


def blender_python() -> str:
    """The interpreter that imports bpy: $GRADE_BLENDER_PYTHON, this one, or .venv-render's.

    Raises:
        RenderSetupError: none has bpy (the message names the set-up command).
    """
    return BLENDER.python()


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
    name = "Blender" if worker == WORKER else worker.stem
    BLENDER.run_job(
        exe, worker, job_dir, on_event, failure=RenderError, name=f"{name} render worker", env=env
    )
