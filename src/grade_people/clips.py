"""BVH motion capture clips of a scenario (people.clips), played in place as stops.

Core module (numpy only). `load_clips` reads and parses the files once per scene; each skinned
person gets them retargeted onto their own skeleton (grade_sim's People.retargeted_clips), and the
motion library (grade_people.motion.pose) blends a clip in like its procedural clips while the
person's motion code is that clip's (grade_people.people.CLIP_CODE + its index).

An entry is a BVH file, or the name of a clip set-up fetched (NAMED_CLIPS: the CMU clips of
Debian's assimp-testmodels, in motions_dir()/cmu). Named clips are grounded (bvh.grounded): their
files stand the feet a few cm above their zero.
"""

from __future__ import annotations

from pathlib import Path

from grade_common.errors import ConfigError
from grade_people.bvh import BvhError, BvhMotion, grounded, parse_bvh
from grade_people.config import PeopleConfig
from grade_people.mocap import MOTIONS_DIR_ENV, motions_dir
from grade_people.skeleton import REFERENCE_HEIGHT_M, BodyParams

# Name -> file under motions_dir() (scripts/fetch_motions.py puts them there; docs/people.md).
NAMED_CLIPS = {"cmu:01_01": "cmu/01_01.bvh", "cmu:01_03": "cmu/01_03.bvh"}
NAME_PREFIXES = ("cmu:",)  # an entry starting so is a name, never a path
# The Debian package (apt-get pin) scripts/fetch_motions.py downloads them from; the set-up
# dependency stamp covers this file, so a new pin fetches again.
CMU_PACKAGE = "assimp-testmodels=5.2.5~ds0-1"
# The body named clips are grounded on (the shift scales with each person's leg length).
_GROUND_BODY = BodyParams(REFERENCE_HEIGHT_M, 0.5, 1.0, 1.0, 1.0)


def is_named_clip(entry: str) -> bool:
    """Whether a people.clips entry names a fetched clip (else it is a file path)."""
    return entry.startswith(NAME_PREFIXES)


def named_clip_path(name: str, where: str = "people.clips") -> Path:
    """The file of a named clip.

    Raises:
        ConfigError: not a name (lists the names), or set-up has not fetched it (names the fix).
    """
    if name not in NAMED_CLIPS:
        raise ConfigError(f"{where}: unknown clip {name!r}; allowed: {sorted(NAMED_CLIPS)}")
    path = motions_dir() / NAMED_CLIPS[name]
    if not path.is_file():
        raise ConfigError(
            f"{where}: clip {name!r} needs {path}, which set-up fetches: run `make setup` (it runs "
            f"`apt-get download {CMU_PACKAGE}`) or set {MOTIONS_DIR_ENV}"
        )
    return path


def load_clip(entry: str, where: str = "people.clips") -> BvhMotion:
    """One people.clips entry (a named clip, grounded, or a BVH file), parsed.

    Raises:
        ConfigError: a file cannot be read or is no valid BVH (names the entry and the file).
    """
    named = is_named_clip(entry)
    file = named_clip_path(entry, where) if named else Path(entry)
    try:
        text = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise ConfigError(f"{where}: cannot read BVH file {str(file)!r}: {err}") from err
    try:
        motion = parse_bvh(text)
        if motion.n_frames < 1:
            raise ConfigError(f"{where}: {file}: the clip has no frames; allowed: 1 or more")
        return grounded(motion, _GROUND_BODY) if named else motion
    except BvhError as err:
        raise ConfigError(f"{where}: {file}: {err}") from err


def load_clips(config: PeopleConfig, path: str = "people") -> tuple[BvhMotion, ...]:
    """Every entry of `config.clips`, parsed (see load_clip)."""
    return tuple(load_clip(entry, f"{path}.clips[{i}]") for i, entry in enumerate(config.clips))


def clip_duration_s(motion: BvhMotion) -> float:
    """How long the clip plays: its frames times its frame time."""
    return motion.n_frames * motion.frame_time_s
