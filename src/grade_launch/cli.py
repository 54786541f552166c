"""`grade launch FILE [name:=value ...]`: run a ROS 2 YAML launch file without `ros2 launch`.

Exit code: 0 when every process started and ended cleanly (exit 0, or stopped by the launcher's
SIGINT/SIGTERM), 1 when a process crashed, could not start or had to be killed, or the launch file
is invalid; `--check` returns 1 when any file breaks the frontend rules.
"""

from __future__ import annotations

import argparse
import shlex
import shutil
import sys
import tempfile
from pathlib import Path

from grade_common.cli_args import command_parser
from grade_launch.errors import LaunchFileError
from grade_launch.executor import plan_launch
from grade_launch.plan import LaunchPlan
from grade_launch.process import RunnerConfig, run_processes
from grade_launch.substitution import SubstitutionError, find_package_prefix
from grade_launch.validate import check_launch_files


def build_parser() -> argparse.ArgumentParser:
    """The `grade launch` argument parser."""
    parser = command_parser(
        "grade launch",
        "Run a ROS 2 YAML launch file (the subset GRADE uses) like `ros2 launch`:\n"
        "`grade launch FILE [name:=value ...]` or `grade launch PKG FILE_NAME ...`.",
    )
    parser.add_argument(
        "target",
        nargs="+",
        help="launch file path, or package name and launch file name, then "
        "launch arguments name:=value",
    )
    parser.add_argument(
        "--check",
        action="store_true",
        help="only check the given launch files against the frontend rules",
    )
    parser.add_argument(
        "--print",
        dest="print_only",
        action="store_true",
        help="print each process's command line instead of running it",
    )
    parser.add_argument(
        "--sigterm-timeout-s",
        type=float,
        default=10.0,
        help="seconds from SIGINT to SIGTERM on shutdown (default 10)",
    )
    parser.add_argument(
        "--sigkill-timeout-s",
        type=float,
        default=5.0,
        help="seconds from SIGTERM to SIGKILL on shutdown (default 5)",
    )
    parser.add_argument(
        "--no-stop-on-crash",
        action="store_true",
        help="keep the others running when a node fails (ros2 launch default)",
    )
    return parser


def _find_in_package(package: str, file_name: str) -> Path:
    try:
        share = find_package_prefix(package) / "share" / package
    except SubstitutionError as err:
        raise LaunchFileError(str(err)) from err
    matches = sorted(p for p in share.rglob(file_name) if p.is_file())
    if len(matches) != 1:
        found = "none" if not matches else ", ".join(map(str, matches))
        raise LaunchFileError(
            f"launch file '{file_name}' of package '{package}': expected "
            f"exactly one below {share}, found {found}"
        )
    return matches[0]


def main(argv: list[str]) -> int:
    """Run `grade launch` with argv; return the exit code."""
    return run(build_parser().parse_args(argv))


def run(options: argparse.Namespace) -> int:
    """Check, print or run a launch file as `options` say; return the exit code."""
    positional = [t for t in options.target if ":=" not in t]
    arguments = _launch_arguments(options.target)
    if options.check:
        return _check(positional, arguments)
    path = _launch_file(positional)
    config = RunnerConfig(
        options.sigterm_timeout_s,
        options.sigkill_timeout_s,
        stop_on_crash=not options.no_stop_on_crash,
    )
    params_dir = Path(tempfile.mkdtemp(prefix="grade_launch_"))
    keep = False
    try:
        plan = plan_launch(path, arguments, params_dir)
        _warn_undeclared(path, plan, arguments)
        if options.print_only:
            # Printed command lines name the parameter files: those (only) are kept.
            keep = any(params_dir.iterdir())
            return _print_plan(plan, params_dir)
        return _run(plan, config)
    finally:
        if not keep:
            shutil.rmtree(params_dir, ignore_errors=True)


def _launch_arguments(targets: list[str]) -> dict[str, str]:
    arguments: dict[str, str] = {}
    for item in targets:
        if ":=" in item:
            name, value = item.split(":=", 1)
            if not name:
                raise LaunchFileError(f"launch argument '{item}' has no name; use name:=value")
            arguments[name] = value
    return arguments


def _warn_undeclared(path: Path, plan: LaunchPlan, arguments: dict[str, str]) -> None:
    # ros2 launch ignores an undeclared argument silently; a typo (lockstep:=true on a file
    # without it) then runs with the default. Say so, and what the file does take.
    undeclared = plan.undeclared(arguments)
    if undeclared:
        print(
            f"grade launch: warning: {path.name} does not declare launch argument(s) "
            f"{', '.join(undeclared)} (ignored); declared: "
            f"{', '.join(plan.declared_arguments) or 'none'}",
            file=sys.stderr,
        )


def _check(paths: list[str], arguments: dict[str, str]) -> int:
    if arguments:
        raise LaunchFileError("--check takes launch files only, no name:=value arguments")
    results, errors = check_launch_files(Path(p) for p in paths)
    for result in results:
        print(
            f"{result.path}: ok ({result.nodes} nodes, {result.includes} includes, "
            f"arguments: {', '.join(result.arguments) or 'none'})"
        )
    for error in errors:
        print(f"error: {error}", file=sys.stderr)
    return 1 if errors else 0


def _launch_file(positional: list[str]) -> Path:
    if len(positional) == 1:
        return Path(positional[0])
    if len(positional) == 2:
        return _find_in_package(positional[0], positional[1])
    raise LaunchFileError(
        f"expected FILE or PKG FILE_NAME before the name:=value arguments, got {positional}"
    )


def _print_plan(plan: LaunchPlan, params_dir: Path) -> int:
    for process in plan.processes:
        print(f"[{process.label}] {shlex.join(process.cmd)}")
    if any(params_dir.iterdir()):
        print(
            f"grade launch: parameter files of inline params are kept in {params_dir}",
            file=sys.stderr,
        )
    return 0


def _run(plan: LaunchPlan, config: RunnerConfig) -> int:
    report = run_processes(plan.processes, config)
    failed = [
        f"{r.label} (exit code {r.returncode}{', killed' if r.killed else ''})"
        for r in report.results
        if r.failed
    ]
    failed += [f"{label} (not started)" for label in report.not_started]
    if failed:
        print("grade launch: failed: " + ", ".join(failed), file=sys.stderr)
    return report.exit_code
