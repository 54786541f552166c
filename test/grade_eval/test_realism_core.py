"""The realism benchmark's core without MediaPipe: crops, landmark mapping, PCK, swaps, faces."""

from __future__ import annotations

import numpy as np
import pytest

from grade_common.keypoints import COCO17_NAMES
from grade_eval.realism.crops import CropWindow, box_window, cut, point_window
from grade_eval.realism.evaluate import face_found
from grade_eval.realism.landmarks import (
    COCO17_FLIP,
    MEDIAPIPE_TO_COCO17,
    coco17_from_mediapipe,
)
from grade_eval.realism.scoring import (
    is_facing,
    is_swapped,
    pck_counts,
    score_pose,
    summarise,
)


def test_box_window_is_square_centred_with_margin() -> None:
    # Inclusive box 10..29 x 40..79: 20 x 40 px, centre (19.5, 59.5).
    window = box_window((10, 40, 29, 79), margin=0.25)
    assert window.side_px == pytest.approx(40 * 1.5)
    assert window.left_px + window.side_px / 2 == pytest.approx(19.5)
    assert window.top_px + window.side_px / 2 == pytest.approx(59.5)
    # Without margin the window's top and bottom edges are the box's pixel edges.
    tight = box_window((10, 40, 29, 79), margin=0.0)
    assert tight.top_px == pytest.approx(39.5)
    assert tight.top_px + tight.side_px == pytest.approx(79.5)


@pytest.mark.parametrize(
    ("box", "margin", "match"), [((5, 5, 4, 9), 0.1, "empty box"), ((0, 0, 9, 9), -0.1, "margin")]
)
def test_box_window_rejects(box: tuple[int, int, int, int], margin: float, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        box_window(box, margin)


def test_cut_places_pixels_where_to_image_says() -> None:
    image = np.zeros((100, 120, 3), np.uint8)
    image[30, 50] = (255, 128, 0)  # one bright pixel at K's (50, 30)
    window = CropWindow(left_px=40.5 - 10.0, top_px=20.5 - 10.0, side_px=40.0)
    crop = cut(image, window, out_px=40)  # 1 crop pixel = 1 image pixel
    y, x = np.unravel_index(np.argmax(crop[:, :, 0]), crop.shape[:2])
    centre_norm = np.array([[(x + 0.5) / 40, (y + 0.5) / 40]])
    np.testing.assert_allclose(window.to_image(centre_norm), [[50.0, 30.0]], atol=1e-9)
    assert tuple(crop[y, x]) == (255, 128, 0)


def test_cut_pads_black_outside_the_image_and_resizes() -> None:
    image = np.full((50, 50, 3), 200, np.uint8)
    crop = cut(image, point_window((0.0, 0.0), 40.0), out_px=16)  # centred on the corner pixel
    assert crop.shape == (16, 16, 3)
    assert crop[0, 0].max() == 0
    assert crop[-1, -1].min() == 200


def test_mediapipe_mapping_keeps_names_and_sides() -> None:
    marks = np.arange(33 * 3, dtype=np.float64).reshape(33, 3)
    coco = coco17_from_mediapipe(marks)
    assert coco.shape == (17, 3)
    # MediaPipe Pose: 0 nose, 2/5 eyes, 11/12 shoulders, 27/28 ankles (its documented layout).
    assert MEDIAPIPE_TO_COCO17[COCO17_NAMES.index("left_eye")] == 2
    assert MEDIAPIPE_TO_COCO17[COCO17_NAMES.index("right_shoulder")] == 12
    assert MEDIAPIPE_TO_COCO17[COCO17_NAMES.index("left_ankle")] == 27
    np.testing.assert_array_equal(coco[0], marks[0])
    assert len(set(MEDIAPIPE_TO_COCO17.tolist())) == 17
    with pytest.raises(ValueError, match="33"):
        coco17_from_mediapipe(marks[:17])


def test_flip_swaps_every_left_with_its_right() -> None:
    for index, name in enumerate(COCO17_NAMES):
        mirror = COCO17_NAMES[COCO17_FLIP[index]]
        assert mirror == name.replace("left", "@").replace("right", "left").replace("@", "right")
    np.testing.assert_array_equal(COCO17_FLIP[COCO17_FLIP], np.arange(17))


def _person() -> np.ndarray:
    """A frontal stick person (17, 3) in pixels, all visible: left side at larger u (we see
    the person's left on our right)."""
    rng = np.random.default_rng(5)
    uv = np.zeros((17, 2))
    parts = ("nose", "eye", "ear", "shoulder", "elbow", "wrist", "hip", "knee", "ankle")
    for index, name in enumerate(COCO17_NAMES):
        side = 1.0 if name.startswith("left") else -1.0 if name.startswith("right") else 0.0
        row = parts.index(name.split("_")[-1])
        uv[index] = (100 + side * (10 + 3 * row), 50 + 20 * row)
    uv += rng.normal(0, 0.5, uv.shape)
    return np.column_stack([uv, np.full(17, 2.0)])


def test_pck_counts_only_visible_and_within_threshold() -> None:
    truth = _person()
    predicted = truth[:, :2].copy()
    predicted[3] += (0, 25.0)  # 25 px off: outside a 20 px threshold
    predicted[4] += (0, 15.0)  # inside
    visible = np.ones(17, bool)
    visible[5] = False
    assert pck_counts(predicted, truth[:, :2], visible, 20.0) == (15, 16)


def test_swap_is_found_for_a_mirrored_pose_and_not_for_the_right_one() -> None:
    truth = _person()
    box_side = 150.0
    assert not score_pose(truth[:, :2], truth, box_side).swapped
    mirrored = truth[COCO17_FLIP, :2]
    score = score_pose(mirrored, truth, box_side)
    assert score.swapped
    assert score.correct < score.counted


def test_side_on_person_is_not_called_swapped() -> None:
    truth = _person()
    # Seen from the side: left and right keypoints within a pixel or two of each other.
    truth[:, 0] = 100.0 + np.random.default_rng(1).normal(0, 1.0, 17)
    assert not is_swapped(truth[COCO17_FLIP, :2], truth[:, :2], np.ones(17, bool), 150.0)


def test_summary_fractions() -> None:
    truth = _person()
    poses = [
        score_pose(truth[:, :2], truth, 150.0),
        score_pose(truth[COCO17_FLIP, :2], truth, 150.0),
    ]
    summary = summarise(people=4, poses=poses, faces_tried=3, faces_found=1)
    assert summary.found_fraction == 0.5
    assert summary.swapped_fraction == 0.5
    assert summary.face_fraction == pytest.approx(1 / 3)
    assert summary.pck == pytest.approx((17 + poses[1].correct) / 34)
    assert (summary.facing, summary.swapped_facing) == (2, 1)


def test_facing_follows_the_shoulders() -> None:
    truth = _person()  # the person's left at larger u: facing us
    assert is_facing(truth)
    assert not is_facing(truth[COCO17_FLIP])  # mirrored: seen from behind
    hidden = truth.copy()
    hidden[5, 2] = 1
    assert not is_facing(hidden)


def test_face_found_needs_a_box_around_our_nose() -> None:
    window = CropWindow(left_px=100.0, top_px=200.0, side_px=50.0)
    boxes = np.array([[0.2, 0.2, 0.4, 0.4, 0.9]])  # normalised: image 110..130 x 210..230
    assert face_found(boxes, np.array([120.0, 220.0]), window)
    assert not face_found(boxes, np.array([140.0, 220.0]), window)
    assert not face_found(np.zeros((0, 5)), np.array([120.0, 220.0]), window)
