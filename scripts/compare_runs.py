#!/usr/bin/env python3
"""Compare two run directories for byte-identical behaviour.

`python scripts/compare_runs.py RUN_A RUN_B` checks what a refactor must not change: every bag
message (topic, log time, CDR payload, in order), every file under gt/ (trajectory.txt,
instances.yaml, ...) byte for byte, PNGs by their decoded pixels (an encoder may write other
bytes for the same image), and every array of record.npz bit for bit. Timings, wall-clock
fields and plots are not compared. Exit code 0 when identical, 1 otherwise (the differences are
listed), 2 on bad input.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
from rosbags.rosbag2 import Reader

MAX_LISTED = 20


def bag_messages(bag_dir: Path) -> Iterator[tuple[str, int, bytes]]:
    """(topic, log time ns, raw CDR payload) of every message, in log-time order."""
    with Reader(bag_dir) as reader:
        for connection, stamp_ns, raw in reader.messages():
            yield connection.topic, stamp_ns, bytes(raw)


def compare_bags(bag_a: Path, bag_b: Path) -> list[str]:
    """Differences between the message streams of two bags (empty when identical)."""
    diffs: list[str] = []
    count = 0
    for count, (msg_a, msg_b) in enumerate(
        _zip_longest(bag_messages(bag_a), bag_messages(bag_b)), start=1
    ):
        if msg_a == msg_b:
            continue
        if msg_a is None or msg_b is None:
            extra = msg_a if msg_b is None else msg_b
            side = "first" if msg_b is None else "second"
            assert extra is not None
            diffs.append(f"bag: only the {side} bag has message {count} ({extra[0]} @ {extra[1]})")
            break
        what = "payload" if msg_a[:2] == msg_b[:2] else "topic/stamp"
        diffs.append(
            f"bag: message {count} differs in {what}: {msg_a[0]} @ {msg_a[1]} vs "
            f"{msg_b[0]} @ {msg_b[1]}"
        )
        if len(diffs) >= MAX_LISTED:
            break
    return diffs


def _zip_longest(
    a: Iterator[tuple[str, int, bytes]], b: Iterator[tuple[str, int, bytes]]
) -> Iterator[tuple[tuple[str, int, bytes] | None, tuple[str, int, bytes] | None]]:
    done = object()
    while True:
        x, y = next(a, done), next(b, done)
        if x is done and y is done:
            return
        yield (None if x is done else x), (None if y is done else y)  # type: ignore[misc]


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _same_file(a: Path, b: Path) -> bool:
    """Byte for byte; PNGs with other bytes by their decoded pixels (dtype, shape, values)."""
    if _digest(a) == _digest(b):
        return True
    if a.suffix.lower() != ".png":
        return False
    import cv2

    pixels_a = cv2.imread(str(a), cv2.IMREAD_UNCHANGED)
    pixels_b = cv2.imread(str(b), cv2.IMREAD_UNCHANGED)
    if pixels_a is None or pixels_b is None:
        return False
    return bool(
        pixels_a.dtype == pixels_b.dtype
        and pixels_a.shape == pixels_b.shape
        and (pixels_a == pixels_b).all()
    )


def compare_trees(dir_a: Path, dir_b: Path, label: str) -> list[str]:
    """Differences between two folders' files (empty when identical): byte for byte, PNGs by
    their decoded pixels."""
    files_a = {p.relative_to(dir_a) for p in dir_a.rglob("*") if p.is_file()}
    files_b = {p.relative_to(dir_b) for p in dir_b.rglob("*") if p.is_file()}
    diffs = [f"{label}: only in the first run: {p}" for p in sorted(files_a - files_b)]
    diffs += [f"{label}: only in the second run: {p}" for p in sorted(files_b - files_a)]
    diffs += [
        f"{label}: {p} differs"
        for p in sorted(files_a & files_b)
        if not _same_file(dir_a / p, dir_b / p)
    ]
    return diffs


def compare_records(npz_a: Path, npz_b: Path) -> list[str]:
    """Differences between two experiment records, array by array, bit for bit."""
    with np.load(npz_a, allow_pickle=False) as rec_a, np.load(npz_b, allow_pickle=False) as rec_b:
        keys_a, keys_b = set(rec_a.files), set(rec_b.files)
        diffs = [f"record: array only in the first run: {k}" for k in sorted(keys_a - keys_b)]
        diffs += [f"record: array only in the second run: {k}" for k in sorted(keys_b - keys_a)]
        for key in sorted(keys_a & keys_b):
            arr_a, arr_b = rec_a[key], rec_b[key]
            same = (
                arr_a.dtype == arr_b.dtype
                and arr_a.shape == arr_b.shape
                and arr_a.tobytes() == arr_b.tobytes()
            )
            if not same:
                diffs.append(f"record: array {key} differs")
    return diffs


def compare_runs(run_a: Path, run_b: Path) -> list[str]:
    """Every behaviour difference between two run directories (empty when identical)."""
    diffs = compare_bags(run_a / "bag", run_b / "bag")
    diffs += compare_trees(run_a / "gt", run_b / "gt", "gt")
    diffs += compare_records(run_a / "record.npz", run_b / "record.npz")
    return diffs


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_a", type=Path, help="first run directory")
    parser.add_argument("run_b", type=Path, help="second run directory")
    args = parser.parse_args(argv)
    for run in (args.run_a, args.run_b):
        missing = [p for p in ("bag", "gt", "record.npz") if not (run / p).exists()]
        if missing:
            print(f"compare_runs: {run} is not a run directory: missing {missing}", file=sys.stderr)
            return 2
    diffs = compare_runs(args.run_a, args.run_b)
    for line in diffs[:MAX_LISTED]:
        print(line)
    if diffs:
        print(f"compare_runs: {len(diffs)} difference(s) between {args.run_a} and {args.run_b}")
        return 1
    print("compare_runs: identical bag messages, gt/ files and record")
    return 0


if __name__ == "__main__":
    sys.exit(main())
