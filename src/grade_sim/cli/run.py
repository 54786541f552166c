"""`grade run SCENARIO --out RUN_DIR`: simulate a scenario without ROS (same files as sim_node)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import yaml

from grade_common.cli_args import add_quiet, command_parser
from grade_common.errors import ConfigError
from grade_common.progress import step_bar
from grade_common.signals import stopped_exit_code
from grade_sim.config.scenario import load_scenario
from grade_sim.io.run_dir import check_run_output
from grade_sim.sim.run import run_scenario


def parse_overrides(items: list[str]) -> dict[str, Any]:
    """`key=value` pairs (value parsed as YAML) into scenario overrides; a key is a dotted path
    (`people.count`, `robots.0.start_xyz`) or a whole top-level key."""
    out: dict[str, Any] = {}
    for item in items:
        if "=" not in item:
            raise ConfigError(f"--set {item!r}: expected KEY=VALUE, e.g. --set duration_s=5")
        key, value = item.split("=", 1)
        if not key.strip():
            raise ConfigError(f"--set {item!r}: the key is empty; e.g. --set duration_s=5")
        try:
            out[key.strip()] = yaml.safe_load(value)
        except (yaml.YAMLError, RecursionError) as err:
            raise ConfigError(f"--set {item!r}: the value is not valid YAML: {err}") from err
    return out


def print_summary(summary: dict[str, Any], path: Path) -> None:
    print(f"run {summary['status']}: {path}")
    print(
        f"  simulated {summary['sim_time_s']:.2f} s in {summary['wall_time_s']:.2f} s "
        f"(real-time factor {summary['real_time_factor']:.2f}), "
        f"peak memory {summary['peak_memory_mb']:.0f} MB"
    )
    print(
        f"  camera frames rendered {summary['camera_frames_rendered']}, "
        f"ground-truth frames written {summary['ground_truth_frames_written']}"
    )
    print("  stage times [s]: " + ", ".join(f"{k} {v:.2f}" for k, v in summary["stage_s"].items()))
    print("  topics:")
    width = max((len(t) for t in summary["topics"]), default=10)
    for topic, info in summary["topics"].items():
        rate = f"{info['rate_hz']:>8.2f} Hz" if info["count"] > 1 else "    once"
        print(f"    {topic:<{width}}  {info['count']:>6} msgs  {rate}")


def build_parser() -> argparse.ArgumentParser:
    """The `grade run` argument parser."""
    parser = command_parser("grade run", __doc__)
    parser.add_argument("scenario", type=Path, help="scenario YAML file")
    parser.add_argument("--out", type=Path, required=True, help="new run directory")
    parser.add_argument(
        "--overwrite",
        action="store_true",
        help="replace an existing run directory once the new run is complete",
    )
    parser.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a scenario key by its dotted path (YAML value), e.g. --set "
        "people.count=20 or --set duration_s=5; repeatable",
    )
    add_quiet(parser)
    return parser


def run(args: argparse.Namespace) -> int:
    """Simulate the scenario into the new run directory and print its summary; 130 when cut."""
    # Output first: a refused --out costs nothing, not a scene build.
    check_run_output(args.out, args.overwrite, inputs=[args.scenario])
    scenario = load_scenario(args.scenario, parse_overrides(args.overrides))
    with step_bar("simulating", quiet=args.quiet) as progress:
        result = run_scenario(
            scenario,
            args.out,
            overwrite=args.overwrite,
            progress=progress,
            inputs=[args.scenario],
        )
    print_summary(result.summary, result.path)
    return 0 if result.stats.status == "complete" else stopped_exit_code()


def main(argv: list[str]) -> int:
    """Run `grade run` with argv; return the exit code."""
    return run(build_parser().parse_args(argv))
