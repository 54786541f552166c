"""DeepMimic clips: parsing (normalised quaternions, clear errors) and their gait cycles."""

from __future__ import annotations

import json

import numpy as np
import pytest

from grade_people.mocap import (
    FRAME_WIDTH,
    RUN_CLIP,
    WALK_CLIP,
    MocapError,
    gait_cycle,
    load_clip,
    parse_deepmimic,
)


def _frames(n: int, scale_quats: float = 1.0) -> list[list[float]]:
    frame = [1 / 30, 0.0, 0.88, 0.0, scale_quats, 0.0, 0.0, 0.0]
    for width in (4, 4, 4, 1, 4, 4, 1, 4, 1, 4, 4, 1):
        frame += [scale_quats, 0.0, 0.0, 0.0] if width == 4 else [0.3]
    out = []
    for k in range(n):
        f = list(frame)
        f[1] = 0.03 * k
        out.append(f)
    return out


def test_quaternions_are_normalised_and_axes_turned() -> None:
    clip = parse_deepmimic(json.dumps({"Frames": _frames(3, scale_quats=2.0)}))
    np.testing.assert_allclose(clip.local_rot[:, 0], np.broadcast_to(np.eye(3), (3, 3, 3)))
    # DeepMimic's y (up) is our z; x (forward) stays.
    np.testing.assert_allclose(clip.root_position[1], [0.03, 0.0, 0.88])
    assert clip.frame_time_s == pytest.approx(1 / 30)


@pytest.mark.parametrize(
    ("doc", "match"),
    [
        ("not json", "not a DeepMimic clip"),
        (json.dumps({"Loop": "wrap"}), "not a DeepMimic clip"),
        (json.dumps({"Frames": [[0.1] * 10, [0.1] * 10]}), f"of {FRAME_WIDTH} values"),
        (json.dumps({"Frames": _frames(3, scale_quats=0.0)}), "quaternion has length"),
    ],
)
def test_bad_clips_are_refused(doc: str, match: str) -> None:
    with pytest.raises(MocapError, match=match):
        parse_deepmimic(doc)


def test_a_missing_clip_names_the_set_up_step(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("GRADE_MOTIONS_DIR", str(tmp_path))
    with pytest.raises(MocapError, match="make setup"):
        load_clip(WALK_CLIP)


def test_walk_and_run_cycles_are_real_gaits() -> None:
    walk, run = gait_cycle(load_clip(WALK_CLIP)), gait_cycle(load_clip(RUN_CLIP))
    # Walking keeps a foot down more than half the cycle (double support), running less.
    assert 0.5 < walk.duty < 0.7
    assert 0.15 < run.duty < 0.45
    assert 1.3 < walk.cadence_hz < 2.0 < run.cadence_hz
    for cycle in (walk, run):
        np.testing.assert_allclose(np.linalg.norm(cycle.quat_wxyz, axis=-1), 1.0, atol=1e-9)
        assert cycle.swing_progress[0] == 0.0
        assert cycle.swing_progress[-1] == pytest.approx(1.0)
        assert 0.03 < cycle.swing_lift.max() * 0.87 < 0.5  # the swing foot clears the floor
