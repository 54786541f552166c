"""FXAA against 1.5x supersampling on the default scenario: SSIM, CPU per frame and a contact sheet
(docs/images/antialiasing_fxaa.png, docs/looks.md#antialiasing-with-exact-masks).

    python scripts/antialiasing_sheet.py OUT.png [--frames N]     # after source scripts/env.sh

Three engines render the same poses along the robot's tour (grade_sim.bench_looks' tour): the
former default (supersample 1.5, no FXAA), the camera's size without antialiasing, and the
default (supersample 1 with FXAA); which goes first alternates. Printed: each one's median
process CPU time per frame (all threads: llvmpipe's too) and the mean and lowest SSIM of each
against supersample 1.5. The sheet's rows are, for three frames, the 120x90 window with the most
edges, magnified 3x without smoothing, in that order left to right.
"""

from __future__ import annotations

import argparse
import dataclasses
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
from grade_sim.scene import Scene, build_scene

VARIANTS = (("supersample 1.5", 1.5, False), ("no antialiasing", 1.0, False), ("FXAA", 1.0, True))
STREAMS = frozenset({Stream.RGB, Stream.DEPTH, Stream.INSTANCE})


def _variant(scene: Scene, supersample: float, fxaa: bool) -> Scene:
    render = dataclasses.replace(scene.scenario.render, supersample=supersample, fxaa=fxaa)
    return dataclasses.replace(scene, scenario=dataclasses.replace(scene.scenario, render=render))


def _window(reference: np.ndarray) -> tuple[int, int]:
    """Top-left corner of the 120x90 window with the most edges of the reference frame."""
    edges = cv2.Canny(cv2.cvtColor(reference, cv2.COLOR_RGB2GRAY), 50, 150).astype(np.float32)
    counts = cv2.boxFilter(edges, -1, (120, 90), normalize=False)[45:-45, 60:-60]
    y, x = np.unravel_index(int(np.argmax(counts)), counts.shape)
    return int(y), int(x)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--frames", type=int, default=24)
    args = parser.parse_args()
    scene = build_scene(load_scenario(default_scenario_path(), {}))
    robot = scene.robots[0].model
    camera = robot.config.cameras[0].name
    engines = [MujocoEngine(_variant(scene, ss, fx)) for _, ss, fx in VARIANTS]
    frames: list[list[np.ndarray]] = [[] for _ in VARIANTS]
    cpu_s: list[list[float]] = [[] for _ in VARIANTS]
    try:
        for e in engines:
            e.render(robot.name, camera, STREAMS)  # context made, kernels compiled
        for k in range(args.frames):
            order = list(range(len(engines)))
            for v in order if k % 2 == 0 else order[::-1]:
                _pose(engines[v], scene, k, args.frames)
                t0 = time.process_time()
                rgb = engines[v].render(robot.name, camera, STREAMS).rgb
                cpu_s[v].append(time.process_time() - t0)
                assert rgb is not None
                frames[v].append(rgb)
    finally:
        for e in engines:
            e.close()
    reference = frames[0]
    for (label, *_), shots, cpu in zip(VARIANTS, frames, cpu_s, strict=True):
        scores = [ssim(a, b) for a, b in zip(shots, reference, strict=True)]
        print(
            f"{label:16s} CPU {1e3 * float(np.median(cpu)):5.1f} ms/frame (median), SSIM against "
            f"supersample 1.5: mean {np.mean(scores):.4f}, lowest {min(scores):.4f}"
        )
    rows = []
    for k in np.linspace(0, args.frames - 1, 3).astype(int):
        rows.append(magnified_row([f[k] for f in frames], *_window(reference[k])))
    write_image(args.out, np.vstack(rows))


if __name__ == "__main__":
    main()
