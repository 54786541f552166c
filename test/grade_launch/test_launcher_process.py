"""The process manager: ordered shutdown (SIGINT, SIGTERM, SIGKILL), exit codes, output prefixes."""

from __future__ import annotations

import io
import os
import signal
from pathlib import Path

import pytest

from grade_common.errors import ConfigError
from grade_launch.actions import Where
from grade_launch.plan import Output, ProcessPlan
from grade_launch.process import RunnerConfig, RunReport, run_processes


def sh(
    label: str, script: str, *, shutdown_on_exit: bool = False, output: Output = Output.SCREEN
) -> ProcessPlan:
    return ProcessPlan(
        label,
        None,
        ("/bin/sh", "-c", script),
        dict(os.environ),
        output,
        shutdown_on_exit,
        Where(Path("test.launch.yaml"), 1),
    )


def run(plans: list[ProcessPlan], config: RunnerConfig | None = None) -> tuple[RunReport, str, str]:
    out, err = io.StringIO(), io.StringIO()
    report = run_processes(plans, config or RunnerConfig(), out, err)
    return report, out.getvalue(), err.getvalue()


def test_crash_stops_others_in_order_sigint_sigterm_sigkill(tmp_path: Path) -> None:
    # The crasher waits until the others have set their traps (a marker file each), not for a
    # fixed second that a busy machine may not give them.
    up = [tmp_path / f"up{i}" for i in (2, 3, 4)]
    wait = " || ".join(f"[ ! -e {m} ]" for m in up)
    plans = [
        sh("crasher-1", f"while {wait}; do sleep 0.05; done; echo crashing; exit 4"),
        sh("ignores_int-2", f"trap '' INT; echo up; touch {up[0]}; while true; do sleep 0.1; done"),
        sh("ignores_all-3", f"trap '' INT TERM; touch {up[1]}; while true; do sleep 0.1; done"),
        sh("polite-4", f"echo to-stderr >&2; touch {up[2]}; exec sleep 30"),
    ]
    report, out, err = run(plans, RunnerConfig(sigterm_timeout_s=0.5, sigkill_timeout_s=0.5))
    by_label = {r.label: r for r in report.results}
    assert by_label["crasher-1"].returncode == 4
    assert by_label["crasher-1"].failed
    assert not by_label["crasher-1"].stopped_by_launcher
    assert by_label["polite-4"].returncode == -signal.SIGINT
    assert not by_label["polite-4"].failed
    assert by_label["ignores_int-2"].returncode == -signal.SIGTERM
    assert not by_label["ignores_int-2"].failed
    assert by_label["ignores_all-3"].returncode == -signal.SIGKILL
    assert by_label["ignores_all-3"].killed
    assert by_label["ignores_all-3"].failed
    assert report.exit_code == 1
    assert "[crasher-1] crashing" in out
    assert "[ignores_int-2] up" in out
    assert "[polite-4] to-stderr" in err
    assert "[ERROR] [crasher-1]: process has died [pid" in err
    assert "exit code 4" in err
    assert "crasher-1 failed with exit code 4: stopping all processes (SIGINT)" in out
    assert "[WARNING] [ignores_int-2]: still running; sending SIGTERM" in err
    assert "[ERROR] [ignores_all-3]: still running; sending SIGKILL" in err


def test_on_exit_shutdown_stops_the_rest_cleanly() -> None:
    plans = [sh("main-1", "sleep 0.5", shutdown_on_exit=True), sh("helper-2", "exec sleep 30")]
    report, out, _ = run(plans, RunnerConfig(sigterm_timeout_s=5.0))
    results = {r.label: r for r in report.results}
    assert results["main-1"].returncode == 0
    assert results["helper-2"].stopped_by_launcher
    assert report.exit_code == 0
    assert "main-1 exited (on_exit: shutdown)" in out


def test_without_stop_on_crash_the_others_run_to_their_end() -> None:
    plans = [sh("crash-1", "exit 2"), sh("worker-2", "sleep 1; echo done")]
    report, out, _ = run(plans, RunnerConfig(stop_on_crash=False))
    results = {r.label: r for r in report.results}
    assert not results["worker-2"].stopped_by_launcher
    assert results["worker-2"].returncode == 0
    assert "[worker-2] done" in out
    assert report.exit_code == 1


def test_log_output_goes_to_the_log_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ROS_LOG_DIR", str(tmp_path))
    plans = [sh("quiet-1", "echo hidden; echo shown >&2", output=Output.LOG)]
    report, out, err = run(plans)
    assert "hidden" not in out
    assert "[quiet-1] shown" in err
    assert report.log_dir is not None
    log = (report.log_dir / "launch.log").read_text()
    assert "[quiet-1] hidden" in log
    assert "[quiet-1] shown" in log


def test_missing_executable_is_reported_and_nothing_is_left_running() -> None:
    plans = [
        sh("ok-1", "exec sleep 30"),
        ProcessPlan(
            "gone-2", None, ("/nonexistent/exe",), {}, Output.SCREEN, False, Where(Path("x"), 1)
        ),
    ]
    report, _, err = run(plans)
    assert "[ERROR] [gone-2]: could not start /nonexistent/exe" in err
    assert [r.label for r in report.results] == ["ok-1"]
    assert report.results[0].stopped_by_launcher
    assert report.not_started == ("gone-2",)
    assert report.exit_code == 1


@pytest.mark.parametrize(
    ("field", "value"), [("sigterm_timeout_s", 0.0), ("sigkill_timeout_s", -1.0)]
)
def test_runner_config_rejects_bad_timeouts(field: str, value: float) -> None:
    with pytest.raises(ConfigError, match=f"RunnerConfig.{field}={value}: must be in"):
        RunnerConfig(**{field: value})  # type: ignore[arg-type]
