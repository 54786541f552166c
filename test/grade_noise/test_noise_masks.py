"""A-GRADE blurred masks (grade_noise.masks) and `grade noise apply --blur-masks`."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import yaml

from grade_noise.cli import main as noise_main
from grade_noise.masks import blurred_labels

W, H = 96, 64


def _box_blur(image: np.ndarray) -> np.ndarray:
    """A horizontal 9-pixel box blur (a sideways motion of 8 px)."""
    return np.asarray(cv2.blur(image, (9, 1), borderType=cv2.BORDER_REFLECT), dtype=np.uint8)


def test_blurred_labels_grow_boxes_along_the_motion_only() -> None:
    labels = np.zeros((H, W), dtype=np.uint16)
    labels[20:30, 40:50] = 3
    labels[40:44, 10:12] = 5  # thinner than the blur: it covers under half of every pixel
    blurred, boxes = blurred_labels(labels, _box_blur)
    assert boxes[3] == (36, 20, 53, 29)  # 4 px wider on each side, same rows
    assert boxes[5] == (6, 40, 15, 43)
    assert set(np.unique(blurred).tolist()) == {0, 3}  # the 2-px object loses every pixel
    # Where the object fills over half of the exposure it keeps the pixel.
    assert np.all(blurred[20:30, 40:50] == 3)
    assert np.all(blurred[:20] == 0)


def make_tum_with_masks(folder: Path, frames: int = 4) -> None:
    """A white square on black moving with a panning camera, its mask and its boxes."""
    for d in ("rgb", "instance"):
        (folder / d).mkdir(parents=True)
    lists: dict[str, list[str]] = {"rgb": ["# rgb"], "instance": ["# instance"]}
    gt, boxes = [], []
    for k in range(frames):
        t = f"{k / 30:.6f}"
        mask = np.zeros((H, W), dtype=np.uint16)
        mask[20:40, 30 + k : 50 + k] = 7
        rgb = np.where(mask[..., None] == 7, 255, 0).astype(np.uint8).repeat(3, axis=2)
        cv2.imwrite(str(folder / "rgb" / f"{t}.png"), rgb)
        cv2.imwrite(str(folder / "instance" / f"{t}.png"), mask)
        for kind in lists:
            lists[kind].append(f"{t} {kind}/{t}.png")
        half = 0.5 * 3.0 * k / 30  # yaw about the optical y axis at 3 rad/s
        gt.append(f"{t} 0 0 0 0 {np.sin(half):.9f} 0 {np.cos(half):.9f}")
        box = {"id": 7, "x_min": 30 + k, "y_min": 20, "x_max": 49 + k, "y_max": 39}
        boxes.append(json.dumps({"t": float(t), "boxes": [box]}))
    for kind, lines in lists.items():
        (folder / f"{kind}.txt").write_text("\n".join(lines) + "\n")
    (folder / "groundtruth.txt").write_text("\n".join(gt) + "\n")
    (folder / "boxes2d.jsonl").write_text("\n".join(boxes) + "\n")
    f = float(0.5 * W / np.tan(np.radians(88.95) / 2))
    info = {"width": W, "height": H, "K": [f, 0, W / 2, 0, f, H / 2, 0, 0, 1]}
    (folder / "camera_info.yaml").write_text(yaml.safe_dump(info))


def test_blur_masks_follow_the_blurred_image(tmp_path: Path) -> None:
    cam = tmp_path / "camera"
    make_tum_with_masks(cam)
    args = ["apply", str(cam), "--rgb-preset", "blur_only", "--depth-preset", "off"]
    assert noise_main([*args, "--blur-masks", "--no-progress"]) == 0
    noisy = cam.parent / "camera_noisy"
    boxes = [json.loads(line) for line in (noisy / "boxes2d.jsonl").read_text().splitlines()]
    exact = [json.loads(line) for line in (cam / "boxes2d.jsonl").read_text().splitlines()]
    widened = 0
    for frame, before in zip(boxes, exact, strict=True):
        t = f"{frame['t']:.6f}"
        rgb = cv2.imread(str(noisy / "rgb" / f"{t}.png"))[..., 0].astype(int)
        mask = cv2.imread(str(noisy / "instance" / f"{t}.png"), cv2.IMREAD_UNCHANGED)
        assert mask.dtype == np.uint16
        # The blurred mask is the object where the blurred image is mostly the object.
        disagree = (mask == 7) != (rgb > 127)
        assert disagree.mean() < 0.005
        (b,), (e,) = frame["boxes"], before["boxes"]
        assert b["x_min"] <= e["x_min"]
        assert b["x_max"] >= e["x_max"]
        widened += (b["x_max"] - b["x_min"]) - (e["x_max"] - e["x_min"])
        # The box holds every pixel the blurred image shows the object on.
        ys, xs = np.nonzero(rgb > 0)
        assert b["x_min"] <= xs.min()
        assert b["y_min"] <= ys.min()
        assert b["x_max"] >= xs.max()
        assert b["y_max"] >= ys.max()
    assert widened > 4 * len(boxes)
    # Without the option the masks are copied unchanged.
    plain_args = [*args[:2], str(tmp_path / "plain"), *args[2:], "--no-progress"]
    assert noise_main(plain_args) == 0
    plain = cv2.imread(str(tmp_path / "plain" / "instance" / "0.033333.png"), cv2.IMREAD_UNCHANGED)
    exact_mask = cv2.imread(str(cam / "instance" / "0.033333.png"), cv2.IMREAD_UNCHANGED)
    np.testing.assert_array_equal(plain, exact_mask)
