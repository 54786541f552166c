"""An exported USD stage path traced by Blender beside the simulator's own frame (docs/images/).

    python scripts/usd_figure.py RUN STAGE OUT.jpg [--stamp S] [--width 320] [--samples 16]
    # after source scripts/env.sh; STAGE from `grade export usd RUN --out STAGE`

Left: the run's recorded rgb frame (the simulator's raster renderer). Right: the stage imported
by Blender's own USD importer (`bpy.ops.wm.usd_import`) and rendered by Cycles at the same time
code through the stage's camera. Without --stamp, the camera frame showing the most people.
Below each, its instance mask against the other's: the agreement (IoU) is printed.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import cv2
import numpy as np
import yaml
from sheet_kit import write_image

from grade_common.tum import read_list
from grade_usd.blender_check import render_stage

CAM = ("uav1", "camera")


def _person_frame(run: Path) -> str:
    table = yaml.safe_load((run / "gt" / "instances.yaml").read_text())
    people = [int(i) for i, row in table.items() if row["class"] == "person"]
    cam_dir = run / "gt" / CAM[0] / CAM[1]
    stamps = [s for s, _ in read_list(cam_dir / "instance.txt")]

    def count(stamp: str) -> int:
        return int(
            np.isin(cv2.imread(str(cam_dir / "instance" / f"{stamp}.png"), -1), people).sum()
        )

    return max(stamps[::5], key=count)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("run", type=Path)
    parser.add_argument("stage", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--stamp", help="camera frame stamp as in rgb.txt (default: most people)")
    parser.add_argument("--width", type=int, default=320)
    parser.add_argument("--samples", type=int, default=16)
    args = parser.parse_args()
    stamp = args.stamp or _person_frame(args.run)
    cam_dir = args.run / "gt" / CAM[0] / CAM[1]
    sim = cv2.imread(str(cam_dir / "rgb" / f"{stamp}.png"))[:, :, ::-1]
    h_src, w_src = sim.shape[:2]
    w, h = args.width, round(args.width * h_src / w_src)
    hz = 240.0
    view = render_stage(
        args.stage, f"{CAM[0]}_{CAM[1]}", round(float(stamp) * hz), (w, h), far_m=20.0,
        samples=args.samples,
    )  # fmt: skip
    assert view.rgb_png is not None
    blender = cv2.imdecode(np.frombuffer(view.rgb_png, np.uint8), cv2.IMREAD_COLOR)[:, :, ::-1]
    sim_small = cv2.resize(sim, (w, h), interpolation=cv2.INTER_AREA)
    inst = cv2.resize(
        cv2.imread(str(cam_dir / "instance" / f"{stamp}.png"), -1), (w, h),
        interpolation=cv2.INTER_NEAREST,
    )  # fmt: skip
    ious = []
    for iid in np.unique(inst):
        a, b = inst == iid, view.instance == iid
        if iid and a.sum() >= 50:
            ious.append((int(iid), float((a & b).sum() / (a | b).sum())))
    print(f"stamp {stamp}: instance IoU " + ", ".join(f"{i}: {v:.3f}" for i, v in ious))
    gap = np.full((h, 6, 3), 255, np.uint8)
    write_image(args.out, np.concatenate([sim_small, gap, blender], axis=1))


if __name__ == "__main__":
    main()
