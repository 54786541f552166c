"""`grade bench replay`: replay speed against the original run's speed.

Records a small default scenario, then replays it in teleport and velocity mode (unchanged, so
the fidelity report must say exact) and with people hidden. Prints each run's real-time factor
(simulated / wall time of the step loop), the ratio replay / original, and the extra wall time
of loading the record and writing the fidelity report.
"""

from __future__ import annotations

import tempfile
import time
from dataclasses import replace
from pathlib import Path

from grade_common.bench_results import Cell, ResultTable, add_json_argument, write_results
from grade_common.cli_args import bench_parser, parse_bench_args
from grade_replay.changes import ReplayChanges
from grade_replay.replay import ReplayConfig, ReplayMode, replay_run
from grade_sim.scenarios import small_scenario
from grade_sim.sim.run import run_scenario


def main(argv: list[str]) -> int:
    parser = bench_parser("replay", __doc__)
    parser.add_argument("--duration", type=float, default=3.0, help="recorded seconds (3)")
    parser.add_argument("--width", type=int, default=320, help="camera width (320)")
    parser.add_argument("--height", type=int, default=240, help="camera height (240)")
    parser.add_argument("--people", type=int, default=4, help="walking people (4)")
    add_json_argument(parser)
    args = parse_bench_args(parser, argv)
    scenario = small_scenario(
        duration_s=args.duration,
        bootstrap_s=0.5,
        people=args.people,
        flying_objects=2,
        width=args.width,
        height=args.height,
    )
    print(
        f"scenario: {args.duration + 0.5:.1f} s at 240 Hz, one {args.width}x{args.height} camera "
        f"at 30 Hz (rgb, depth, instance), {args.people} people, 2 flying objects"
    )
    with tempfile.TemporaryDirectory(prefix="grade-bench-replay-") as tmp:
        root = Path(tmp)
        # Warm-up (imports, OpenGL context, caches) so the first timed run is not penalised.
        run_scenario(replace(scenario, duration_s=0.2), root / "warmup")
        original = run_scenario(scenario, root / "original")
        rtf0 = original.stats.real_time_factor
        print(
            f"  {'run':<22} {'loop wall [s]':>13} {'RTF':>7} {'ratio':>7} {'total [s]':>10} "
            f"{'exact':>6}"
        )
        print(
            f"  {'original (grade run)':<22} {original.stats.wall_time_s:>13.2f} {rtf0:>7.2f} "
            f"{1.0:>7.2f} {'':>10} {'':>6}"
        )
        rows: list[tuple[Cell, ...]] = [
            (
                "original (grade run)",
                round(original.stats.wall_time_s, 2),
                round(rtf0, 2),
                1.0,
                "-",
                "-",
            )
        ]
        cases = [
            ("teleport replay", ReplayMode.TELEPORT, ReplayChanges()),
            ("velocity replay", ReplayMode.VELOCITY, ReplayChanges()),
            ("teleport, hide people", ReplayMode.TELEPORT, ReplayChanges(hide_classes=("person",))),
        ]
        for i, (label, mode, changes) in enumerate(cases):
            t0 = time.perf_counter()
            result = replay_run(ReplayConfig(original.path, root / f"replay{i}", mode, changes))
            total = time.perf_counter() - t0
            stats = result.run.stats
            rtf = stats.real_time_factor
            ratio = rtf / rtf0 if rtf0 > 0 else float("nan")
            print(
                f"  {label:<22} {stats.wall_time_s:>13.2f} {rtf:>7.2f} {ratio:>7.2f} "
                f"{total:>10.2f} {result.fidelity.exact!s:>6}"
            )
            exact = "yes" if result.fidelity.exact else "no"
            rows.append(
                (
                    label,
                    round(stats.wall_time_s, 2),
                    round(rtf, 2),
                    round(ratio, 2),
                    round(total, 2),
                    exact,
                )
            )
    print(
        "  ratio = replay RTF / original RTF (step loop only); total = whole replay_run call "
        "(scene rebuild, run, fidelity report)"
    )
    title = (
        f"{args.duration + 0.5:.1f} s at 240 Hz, one {args.width}x{args.height} camera at 30 Hz, "
        f"{args.people} people, 2 flying objects"
    )
    columns = ("run", "loop wall s", "real-time factor", "vs original", "total s", "exact")
    notes = (
        "vs original: the replay's real-time factor over the original's (step loop only); total: "
        "the whole replay (scene rebuild, run, fidelity report)."
    )
    write_results(args.json, "replay", argv, [ResultTable(title, columns, tuple(rows))], notes)
    return 0
