"""The settings of one render (validated like every grade config; recorded in run.yaml)."""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass, field, replace
from typing import Any

from grade_common.errors import ConfigError
from grade_common.schema import PARAMETER, Checked, bounds, text, to_mapping
from grade_render.errors import RenderError


class RenderConfigError(RenderError, ConfigError):
    """A render setting is invalid (names the setting, the value and what is allowed)."""


RENDER_WORDING = replace(PARAMETER, error=RenderConfigError)
FRAMES_PATTERN = r"-?\d*(:-?\d*(:-?\d*)?)?"


class Engine(enum.StrEnum):
    CYCLES = "cycles"  # Blender's path tracer (make setup-render)
    FILAMENT = "filament"  # MuJoCo's PBR rasteriser through Vulkan (make setup-filament)


# Settings only one engine reads: the other refuses a non-default value and leaves them out of
# run.yaml's pixel settings (so resuming a render compares what decides its pixels).
CYCLES_ONLY = (
    "samples",
    "seed",
    "denoise",
    "motion_blur_s",
    "device",
    "noise_threshold",
    "max_bounces",
)
FILAMENT_ONLY = ("reflections", "shadows")


class Device(enum.StrEnum):
    CPU = "cpu"
    GPU = "gpu"
    AUTO = "auto"  # a GPU when Cycles finds one (OptiX, CUDA, HIP, oneAPI), else the CPU


# The path tracer renders the scenario's lights scene-linear and tone maps with AgX; the
# rasteriser applies the same lights to sRGB colours directly (display-referred, no tone
# mapping). At 0 EV the default scenario's path-traced frames are 1.20-1.36x as bright as the
# raster's on average (docs/render.md); -0.5 EV makes the two engines show a scene equally bright.
DEFAULT_EXPOSURE_EV = -0.5


@dataclass(frozen=True)
class RenderSettings(Checked):
    """What `grade render` draws and how; everything but `device` changes the pixels."""

    WORDING = RENDER_WORDING

    engine: Engine = Engine.CYCLES
    # The default quality (docs/render.md, "Speed"): at most 8 samples a pixel, adaptive
    # sampling to a noise threshold of 0.05, 3 bounces, OpenImageDenoise.
    samples: int = field(default=8, metadata=bounds(1, 65536))
    # Cycles' adaptive sampling: a pixel stops once its noise is below this (0: every pixel
    # takes `samples`); the samples are then the most a pixel takes. Blender's default: 0.01.
    noise_threshold: float = field(default=0.05, metadata=bounds(0.0, 1.0))
    # Longest light path (bounces of every kind); diffuse and glossy bounces are at most 4.
    max_bounces: int = field(default=3, metadata=bounds(0, 64))
    device: Device = Device.AUTO
    seed: int = field(default=0, metadata=bounds(0, 2**31 - 1))
    denoise: bool = True
    motion_blur_s: float = field(default=0.0, metadata=bounds(0.0, 1.0))
    # "a:b:step" over each camera's recorded frames (Python slice rules, "" = all).
    frames: str = field(default="", metadata=text(FRAMES_PATTERN, allow_empty=True))
    cameras: tuple[str, ...] = field(default=(), metadata=text(r"[A-Za-z0-9_]+/[A-Za-z0-9_]+"))
    exposure: float = field(default=DEFAULT_EXPOSURE_EV, metadata=bounds(-10.0, 10.0))
    # Filament: screen-space reflections (a full pass per reflective material; off by default).
    reflections: bool = False
    # Filament: every light casts shadows (Filament's hard, percentage-closer filtered shadow
    # maps), whatever the scenario's `lights.shadows` was; off: only the lights the model casts
    # from (docs/render.md).
    shadows: bool = False

    def __post_init__(self) -> None:
        super().__post_init__()
        other = FILAMENT_ONLY if self.engine == Engine.CYCLES else CYCLES_ONLY
        default = RenderSettings.__dataclass_fields__
        for key in other:
            if key != "device" and getattr(self, key) != default[key].default:
                owner = Engine.FILAMENT if self.engine == Engine.CYCLES else Engine.CYCLES
                raise RenderConfigError(
                    f"{key} = {getattr(self, key)!r} is invalid with engine = "
                    f"{self.engine.value!r}: it is a {owner.value} setting"
                )

    def frame_slice(self) -> slice:
        if not self.frames:
            return slice(None)
        parts = [int(p) if p else None for p in self.frames.split(":")]
        if len(parts) == 3 and parts[2] == 0:
            raise RenderConfigError(f"frames = {self.frames!r} is invalid: step must not be 0")
        if len(parts) == 1:
            k = parts[0]
            return slice(k, None if k == -1 else (k or 0) + 1)
        return slice(*parts)

    def pixel_settings(self) -> dict[str, Any]:
        """The settings that decide the pixels (a resumed render must keep them)."""
        out: dict[str, Any] = to_mapping(self)
        unused = FILAMENT_ONLY if self.engine == Engine.CYCLES else CYCLES_ONLY
        for key in ("device", "frames", "cameras", *unused):
            out.pop(key, None)
        return out

    def to_mapping(self) -> dict[str, Any]:
        out: dict[str, Any] = to_mapping(self)
        return out


def check_frames(value: str) -> str:
    """`value` if it is a valid --frames slice (for argparse)."""
    if not re.fullmatch(FRAMES_PATTERN, value):
        raise RenderConfigError(f"frames = {value!r} is invalid: expected a:b:step (ints)")
    return value


# The Cycles settings before the speed work (2026-12-02: 55.4 s a 640x480 frame, loaded CPU):
# 16 samples, Blender's noise threshold, 6 bounces. `grade bench render` renders them beside
# the defaults.
PREVIOUS_CYCLES = RenderSettings(samples=16, noise_threshold=0.01, max_bounces=6)
