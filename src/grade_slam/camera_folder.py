"""RGB-D frames of a recorded camera folder (TUM RGB-D layout, docs/conventions.md).

For running a backend offline on exactly the frames the simulator rendered (a cross-check of the
live node, which may miss frames the transport dropped).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import cv2
import numpy as np

from grade_common.tum import ImageKind, list_file, read_camera_info, read_list
from grade_sim.engine.semantic import BASE_CLASSES
from grade_slam.errors import SlamInputError
from grade_slam.frames import RgbdFrame, dynamic_class_ids, dynamic_mask_of

SEMANTIC = "semantic"  # the camera folder's semantic class images (docs/conventions.md)


def stamp_ns_of(stamp: str) -> int:
    """A list file's stamp text (seconds) as integer nanoseconds, without float rounding."""
    seconds, _, fraction = stamp.partition(".")
    return int(seconds) * 10**9 + int((fraction + "000000000")[:9])


def read_camera_folder(
    folder: str | Path, *, with_dynamic_mask: bool = False
) -> Iterator[RgbdFrame]:
    """Frames with both an RGB and a depth image of the same stamp, in stamp order.

    Args:
        with_dynamic_mask: also read the semantic class image of each frame (the camera's
            opt-in `semantic` stream) and mark its people and flying objects.

    Raises:
        SlamInputError: a missing list file, camera_info.yaml or image.
    """
    root = Path(folder)
    info = read_camera_info(root / "camera_info.yaml", error=SlamInputError)
    rgb = dict(read_list(root / list_file(ImageKind.RGB), error=SlamInputError))
    depth = dict(read_list(root / list_file(ImageKind.DEPTH), error=SlamInputError))
    semantic: dict[str, str] = {}
    if with_dynamic_mask:
        listing = root / f"{SEMANTIC}.txt"
        if not listing.is_file():
            raise SlamInputError(
                f"{listing} is missing: the dynamic mask needs the camera's `{SEMANTIC}` stream "
                "(add it to the scenario's camera streams)"
            )
        semantic = dict(read_list(listing, error=SlamInputError))
    common = sorted(set(rgb) & set(depth), key=stamp_ns_of)
    if not common:
        raise SlamInputError(f"{root}: no stamp has both an RGB and a depth image")
    dynamic_ids = dynamic_class_ids(BASE_CLASSES)
    for stamp in common:
        bgr = cv2.imread(str(root / rgb[stamp]), cv2.IMREAD_COLOR)
        raw = cv2.imread(str(root / depth[stamp]), cv2.IMREAD_UNCHANGED)
        if bgr is None or raw is None:
            raise SlamInputError(f"{root}: cannot read the images of stamp {stamp}")
        mask = None
        if with_dynamic_mask:
            classes = cv2.imread(str(root / semantic.get(stamp, "")), cv2.IMREAD_UNCHANGED)
            if classes is None:
                raise SlamInputError(f"{root}: no readable semantic image of stamp {stamp}")
            mask = dynamic_mask_of(np.asarray(classes, dtype=np.uint16), dynamic_ids)
        yield RgbdFrame(
            stamp_ns_of(stamp),
            np.ascontiguousarray(bgr[:, :, ::-1]),
            (raw.astype(np.float32) / np.float32(info.depth_scale)),
            info.camera_matrix,
            mask,
        )
