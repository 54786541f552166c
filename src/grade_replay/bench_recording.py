"""`grade bench recording`: bag size and write speed with and without chunk compression.

Runs the default scenario (config/indoor_uav.yaml, shortened to --duration-s simulated seconds,
no ROS publishing) once per compression, side by side in one process, recording bag, ground
truth and experiment record as `grade run` does. Reports for each: bag MB per simulated minute,
the run's real-time factor, and the writer's own throughput (every message of the recorded bag
written again through the bag writer alone, MB of message data per second of wall time).
"""

from __future__ import annotations

import shutil
import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path

from grade_common.bagfile.compression import Compression
from grade_common.bagfile.rosbag2 import Rosbag2Topic, Rosbag2Writer
from grade_common.bagfile.scan import ChannelInfo, SchemaInfo, scan_mcap
from grade_common.bench_results import ResultTable, add_json_argument, write_results
from grade_common.cli_args import bench_parser, parse_bench_args
from grade_common.rundir import RunLayout
from grade_sim.config.scenario import load_scenario
from grade_sim.scenarios import add_scenario_argument, default_scenario_path
from grade_sim.sim.run import run_scenario


@dataclass(frozen=True)
class RecordingResult:
    compression: Compression
    sim_s: float
    rtf: float
    bag_bytes: int
    writer_mb_s: float

    @property
    def mb_per_sim_min(self) -> float:
        return self.bag_bytes / 1e6 / self.sim_s * 60.0


def _bag_bytes(run: Path) -> int:
    return sum(f.stat().st_size for f in RunLayout(run).bag.rglob("*") if f.is_file())


def _messages(bag: Path) -> list[tuple[ChannelInfo, SchemaInfo | None, int, bytes]]:
    out: list[tuple[ChannelInfo, SchemaInfo | None, int, bytes]] = []

    def sink(ch: ChannelInfo, schema: SchemaInfo | None, t_ns: int, data: memoryview) -> None:
        out.append((ch, schema, t_ns, bytes(data)))

    for mcap in sorted(bag.glob("*.mcap")):
        scan_mcap(mcap, sink)
    return out


def writer_throughput_mb_s(
    messages: list[tuple[ChannelInfo, SchemaInfo | None, int, bytes]],
    compression: Compression,
    tmp: Path,
) -> float:
    """MB of message data per wall second through Rosbag2Writer alone (one thread)."""
    out = tmp / f"writer-{compression.value}"
    t0 = time.perf_counter()
    writer = Rosbag2Writer(out, compression=compression)
    ids: dict[int, int] = {}
    for ch, schema, t_ns, data in messages:
        if ch.id not in ids:
            name = schema.name if schema else ""
            msgdef = schema.data.decode() if schema else ""
            ids[ch.id] = writer.add_topic(Rosbag2Topic(ch.topic, name, msgdef, "", []))
        writer.write(ids[ch.id], t_ns, data)
    writer.close()
    wall = time.perf_counter() - t0
    shutil.rmtree(out)
    return sum(len(m[3]) for m in messages) / 1e6 / wall


def main(argv: list[str]) -> int:
    parser = bench_parser("recording", __doc__)
    add_scenario_argument(parser)
    parser.add_argument("--duration-s", type=float, default=10.0, help="simulated seconds (10)")
    parser.add_argument(
        "--compressions",
        default="none,zstd,lz4",
        help="comma-separated, run in this order (default none,zstd,lz4)",
    )
    parser.add_argument(
        "--repeat",
        type=int,
        default=1,
        help="rounds over the compressions, interleaved, so a busy machine hits all alike",
    )
    add_json_argument(parser)
    args = parse_bench_args(parser, argv)
    kinds = [Compression(c.strip()) for c in args.compressions.split(",") if c.strip()]
    path = args.scenario or default_scenario_path()
    tmp = Path(tempfile.mkdtemp(prefix="grade-bench-recording-"))
    results: list[RecordingResult] = []
    messages: list[tuple[ChannelInfo, SchemaInfo | None, int, bytes]] = []
    try:
        for kind in [k for _ in range(max(1, args.repeat)) for k in kinds]:
            loaded = load_scenario(path, {"duration_s": args.duration_s, "realtime": False})
            scenario = replace(loaded, record=replace(loaded.record, bag_compression=kind))
            run = run_scenario(scenario, tmp / f"run-{kind.value}-{len(results)}")
            if not messages:  # the same messages for every writer measurement
                messages = _messages(RunLayout(run.path).bag)
            s = run.summary
            results.append(
                RecordingResult(
                    kind,
                    float(s["sim_time_s"]),
                    float(s["real_time_factor"]),
                    _bag_bytes(run.path),
                    writer_throughput_mb_s(messages, kind, tmp),
                )
            )
            shutil.rmtree(run.path)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    data_mb = sum(len(m[3]) for m in messages) / 1e6
    print(f"scenario: {path} ({args.duration_s:.1f} s simulated per run, ROS publishing off)")
    print(f"message data: {data_mb:.0f} MB per run")
    print(
        f"{'compression':<12} {'MB/sim-min':>11} {'size ratio':>10} {'RTF':>7} {'writer MB/s':>12}"
    )
    base = results[0]
    for r in results:
        print(
            f"{r.compression.value:<12} {r.mb_per_sim_min:>11.0f} "
            f"{base.bag_bytes / max(r.bag_bytes, 1):>9.2f}x {r.rtf:>7.3f} {r.writer_mb_s:>12.0f}"
        )
    print(f"(size ratio against '{base.compression.value}'; every row measured in this run)")
    for kind in kinds:
        rtfs = [r.rtf for r in results if r.compression is kind]
        print(f"mean RTF {kind.value}: {sum(rtfs) / len(rtfs):.3f} over {len(rtfs)} run(s)")
    rows = tuple(
        (
            r.compression.value,
            round(r.mb_per_sim_min),
            round(base.bag_bytes / max(r.bag_bytes, 1), 2),
            round(r.rtf, 3),
            round(r.writer_mb_s),
        )
        for r in results
    )
    title = f"{path}, {args.duration_s:.1f} s simulated per run, ROS publishing off"
    columns = (
        "compression",
        "MB per simulated minute",
        f"size ratio vs {base.compression.value}",
        "real-time factor",
        "writer MB/s",
    )
    write_results(args.json, "recording", argv, [ResultTable(title, columns, rows)])
    return 0
