"""WorkerEnvironment: the interpreter search and the set-up errors of a library in its own venv."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from grade_common.errors import GradeError
from grade_common.venv_worker import WorkerEnvironment, run_json_worker


class _SetupError(GradeError):
    pass


MISSING = "grade_no_such_module_x"
ENVIRONMENT = WorkerEnvironment(
    module=MISSING,
    env_var="GRADE_TEST_NO_SUCH_PYTHON",
    venv=".venv-grade-test-none",
    setup_command="make setup-nothing",
    missing="The test module is not installed (about 0 GB)",
    wanted=f"{MISSING} 1.0",
    error=_SetupError,
)


def test_python_names_the_set_up_command_when_no_interpreter_has_the_module(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(ENVIRONMENT.env_var, raising=False)
    with pytest.raises(_SetupError) as err:
        ENVIRONMENT.python()
    assert str(err.value) == (
        "The test module is not installed (about 0 GB); install it with `make setup-nothing` "
        f"(or point GRADE_TEST_NO_SUCH_PYTHON at a Python that imports {MISSING} 1.0)"
    )


def test_python_takes_the_interpreter_of_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENVIRONMENT.env_var, sys.executable)
    assert ENVIRONMENT.python() == sys.executable
    monkeypatch.setenv(ENVIRONMENT.env_var, "/nonexistent/python")
    with pytest.raises(_SetupError, match="is not a file"):
        ENVIRONMENT.python()


def test_check_import_raises_only_for_a_worker_that_could_not_import_the_module(
    tmp_path: Path,
) -> None:
    script = tmp_path / "worker.py"
    script.write_text(f"import {MISSING}\n")
    code, log = run_json_worker(sys.executable, script, [], tmp_path / "worker.log", print)
    assert code != 0
    with pytest.raises(_SetupError) as err:
        ENVIRONMENT.check_import(sys.executable, log)
    assert str(err.value).startswith(
        f"{sys.executable} cannot import {MISSING}; install it with `make setup-nothing`\n"
    )
    assert f"No module named '{MISSING}'" in str(err.value)  # the log's tail follows
    ENVIRONMENT.check_import(sys.executable, "Traceback ...\nValueError: something else")


class _WorkerError(GradeError):
    pass


def test_run_job_returns_the_log_and_reads_every_event(tmp_path: Path) -> None:
    script = tmp_path / "worker.py"
    script.write_text(
        "import json, sys\n"
        "print(json.dumps({'job': sys.argv[1]}))\n"
        "print('a library line', file=sys.stderr)\n"
    )
    events: list[dict[str, object]] = []
    log = ENVIRONMENT.run_job(
        sys.executable, script, tmp_path, events.append, failure=_WorkerError, name="test worker"
    )
    assert events == [{"job": str(tmp_path)}]
    assert log == (tmp_path / "worker.log").read_text() == "a library line\n"


def test_run_job_names_the_set_up_or_the_failed_worker(tmp_path: Path) -> None:
    script = tmp_path / "worker.py"
    script.write_text(f"import {MISSING}\n")
    with pytest.raises(_SetupError, match="install it with `make setup-nothing`"):
        ENVIRONMENT.run_job(
            sys.executable, script, tmp_path, print, failure=_WorkerError, name="test worker"
        )
    script.write_text("import sys\nprint('it broke', file=sys.stderr)\nsys.exit(3)\n")
    with pytest.raises(_WorkerError) as err:
        ENVIRONMENT.run_job(
            sys.executable, script, tmp_path, print, failure=_WorkerError, name="test worker"
        )
    assert str(err.value) == "the test worker failed (exit 3):\nit broke"
