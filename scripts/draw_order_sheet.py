"""Nearest-first drawing against the scene's own order on the default scenario: what changes in
RGB, CPU per frame, and a contact sheet (docs/images/draw_order_ties.png, docs/looks.md).

    python scripts/draw_order_sheet.py OUT.png [--frames N]     # after source scripts/env.sh

Two engines render the same poses along the robot's tour (grade_sim.bench_looks' tour), one
drawing the colour pass in the scene's own order (`near_first` off), one nearest first (the
default); which goes first alternates. Printed: each one's median process CPU time per frame
(all threads: llvmpipe's too), the pixels whose RGB differs (per frame: mean and most), the mean
and lowest SSIM between the two, and whether depth and instances are identical (they must be).
The sheet's rows are the three frames with the most changed pixels: the 120x90 window centred
on them in the scene's own order, nearest first, and the changed pixels in white, magnified 3x
without smoothing.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import numpy as np

os.environ.setdefault("MUJOCO_GL", "egl")

import cv2
from sheet_kit import magnified_row, write_image

from grade_replay.fidelity import ssim
from grade_sim.bench_looks import _pose
from grade_sim.config.scenario import Stream, load_scenario
from grade_sim.engine.mujoco.engine import MujocoEngine
from grade_sim.scenarios import default_scenario_path
from grade_sim.scene import build_scene

STREAMS = frozenset({Stream.RGB, Stream.DEPTH, Stream.INSTANCE})
LABELS = ("own order", "nearest first")


def _window(changed: np.ndarray) -> tuple[int, int]:
    """Top-left corner of the 120x90 window centred on the most changed pixels (inside the
    image)."""
    counts = cv2.boxFilter(changed.astype(np.float32), -1, (121, 91), normalize=False)
    by, bx = np.unravel_index(int(np.argmax(counts)), counts.shape)
    h, w = changed.shape
    near = changed[max(by - 45, 0) : by + 46, max(bx - 60, 0) : bx + 61]
    ys, xs = np.nonzero(near)
    # The box sum is flat around a lone pixel: centre on the changed pixels it holds instead.
    cy = max(by - 45, 0) + int(ys.mean()) if len(ys) else by
    cx = max(bx - 60, 0) + int(xs.mean()) if len(xs) else bx
    return int(np.clip(cy - 45, 0, h - 90)), int(np.clip(cx - 60, 0, w - 120))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--frames", type=int, default=48)
    args = parser.parse_args()
    scene = build_scene(load_scenario(default_scenario_path(), {}))
    robot = scene.robots[0].model
    camera = robot.config.cameras[0].name
    engines = [MujocoEngine(scene), MujocoEngine(scene)]
    engines[0].near_first = False
    frames: list[list[tuple[np.ndarray, np.ndarray, np.ndarray]]] = [[], []]
    cpu_s: list[list[float]] = [[], []]
    try:
        for e in engines:
            e.render(robot.name, camera, STREAMS)  # context made, kernels compiled
        for k in range(args.frames):
            for v in (0, 1) if k % 2 == 0 else (1, 0):
                _pose(engines[v], scene, k, args.frames)
                t0 = time.process_time()
                frame = engines[v].render(robot.name, camera, STREAMS)
                cpu_s[v].append(time.process_time() - t0)
                assert frame.rgb is not None
                assert frame.depth_m is not None
                assert frame.instance is not None
                frames[v].append((frame.rgb, frame.depth_m, frame.instance))
    finally:
        for e in engines:
            e.close()
    for label, cpu in zip(LABELS, cpu_s, strict=True):
        print(f"{label:14s} CPU {1e3 * float(np.median(cpu)):5.1f} ms/frame (median)")
    changed = [(a[0] != b[0]).any(axis=2) for a, b in zip(*frames, strict=True)]
    counts = np.array([int(c.sum()) for c in changed])
    scores = [ssim(a[0], b[0]) for a, b in zip(*frames, strict=True)]
    same = all(
        np.array_equal(a[1], b[1]) and np.array_equal(a[2], b[2])
        for a, b in zip(*frames, strict=True)
    )
    print(
        f"RGB pixels changed: mean {counts.mean():.1f} a frame, most {counts.max()} "
        f"(of {changed[0].size}); {int((counts > 0).sum())} of {len(counts)} frames; SSIM mean "
        f"{np.mean(scores):.6f}, lowest {min(scores):.6f}; depth and instances identical: {same}"
    )
    rows = []
    for k in np.argsort(-counts, kind="stable")[:3]:
        mask = np.repeat(changed[k][..., None], 3, axis=2).astype(np.uint8) * 255
        images = [frames[0][k][0], frames[1][k][0], mask]
        rows.append(magnified_row(images, *_window(changed[k])))
    write_image(args.out, np.vstack(rows))


if __name__ == "__main__":
    main()
