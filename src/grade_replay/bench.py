"""`grade bench bag`: bag tool throughput (MB/s) against a plain rosbags read+write of the bag.

A bag with RGB and depth images (late, jittered stamps) is generated in a temporary directory;
each tool runs on it once and its MB/s (input bag size / wall time) is compared with copying the
same bag with rosbags' Reader and Writer alone (ratio = tool MB/s / copy MB/s).
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from rosbags.rosbag2 import Reader

from grade_common import ros_distro
from grade_common.bench_results import Cell, ResultTable, add_json_argument, write_results
from grade_common.cli_args import bench_parser, parse_bench_args
from grade_common.tum import ImageKind
from grade_replay.bag.clip import ClipConfig, clip_bag
from grade_replay.bag.export import ExportConfig, export_bag
from grade_replay.bag.info import bag_info
from grade_replay.bag.io import NS_PER_S, open_writer
from grade_replay.bag.reindex import ReindexConfig, reindex_bag

RGB_TOPIC = "/bench/cam/rgb/image_raw"
DEPTH_TOPIC = "/bench/cam/depth/image_raw"
RATE_HZ = 30.0


def generate_bag(path: Path, frames: int, width: int, height: int, seed: int = 0) -> Path:
    """An MCAP bag with `frames` RGB + depth images at 30 Hz, first third stamped late."""
    rng = np.random.default_rng(seed)
    store = ros_distro.typestore()
    types = store.types
    writer = open_writer(path)
    try:
        rgb_conn = writer.add_connection(RGB_TOPIC, "sensor_msgs/msg/Image", typestore=store)
        depth_conn = writer.add_connection(DEPTH_TOPIC, "sensor_msgs/msg/Image", typestore=store)
        rgb = rng.integers(0, 256, (height, width, 3), dtype=np.uint8)
        depth = rng.uniform(0.3, 12.0, (height, width)).astype(np.float32)
        for k in range(frames):
            lag_s = max(0.0, 0.1 * (1 - 3 * k / frames))
            jitter_ns = int(rng.integers(0, 2_000_000))
            t_ns = NS_PER_S + round((k / RATE_HZ - lag_s) * NS_PER_S) + jitter_ns
            header = types["std_msgs/msg/Header"](
                stamp=types["builtin_interfaces/msg/Time"](
                    sec=t_ns // NS_PER_S, nanosec=t_ns % NS_PER_S
                ),
                frame_id="bench/cam_optical_frame",
            )
            for conn, array, encoding in (
                (rgb_conn, np.roll(rgb, k, axis=1), "rgb8"),
                (depth_conn, depth, "32FC1"),
            ):
                msg = types["sensor_msgs/msg/Image"](
                    header=header,
                    height=height,
                    width=width,
                    encoding=encoding,
                    is_bigendian=0,
                    step=array.nbytes // height,
                    data=array.reshape(-1).view(np.uint8),
                )
                writer.write(conn, t_ns, bytes(store.serialize_cdr(msg, "sensor_msgs/msg/Image")))
    finally:
        writer.close()
    return path


def plain_copy(src: Path, out: Path) -> None:
    """Baseline: rosbags Reader -> Writer of every raw message, nothing else."""
    with Reader(src) as reader:
        writer = open_writer(out)
        try:
            conns = {
                c.id: writer.add_connection(
                    c.topic, c.msgtype, msgdef=c.msgdef.data, rihs01=c.digest
                )
                for c in reader.connections
            }
            for conn, t_ns, data in reader.messages():
                writer.write(conns[conn.id], t_ns, data)
        finally:
            writer.close()


def _timed(func: Callable[[], object]) -> float:
    start = time.perf_counter()
    func()
    return time.perf_counter() - start


def main(argv: list[str]) -> int:
    """Generate the bag, time each tool and the plain copy, print MB/s and ratios."""
    parser = bench_parser("bag", __doc__)
    parser.add_argument("--frames", type=int, default=100, help="frames in the test bag (100)")
    parser.add_argument("--width", type=int, default=640, help="image width (640)")
    parser.add_argument("--height", type=int, default=480, help="image height (480)")
    add_json_argument(parser)
    args = parse_bench_args(parser, argv)
    with tempfile.TemporaryDirectory(prefix="grade_bench_bag_") as tmp_dir:
        tmp = Path(tmp_dir)
        src = generate_bag(tmp / "input", args.frames, args.width, args.height)
        size_mb = sum(p.stat().st_size for p in src.iterdir()) / 1e6
        print(
            f"bag: {args.frames} frames x (rgb8 + 32FC1) {args.width}x{args.height}, "
            f"{size_mb:.1f} MB"
        )
        baseline_s = _timed(lambda: plain_copy(src, tmp / "copy"))
        runs: dict[str, Callable[[], object]] = {
            "info": lambda: bag_info(src),
            "clip": lambda: clip_bag(src, tmp / "clip", ClipConfig(start_s=0.5)),
            "reindex": lambda: reindex_bag(
                src, tmp / "reindex", ReindexConfig({RGB_TOPIC: RATE_HZ, DEPTH_TOPIC: RATE_HZ})
            ),
            "reindex+depth-cutoff": lambda: reindex_bag(
                src,
                tmp / "reindex_cut",
                ReindexConfig(
                    {RGB_TOPIC: RATE_HZ, DEPTH_TOPIC: RATE_HZ},
                    depth_cutoff_m=10.0,
                    depth_topic=DEPTH_TOPIC,
                ),
            ),
            "export (png)": lambda: export_bag(
                src,
                tmp / "export",
                ExportConfig(images=((ImageKind.RGB, RGB_TOPIC), (ImageKind.DEPTH, DEPTH_TOPIC))),
            ),
        }
        baseline_mbps = size_mb / baseline_s
        print(f"{'tool':<22} {'seconds':>8} {'MB/s':>9} {'ratio vs rosbags copy':>22}")
        print(f"{'rosbags read+write':<22} {baseline_s:>8.3f} {baseline_mbps:>9.1f} {1.0:>22.2f}")
        rows: list[tuple[Cell, ...]] = [
            ("rosbags read+write", round(baseline_s, 3), round(baseline_mbps, 1), 1.0)
        ]
        for name, run in runs.items():
            seconds = _timed(run)
            mbps = size_mb / seconds
            print(f"{name:<22} {seconds:>8.3f} {mbps:>9.1f} {mbps / baseline_mbps:>22.2f}")
            rows.append((name, round(seconds, 3), round(mbps, 1), round(mbps / baseline_mbps, 2)))
    title = (
        f"Bag of {args.frames} frames x (rgb8 + 32FC1) {args.width}x{args.height}, {size_mb:.1f} MB"
    )
    columns = ("tool", "seconds", "MB/s", "ratio vs rosbags copy")
    write_results(args.json, "bag", argv, [ResultTable(title, columns, tuple(rows))])
    return 0
