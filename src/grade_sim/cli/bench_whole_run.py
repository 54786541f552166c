"""`grade bench sim --baseline DIR`: this checkout against another one, whole runs in pairs.

Both sides run `grade bench sim --duration-s S` (publishing on ROS 2 unless --no-ros, with the
lidar of --lidar), each in its own environment: this side in the caller's, the baseline under
DIR/scripts/env.sh. grade_sim.bench_pairs pairs the runs and takes the differences and medians.
"""

from __future__ import annotations

import argparse
import os
import shlex
import tempfile
from pathlib import Path

from grade_common.bench_results import write_results
from grade_common.errors import ConfigError
from grade_sim.bench_pairs import Comparison, Side, compare, figures_text

# What scripts/env.sh sets (venv, colcon workspace, distro): the baseline starts without this
# side's values, so its own environment alone decides what it imports.
_ENV_OF_A_CHECKOUT = (
    "VIRTUAL_ENV",
    "PYTHONPATH",
    "AMENT_PREFIX_PATH",
    "COLCON_PREFIX_PATH",
    "CMAKE_PREFIX_PATH",
    "LD_LIBRARY_PATH",
    "GRADE_ROS_DISTRO",
    "ROS_DISTRO",
    "ROS_VERSION",
    "ROS_PYTHON_VERSION",
    "PS1",
    "_OLD_VIRTUAL_PATH",
    "_OLD_VIRTUAL_PS1",
)
_SYSTEM_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The paired mode's options of `grade bench sim`."""
    parser.add_argument(
        "--baseline",
        type=Path,
        default=None,
        help="compare whole runs with this checkout (set up, with scripts/env.sh), side by "
        "side in pairs; e.g. a worktree of commit f7f0684",
    )
    parser.add_argument("--pairs", type=int, default=4, help="pairs with --baseline (4)")
    parser.add_argument(
        "--long-s", type=float, default=12.0, help="simulated s of the long run (12)"
    )
    parser.add_argument(
        "--short-s", type=float, default=2.0, help="simulated s of the short run (2)"
    )
    parser.add_argument(
        "--baseline-pipeline",
        default=None,
        help="--pipeline for the baseline's runs (default: its scenario's)",
    )
    parser.add_argument(
        "--baseline-distro",
        default=None,
        help="GRADE_ROS_DISTRO for the baseline's env.sh (checkouts with several distros)",
    )
    parser.add_argument("--no-alone", action="store_true", help="skip the runs of each side alone")
    parser.add_argument(
        "--json",
        type=Path,
        metavar="OUT",
        help="with --baseline: also write the comparison to this new JSON file "
        "(grade_common.bench_results)",
    )


def _bench_args(args: argparse.Namespace, pipeline: str | None) -> list[str]:
    out = ["bench", "sim", "--duration-s", "{s}"]
    if args.scenario:
        out += ["--scenario", str(Path(args.scenario).resolve())]
    if args.no_ros:
        out.append("--no-ros")
    if args.lidar:
        out += ["--lidar", args.lidar]
    if pipeline:
        out += ["--pipeline", pipeline]
    return out


def sides(args: argparse.Namespace) -> tuple[Side, Side]:
    """This checkout's side (the caller's environment) and the baseline's (its env.sh).

    Raises:
        ConfigError: when --baseline has no scripts/env.sh.
    """
    base_dir = Path(args.baseline).resolve()
    if not (base_dir / "scripts" / "env.sh").is_file():
        raise ConfigError(
            f"--baseline: {base_dir} has no scripts/env.sh; allowed: a grade checkout that "
            "was set up (make setup)"
        )
    domain = int(os.environ.get("ROS_DOMAIN_ID", "0"))
    mine_env = {**os.environ, "ROS_DOMAIN_ID": str(domain)}
    base_env = {k: v for k, v in os.environ.items() if k not in _ENV_OF_A_CHECKOUT}
    base_env["PATH"] = _SYSTEM_PATH
    base_env["ROS_DOMAIN_ID"] = str(domain + 1)  # the two sides never hear each other
    if args.baseline_distro:
        base_env["GRADE_ROS_DISTRO"] = args.baseline_distro
    mine = Side("yours", ("grade", *_bench_args(args, args.pipeline)), mine_env, Path.cwd())
    # bash sources the checkout's environment, then becomes its grade: the process measured.
    script = 'source "$0/scripts/env.sh" && exec python "$0/scripts/grade" "$@"'
    baseline = Side(
        "baseline",
        ("bash", "-c", script, str(base_dir), *_bench_args(args, args.baseline_pipeline)),
        base_env,
        base_dir,
    )
    return mine, baseline


def run(args: argparse.Namespace, argv: list[str]) -> int:
    """The paired comparison of `grade bench sim --baseline DIR` (`argv` its options); prints
    it, writes --json."""
    mine, baseline = sides(args)
    logs = Path(tempfile.mkdtemp(prefix="grade-bench-pairs-"))
    print(f"whole runs: {args.long_s:g} s minus {args.short_s:g} s simulated; logs in {logs}")
    for s in (mine, baseline):
        print(f"  {s.name}: {' '.join(s.command(args.long_s))} (in {s.cwd})")
    result = compare(
        mine,
        baseline,
        pairs=args.pairs,
        long_s=args.long_s,
        short_s=args.short_s,
        logs=logs,
        alone=not args.no_alone,
        report=lambda line: print(line, flush=True),
    )
    _print_summary(result)
    commands = "; ".join(f"{name}: {shlex.join(argv_)}" for name, argv_ in result.commands.items())
    write_results(
        args.json,
        "sim",
        argv,
        result.tables(),
        notes=f"CPU is user + system of each process and its children; commands ({commands})",
    )
    return 0


def _print_summary(result: Comparison) -> None:
    m = result.median
    print(f"== median over {len(result.pair_ratios)} pairs, yours / baseline:")
    print(
        f"  CPU per simulated s {m.cpu_per_sim_s:.3f}; "
        f"whole-run real-time factor {m.real_time_factor:.3f}"
    )
    for name, alone in result.alone.items():
        print(f"  alone, {name}: {figures_text(alone)}")
