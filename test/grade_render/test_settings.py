"""Render settings: frame slices and validation errors that name the setting."""

from __future__ import annotations

import pytest

from grade_render.settings import Engine, RenderConfigError, RenderSettings, check_frames


@pytest.mark.parametrize(
    ("frames", "expected"),
    [
        ("", list(range(10))),
        ("2:8:3", [2, 5]),
        ("::4", [0, 4, 8]),
        ("7", [7]),
        ("-1", [9]),
        ("5:", [5, 6, 7, 8, 9]),
    ],
)
def test_frames_select_like_a_python_slice(frames: str, expected: list[int]) -> None:
    assert list(range(10))[RenderSettings(frames=frames).frame_slice()] == expected


def test_bad_settings_name_the_setting_and_the_range() -> None:
    with pytest.raises(RenderConfigError, match="samples"):
        RenderSettings(samples=0)
    with pytest.raises(RenderConfigError, match="motion_blur_s"):
        RenderSettings(motion_blur_s=-0.1)
    with pytest.raises(RenderConfigError, match="frames"):
        check_frames("a:b")
    with pytest.raises(RenderConfigError, match="step must not be 0"):
        RenderSettings(frames="::0").frame_slice()


def test_device_and_frame_choice_do_not_change_the_pixel_settings() -> None:
    a = RenderSettings(samples=8, frames="0:2")
    b = RenderSettings(samples=8, frames="5:9", cameras=("uav1/camera",))
    assert a.pixel_settings() == b.pixel_settings()
    assert a.pixel_settings() != RenderSettings(samples=16).pixel_settings()


def test_cycles_speed_settings_are_validated_and_belong_to_cycles() -> None:
    with pytest.raises(RenderConfigError, match="noise_threshold"):
        RenderSettings(noise_threshold=1.5)
    with pytest.raises(RenderConfigError, match="max_bounces"):
        RenderSettings(max_bounces=-1)
    with pytest.raises(RenderConfigError, match=r"max_bounces .* cycles setting"):
        RenderSettings(engine=Engine.FILAMENT, max_bounces=6)
    # They decide the pixels, so a resumed render must keep them; Filament records none.
    assert RenderSettings(max_bounces=6).pixel_settings() != RenderSettings().pixel_settings()
    assert "noise_threshold" not in RenderSettings(engine=Engine.FILAMENT).pixel_settings()
