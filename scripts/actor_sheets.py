"""Render the README's contact sheets of actors as the robots' cameras see them.

    python scripts/actor_sheets.py OUT_DIR [--seconds 8] [--sheets crowd savanna]
    # after source scripts/env.sh

Runs two short scenarios through the whole simulator (`run_scenario`, no ROS) and tiles the
recorded camera frames that show the most actors:

- `crowd_room.jpg`: the default scenario (config/indoor_uav.yaml) with 20 people (the default
  MakeHuman bodies) in the furnished rooms, walking with ORCA avoidance, sitting on the
  chairs, waving, looking around;
- `savanna_animals.jpg`: the savanna scenario (config/outdoor_savanna.yaml): zebras and gazelles
  on the terrain under the sky;
- `keypoints_overlay.jpg`: crowd frames with each person's COCO-17 keypoints from
  keypoints.jsonl (green visible, red hidden; orange limbs have a hidden end), for the people
  with at least one visible keypoint.

Nothing is written to the sheets that the run directory does not hold: they show what a user
gets. The runs go to a temporary directory and are removed.
"""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path

import cv2
import numpy as np
import yaml
from sheet_kit import write_image

os.environ.setdefault("MUJOCO_GL", "egl")

TILES = 6
# Every motion of the library, so the sheet shows sitters and gestures between the walkers.
CROWD_MOTIONS = ("walk", "stand", "turn", "sit", "wave", "look", "phone")
# Frames on a sheet are this far apart per camera, or the next spacing where too few are.
SPREAD_S = (1.5, 1.0, 0.5, 0.0)
GOOD_SCORE = 0.5  # ... among the frames scoring at least this fraction of the best
MIN_PIXELS = 400  # an actor counts as seen in a 640x480 frame from this many pixels
COLUMNS = 3
# COCO-17 limbs (pairs of keypoint indices) for the overlay.
LIMBS = (
    (5, 7), (7, 9), (6, 8), (8, 10), (5, 6), (5, 11), (6, 12), (11, 12),
    (11, 13), (13, 15), (12, 14), (14, 16), (0, 1), (0, 2), (1, 3), (2, 4),
)  # fmt: skip


def _run(config: Path, overrides: dict[str, object], out: Path) -> Path:
    from grade_sim.config.scenario import load_scenario
    from grade_sim.sim.run import run_scenario

    result = run_scenario(load_scenario(config, overrides), out)
    return result.path


Frame = tuple[Path, str]  # (camera folder, stamp)


def _cameras(run: Path) -> list[Path]:
    return [p for p in sorted((run / "gt").glob("*/*")) if (p / "instance.txt").exists()]


def _frames(run: Path, labels: tuple[str, ...]) -> list[tuple[Frame, float]]:
    """(frame, score) of every camera's frames, best first: the number of actors with those
    class labels that show at least MIN_PIXELS, less a frame where one actor fills the view."""
    instances = yaml.safe_load((run / "gt" / "instances.yaml").read_text())
    ids = np.array([int(i) for i, info in instances.items() if info["class"] in labels])
    out = []
    for cam in _cameras(run):
        for line in (cam / "instance.txt").read_text().splitlines():
            if line.startswith("#"):
                continue
            stamp, name = line.split()
            mask = cv2.imread(str(cam / name), cv2.IMREAD_UNCHANGED)
            counts = np.array([(mask == i).sum() for i in ids]) / mask.size
            seen = float((counts * mask.size >= MIN_PIXELS).sum())
            score = seen - 4.0 * float(counts.max() > 0.2) + float(counts.sum())
            out.append(((cam, stamp), score))
    return sorted(out, key=lambda s: -s[1])


def _spread(frames: list[tuple[Frame, float]], n: int) -> list[Frame]:
    """n of the frames with the most actors, at least SPREAD_S[0] apart per camera where
    possible (a slow scene half a second later looks the same). Only frames scoring at least
    GOOD_SCORE of the best are taken at a spacing; where they are fewer than n (one camera over
    a short run: 8 s held 5 of them 1.5 s apart), the spacing shrinks for the remaining tiles,
    and the last level takes any frame, so the sheet has no empty tile while the run has
    frames left."""
    best = frames[0][1] if frames else 0.0
    chosen: list[Frame] = []
    for level, gap_s in enumerate(SPREAD_S):
        last = level == len(SPREAD_S) - 1
        for (cam, stamp), score in frames:
            if len(chosen) == n:
                break
            if (cam, stamp) in chosen or (score < GOOD_SCORE * best and not last):
                continue
            if all(c != cam or abs(float(stamp) - float(t)) >= gap_s for c, t in chosen):
                chosen.append((cam, stamp))
    return sorted(chosen, key=lambda f: (str(f[0]), float(f[1])))


