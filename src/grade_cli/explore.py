"""`grade explore coverage RUN --map MAP`: how much of a run's free floor the explorer saw.

The free floor is the world's ground-truth free space (walls and furniture blocked), rebuilt
from the scenario snapshot in RUN/run.yaml; the seen map is what the explorer node wrote to its
`map_output` (first-seen stamp per cell, and its track).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
from scipy import ndimage

from grade_common.errors import GradeError
from grade_common.rundir import RunLayout, read_run_yaml
from grade_common.types import FloatArray
from grade_control.coverage import coverage_over_time, load_seen_map
from grade_control.coverage_plot import plot_coverage
from grade_sim.config.scenario import scenario_from_mapping
from grade_sim.scene import build_scene


def free_floor_of_run(run_dir: Path) -> FloatArray:
    """(N, 2) centres of the free ground cells of the run's world (its largest free region)."""
    data = read_run_yaml(RunLayout(run_dir).run_yaml)
    scenario = scenario_from_mapping(data.get("scenario"), f"{run_dir}/run.yaml")
    grid = build_scene(scenario).world.free_space
    # Only the largest connected free region: the slivers between the outer walls and the
    # grid's edge are "free" cells nobody can reach or see.
    labels, count = ndimage.label(~grid.blocked)
    if count == 0:
        raise GradeError(f"{run_dir}: the world has no free floor")
    largest = 1 + int(np.argmax(np.bincount(labels.ravel())[1:]))
    free = np.argwhere(labels == largest)
    return np.asarray(grid.center_of(free), dtype=np.float64)


def build_parser() -> argparse.ArgumentParser:
    """The `grade explore` argument parser."""
    parser = argparse.ArgumentParser(prog="grade explore", description=__doc__)
    sub = parser.add_subparsers(dest="action", required=True)
    cov = sub.add_parser("coverage", help="free floor seen over time (+ plot)")
    cov.add_argument("run_dir", type=Path, help="the simulator's run directory")
    cov.add_argument("--map", type=Path, required=True, help="the explorer's map_output (.npz)")
    cov.add_argument("--plot", type=Path, help="new PNG: coverage over time and top view")
    cov.add_argument("--step", type=float, default=10.0, help="print every STEP seconds")
    cov.add_argument("--target", type=float, default=0.8, help="drawn in the plot (0..1)")
    return parser


def run(args: argparse.Namespace) -> int:
    """Print coverage over time; draw the plot when asked."""
    if args.step <= 0:
        raise GradeError(f"--step = {args.step} is invalid: must be > 0")
    seen, track = load_seen_map(args.map)
    free = free_floor_of_run(args.run_dir)
    end_s = float(track[-1, 0]) if len(track) else 0.0
    times = np.arange(0.0, end_s + 1e-9, 1.0)
    coverage = coverage_over_time(seen, free, times)
    print(f"free floor: {len(free)} cells; explored until {end_s:.1f} s (simulated)")
    for t in np.arange(0.0, end_s + 1e-9, args.step):
        print(f"  t = {t:6.1f} s  coverage {100 * coverage[int(t)]:5.1f} %")
    print(f"final coverage: {100 * coverage[-1]:.1f} %")
    if args.plot:
        print(f"plot: {plot_coverage(times, coverage, seen, free, track, args.plot, args.target)}")
    return 0


def main(argv: list[str]) -> int:
    """Run `grade explore` with argv; return the exit code."""
    return run(build_parser().parse_args(argv))
