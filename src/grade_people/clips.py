"""BVH motion capture clips of a scenario (people.clips), played in place as stops.

Core module (numpy only). `load_clips` reads and parses the files once per scene; each skinned
person gets them retargeted onto their own skeleton (Scene.person_clips), and the motion library
(grade_people.motion.pose) blends a clip in like its procedural clips while the person's motion code
is that clip's (grade_people.people.CLIP_CODE + its index).
"""

from __future__ import annotations

from pathlib import Path

from grade_common.errors import ConfigError
from grade_people.bvh import BvhError, BvhMotion, parse_bvh
from grade_people.config import PeopleConfig


def load_clips(config: PeopleConfig, path: str = "people") -> tuple[BvhMotion, ...]:
    """Every file of `config.clips`, parsed.

    Raises:
        ConfigError: a file cannot be read or is no valid BVH (names the entry and the file).
    """
    out = []
    for i, file in enumerate(config.clips):
        where = f"{path}.clips[{i}]"
        try:
            text = Path(file).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as err:
            raise ConfigError(f"{where}: cannot read BVH file {file!r}: {err}") from err
        try:
            motion = parse_bvh(text)
        except BvhError as err:
            raise ConfigError(f"{where}: {file}: {err}") from err
        if motion.n_frames < 1:
            raise ConfigError(f"{where}: {file}: the clip has no frames; allowed: 1 or more")
        out.append(motion)
    return tuple(out)


def clip_duration_s(motion: BvhMotion) -> float:
    """How long the clip plays: its frames times its frame time."""
    return motion.n_frames * motion.frame_time_s