def _rgb(frame: Frame) -> np.ndarray:
    cam, stamp = frame
    image = cv2.imread(str(cam / "rgb" / f"{stamp}.png"))
    assert image is not None, frame
    return image


def _overlay(frame: Frame) -> np.ndarray:
    from grade_common.keypoints import read_keypoints

    cam, stamp = frame
    image = _rgb(frame)
    people = read_keypoints(cam / "keypoints.jsonl").get(float(stamp), {})
    for person in people.values():
        kp = np.array(person["keypoints"], dtype=np.float64).reshape(17, 3)
        if not (kp[:, 2] == 2).any():
            continue  # entirely hidden (behind a wall): listed in the file, not drawn here
        for a, b in LIMBS:
            if kp[a, 2] > 0 and kp[b, 2] > 0:
                both = kp[a, 2] == 2 and kp[b, 2] == 2
                colour = (0, 220, 0) if both else (0, 140, 255)
                pa = (round(kp[a, 0]), round(kp[a, 1]))
                pb = (round(kp[b, 0]), round(kp[b, 1]))
                cv2.line(image, pa, pb, colour, 2, cv2.LINE_AA)
        for u, v, vis in kp:
            if vis > 0:
                colour = (0, 255, 0) if vis == 2 else (0, 0, 255)
                cv2.circle(image, (round(u), round(v)), 3, colour, -1, cv2.LINE_AA)
    return image


def _sheet(tiles: list[np.ndarray]) -> np.ndarray:
    h, w = tiles[0].shape[:2]
    blank = np.zeros((h, w, 3), dtype=np.uint8)
    tiles = tiles + [blank] * (-len(tiles) % COLUMNS)
    rows = [np.concatenate(tiles[i : i + COLUMNS], axis=1) for i in range(0, len(tiles), COLUMNS)]
    return np.concatenate(rows, axis=0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out_dir", type=Path)
    parser.add_argument("--seconds", type=float, default=8.0, help="simulated seconds per run")
    parser.add_argument("--seed", type=int, default=3)
    parser.add_argument(
        "--sheets",
        nargs="+",
        choices=("crowd", "savanna"),
        default=["crowd", "savanna"],
        help="which runs to render: crowd (crowd_room + keypoints_overlay), savanna",
    )
    args = parser.parse_args()
    from grade_sim.scenarios import default_scenario_path

    root = default_scenario_path().parent
    args.out_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        if "crowd" in args.sheets:
            _crowd_sheets(args, Path(tmp))
        if "savanna" in args.sheets:
            _savanna_sheet(args, root, Path(tmp))


def _crowd_sheets(args: argparse.Namespace, tmp: Path) -> None:
    from grade_sim.scenarios import default_scenario_path

    crowd = _run(
        default_scenario_path(),
        {
            "seed": args.seed,
            "duration_s": args.seconds,
            "people": {"count": 20, "motions": list(CROWD_MOTIONS)},
        },
        tmp / "crowd",
    )
    frames = _spread(_frames(crowd, ("person",)), TILES)
    write_image(args.out_dir / "crowd_room.jpg", _sheet([_rgb(f) for f in frames])[..., ::-1])
    write_image(
        args.out_dir / "keypoints_overlay.jpg", _sheet([_overlay(f) for f in frames])[..., ::-1]
    )


def _savanna_sheet(args: argparse.Namespace, root: Path, tmp: Path) -> None:
    savanna = _run(
        root / "outdoor_savanna.yaml",
        {"seed": args.seed, "duration_s": args.seconds},
        tmp / "savanna",
    )
    frames = _spread(_frames(savanna, ("zebra", "gazelle", "horse", "dog")), TILES)
    write_image(args.out_dir / "savanna_animals.jpg", _sheet([_rgb(f) for f in frames])[..., ::-1])


if __name__ == "__main__":
    main()
