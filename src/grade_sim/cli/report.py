"""`grade report RUN_DIR`: print a run's summary and draw its contact sheet and top-view plot."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from grade_common.cli_args import command_parser
from grade_common.errors import GradeError
from grade_common.rundir import RunLayout
from grade_common.tum import ImageKind, list_file
from grade_sim.cli.run import print_summary
from grade_sim.report.contact_sheet import contact_sheet
from grade_sim.report.trajectory_plot import trajectory_plot


def build_parser() -> argparse.ArgumentParser:
    """The `grade report` argument parser."""
    parser = command_parser("grade report", __doc__)
    parser.add_argument("run_dir", type=Path, help="run directory")
    parser.add_argument("--no-images", action="store_true", help="only print the summary")
    return parser


def run(args: argparse.Namespace) -> int:
    """Print the run's summary and draw its contact sheets and top view (unless --no-images)."""
    layout = RunLayout(args.run_dir)
    summary_file = layout.summary_json
    if not summary_file.is_file():
        raise GradeError(
            f"{summary_file} does not exist: {args.run_dir} is not a finished run directory"
        )
    summary = json.loads(summary_file.read_text())
    print_summary(summary, args.run_dir)
    if args.no_images:
        return 0
    for camera_dir in sorted(p.parent for p in layout.gt.glob(f"*/*/{list_file(ImageKind.RGB)}")):
        name = f"contact_sheet_{camera_dir.parent.name}_{camera_dir.name}.png"
        out = contact_sheet(camera_dir, args.run_dir / name)
        print(f"  contact sheet: {out}")
    if layout.record.is_file():
        print(f"  top view: {trajectory_plot(args.run_dir, args.run_dir / 'trajectory.png')}")
    return 0


def main(argv: list[str]) -> int:
    """Run `grade report` with argv; return the exit code."""
    return run(build_parser().parse_args(argv))
