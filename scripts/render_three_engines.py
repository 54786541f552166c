"""Re-make the figure of one frame drawn by all three renderers: raster | Filament | Cycles.

    python scripts/render_three_engines.py docs/images/render_three_engines.jpg [--at-s 1.233]

Records the default scenario (config/indoor_uav.yaml) up to just after `--at-s` with its 640x480
camera, then re-renders the frame nearest that time with `grade render` twice (Filament, and
Cycles at its default quality) and writes the three side by side, each with its name, its mean
brightness and its share of clipped pixels printed.
"""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path

import cv2
import numpy as np
from sheet_kit import write_image

from grade_common.tum import read_list
from grade_render.render import render_run
from grade_render.settings import Engine, RenderSettings
from grade_sim.config.scenario import load_scenario
from grade_sim.scenarios import default_scenario_path
from grade_sim.sim.run import run_scenario


def _rgb(run: Path, stamp: str) -> np.ndarray:
    path = next(run.glob(f"gt/*/*/rgb/{stamp}.png"))
    return cv2.cvtColor(cv2.imread(str(path)), cv2.COLOR_BGR2RGB)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("out", type=Path)
    parser.add_argument("--at-s", type=float, default=1.233)
    args = parser.parse_args()
    os.environ.setdefault("MUJOCO_GL", "egl")
    with tempfile.TemporaryDirectory(prefix="grade-three-engines-") as tmp:
        root = Path(tmp)
        scenario = load_scenario(default_scenario_path(), {"duration_s": args.at_s + 0.05})
        source = run_scenario(scenario, root / "run").path
        stamps = [s for s, _ in read_list(next(source.glob("gt/*/*/rgb.txt")))]
        k = int(np.argmin([abs(float(s) - args.at_s) for s in stamps]))
        panels = [("raster (MuJoCo)", _rgb(source, stamps[k]))]
        for name, settings in (
            ("Filament", RenderSettings(engine=Engine.FILAMENT, frames=str(k))),
            (f"Cycles ({RenderSettings().samples} spp)", RenderSettings(frames=str(k))),
        ):
            result = render_run(source, root / name.split()[0].lower(), settings)
            panels.append((name, _rgb(result.path, stamps[k])))
            print(f"{name}: {sum(result.seconds_per_frame):.1f} s for the frame")
    for name, image in panels:
        clipped = float((image.max(axis=-1) >= 255).mean())
        print(f"{name}: mean brightness {image.mean():.1f}, {100 * clipped:.2f} % clipped")
        cv2.putText(image, name, (12, 30), cv2.FONT_HERSHEY_SIMPLEX, 0.8, (255, 255, 255), 2)
    write_image(args.out, np.hstack([image for _, image in panels]))
    print(f"frame {stamps[k]} s -> {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
