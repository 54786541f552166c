"""`grade bench batch`: jobs per hour with 1 and 2 local workers (and the speed-up), and Ray's
overhead per job against the local pool at the same parallelism.

The same sweep of short jobs (config/indoor_uav.yaml, low resolution, run + COCO/YOLO export)
runs into fresh folders, one runner after the other, in one process: the ratios are measured
side by side. Ray runs as a private instance on 127.0.0.1 whose start-up is timed apart.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

from grade_batch.batch import run_batch
from grade_batch.runners import LocalPool, RayRunner, Runner, start_local_ray
from grade_batch.spec import SweepFile, load_sweep
from grade_common.bench_results import Cell, ResultTable, add_json_argument, write_results
from grade_common.share import shipped_file


def bench_sweep(folder: Path, jobs: int, duration_s: float) -> SweepFile:
    """A sweep of `jobs` short indoor jobs (seeds 1..jobs)."""
    data: dict[str, Any] = {
        "name": "bench",
        "groups": [
            {
                "name": "indoor",
                "scenario": str(shipped_file("config/indoor_uav.yaml")),
                "seeds": list(range(1, jobs + 1)),
                "set": {
                    "duration_s": duration_s,
                    "bootstrap_s": 0.2,
                    "people.count": 4,
                    "robots.0.cameras.0.width": 160,
                    "robots.0.cameras.0.height": 120,
                    "robots.0.cameras.0.rate_hz": 10.0,
                },
            }
        ],
    }
    path = folder / "bench_sweep.yaml"
    path.write_text(yaml.safe_dump(data))
    return load_sweep(path)


def _timed(spec: SweepFile, out: Path, runner: Runner) -> float:
    start = time.perf_counter()
    outcome = run_batch(spec, out, runner, quiet=True)
    wall = time.perf_counter() - start
    if not outcome.complete:
        raise SystemExit(f"bench batch: jobs failed on {runner.name}: {outcome.failed}")
    return wall


def build_parser() -> argparse.ArgumentParser:
    """The `grade bench batch` argument parser."""
    parser = argparse.ArgumentParser(prog="grade bench batch", description=__doc__)
    parser.add_argument("--jobs", type=int, default=4, help="jobs per runner (default 4)")
    parser.add_argument(
        "--duration", type=float, default=2.0, help="simulated seconds per job (default 2)"
    )
    parser.add_argument("--no-ray", action="store_true", help="skip the Ray measurement")
    add_json_argument(parser)
    return parser


def run(args: argparse.Namespace, argv: Sequence[str] = ()) -> int:
    """Run the benchmark and print its table (`argv`: the command line, for --json)."""
    with tempfile.TemporaryDirectory(prefix="grade-bench-batch-") as tmp:
        root = Path(tmp)
        spec = bench_sweep(root, args.jobs, args.duration)
        n = args.jobs
        print(f"{n} jobs of {args.duration:g} s simulated (160x120 camera, run + export)")
        walls = {w: _timed(spec, root / f"local{w}", LocalPool(w)) for w in (1, 2)}
        for w, wall in walls.items():
            print(
                f"  local pool, {w} worker{'s' if w > 1 else ' '}: {wall:7.1f} s  "
                f"{n / wall * 3600:7.0f} jobs/h  ({wall / n:.1f} s/job)"
            )
        print(f"  speed-up 2 workers vs 1: {walls[1] / walls[2]:.2f}x")
        rows: list[tuple[Cell, ...]] = [
            (f"local pool, {w} worker(s)", round(wall, 1), round(n / wall * 3600), "")
            for w, wall in walls.items()
        ]
        if not args.no_ray:
            start = time.perf_counter()
            ray = start_local_ray(2)
            startup = time.perf_counter() - start
            try:
                wall = _timed(spec, root / "ray", RayRunner("auto", spec.sweep.resources))
            finally:
                ray.shutdown()
            print(
                f"  ray (2 CPUs, 127.0.0.1): {wall:7.1f} s  {n / wall * 3600:7.0f} jobs/h; "
                f"cluster start {startup:.1f} s"
            )
            print(
                f"  ray overhead per job vs local pool (2 workers): "
                f"{(wall - walls[2]) / n:+.2f} s ({wall / walls[2]:.2f}x the local wall time)"
            )
            rows.append(
                (
                    "Ray, 2 CPUs on 127.0.0.1",
                    round(wall, 1),
                    round(n / wall * 3600),
                    f"cluster start {startup:.1f} s",
                )
            )
    title = f"{n} jobs of {args.duration:g} s simulated (160x120 camera, run + export)"
    columns = ("runner", "wall s", "jobs per hour", "note")
    write_results(args.json, "batch", argv, [ResultTable(title, columns, tuple(rows))])
    return 0


def main(argv: list[str]) -> int:
    """Run `grade bench batch` with argv; return the exit code."""
    return run(build_parser().parse_args(argv), argv)
