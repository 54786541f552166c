"""`grade bench scenes`: time to generate SceneReplica's 164 candidates and select 20.

Reachability of the 16 x 16 grid (Panda IK) is timed apart: it is computed once per robot and
table, not per scene set.
"""

from __future__ import annotations

import time

import numpy as np

from grade_common.bench_results import ResultTable, add_json_argument, write_results
from grade_common.cli_args import bench_parser, parse_bench_args
from grade_scenes.catalog import build_catalog
from grade_scenes.generate import GenerateConfig, generate_scenes
from grade_scenes.objects import default_object_set
from grade_scenes.pose_check import check_poses, settled_catalog
from grade_scenes.reach.reachability import compute_reachability
from grade_scenes.select import SelectConfig, random_selection, select_scenes
from grade_scenes.table import TableConfig


def main(argv: list[str]) -> int:
    """Run the benchmark; prints the measured times."""
    parser = bench_parser("scenes", __doc__)
    parser.add_argument("--seed", type=int, default=0, help="random seed of every stage (0)")
    parser.add_argument(
        "--candidates", type=int, default=164, help="candidate scenes to generate (164)"
    )
    parser.add_argument("--select", type=int, default=20, help="scenes to select (20)")
    add_json_argument(parser)
    args = parse_bench_args(parser, argv)
    t0 = time.perf_counter()
    reach = compute_reachability(TableConfig(), np.random.default_rng(args.seed))
    t1 = time.perf_counter()
    raw = build_catalog(default_object_set())
    catalog = settled_catalog(raw, check_poses(raw, TableConfig()))
    t2 = time.perf_counter()
    scenes = generate_scenes(
        catalog, reach, GenerateConfig(scenes=args.candidates), np.random.default_rng(args.seed)
    )
    t3 = time.perf_counter()
    config = SelectConfig(count=args.select)
    best = select_scenes(scenes, len(catalog), config, np.random.default_rng(args.seed))
    t4 = time.perf_counter()
    baseline = random_selection(scenes, len(catalog), config, np.random.default_rng(args.seed))
    print(
        f"reachability 16x16 blocks (Panda IK): {t1 - t0:8.2f} s "
        f"({int(reach.reachable.sum())} reachable)"
    )
    print(f"objects + stable poses + physics check: {t2 - t1:6.2f} s")
    print(f"generate {args.candidates} candidates:            {t3 - t2:8.2f} s")
    print(f"select {args.select} (ILP + swap search):     {t4 - t3:8.2f} s")
    print(f"generate + select total:              {t4 - t1:8.2f} s (objects included)")
    print(
        f"coverage {best.coverage}/{best.possible_pairs} pairs, gap {best.optimality_gap:.3g}; "
        f"random selection {baseline.coverage}; diversity {best.diversity_bits:.2f} bits, "
        f"random {baseline.diversity_bits:.2f}"
    )
    stages = (
        ("reachability 16x16 blocks (Panda IK)", t1 - t0),
        ("objects + stable poses + physics check", t2 - t1),
        (f"generate {args.candidates} candidates", t3 - t2),
        (f"select {args.select} (ILP + swap search)", t4 - t3),
        ("generate + select total (objects included)", t4 - t1),
    )
    times = ResultTable(
        "Wall time per stage", ("stage", "s"), tuple((n, round(s, 2)) for n, s in stages)
    )
    quality = ResultTable(
        "The selection against a random one within the same bounds",
        ("set", "coverage (pairs)", "diversity bits"),
        (
            ("selected", best.coverage, round(best.diversity_bits, 2)),
            ("random", baseline.coverage, round(baseline.diversity_bits, 2)),
        ),
    )
    write_results(args.json, "scenes", argv, [times, quality])
    return 0
