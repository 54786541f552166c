"""`grade batch SWEEP --out DIR`: generate a dataset from a sweep file, resumably.

Runs every job of the sweep (grade run -> noise -> replays -> COCO/YOLO labels) on a local
process pool (default, --workers N) or on Ray (--ray auto | local | ADDRESS), keeps
DIR/manifest.json, and builds DIR/dataset/ (splits, COCO, YOLO, eval tables, README card) once
every job is complete; a sweep of GRADE's SLAM table (pipeline.slam_table) merges its jobs'
tables into DIR/table/ instead. Rerun the same command to finish a killed or failed batch:
complete jobs are skipped, the others run again.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from grade_batch.batch import run_batch
from grade_batch.dataset import build_dataset
from grade_batch.jobs import expand
from grade_batch.pipeline import find_grade
from grade_batch.runners import LocalPool, RayRunner, Runner
from grade_batch.slam_table import merge_table
from grade_batch.spec import Resources, load_sweep


def build_parser() -> argparse.ArgumentParser:
    """The `grade batch` argument parser."""
    parser = argparse.ArgumentParser(
        prog="grade batch",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "sweep", type=Path, help="sweep YAML file (e.g. config/batch_grade_small.yaml)"
    )
    parser.add_argument("--out", type=Path, required=True, help="batch folder (new, or to resume)")
    parser.add_argument(
        "--workers", type=int, default=1, help="local pool: jobs at once (default 1)"
    )
    parser.add_argument(
        "--ray",
        metavar="auto|local|ADDRESS",
        help="run the jobs as Ray tasks: `auto` (the running cluster), `local` (a private "
        "instance on 127.0.0.1 with --workers CPUs) or a cluster address",
    )
    parser.add_argument(
        "--no-dataset",
        action="store_true",
        help="run the jobs only; do not build DIR/dataset/ (or merge DIR/table/)",
    )
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    return parser


def make_runner(args: argparse.Namespace, sweep_resources: Resources) -> Runner:
    """The runner the options ask for."""
    if args.ray:
        return RayRunner(args.ray, sweep_resources, local_cpus=args.workers)
    return LocalPool(args.workers)


def run(args: argparse.Namespace) -> int:
    """Run the batch; 0 when every job is complete (and the dataset built), 1 otherwise."""
    spec = load_sweep(args.sweep)
    outcome = run_batch(spec, args.out, make_runner(args, spec.sweep.resources), quiet=args.quiet)
    counts = outcome.manifest.counts()
    print(
        f"batch {spec.sweep.name}: ran {len(outcome.ran)}, skipped {len(outcome.skipped)} "
        f"complete, {counts['complete']}/{len(outcome.manifest.jobs)} complete, "
        f"{counts['failed']} failed, {outcome.wall_s:.1f} s"
    )
    if not outcome.complete:
        failed = [e for e in outcome.manifest.jobs.values() if e.status.value != "complete"]
        for entry in failed:
            print(
                f"  {entry.job_id}: {entry.status.value}: {entry.error} ({entry.log})",
                file=sys.stderr,
            )
        print("rerun the same command to retry them", file=sys.stderr)
        return 1
    if args.no_dataset:
        return 0
    if spec.sweep.pipeline.slam_table is not None:
        table = merge_table(spec, args.out.resolve(), expand(spec), find_grade())
        print(f"table: {table / 'table.csv'} (summary: {table / 'summary.md'})")
    else:
        dataset = build_dataset(
            spec, args.out.resolve(), expand(spec), outcome.manifest, find_grade()
        )
        print(f"dataset: {dataset} (card: {dataset / 'README.md'})")
    return 0


def main(argv: list[str]) -> int:
    """Run `grade batch` with argv; return the exit code."""
    return run(build_parser().parse_args(argv))
